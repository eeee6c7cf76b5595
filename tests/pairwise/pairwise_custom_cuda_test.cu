// User-defined semirings on the GPU through the documented header spira/cuda/pairwise.cuh: the
// GraphBLAS built-ins, a NAMM with a max add monoid (the hybrid two-pass union and the selection
// fix-ups of the intersection strategy), a user monoid of kind `custom` (compare-and-swap atomics)
// and a sum NAMM with finalize, each with every strategy that applies, against the naive float64
// oracle and the host engine (spira/ops.hpp).
#include "support/backend.hpp"
#include "support/oracle.hpp"

#include <semirings/graphblas.hpp>
#include <spira/cuda/pairwise.cuh>
#include <spira/ops.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace spira::test {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
using matrix = std::vector<std::vector<double>>;

/// max over the union of the stored columns of (a - b)^2: a NAMM whose ⊕ (max) is not invertible.
/// No finalize, so two rows without stored columns give e⊕ = -inf.
struct max_squared_difference {
  using add_monoid = max_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD T multiply(T a, T b) const
  {
    return (a - b) * (a - b);
  }
};

/// max_squared_difference in float64 over the dense copies (the union of stored columns).
matrix max_square_difference_oracle(const dense_copy& da, const dense_copy& db)
{
  matrix want(da.rows, std::vector<double>(db.rows));
  for (std::int64_t i = 0; i < da.rows; ++i) {
    for (std::int64_t j = 0; j < db.rows; ++j) {
      double acc = -inf;
      for (std::int64_t c = 0; c < da.cols; ++c) {
        if (da.stored[i][c] || db.stored[j][c]) {
          const double t = da.value[i][c] - db.value[j][c];
          acc = std::max(acc, t * t);
        }
      }
      want[i][j] = acc;
    }
  }
  return want;
}

/// The value of larger magnitude (ties: the larger value); identity 0. A monoid of kind custom:
/// the GPU engine updates it with a compare-and-swap loop.
struct absmax_monoid {
  static constexpr monoid_kind kind = monoid_kind::custom;
  template <class T>
  SPIRA_HD static constexpr T identity()
  {
    return T(0);
  }
  template <class T>
  SPIRA_HD constexpr T operator()(T x, T y) const
  {
    const T ax = x < T(0) ? -x : x, ay = y < T(0) ? -y : y;
    return ax > ay ? x : (ay > ax ? y : (x > y ? x : y));
  }
};
struct absmax_times {
  using add_monoid = absmax_monoid;
  static constexpr bool annihilating = true;
  template <class T>
  SPIRA_HD T multiply(T a, T b) const
  {
    return a * b;
  }
};

/// The example's mean Huber loss: a sum NAMM with a finalize (intersection + corrections, or the
/// hybrid's two passes).
struct mean_huber {
  double delta = 1.0;
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD T multiply(T a, T b) const
  {
    const T t = a > b ? a - b : b - a;
    const T d = T(delta);
    return t <= d ? T(0.5) * t * t : d * (t - T(0.5) * d);
  }
  template <class T>
  SPIRA_HD T finalize(T acc, const terms<T, 0>&, const terms<T, 0>&, std::int64_t dim) const
  {
    return dim == 0 ? T(0) : acc / T(dim);
  }
};

template <class D, class V, class I>
matrix run_cuda(const csr_matrix<V, I>& a, const csr_matrix<V, I>& b, const D& d,
                pairwise_strategy s, std::size_t workspace_bytes = 0)
{
  const cuda_resources res{};
  const auto da = to_device(res, a.view());
  const auto db = to_device(res, b.view());
  dense_matrix<V> out(res, a.rows(), b.rows());
  pairwise(res, da.view(), db.view(), out.view(), d, s, workspace_bytes);
  synchronize(res);
  std::vector<V> host(std::size_t(a.rows() * b.rows()));
  copy(host.data(), memory_space::host, out.data(), memory_space::device, host.size(), res);
  matrix r(std::size_t(a.rows()), std::vector<double>(std::size_t(b.rows())));
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    for (std::int64_t j = 0; j < b.rows(); ++j) {
      r[i][j] = host[std::size_t(i * b.rows() + j)];
    }
  }
  return r;
}

