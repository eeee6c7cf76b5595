// The header-only host operations (pairwise with the GraphBLAS built-ins and with user-defined
// NAMMs, mxv, reduce_rows, apply) against the naive float64 oracle.
#include "support/oracle.hpp"

#include <semirings/graphblas.hpp>
#include <spira/ops.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace spira::test {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

template <class V, class I, class S>
std::vector<std::vector<double>> run_pairwise(const csr_matrix<V, I>& a, const csr_matrix<V, I>& b,
                                              const S& s, int threads = 0)
{
  dense_matrix<V> out(host_resources{}, a.rows(), b.rows());
  pairwise(host_resources{threads}, a.view(), b.view(), out.view(), s);
  std::vector<std::vector<double>> r(a.rows(), std::vector<double>(b.rows()));
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    for (std::int64_t j = 0; j < b.rows(); ++j) {
      r[i][j] = out.data()[i * b.rows() + j];
    }
  }
  return r;
}

template <class V>
void expect_near(const std::vector<std::vector<double>>& got,
                 const std::vector<std::vector<double>>& want, const std::string& what)
{
  const double rel = std::is_same_v<V, float> ? 2e-6 : 1e-12;
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    for (std::size_t j = 0; j < want[i].size(); ++j) {
      if (std::isinf(want[i][j])) {
        EXPECT_EQ(got[i][j], want[i][j]) << what << " (" << i << ", " << j << ")";
      } else {
        EXPECT_NEAR(got[i][j], want[i][j], rel * (1 + std::abs(want[i][j])))
            << what << " (" << i << ", " << j << ")";
      }
    }
  }
}

// |got - want| within a relative tolerance; equal infinities match.
#define SPIRA_EXPECT_CLOSE(got, want, what)                   \
  do {                                                        \
    const double g_ = double(got), w_ = double(want);         \
    if (std::isinf(w_)) {                                     \
      EXPECT_EQ(g_, w_) << what;                              \
    } else {                                                  \
      EXPECT_NEAR(g_, w_, 1e-5 * (1 + std::abs(w_))) << what; \
    }                                                         \
  } while (0)

template <class T>
class semiring_ops : public ::testing::Test {};
using value_index =
    ::testing::Types<std::pair<float, std::int32_t>, std::pair<double, std::int64_t>>;
TYPED_TEST_SUITE(semiring_ops, value_index);

// ---- hand-checked
// ---------------------------------------------------------------------------------

TYPED_TEST(semiring_ops, builtins_on_a_hand_checked_case)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  // A = [[1, _, 2], [_, _, _]], B = [[3, 4, _], [5, _, -1]]   (_ = not stored)
  const auto a = make_csr<V, I>(host_resources{}, 2, 3, std::vector<offset_t>{0, 2, 2},
                                std::vector<I>{0, 2}, std::vector<V>{1, 2}, csr_check::canonical);
  const auto b =
      make_csr<V, I>(host_resources{}, 2, 3, std::vector<offset_t>{0, 2, 4},
                     std::vector<I>{0, 1, 0, 2}, std::vector<V>{3, 4, 5, -1}, csr_check::canonical);
  // Row 0 of A meets row 0 of B in column 0 only, row 1 of B in columns 0 and 2.
  using namespace spira::semirings;
  EXPECT_EQ(run_pairwise(a, b, plus_times{}), (std::vector<std::vector<double>>{{3, 3}, {0, 0}}));
  EXPECT_EQ(run_pairwise(a, b, min_plus{}),
            (std::vector<std::vector<double>>{{4, 1}, {inf, inf}}));  // min(1+5, 2-1) = 1
  EXPECT_EQ(run_pairwise(a, b, max_plus{}),
            (std::vector<std::vector<double>>{{4, 6}, {-inf, -inf}}));  // max(6, 1) = 6
  EXPECT_EQ(run_pairwise(a, b, max_min{}),
            (std::vector<std::vector<double>>{{1, 1}, {-inf, -inf}}));  // max(min(1,5), min(2,-1))
  EXPECT_EQ(run_pairwise(a, b, lor_land{}), (std::vector<std::vector<double>>{{1, 1}, {0, 0}}));
  EXPECT_EQ(run_pairwise(a, b, plus_pair{}), (std::vector<std::vector<double>>{{1, 2}, {0, 0}}));
  EXPECT_EQ(run_pairwise(a, b, any_pair{}), (std::vector<std::vector<double>>{{1, 1}, {0, 0}}));
}

