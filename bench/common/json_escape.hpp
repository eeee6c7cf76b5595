// Benchmark programs: the one JSON string escape their JSON-lines outputs use.
#pragma once

#include <cstdio>
#include <string>

namespace spira::bench {

/// s as the body of a JSON string: quotes and backslashes escaped, control characters as \u00XX.
inline std::string json_escape(const std::string& s)
{
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      const auto code = static_cast<unsigned>(static_cast<unsigned char>(c));
      std::snprintf(buf, sizeof buf, "\\u%04x", code);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

/// s as a JSON string literal (with its quotes).
inline std::string json_string(const std::string& s)
{
  return "\"" + json_escape(s) + "\"";
}

}  // namespace spira::bench