template <class D, class V, class I>
matrix run_host(const csr_matrix<V, I>& a, const csr_matrix<V, I>& b, const D& d)
{
  dense_matrix<V> out(host_resources{}, a.rows(), b.rows());
  pairwise(host_resources{}, a.view(), b.view(), out.view(), d);
  matrix r(std::size_t(a.rows()), std::vector<double>(std::size_t(b.rows())));
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    for (std::int64_t j = 0; j < b.rows(); ++j) {
      r[i][j] = out.data()[i * b.rows() + j];
    }
  }
  return r;
}

template <class V>
void expect_near(const matrix& got, const matrix& want, const std::string& what)
{
  const double rel = std::is_same_v<V, float> ? 1e-4 : 1e-9;
  int bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    for (std::size_t j = 0; j < want[i].size(); ++j) {
      const double g = got[i][j], w = want[i][j];
      const bool ok = std::isinf(w) ? g == w : std::abs(g - w) <= rel * (1 + std::abs(w));
      if (!ok && bad++ < 5) {
        ADD_FAILURE() << what << " at (" << i << ", " << j << "): got " << g << ", want " << w;
      }
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

/// Runs D with each strategy in `strategies` and compares with `want` and the host engine.
template <class D, class V, class I>
void check(const csr_matrix<V, I>& a, const csr_matrix<V, I>& b, const D& d, const matrix& want,
           const std::string& name, std::vector<pairwise_strategy> strategies)
{
  const matrix host = run_host(a, b, d);
  expect_near<V>(host, want, name + " host engine vs oracle");
  for (const pairwise_strategy s : strategies) {
    const matrix got = run_cuda(a, b, d, s);
    expect_near<V>(got, want, name + " " + to_string(s) + " vs oracle");
    expect_near<V>(got, host, name + " " + to_string(s) + " vs host engine");
  }
}

template <class P>
class pairwise_custom_cuda : public ::testing::Test {};
using value_index =
    ::testing::Types<std::pair<float, std::int32_t>, std::pair<double, std::int64_t>>;
TYPED_TEST_SUITE(pairwise_custom_cuda, value_index);

constexpr auto automatic = pairwise_strategy::automatic;
constexpr auto intersection = pairwise_strategy::intersection;
constexpr auto hybrid = pairwise_strategy::hybrid;
constexpr auto dense = pairwise_strategy::dense;

TYPED_TEST(pairwise_custom_cuda, graphblas_builtins_match_the_oracle)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  for (const std::int64_t cols : {std::int64_t(70), std::int64_t(30000)}) {  // dense / hash layout
    // In the large dimension only ~150 columns are used, so that rows still meet.
    const double unused = cols > 1000 ? 0.995 : 0.15;
    const auto a = random_csr<V, I>({.rows = 45,
                                     .cols = cols,
                                     .mean_degree = 9,
                                     .empty_col_fraction = unused,
                                     .signed_values = true,
                                     .seed = 3});
    const auto b = random_csr<V, I>({.rows = 29,
                                     .cols = cols,
                                     .mean_degree = 7,
                                     .empty_col_fraction = unused,
                                     .signed_values = true,
                                     .seed = 4});
    const auto da = densify(a), db = densify(b);
    auto plus = [](double x, double y) { return x + y; };
    auto times = [](double x, double y) { return x * y; };
    auto mn = [](double x, double y) { return std::min(x, y); };
    auto mx = [](double x, double y) { return std::max(x, y); };
    auto one = [](double, double) { return 1.0; };
    auto lor = [](double x, double y) { return (x != 0 || y != 0) ? 1.0 : 0.0; };
    auto land = [](double x, double y) { return (x != 0 && y != 0) ? 1.0 : 0.0; };
    const std::string at = " cols=" + std::to_string(cols);
    using namespace spira::semirings;
    const std::vector<pairwise_strategy> sparse{automatic, intersection, hybrid};
    check(a, b, plus_times{}, oracle::semiring_product(da, db, plus, times, 0), "plus_times" + at,
          {automatic, intersection, hybrid, dense});
    check(a, b, min_plus{}, oracle::semiring_product(da, db, mn, plus, inf), "min_plus" + at,
          sparse);
    check(a, b, max_plus{}, oracle::semiring_product(da, db, mx, plus, -inf), "max_plus" + at,
          sparse);
    check(a, b, max_min{}, oracle::semiring_product(da, db, mx, mn, -inf), "max_min" + at, sparse);
    check(a, b, lor_land{}, oracle::semiring_product(da, db, lor, land, 0), "lor_land" + at,
          sparse);
    check(a, b, plus_pair{}, oracle::semiring_product(da, db, plus, one, 0), "plus_pair" + at,
          sparse);
    check(a, b, any_pair{}, oracle::semiring_product(da, db, mx, one, 0), "any_pair" + at, sparse);
  }
}

TYPED_TEST(pairwise_custom_cuda, user_semirings_match_the_oracle)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  for (const std::int64_t cols : {std::int64_t(50), std::int64_t(20000)}) {
    const double unused = cols > 1000 ? 0.99 : 0.15;
    const auto a = random_csr<V, I>({.rows = 33,
                                     .cols = cols,
                                     .mean_degree = 8,
                                     .empty_col_fraction = unused,
                                     .signed_values = true,
                                     .seed = 7});
    const auto b = random_csr<V, I>({.rows = 26,
                                     .cols = cols,
                                     .mean_degree = 6,
                                     .empty_col_fraction = unused,
                                     .signed_values = true,
                                     .seed = 8});
    const auto da = densify(a), db = densify(b);
    const std::string at = " cols=" + std::to_string(cols);

    const matrix want = max_square_difference_oracle(da, db);
    // max-kind NAMM: the hybrid two-pass union, and the intersection with per-pair fix-ups.
    check(a, b, max_squared_difference{}, want, "max_squared_difference" + at,
          {automatic, intersection, hybrid});
    EXPECT_THROW(run_cuda(a, b, max_squared_difference{}, dense), invalid_argument);

    const absmax_monoid absmax;
    check(a, b, absmax_times{},
          oracle::semiring_product(
              da, db, [&](double x, double y) { return absmax(x, y); },
              [](double x, double y) { return x * y; }, 0),
          "absmax_times" + at, {automatic, intersection, hybrid});
    EXPECT_THROW(run_cuda(a, b, absmax_times{}, dense), invalid_argument);

    matrix huber(da.rows, std::vector<double>(db.rows));
    for (std::int64_t i = 0; i < da.rows; ++i) {
      for (std::int64_t j = 0; j < db.rows; ++j) {
        double s = 0;
        for (std::int64_t c = 0; c < da.cols; ++c) {
          const double t = std::abs(da.value[i][c] - db.value[j][c]);
          s += t <= 0.75 ? 0.5 * t * t : 0.75 * (t - 0.375);
        }
        huber[i][j] = s / double(da.cols);
      }
    }
    check(a, b, mean_huber{.delta = 0.75}, huber, "mean_huber" + at,
          {automatic, intersection, hybrid});
  }
}

