// A user-defined distance run through spira's public API on the host, without touching the library.
//
// The mean Huber loss between two rows, with threshold delta:
//   d(x, y) = (1/k) Σ_c huber(x_c - y_c),  huber(t) = t²/2 if |t| <= delta, else delta (|t| - delta/2)
// huber(x_c - 0) is not 0, so the multiply does not annihilate on the implicit zero: it is a NAMM
// and spira visits the union of the stored columns of both rows. Because ⊕ is a sum, the engine
// evaluates that union as one intersection pass plus per-row corrections.
//
// The program checks spira's result against a naive dense loop and exits non-zero on a mismatch.
#include <spira/convert.hpp>
#include <spira/ops.hpp>
#include <spira/semiring.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

// [distance]
struct mean_huber {
  double delta = 1.0;  // a parameter carried by value, on the host and on a device alike

  using add_monoid = spira::plus_monoid;      // ⊕ = +, identity 0
  static constexpr bool annihilating = false;  // NAMM: ⊗(a, 0) matters, visit the union

  // ⊗: the first argument comes from a row of A, the second from a row of B. ⊗(0, 0) = 0 = e⊕,
  // so columns missing from both rows contribute nothing, as the NAMM law requires.
  template <class T>
  SPIRA_HD T multiply(T a, T b) const
  {
    const T t = a > b ? a - b : b - a;
    const T d = T(delta);
    return t <= d ? T(0.5) * t * t : d * (t - T(0.5) * d);
  }

  // finalize(accumulated ⊕, norms of row i of A, norms of row j of B, number of columns).
  // This distance declares no norms, so they are empty terms.
  template <class T>
  SPIRA_HD T finalize(T acc, const spira::terms<T, 0>&, const spira::terms<T, 0>&,
                      std::int64_t dim) const
  {
    return dim == 0 ? T(0) : acc / T(dim);
  }
};
// [distance]

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
