// spira internals: the value and index types the compiled library is instantiated for, as one
// list each. A translation unit that instantiates an entry point defines a macro X(V, I) (or X(T,
// I)) and applies it to every pair with the list below, so that adding a type is one edit here.
#pragma once

#include <cstdint>

/// X(V, I) for every column index type I: 32- and 64-bit (for the translation units that
/// instantiate one value type).
#define SPIRA_FOR_EACH_INDEX(X, V) \
  X(V, std::int32_t)               \
  X(V, std::int64_t)

/// Every (value, index) pair of the sparse operations: float and double values, every index type.
#define SPIRA_FOR_EACH_VALUE_INDEX(X) \
  SPIRA_FOR_EACH_INDEX(X, float)      \
  SPIRA_FOR_EACH_INDEX(X, double)

/// Every (value, index) pair of select_k: the above and half-precision values.
#define SPIRA_FOR_EACH_SELECT_VALUE_INDEX(X) \
  SPIRA_FOR_EACH_VALUE_INDEX(X)              \
  SPIRA_FOR_EACH_INDEX(X, half)