// The workspace cap of the user entry (the last argument of spira::pairwise, with the meaning of
// distance_params::workspace_bytes): plus_times with the dense strategy in tiles of one row of A
// and one of B, and of 6 rows; a cap below that is an invalid argument naming workspace_bytes and
// the least cap; `automatic` then takes a sparse strategy; a one-term semiring with `hybrid`
// accumulates in the output and accepts any cap.
TYPED_TEST(pairwise_custom_cuda, workspace_cap_of_the_user_entry)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  const std::int64_t cols = 40;
  const auto a = random_csr<V, I>(
      {.rows = 19, .cols = cols, .mean_degree = 8, .signed_values = true, .seed = 11});
  const auto b = random_csr<V, I>(
      {.rows = 14, .cols = cols, .mean_degree = 6, .signed_values = true, .seed = 12});
  const auto da = densify(a), db = densify(b);
  const matrix want = oracle::semiring_product(
      da, db, [](double x, double y) { return x + y; }, [](double x, double y) { return x * y; },
      0);
  const std::size_t row_bytes = std::size_t(cols) * sizeof(V);
  using semirings::plus_times;
  for (const std::size_t cap : {2 * row_bytes, 6 * row_bytes}) {
    expect_near<V>(run_cuda(a, b, plus_times{}, dense, cap), want,
                   "plus_times dense workspace_bytes = " + std::to_string(cap));
  }
  std::string msg = "no exception";
  try {
    (void)run_cuda(a, b, plus_times{}, dense, 2 * row_bytes - 1);
  } catch (const invalid_argument& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("workspace_bytes = " + std::to_string(2 * row_bytes - 1)), std::string::npos)
      << msg;
  EXPECT_EQ(msg.find("params."), std::string::npos) << msg;
  EXPECT_NE(msg.find("at least " + std::to_string(2 * row_bytes)), std::string::npos) << msg;
  expect_near<V>(run_cuda(a, b, plus_times{}, automatic, 2 * row_bytes - 1), want,
                 "plus_times automatic under a cap too small for dense");
  expect_near<V>(run_cuda(a, b, plus_times{}, hybrid, 1), want,
                 "plus_times hybrid workspace_bytes = 1");
}

