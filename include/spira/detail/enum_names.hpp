// spira: the one way an enum's value is read from its name (the names themselves come from each
// enum's to_string). Used by the *_from_string functions of the public headers.
#pragma once

#include <spira/error.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace spira::detail {

/// The value of `all` whose to_string is `name`; else spira::invalid_argument
/// "unknown WHAT 'NAME'; valid PLURAL are: a, b, c".
template <class E, std::size_t N>
E enum_from_string(std::string_view name, const std::array<E, N>& all, const char* what,
                   const char* plural)
{
  for (const E e : all) {
    if (name == to_string(e)) { return e; }
  }
  std::string valid;
  for (const E e : all) {
    if (!valid.empty()) { valid += ", "; }
    valid += to_string(e);
  }
  throw invalid_argument(concat("unknown ", what, " '", name, "'; valid ", plural, " are: ", valid));
}

}  // namespace spira::detail
