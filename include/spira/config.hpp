// spira: build-wide definitions shared by every public header.
//
// Public headers compile with a plain C++20 compiler; the macros below add the CUDA execution-space
// qualifiers only when a header is compiled by nvcc, so the same operator structs run on both
// backends.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SPIRA_HD __host__ __device__
#define SPIRA_DEVICE __device__
#else
#define SPIRA_HD
#define SPIRA_DEVICE
#endif

/// An OpenMP directive that disappears where OpenMP is off (e.g. a host function of a public header
/// compiled by nvcc without -fopenmp runs serially there, without unknown-pragma warnings):
/// SPIRA_OMP(omp parallel for schedule(static)).
#if defined(_OPENMP)
#define SPIRA_OMP(...) _Pragma(#__VA_ARGS__)
#else
#define SPIRA_OMP(...)
#endif

#define SPIRA_VERSION_MAJOR 0
#define SPIRA_VERSION_MINOR 1
#define SPIRA_VERSION_PATCH 0

namespace spira {

/// Row-pointer (offset) type of every CSR matrix. Always 64-bit, so that a matrix may hold more
/// than 2^31-1 nonzeros whatever its column-index type; rows+1 extra words are a negligible cost.
using offset_t = std::int64_t;

/// The library version as "major.minor.patch".
const char* version() noexcept;

}  // namespace spira