// The seed paper's Appendix A.1 example: a = [1, 0, 1], b = [0, 1, 1] -> Manhattan 2 with a NAMM,
// 0 for |1 - 1| on the only common column with an annihilating multiply.
struct abs_diff_namm {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD T multiply(T a, T b) const
  {
    return a > b ? a - b : b - a;
  }
};
struct abs_diff_annihilating : abs_diff_namm {
  static constexpr bool annihilating = true;
};

TEST(semiring_ops_paper, appendix_a1_manhattan_needs_the_union)
{
  const auto a = make_csr<double, std::int32_t>(host_resources{}, 1, 3, std::vector<offset_t>{0, 2},
                                                std::vector<std::int32_t>{0, 2},
                                                std::vector<double>{1, 1}, csr_check::canonical);
  const auto b = make_csr<double, std::int32_t>(host_resources{}, 1, 3, std::vector<offset_t>{0, 2},
                                                std::vector<std::int32_t>{1, 2},
                                                std::vector<double>{1, 1}, csr_check::canonical);
  EXPECT_EQ(run_pairwise(a, b, abs_diff_namm{})[0][0], 2.0);
  EXPECT_EQ(run_pairwise(a, b, abs_diff_annihilating{})[0][0], 0.0);
}

// ---- random against the oracle
// -------------------------------------------------------------------

TYPED_TEST(semiring_ops, builtins_match_the_oracle_on_random_matrices)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  const auto a = random_csr<V, I>(
      {.rows = 45, .cols = 70, .mean_degree = 8, .signed_values = true, .seed = 3});
  const auto b = random_csr<V, I>(
      {.rows = 29, .cols = 70, .mean_degree = 6, .signed_values = true, .seed = 4});
  const auto da = densify(a), db = densify(b);
  using namespace spira::semirings;
  auto plus = [](double x, double y) { return x + y; };
  auto mn = [](double x, double y) { return std::min(x, y); };
  auto mx = [](double x, double y) { return std::max(x, y); };
  auto one = [](double, double) { return 1.0; };
  expect_near<V>(run_pairwise(a, b, plus_times{}),
                 oracle::semiring_product(
                     da, db, plus, [](double x, double y) { return x * y; }, 0),
                 "plus_times");
  expect_near<V>(run_pairwise(a, b, min_plus{}), oracle::semiring_product(da, db, mn, plus, inf),
                 "min_plus");
  expect_near<V>(run_pairwise(a, b, max_plus{}), oracle::semiring_product(da, db, mx, plus, -inf),
                 "max_plus");
  expect_near<V>(run_pairwise(a, b, max_min{}), oracle::semiring_product(da, db, mx, mn, -inf),
                 "max_min");
  expect_near<V>(run_pairwise(a, b, plus_pair{}), oracle::semiring_product(da, db, plus, one, 0),
                 "plus_pair");
  expect_near<V>(run_pairwise(a, b, any_pair{}), oracle::semiring_product(da, db, mx, one, 0),
                 "any_pair");
  expect_near<V>(run_pairwise(a, b, lor_land{}),
                 oracle::semiring_product(
                     da, db, mx, [](double x, double y) { return double(x != 0 && y != 0); }, 0),
                 "lor_land");
}

