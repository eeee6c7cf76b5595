// spira: the exception hierarchy. Every error thrown across the public API derives from
// spira::error and its message names the offending argument (or file and line) and the bad value.
#pragma once

#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace spira {

/// Base of every exception spira throws.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An argument has a bad value (out-of-range index, negative size, unknown name...).
class invalid_argument : public error {
 public:
  using error::error;
};

/// Extents of two arguments do not agree (e.g. A and B with a different number of columns).
class dimension_mismatch : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
};

/// A CUDA runtime or library call failed; the message names the call, file and line.
class cuda_error : public error {
 public:
  using error::error;
};

/// A backend was requested that this build of spira does not contain (e.g. CUDA in a host-only
/// build).
class not_compiled : public error {
 public:
  using error::error;
};

/// An allocation failed; the message states the bytes requested and, where known, what was free.
class out_of_memory : public error {
 public:
  using error::error;
};

/// Reading or writing a file failed: missing file, malformed content. The message names the file
/// and, for parse errors, the line.
class io_error : public error {
 public:
  using error::error;
};

namespace detail {

/// Concatenates streamable parts into one message.
template <class... Parts>
std::string concat(const Parts&... parts)
{
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

/// Throws ErrorT with the concatenated message when `ok` is false. The parts are only formatted on
/// failure, so validation in hot paths costs one branch.
template <class ErrorT = invalid_argument, class... Parts>
void expects(bool ok, const Parts&... parts)
{
  if (!ok) {
    throw ErrorT(concat(parts...));
  }
}

/// `s` safe to print in a message: valid UTF-8 and printable characters as they are; control
/// characters and bytes that are not valid UTF-8 (a corrupt file's names, say) as \xNN.
inline std::string printable(std::string_view s)
{
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  const auto escape = [&](unsigned char c) {
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
  };
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) {
        escape(c);
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // The length of a well-formed sequence starting with c (RFC 3629: no overlongs, no
    // surrogates, at most U+10FFFF), else 0.
    std::size_t len = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      lo = c == 0xe0 ? 0xa0 : 0x80;
      hi = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      lo = c == 0xf0 ? 0x90 : 0x80;
      hi = c == 0xf4 ? 0x8f : 0xbf;
    }
    bool ok = len > 0 && i + len <= s.size();
    for (std::size_t j = 1; ok && j < len; ++j) {
      const auto d = static_cast<unsigned char>(s[i + j]);
      ok = j == 1 ? (d >= lo && d <= hi) : (d >= 0x80 && d <= 0xbf);
    }
    if (!ok) {
      escape(c);
      ++i;
      continue;
    }
    out.append(s.data() + i, len);
    i += len;
  }
  return out;
}

}  // namespace detail
}  // namespace spira
