// select_k tests' shared helpers: type and algorithm names, the algorithms each backend runs, the
// message of a rejected call.
#pragma once

#include "support/backend.hpp"

#include <spira/error.hpp>
#include <spira/select_k.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace spira::test {

template <class T>
std::string type_name()
{
  if constexpr (std::is_same_v<T, float>) {
    return "float";
  } else if constexpr (std::is_same_v<T, double>) {
    return "double";
  } else {
    return "half";
  }
}

/// The algorithms to exercise on `Resources` for rows of length n.
template <class Resources>
std::vector<select_algo> algos_for(std::int64_t n)
{
  if constexpr (std::is_same_v<Resources, host_resources>) {
    return {select_algo::automatic};
  } else {
    std::vector<select_algo> a{select_algo::automatic, select_algo::radix};
    if (n <= select_binary_search_max_length) {
      a.push_back(select_algo::binary_search);
    }
    return a;
  }
}

inline const char* algo_name(select_algo a)
{
  switch (a) {
    case select_algo::automatic:
      return "automatic";
    case select_algo::binary_search:
      return "binary_search";
    default:
      return "radix";
  }
}

/// The message of the spira::invalid_argument f throws ("no exception" when it throws none).
template <class F>
std::string message_of(F&& f)
{
  try {
    f();
  } catch (const spira::invalid_argument& e) {
    return e.what();
  }
  return "no exception";
}

}  // namespace spira::test