// A NAMM with a non-invertible ⊕ (max) and a non-symmetric ⊗ goes through the merge engine; one
// with a custom-kind ⊕ (product) too. Both are checked against a dense union evaluation.
struct max_weighted_gap {
  using add_monoid = max_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD T multiply(T a, T b) const
  {
    return T(2) * a - b;  // ⊗(0, 0) = 0; finalize folds the all-zero columns back in
  }
  template <class T>
  SPIRA_HD T finalize(T acc, const terms<T, 0>&, const terms<T, 0>&, std::int64_t dim) const
  {
    return dim > 0 && acc < T(0) ? T(0) : acc;
  }
};
struct times_monoid {
  static constexpr monoid_kind kind = monoid_kind::custom;
  template <class T>
  SPIRA_HD static constexpr T identity()
  {
    return T(1);
  }
  template <class T>
  SPIRA_HD constexpr T operator()(T x, T y) const
  {
    return x * y;
  }
};
struct product_of_shifted {
  using add_monoid = times_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD T multiply(T a, T b) const
  {
    return T(1) + T(0.25) * (a - b);  // ⊗(0, 0) = 1 = identity of ×
  }
};

TYPED_TEST(semiring_ops, user_namms_with_non_invertible_add_match_a_dense_union)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  const auto a = random_csr<V, I>(
      {.rows = 31, .cols = 40, .mean_degree = 6, .signed_values = true, .seed = 8});
  const auto b = random_csr<V, I>({.rows = 530,
                                   .cols = 40,
                                   .mean_degree = 4,  // > one tile
                                   .signed_values = true,
                                   .seed = 9});
  const auto da = densify(a), db = densify(b);
  std::vector<std::vector<double>> want_max(a.rows(), std::vector<double>(b.rows()));
  auto want_prod = want_max;
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    for (std::int64_t j = 0; j < b.rows(); ++j) {
      double m = 0, p = 1;  // all 40 columns, zeros included
      for (std::int64_t c = 0; c < a.cols(); ++c) {
        m = std::max(m, 2 * da.value[i][c] - db.value[j][c]);
        p *= 1 + 0.25 * (da.value[i][c] - db.value[j][c]);
      }
      want_max[i][j] = m;
      want_prod[i][j] = p;
    }
  }
  expect_near<V>(run_pairwise(a, b, max_weighted_gap{}), want_max, "max_weighted_gap");
  expect_near<V>(run_pairwise(a, b, product_of_shifted{}), want_prod, "product_of_shifted");
  EXPECT_EQ(run_pairwise(a, b, max_weighted_gap{}, 1), run_pairwise(a, b, max_weighted_gap{}, 3));
}

// A strided output (ld > cols) is written inside its rows only; arguments are validated.
TEST(semiring_ops_arguments, strided_output_and_validation)
{
  using V = double;
  using I = std::int32_t;
  const auto a = random_csr<V, I>({.rows = 9, .cols = 12, .mean_degree = 4, .seed = 41});
  const auto b = random_csr<V, I>({.rows = 7, .cols = 12, .mean_degree = 4, .seed = 42});
  const host_resources res{};
  std::vector<V> storage(9 * 10, -123.0);
  const dense_view<V> out{9, 7, 10, storage.data(), memory_space::host};
  pairwise(res, a.view(), b.view(), out, semirings::plus_times{});
  const auto want = run_pairwise(a, b, semirings::plus_times{});
  for (int i = 0; i < 9; ++i) {
    for (int j = 0; j < 10; ++j) {
      if (j < 7) {
        EXPECT_EQ(storage[i * 10 + j], want[i][j]) << i << ", " << j;
      } else {
        EXPECT_EQ(storage[i * 10 + j], -123.0) << "padding overwritten at " << i << ", " << j;
      }
    }
  }

  const dense_view<V> bad_ld{9, 7, 6, storage.data(), memory_space::host};
  EXPECT_THROW(pairwise(res, a.view(), b.view(), bad_ld, semirings::plus_times{}),
               invalid_argument);
  auto on_device = a.view();
  on_device.space = memory_space::device;
  try {
    pairwise(res, on_device, b.view(), out, semirings::plus_times{});
    FAIL() << "expected invalid_argument for a device view";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("A is in device memory"), std::string::npos) << e.what();
  }
  // Duplicate column in row 0 of A: pairwise needs canonical input.
  const auto dup = make_csr<V, I>(res, 9, 12, std::vector<offset_t>{0, 2, 2, 2, 2, 2, 2, 2, 2, 2},
                                  std::vector<I>{3, 3}, std::vector<V>{1, 1});
  try {
    pairwise(res, dup.view(), b.view(), out, semirings::plus_times{});
    FAIL() << "expected invalid_argument for a non-canonical A";
  } catch (const invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("A"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not canonical"), std::string::npos) << msg;
  }
}

