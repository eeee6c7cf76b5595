// spira internals: the value and index types the compiled library is instantiated for, as one
// list each. A translation unit that instantiates an entry point defines a macro X(V, I) (or X(T,
// I)) and applies it to every pair with the list below, so that adding a type is one edit here.
#pragma once

#include <cstdint>

/// Every (value, index) pair of the sparse operations: float and double values, 32- and 64-bit
/// column indices.
#define SPIRA_FOR_EACH_VALUE_INDEX(X) \
  X(float, std::int32_t)              \
  X(float, std::int64_t)              \
  X(double, std::int32_t)             \
  X(double, std::int64_t)

/// Every (value, index) pair of select_k: the above and half-precision values.
#define SPIRA_FOR_EACH_SELECT_VALUE_INDEX(X) \
  SPIRA_FOR_EACH_VALUE_INDEX(X)              \
  X(half, std::int32_t)                      \
  X(half, std::int64_t)
