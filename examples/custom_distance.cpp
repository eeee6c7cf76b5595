// A user-defined distance (examples/mean_huber.hpp) run through spira's public API on the host,
// without touching the library. Because its ⊕ is a sum, the engine evaluates the union of the two
// rows as one intersection pass plus per-row corrections.
//
// The program checks spira's result against a naive dense loop and exits non-zero on a mismatch.
#include <spira/convert.hpp>
#include <spira/ops.hpp>
#include <spira/semiring.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "mean_huber.hpp"

namespace {

double naive_mean_huber(const std::vector<double>& x, const std::vector<double>& y, double delta)
{
  double s = 0;
  for (std::size_t c = 0; c < x.size(); ++c) {
    const double t = std::abs(x[c] - y[c]);
    s += t <= delta ? 0.5 * t * t : delta * (t - 0.5 * delta);
  }
  return x.empty() ? 0.0 : s / double(x.size());
}

std::vector<std::vector<double>> dense_of(const spira::csr_matrix<float, std::int32_t>& m)
{
  std::vector<std::vector<double>> d(m.rows(), std::vector<double>(m.cols(), 0.0));
  for (std::int64_t i = 0; i < m.rows(); ++i) {
    for (spira::offset_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k) {
      d[i][m.col_idx()[k]] = m.values()[k];
    }
  }
  return d;
}

}  // namespace

int main()
{
  const spira::host_resources res{};

  // [usage]
  // A: 3 x 5, B: 2 x 5 (canonical CSR: sorted, duplicate-free columns per row).
  const auto a = spira::make_csr<float, std::int32_t>(
      res, 3, 5, std::vector<spira::offset_t>{0, 2, 2, 5}, std::vector<std::int32_t>{0, 3, 1, 2, 4},
      std::vector<float>{0.5f, 3.0f, 1.0f, -2.0f, 0.25f}, spira::csr_check::canonical);
  const auto b = spira::make_csr<float, std::int32_t>(
      res, 2, 5, std::vector<spira::offset_t>{0, 3, 4}, std::vector<std::int32_t>{0, 2, 3, 4},
      std::vector<float>{1.0f, 4.0f, 0.5f, 2.0f}, spira::csr_check::canonical);

  spira::dense_matrix<float> d(res, a.rows(), b.rows());
  spira::pairwise(res, a.view(), b.view(), d.view(), mean_huber{.delta = 1.5});
  // [usage]

  const auto da = dense_of(a), db = dense_of(b);
  int mismatches = 0;
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    for (std::int64_t j = 0; j < b.rows(); ++j) {
      const double got = d.data()[i * b.rows() + j];
      const double want = naive_mean_huber(da[i], db[j], 1.5);
      const bool ok = std::abs(got - want) <= 1e-6 * (1 + std::abs(want));
      mismatches += ok ? 0 : 1;
      std::printf("d(A%lld, B%lld) = %.6f  (naive %.6f)%s\n", static_cast<long long>(i),
                  static_cast<long long>(j), got, want, ok ? "" : "  MISMATCH");
    }
  }
  if (mismatches != 0) {
    std::fprintf(stderr, "custom_distance: %d mismatches against the naive loop\n", mismatches);
    return 1;
  }
  std::printf("custom_distance: all %lld distances match the naive loop\n",
              static_cast<long long>(a.rows() * b.rows()));
  return 0;
}