// The best-first union (min/max-kind ⊕) and the merge union (the same ⊕ declared custom) must agree
// bit for bit: both select the same values.
struct max_as_custom {
  static constexpr monoid_kind kind = monoid_kind::custom;
  template <class T>
  SPIRA_HD static constexpr T identity()
  {
    return max_monoid::identity<T>();
  }
  template <class T>
  SPIRA_HD constexpr T operator()(T x, T y) const
  {
    return max_monoid{}(x, y);
  }
};
struct gap_by_merge : max_weighted_gap {
  using add_monoid = max_as_custom;
};
struct min_weighted_gap {
  using add_monoid = min_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD T multiply(T a, T b) const
  {
    return a - T(3) * b;
  }
};
struct min_as_custom {
  static constexpr monoid_kind kind = monoid_kind::custom;
  template <class T>
  SPIRA_HD static constexpr T identity()
  {
    return min_monoid::identity<T>();
  }
  template <class T>
  SPIRA_HD constexpr T operator()(T x, T y) const
  {
    return min_monoid{}(x, y);
  }
};
struct min_gap_by_merge : min_weighted_gap {
  using add_monoid = min_as_custom;
};

TYPED_TEST(semiring_ops, best_first_union_equals_merge_union_exactly)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  for (const bool small_integers : {false, true}) {  // integers: many ties in the best-first order
    const auto a = random_csr<V, I>({.rows = 83,
                                     .cols = 57,
                                     .mean_degree = 9,
                                     .signed_values = !small_integers,
                                     .small_integers = small_integers,
                                     .seed = 61});
    const auto b = random_csr<V, I>({.rows = 64,
                                     .cols = 57,
                                     .mean_degree = 12,
                                     .signed_values = !small_integers,
                                     .small_integers = small_integers,
                                     .seed = 62});
    EXPECT_EQ(run_pairwise(a, b, max_weighted_gap{}), run_pairwise(a, b, gap_by_merge{}));
    EXPECT_EQ(run_pairwise(a, b, min_weighted_gap{}), run_pairwise(a, b, min_gap_by_merge{}));
  }
}

// ---- mxv ----------------------------------------------------------------------------------------