// workspace_minimum and the choice of `automatic` under a cap: host-side, no GPU needed. The
// least cap is one densified row of A and one of B for `dense`, one row of the accumulator tile
// (rows(B) x terms x sizeof(V)) for `hybrid` with several terms, nothing otherwise.
TEST(workspace_minimum, follows_the_tiles_and_steers_automatic_away_from_dense)
{
  using V = float;
  using I = std::int32_t;
  using semirings::plus_times;
  const auto a = random_csr<V, I>({.rows = 19, .cols = 40, .mean_degree = 8, .seed = 11});
  const auto b = random_csr<V, I>({.rows = 14, .cols = 40, .mean_degree = 6, .seed = 12});
  const std::size_t dense_least = 2 * 40 * sizeof(V);
  EXPECT_EQ(workspace_minimum<plus_times>(a.view(), b.view(), dense), dense_least);
  EXPECT_EQ(workspace_minimum<plus_times>(a.view(), b.view(), hybrid), 0u);
  EXPECT_EQ(workspace_minimum<plus_times>(a.view(), b.view(), intersection), 0u);
  EXPECT_EQ(workspace_minimum<distances::braycurtis>(a.view(), b.view(), hybrid),
            std::size_t(14) * 2 * sizeof(V));
  EXPECT_EQ(workspace_minimum<distances::braycurtis>(a.view(), b.view(), intersection), 0u);
  // Densities of about 20% and 15%: `automatic` takes `dense` unless the cap is too small for it.
  EXPECT_EQ(resolve_strategy<plus_times>(a.view(), b.view(), automatic), dense);
  EXPECT_EQ(resolve_strategy<plus_times>(a.view(), b.view(), automatic, dense_least), dense);
  EXPECT_EQ(resolve_strategy<plus_times>(a.view(), b.view(), automatic, dense_least - 1),
            intersection);
  // A forced strategy stays forced (pairwise then rejects the cap).
  EXPECT_EQ(resolve_strategy<plus_times>(a.view(), b.view(), dense, dense_least - 1), dense);
}

/// Rows that all store columns 0..3 with the largest values (100 or 100.5) and 16 other columns
/// of values in [-5, 5): every row's K = 4 best one-sided entries are shared with every other
/// row, so the selection fix-up of the intersection strategy must scan every pair, and the scan
/// decides the result (the shared columns differ by at most 0.5).
template <class V, class I>
csr_matrix<V, I> shared_top_columns(std::int64_t rows, std::int64_t cols, std::uint64_t seed)
{
  std::mt19937_64 rng(seed);
  std::vector<offset_t> ptr{0};
  std::vector<I> col;
  std::vector<V> val;
  for (std::int64_t i = 0; i < rows; ++i) {
    std::vector<I> row{0, 1, 2, 3};
    while (row.size() < 20) {
      const I c = I(4 + std::int64_t(rng() % std::uint64_t(cols - 4)));
      if (std::find(row.begin(), row.end(), c) == row.end()) {
        row.push_back(c);
      }
    }
    std::sort(row.begin(), row.end());
    for (const I c : row) {
      col.push_back(c);
      val.push_back(c < 4 ? V(100 + 0.5 * double(rng() % 2))
                          : V(double(rng() % 1000) / 100.0 - 5.0));
    }
    ptr.push_back(offset_t(col.size()));
  }
  return make_csr<V, I>(host_resources{}, rows, cols, ptr, col, val, csr_check::canonical);
}

