// spira benchmarks: the comma-separated lists of the programs' arguments ("cosine,manhattan").
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace spira::bench {

/// The non-empty items of a comma-separated list.
inline std::vector<std::string> split(const std::string& s)
{
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) {
      out.push_back(item);
    }
  }
  return out;
}

}  // namespace spira::bench