TYPED_TEST(semiring_ops, mxv_matches_a_dense_evaluation)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  const auto a = random_csr<V, I>(
      {.rows = 57, .cols = 33, .mean_degree = 5, .signed_values = true, .seed = 21});
  const auto da = densify(a);
  std::vector<V> x(33);
  for (std::size_t c = 0; c < x.size(); ++c) {
    x[c] = V(std::sin(double(c) * 1.7) * 2);
  }
  const host_resources res{};
  std::vector<V> y(57);

  // Annihilating: only the stored entries of each row.
  mxv(res, a.view(), std::span<const V>(x), std::span<V>(y), semirings::plus_times{});
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    double s = 0;
    for (std::int64_t c = 0; c < a.cols(); ++c) {
      s += da.value[i][c] * double(x[c]);
    }
    SPIRA_EXPECT_CLOSE(y[i], s, "plus_times row " << i);
  }
  mxv(res, a.view(), std::span<const V>(x), std::span<V>(y), semirings::min_plus{});
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    double s = inf;
    for (std::int64_t c = 0; c < a.cols(); ++c) {
      if (da.stored[i][c]) {
        s = std::min(s, da.value[i][c] + double(x[c]));
      }
    }
    SPIRA_EXPECT_CLOSE(y[i], s, "min_plus row " << i);
  }
  // NAMMs: every column, a missing entry being 0 (sum-kind, max-kind and custom-kind ⊕).
  mxv(res, a.view(), std::span<const V>(x), std::span<V>(y), abs_diff_namm{});
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    double s = 0;
    for (std::int64_t c = 0; c < a.cols(); ++c) {
      s += std::abs(da.value[i][c] - double(x[c]));
    }
    SPIRA_EXPECT_CLOSE(y[i], s, "abs_diff_namm row " << i);
  }
  mxv(res, a.view(), std::span<const V>(x), std::span<V>(y), max_weighted_gap{});
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    double s = -inf;
    for (std::int64_t c = 0; c < a.cols(); ++c) {
      s = std::max(s, 2 * da.value[i][c] - double(x[c]));
    }
    SPIRA_EXPECT_CLOSE(y[i], s, "max_weighted_gap row " << i);
  }
  mxv(res, a.view(), std::span<const V>(x), std::span<V>(y), product_of_shifted{});
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    double s = 1;
    for (std::int64_t c = 0; c < a.cols(); ++c) {
      s *= 1 + 0.25 * (da.value[i][c] - double(x[c]));
    }
    SPIRA_EXPECT_CLOSE(y[i], s, "product_of_shifted row " << i);
  }

  std::vector<V> short_x(32);
  EXPECT_THROW(
      mxv(res, a.view(), std::span<const V>(short_x), std::span<V>(y), semirings::plus_times{}),
      dimension_mismatch);
}

// ---- reduce_rows and apply
// -----------------------------------------------------------------------

TYPED_TEST(semiring_ops, reduce_rows_and_apply)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  const auto a = random_csr<V, I>(
      {.rows = 41, .cols = 25, .mean_degree = 4, .signed_values = true, .seed = 31});
  const auto da = densify(a);
  const host_resources res{};
  std::vector<V> out(41);

  reduce_rows(res, a.view(), std::span<V>(out), plus_monoid{}, square_map{});
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    double s = 0;
    for (double v : da.value[i]) {
      s += v * v;
    }
    EXPECT_NEAR(out[i], s, 1e-5 * (1 + s)) << "row " << i;
  }
  reduce_rows(res, a.view(), std::span<V>(out), max_monoid{}, abs_map{});
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    double s = -inf;  // the identity for an empty row
    for (std::int64_t c = 0; c < a.cols(); ++c) {
      if (da.stored[i][c]) {
        s = std::max(s, std::abs(da.value[i][c]));
      }
    }
    EXPECT_EQ(double(out[i]), double(V(s))) << "row " << i;
  }
  reduce_rows(res, a.view(), std::span<V>(out), plus_monoid{}, nonzero_map{});
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    EXPECT_EQ(out[i], V(a.row_ptr()[i + 1] - a.row_ptr()[i]));
  }

  const auto sq = apply(res, a.view(), [](V v) { return v * v; });
  ASSERT_EQ(sq.nnz(), a.nnz());
  for (std::int64_t k = 0; k < a.nnz(); ++k) {
    EXPECT_EQ(sq.col_idx()[k], a.col_idx()[k]);
    EXPECT_EQ(sq.values()[k], a.values()[k] * a.values()[k]);
  }

  dense_matrix<V> d(res, 3, 2);
  for (int k = 0; k < 6; ++k) {
    d.data()[k] = V(k);
  }
  apply(res, d.view(), [](V v) { return v + 1; });
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(d.data()[k], V(k + 1));
  }
}

}  // namespace
}  // namespace spira::test
