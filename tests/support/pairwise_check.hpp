// Test support: the pairwise engine's results on a backend as a dense float64 matrix, compared
// with an oracle on the scale the engine accumulates (tests/pairwise).
#pragma once

#include "support/backend.hpp"

#include <spira/distance.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace spira::test {

using matrix = std::vector<std::vector<double>>;

/// out = pairwise_distance(A, B, params) on the backend, the output poisoned with NaN first; `pad`
/// extra columns of leading dimension must stay untouched (checked here).
template <class R, class V, class I>
matrix run_on(const R& res, const csr_matrix<V, I>& a, const csr_matrix<V, I>& b,
              const distance_params& params, std::int64_t pad = 0)
{
  const std::int64_t ld = b.rows() + pad;
  const std::size_t count = std::size_t(a.rows() * ld);
  const V nan = std::numeric_limits<V>::quiet_NaN();
  std::vector<V> host(count, nan);
  const auto da = on_backend(res, a);
  const auto db = on_backend(res, b);
  buffer<V> out(res, std::max<std::size_t>(count, 1), "test output");
  const memory_space space =
      std::is_same_v<R, cuda_resources> ? memory_space::device : memory_space::host;
  cuda_resources cres{};
  if constexpr (std::is_same_v<R, cuda_resources>) {
    cres = res;
  }
  copy(out.data(), space, host.data(), memory_space::host, count, cres);
  const dense_view<V> view{a.rows(), b.rows(), ld, out.data(), space};
  pairwise_distance(res, da.view(), db.view(), view, params);
  if constexpr (std::is_same_v<R, cuda_resources>) {
    synchronize(res);
  }
  copy(host.data(), memory_space::host, out.data(), space, count, cres);
  matrix r(std::size_t(a.rows()), std::vector<double>(std::size_t(b.rows())));
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    for (std::int64_t j = 0; j < b.rows(); ++j) {
      r[i][j] = host[std::size_t(i * ld + j)];
    }
    for (std::int64_t j = b.rows(); j < ld; ++j) {
      EXPECT_TRUE(std::isnan(host[std::size_t(i * ld + j)])) << "padding overwritten at row " << i;
    }
  }
  return r;
}

template <class R, class V, class I>
matrix run_on(const R& res, metric m, const csr_matrix<V, I>& a, const csr_matrix<V, I>& b,
              double p, pairwise_strategy s, std::int64_t pad = 0)
{
  return run_on(res, a, b, {.metric = m, .p = p, .strategy = s}, pad);
}

/// Float results accumulate in float on the GPU (in double on the host): a relative tolerance
/// with an absolute floor of the same size.
template <class V>
double tolerance(double want)
{
  return (std::is_same_v<V, float> ? 1e-4 : 1e-9) * (1.0 + std::abs(want));
}

/// The quantity the engine accumulates before its final root: d^2 for euclidean, hellinger and
/// jensenshannon, d^p for minkowski, d itself otherwise. A root amplifies the rounding of a sum
/// that cancels to about 0 (x against itself: sqrt(1e-7) = 3e-4 in float, sqrt(1e-15) = 3e-8 in
/// double), so these metrics are compared on the accumulated scale, where the error bound of
/// the expansion lives; the other metrics are compared as they are.
inline double accumulated_scale(metric m, double p, double d)
{
  if (std::isinf(d) || std::isnan(d)) {
    return d;
  }
  switch (m) {
    case metric::euclidean:
    case metric::hellinger:
    case metric::jensenshannon:
      return d * d;
    case metric::minkowski:
      return std::pow(std::abs(d), p);
    default:
      return d;
  }
}

template <class V>
void expect_near(const matrix& got_d, const matrix& want_d, const std::string& what,
                 metric m = metric::inner_product, double p = 2.0)
{
  ASSERT_EQ(got_d.size(), want_d.size()) << what;
  int reported = 0;
  for (std::size_t i = 0; i < want_d.size(); ++i) {
    ASSERT_EQ(got_d[i].size(), want_d[i].size()) << what;
    for (std::size_t j = 0; j < want_d[i].size(); ++j) {
      const double g = accumulated_scale(m, p, got_d[i][j]);
      const double w = accumulated_scale(m, p, want_d[i][j]);
      const bool ok = std::isinf(w) ? g == w : std::abs(g - w) <= tolerance<V>(w);
      if (!ok && reported++ < 5) {
        ADD_FAILURE() << what << " at (" << i << ", " << j << "): got " << got_d[i][j] << ", want "
                      << want_d[i][j] << " (accumulated scale: " << g << " vs " << w << ")";
      }
    }
  }
  EXPECT_EQ(reported, 0) << what << ": " << reported << " entries out of tolerance";
}

}  // namespace spira::test
