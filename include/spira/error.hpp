// spira: the exception hierarchy. Every error thrown across the public API derives from spira::error
// and its message names the offending argument (or file and line) and the bad value.
#pragma once

#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>
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

/// A backend was requested that this build of spira does not contain (e.g. CUDA in a host-only build).
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
  if (!ok) { throw ErrorT(concat(parts...)); }
}

}  // namespace detail
}  // namespace spira
