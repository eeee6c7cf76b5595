// Test support: run one test source on every backend.
//
// Test fixtures are TYPED_TESTs over spira::host_resources and spira::cuda_resources. The CUDA half
// skips with a visible reason when this build has no CUDA or the machine has no device: it never
// silently passes. Inputs are built on the host and moved to the backend with `on_backend`; results
// come back with spira::to_host.
#pragma once

#include <spira/spira.hpp>

#include <gtest/gtest.h>

#include <string>

namespace spira::test {

using backends = ::testing::Types<host_resources, cuda_resources>;

/// Names typed-test instances "host" and "cuda" instead of 0 and 1.
struct backend_names {
  template <class T>
  static std::string GetName(int)
  {
    return std::is_same_v<T, host_resources> ? "host" : "cuda";
  }
};

/// Returns the reason the backend cannot run here, or an empty string when it can.
template <class Resources>
std::string unavailable_reason()
{
  if constexpr (std::is_same_v<Resources, cuda_resources>) {
    if (!cuda_compiled()) {
      return "CUDA backend not compiled in this build";
    }
    if (cuda_device_count() == 0) {
      return "no CUDA device on this machine";
    }
  }
  return {};
}

/// Use at the top of a typed test: GTEST_SKIP()s with the reason when the backend cannot run.
#define SPIRA_SKIP_UNLESS_AVAILABLE(Resources)                                        \
  do {                                                                                \
    const std::string spira_reason_ = ::spira::test::unavailable_reason<Resources>(); \
    if (!spira_reason_.empty()) {                                                     \
      GTEST_SKIP() << spira_reason_;                                                  \
    }                                                                                 \
  } while (0)

/// A copy of a host matrix in the backend's memory space.
template <class V, class I>
csr_matrix<V, I> on_backend(const host_resources& res, const csr_matrix<V, I>& m)
{
  return to_host(m.view());  // a deep copy, so tests own their inputs on both backends
}
template <class V, class I>
csr_matrix<V, I> on_backend(const cuda_resources& res, const csr_matrix<V, I>& m)
{
  return to_device(res, m.view());
}

/// A host copy of a host or device matrix.
template <class V, class I>
csr_matrix<V, I> host_copy(const csr_matrix<V, I>& m)
{
  return to_host(m.view(), m.cuda());
}

}  // namespace spira::test
