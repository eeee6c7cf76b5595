// spira: enum values and their names from one table per enum, {value, name} pairs in the order
// the names are listed in messages. The public to_string / *_from_string functions go through
// these two functions.
#pragma once

#include <spira/error.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace spira::detail {

/// The name of `value` in `names` ("unknown" for a value the table lacks).
template <class E, std::size_t N>
constexpr const char* enum_name(const std::array<std::pair<E, const char*>, N>& names,
                                E value) noexcept
{
  for (const auto& [e, name] : names) {
    if (e == value) {
      return name;
    }
  }
  return "unknown";
}

/// The value named `name` in `names`; else spira::invalid_argument
/// "unknown WHAT 'NAME'; valid PLURAL are: a, b, c".
template <class E, std::size_t N>
E enum_value(const std::array<std::pair<E, const char*>, N>& names, std::string_view name,
             const char* what, const char* plural)
{
  for (const auto& [e, n] : names) {
    if (name == n) {
      return e;
    }
  }
  std::string valid;
  for (const auto& entry : names) {
    if (!valid.empty()) {
      valid += ", ";
    }
    valid += entry.second;
  }
  throw invalid_argument(
      concat("unknown ", what, " '", name, "'; valid ", plural, " are: ", valid));
}

}  // namespace spira::detail