// Every pair needs the selection fix-up's row scan: 300 x 300 = 90,000 pairs, more than the
// fallback list holds (max(nnz(A) + nnz(B), 65,536)), so both the warp-per-pair kernel and the
// in-thread scan of the overflow run; then A != B (column counts of A in the statistics).
TYPED_TEST(pairwise_custom_cuda, selection_fix_up_scans_every_pair)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  const auto a = shared_top_columns<V, I>(300, 120, 21);
  const auto b = shared_top_columns<V, I>(170, 120, 22);
  ASSERT_GT(a.rows() * a.rows(),
            std::max(2 * a.nnz(), cuda_pairwise_policy::selection_fallback_min_capacity));
  for (const auto* other : {&a, &b}) {
    const auto da = densify(a), db = densify(*other);
    const matrix want = max_square_difference_oracle(da, db);
    check(a, *other, max_squared_difference{}, want,
          other == &a ? "all pairs scanned, A = B" : "all pairs scanned, A != B",
          {automatic, intersection, hybrid});
  }
}

// choose_strategy against the statistics of the measured datasets (bench/results/
// pairwise_gpu-2026-11-21.jsonl; products and fix-up steps computed offline from the data for
// chebyshev, all rows against all rows): intersection where it measured faster, hybrid on pbmc3k.
TEST(choose_strategy, selection_namms_follow_the_measured_work)
{
  const auto chebyshev = [](std::int64_t rows, std::int64_t cols, std::int64_t nnz, double products,
                            double scan) {
    pairwise_problem p{rows, rows, cols, nnz, nnz, false, false, false};
    p.selection = true;
    p.products = products;
    p.selection_scan = scan;
    return choose_strategy(p);
  };
  // uci-bow-kos: intersection 6.8 ms, hybrid 19.3 ms (before the warp-per-pair fix-up).
  EXPECT_EQ(chebyshev(3430, 6906, 353160, 8.566e7, 1.124e8), intersection);
  // 20newsgroups: 37.7 ms against 832 ms.
  EXPECT_EQ(chebyshev(18846, 75878, 2854683, 8.882e9, 1e3), intersection);
  // sec-edgar-names: 2.0 ms against 21.3 ms.
  EXPECT_EQ(chebyshev(8335, 7817, 169658, 1.129e8, 2.306e6), intersection);
  // movielens-latest-small: few fix-up steps, but long rows (up to 2,698) scanned by one thread
  // took 8.3 ms against 1.2 ms; the warp-per-pair fix-up removes that serial path.
  EXPECT_EQ(chebyshev(610, 9724, 100836, 5.925e6, 3.157e7), intersection);
  // pbmc3k cells: 73% of the pairs scan a row (8.9e10 steps): 342 ms against 137 ms.
  EXPECT_EQ(chebyshev(2700, 13714, 2282976, 2.018e9, 8.918e10), hybrid);
  // Unmeasured statistics keep the general kernel.
  EXPECT_EQ(chebyshev(3430, 6906, 353160, -1, -1), hybrid);
  // The other rules are unchanged: sums take the intersection, dense-ish dot products the GEMM,
  // custom-⊕ NAMMs the hybrid kernel.
  pairwise_problem sum{3430, 3430, 6906, 353160, 353160, false, true, false};
  EXPECT_EQ(choose_strategy(sum), intersection);
  pairwise_problem dot{2700, 2700, 13714, 2282976, 2282976, true, true, true};
  EXPECT_EQ(choose_strategy(dot), dense);
  pairwise_problem custom{100, 100, 50, 500, 500, false, false, false};
  EXPECT_EQ(choose_strategy(custom), hybrid);
}

}  // namespace
}  // namespace spira::test
