// Numerics of the built-in metrics on inputs that break naive formulas, on both backends, float and
// double values, int32 and int64 indices: hand-checkable reproducers and their scaled variants.
//
// The guarantees checked (docs/metrics.md):
//  S1  |d - exact| <= 1e-5 * max(|exact|, s), s = 1 for cosine, correlation and jensenshannon and
//      0 for the other metrics (so relative 1e-5), with results rounded to the output type;
//  S2  NaN only where a row of the pair has NaN; +inf where the exact value is infinite or
//      overflows the output type; d(x, x) = 0 for finite x (kl_divergence: entries below its
//      epsilon 1e-10 excepted); equal infinite coordinates contribute 0;
//  S3  k-NN rows are ranked by the returned float32 value, then by the smaller index;
//  S4  correlation calls a row constant only when all its k columns (stored or not) are equal.
//
// Rows are written densely; a 0 is a column that is not stored. Expected values are written out
// by hand (the coordinates that differ are small, exact numbers) or computed in long double from
// the definition where a closed form would be unreadable.
#include "support/backend.hpp"

#include <spira/distance.hpp>
#include <spira/knn.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace spira::test {
namespace {

using rows_t = std::vector<std::vector<double>>;
using matrix = std::vector<std::vector<double>>;

template <class R, class V, class I>
struct config {
  using resources = R;
  using value = V;
  using index = I;
};

using configs = ::testing::Types<
    config<host_resources, float, std::int32_t>, config<host_resources, double, std::int32_t>,
    config<host_resources, float, std::int64_t>, config<host_resources, double, std::int64_t>,
    config<cuda_resources, float, std::int32_t>, config<cuda_resources, double, std::int32_t>,
    config<cuda_resources, float, std::int64_t>, config<cuda_resources, double, std::int64_t>>;

struct config_names {
  template <class C>
  static std::string GetName(int)
  {
    return std::string(std::is_same_v<typename C::resources, host_resources> ? "host" : "cuda") +
           (std::is_same_v<typename C::value, float> ? "_float" : "_double") +
           (std::is_same_v<typename C::index, std::int32_t> ? "_int32" : "_int64");
  }
};

template <class C>
class numerics : public ::testing::Test {
 protected:
  using R = typename C::resources;
  using V = typename C::value;
  using I = typename C::index;
  static constexpr bool is_float = std::is_same_v<V, float>;

  void SetUp() override
  {
    const std::string reason = unavailable_reason<R>();
    if (!reason.empty()) {
      GTEST_SKIP() << reason;
    }
  }

  static csr_matrix<V, I> csr(const rows_t& rows)
  {
    std::vector<offset_t> rp{0};
    std::vector<I> ci;
    std::vector<V> va;
    for (const auto& row : rows) {
      for (std::size_t c = 0; c < row.size(); ++c) {
        if (row[c] != 0) {
          ci.push_back(I(c));
          va.push_back(V(row[c]));
        }
      }
      rp.push_back(offset_t(ci.size()));
    }
    return make_csr<V, I>(host_resources{}, std::int64_t(rows.size()), std::int64_t(rows[0].size()),
                          rp, ci, va, csr_check::canonical);
  }

  /// pairwise_distance(A, B) on the backend, as doubles (the output type is V).
  static matrix distances(const rows_t& a, const rows_t& b, metric m, double p = 2.0,
                          pairwise_strategy strategy = pairwise_strategy::automatic)
  {
    const R res{};
    const auto da = on_backend(res, csr(a));
    const auto db = on_backend(res, csr(b));
    dense_matrix<V> out(res, da.rows(), db.rows());
    pairwise_distance(res, da.view(), db.view(), out.view(),
                      {.metric = m, .p = p, .strategy = strategy});
    dense_matrix<V> host;
    if constexpr (std::is_same_v<R, cuda_resources>) {
      synchronize(res);
      host = to_host(dense_view<const V>(out.view()), res);
    } else {
      host = std::move(out);
    }
    matrix r(a.size(), std::vector<double>(b.size()));
    for (std::size_t i = 0; i < a.size(); ++i) {
      for (std::size_t j = 0; j < b.size(); ++j) {
        r[i][j] = double(host.view()(std::int64_t(i), std::int64_t(j)));
      }
    }
    return r;
  }

  static knn_result knn(const rows_t& index, std::optional<rows_t> queries, knn_params params)
  {
    const auto ci = csr(index);
    std::optional<csr_matrix<V, I>> cq;
    if (queries) {
      cq = csr(*queries);
    }
    return knn_graph(R{}, ci.view(), cq ? std::optional<csr_view<V, I>>(cq->view()) : std::nullopt,
                     params);
  }
};
TYPED_TEST_SUITE(numerics, configs, config_names);

/// s of the bound S1.
double floor_of(metric m)
{
  return m == metric::cosine || m == metric::correlation || m == metric::jensenshannon ? 1.0 : 0.0;
}

/// S1 and S2 for one value of output type Out: `exact` is the exact distance (long double).
/// `scale`: the s of the pair where it depends on the rows (inner_product: Σ |x_c y_c|), else
/// floor_of(m).
template <class Out>
::testing::AssertionResult within_bound(double got, long double exact, metric m,
                                        long double scale = -1)
{
  const long double max = std::numeric_limits<Out>::max();
  const long double s = scale >= 0 ? scale : floor_of(m);
  const long double b =
      1e-5L * std::max<long double>(std::abs(exact), s) + std::numeric_limits<Out>::denorm_min();
  bool ok = false;
  if (std::isnan(got)) {
    ok = false;
  } else if (std::isinf(exact)) {
    ok = got == exact;
  } else if (std::isinf(got)) {
    ok = got > 0 ? exact + b > max : exact - b < -max;  // the exact value overflows Out
  } else {
    ok = std::abs(got - exact) <= b;
  }
  if (ok) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << to_string(m) << " = " << got << ", exact "
                                       << double(exact) << " (bound " << double(b) << ")";
}

#define SPIRA_EXPECT_DISTANCE(got, exact, m) EXPECT_TRUE(within_bound<V>((got), (exact), (m)))

// ---- S1: no cancellation on a shared large coordinate ------------------------------------------

TYPED_TEST(numerics, issue_reproducer_e9_euclidean)
{
  using V = typename TestFixture::V;
  // e9.mtx: rows [1e9, 0.5], [1e9, 0.25], [1e9, 100]; the naive expansion gave 0 and 99.92.
  const rows_t x{{1e9, 0.5}, {1e9, 0.25}, {1e9, 100}};
  const matrix d = TestFixture::distances(x, x, metric::euclidean);
  SPIRA_EXPECT_DISTANCE(d[0][1], 0.25L, metric::euclidean);
  SPIRA_EXPECT_DISTANCE(d[0][2], 99.5L, metric::euclidean);
  SPIRA_EXPECT_DISTANCE(d[1][2], 99.75L, metric::euclidean);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(d[i][i], 0.0) << "row " << i;
  }
}

TYPED_TEST(numerics, shared_large_coordinate_at_every_scale)
{
  using V = typename TestFixture::V;
  for (const double scale : {1e5, 1e7, 1e9, 1e12}) {
    SCOPED_TRACE("shared coordinate " + std::to_string(scale));
    // The shared coordinate as the value type holds it (1e12 is not a float); it cancels exactly.
    const long double b = V(scale);
    const rows_t x{{scale, 0.5, 0}, {scale, 0.25, 0}, {scale, 100, 3}};
    const long double diff01 = 0.25L, diff02[2] = {99.5L, 3};
    auto d = [&](metric m, double p = 2.0) { return TestFixture::distances(x, x, m, p); };

    const matrix eu = d(metric::euclidean);
    SPIRA_EXPECT_DISTANCE(eu[0][1], diff01, metric::euclidean);
    SPIRA_EXPECT_DISTANCE(eu[0][2], std::sqrt(99.5L * 99.5L + 9), metric::euclidean);
    const matrix sq = d(metric::sqeuclidean);
    SPIRA_EXPECT_DISTANCE(sq[0][1], 0.0625L, metric::sqeuclidean);
    SPIRA_EXPECT_DISTANCE(sq[0][2], 99.5L * 99.5L + 9, metric::sqeuclidean);
    const matrix l1 = d(metric::manhattan);
    SPIRA_EXPECT_DISTANCE(l1[0][1], diff01, metric::manhattan);
    SPIRA_EXPECT_DISTANCE(l1[0][2], diff02[0] + diff02[1], metric::manhattan);
    for (const double p : {1.5, 3.0}) {
      const matrix mk = d(metric::minkowski, p);
      SPIRA_EXPECT_DISTANCE(mk[0][1], diff01, metric::minkowski);
      const long double want = std::pow(
          std::pow(99.5L, (long double)p) + std::pow(3.0L, (long double)p), 1 / (long double)p);
      SPIRA_EXPECT_DISTANCE(mk[0][2], want, metric::minkowski);
    }
    const matrix ch = d(metric::chebyshev);
    SPIRA_EXPECT_DISTANCE(ch[0][2], 99.5L, metric::chebyshev);
    const matrix bc = d(metric::braycurtis);
    SPIRA_EXPECT_DISTANCE(bc[0][1], 0.25L / (2 * b + 0.75L), metric::braycurtis);
    SPIRA_EXPECT_DISTANCE(bc[0][2], 102.5L / (2 * b + 103.5L), metric::braycurtis);
    const matrix cb = d(metric::canberra);
    SPIRA_EXPECT_DISTANCE(cb[0][1], 0.25L / 0.75L, metric::canberra);
    SPIRA_EXPECT_DISTANCE(cb[0][2], 99.5L / 100.5L + 1, metric::canberra);
    const matrix he = d(metric::hellinger);
    SPIRA_EXPECT_DISTANCE(he[0][1], (std::sqrt(0.5L) - 0.5L) / std::sqrt(2.0L), metric::hellinger);
    SPIRA_EXPECT_DISTANCE(he[0][2], std::sqrt((std::pow(10 - std::sqrt(0.5L), 2) + 3) / 2),
                          metric::hellinger);
    const matrix kl = d(metric::kl_divergence);
    SPIRA_EXPECT_DISTANCE(kl[0][1], 0.5L * std::log(2.0L), metric::kl_divergence);
    SPIRA_EXPECT_DISTANCE(kl[1][0], 0.25L * std::log(0.5L), metric::kl_divergence);
    const matrix ip = d(metric::inner_product);
    SPIRA_EXPECT_DISTANCE(ip[0][1], b * b + 0.125L, metric::inner_product);
    const matrix hm = d(metric::hamming);
    SPIRA_EXPECT_DISTANCE(hm[0][1], 1.0L / 3, metric::hamming);
    // Rows 0 and 1 differ by 0.25 in one coordinate next to the shared one: 1 - r and 1 - cos
    // are of order (0.25 / scale)^2, 0 within the absolute bound 1e-5.
    const matrix co = d(metric::correlation);
    SPIRA_EXPECT_DISTANCE(co[0][1], 0.0L, metric::correlation);
    const matrix cs = d(metric::cosine);
    SPIRA_EXPECT_DISTANCE(cs[0][1], 0.0L, metric::cosine);  // 1 - cos = 3e-20 at 1e9
    for (const metric m : all_metrics()) {
      const matrix self = d(m, 3.0);
      for (int i = 0; i < 3; ++i) {
        if (m == metric::russellrao || m == metric::inner_product) {
          continue;
        }
        EXPECT_EQ(self[i][i], 0.0) << to_string(m) << " d(x, x) for row " << i;
      }
    }
  }
}

// ---- S4: correlation's constant-row test ------------------------------------------------------

TYPED_TEST(numerics, correlation_of_reversed_ramps_on_a_large_offset)
{
  using V = typename TestFixture::V;
  for (const double scale : {1e5, 1e7, 1e9, 1e12}) {
    if (TestFixture::is_float && scale > 16777216) {  // scale + 1 is not a float
      continue;
    }
    SCOPED_TRACE("offset " + std::to_string(scale));
    const rows_t x{{scale, scale + 1, scale + 2},
                   {scale + 2, scale + 1, scale},
                   {scale, scale + 2, scale + 4},
                   {scale, scale, scale}};
    const matrix d = TestFixture::distances(x, x, metric::correlation);
    SPIRA_EXPECT_DISTANCE(d[0][1], 2.0L, metric::correlation);  // the issue's 0
    SPIRA_EXPECT_DISTANCE(d[1][0], 2.0L, metric::correlation);
    SPIRA_EXPECT_DISTANCE(d[0][2], 0.0L, metric::correlation);
    SPIRA_EXPECT_DISTANCE(d[1][2], 2.0L, metric::correlation);
    SPIRA_EXPECT_DISTANCE(d[0][3], 1.0L, metric::correlation);  // one row constant
    SPIRA_EXPECT_DISTANCE(d[3][3], 0.0L, metric::correlation);  // both constant
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(d[i][i], 0.0) << "row " << i;
    }
  }
}

TYPED_TEST(numerics, correlation_counts_implicit_zeros_in_the_constant_test)
{
  using V = typename TestFixture::V;
  for (const double scale : {1.0, 1e7, 1e12}) {
    SCOPED_TRACE("value " + std::to_string(scale));
    // [b, b, 0] and [b, 0, b] are not constant (their third or second column is an implicit 0):
    // centred, they are b/3 [1, 1, -2] and b/3 [1, -2, 1], so the correlation is -1/2.
    const rows_t x{{scale, scale, 0},
                   {scale, 0, scale},
                   {scale, scale, scale},
                   {2 * scale, 2 * scale, 2 * scale}};
    const matrix d = TestFixture::distances(x, x, metric::correlation);
    SPIRA_EXPECT_DISTANCE(d[0][1], 1.5L, metric::correlation);
    SPIRA_EXPECT_DISTANCE(d[0][2], 1.0L, metric::correlation);
    SPIRA_EXPECT_DISTANCE(d[2][3], 0.0L, metric::correlation);
  }
}

// ---- S2: inf and NaN --------------------------------------------------------------------------

TYPED_TEST(numerics, infinite_coordinate_gives_inf_not_nan)
{
  using V = typename TestFixture::V;
  const double inf = std::numeric_limits<double>::infinity();
  const rows_t x{{1, 2}}, y{{inf, 0}};
  for (const metric m : all_metrics()) {
    const matrix d = TestFixture::distances(x, y, m, 3.0);
    EXPECT_FALSE(std::isnan(d[0][0])) << to_string(m) << "([1, 2], [inf, 0]) is NaN";
  }
  for (const metric m :
       {metric::manhattan, metric::euclidean, metric::sqeuclidean, metric::chebyshev,
        metric::minkowski, metric::hellinger, metric::inner_product}) {
    EXPECT_EQ(TestFixture::distances(x, y, m, 3.0)[0][0], inf) << to_string(m);
  }
  EXPECT_EQ(TestFixture::distances(x, y, metric::kl_divergence)[0][0], -inf);  // 1 log(1/inf)
  EXPECT_EQ(TestFixture::distances(y, x, metric::kl_divergence)[0][0], inf);
  SPIRA_EXPECT_DISTANCE(TestFixture::distances(x, y, metric::hamming)[0][0], 1.0L, metric::hamming);
  SPIRA_EXPECT_DISTANCE(TestFixture::distances(x, y, metric::jaccard)[0][0], 0.5L, metric::jaccard);
  SPIRA_EXPECT_DISTANCE(TestFixture::distances(x, y, metric::dice)[0][0], 1.0L / 3, metric::dice);
  SPIRA_EXPECT_DISTANCE(TestFixture::distances(x, y, metric::russellrao)[0][0], 0.5L,
                        metric::russellrao);
}

TYPED_TEST(numerics, nan_stays_in_the_pairs_of_its_row)
{
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const rows_t x{{1, 2, 0}, {nan, 1, 0}, {3, 0, 1}, {1e9, 0.5, 0}, {1e9, 0.25, 0}};
  for (const metric m : all_metrics()) {
    const matrix d = TestFixture::distances(x, x, m, 3.0);
    for (std::size_t i = 0; i < x.size(); ++i) {
      for (std::size_t j = 0; j < x.size(); ++j) {
        if (i != 1 && j != 1) {
          EXPECT_FALSE(std::isnan(d[i][j])) << to_string(m) << " (" << i << ", " << j << ")";
        }
      }
    }
  }
}

TYPED_TEST(numerics, equal_infinite_coordinates_contribute_zero)
{
  using V = typename TestFixture::V;
  const double inf = std::numeric_limits<double>::infinity();
  const rows_t x{{inf, 1}, {inf, 2}};
  const long double h = (std::sqrt(2.0L) - 1) / std::sqrt(2.0L);
  const std::vector<std::pair<metric, long double>> cases{
      {metric::euclidean, 1},  {metric::sqeuclidean, 1}, {metric::manhattan, 1},
      {metric::chebyshev, 1},  {metric::minkowski, 1},   {metric::canberra, 1.0L / 3},
      {metric::hamming, 0.5L}, {metric::hellinger, h}};
  for (const auto& [m, want] : cases) {
    const matrix d = TestFixture::distances(x, x, m, 3.0);
    SPIRA_EXPECT_DISTANCE(d[0][1], want, m);
    EXPECT_EQ(d[0][0], 0.0) << to_string(m) << " d(x, x) with x = [inf, 1]";
    EXPECT_EQ(d[1][1], 0.0) << to_string(m) << " d(x, x) with x = [inf, 2]";
  }
}

TYPED_TEST(numerics, huge_values_give_no_nan_and_each_point_is_its_own_first_neighbour)
{
  using V = typename TestFixture::V;
  // Squares above the largest double (1e154^2 > 1.8e308); for float input the squares overflow
  // float (3e19^2 > 3.4e38) but are exact in double.
  const double big = TestFixture::is_float ? 3e19 : 1e155;
  const rows_t x{{3 * big, big, 0}, {big, 3 * big, 0}, {0, 0, 5 * big}, {big, big, big}};
  for (const metric m : all_metrics()) {
    const matrix d = TestFixture::distances(x, x, m, 3.0);
    for (std::size_t i = 0; i < x.size(); ++i) {
      for (std::size_t j = 0; j < x.size(); ++j) {
        EXPECT_FALSE(std::isnan(d[i][j])) << to_string(m) << " (" << i << ", " << j << ")";
      }
      if (m != metric::russellrao && m != metric::inner_product) {
        EXPECT_EQ(d[i][i], 0.0) << to_string(m) << " d(x, x) for row " << i;
      }
    }
  }
  const long double b = big;
  const matrix eu = TestFixture::distances(x, x, metric::euclidean);
  SPIRA_EXPECT_DISTANCE(eu[0][1], std::sqrt(8.0L) * b, metric::euclidean);
  SPIRA_EXPECT_DISTANCE(eu[0][2], std::sqrt(35.0L) * b, metric::euclidean);
  SPIRA_EXPECT_DISTANCE(eu[0][3], std::sqrt(5.0L) * b, metric::euclidean);
  const matrix cs = TestFixture::distances(x, x, metric::cosine);
  SPIRA_EXPECT_DISTANCE(cs[0][1], 1 - 6.0L / 10, metric::cosine);
  SPIRA_EXPECT_DISTANCE(cs[0][2], 1.0L, metric::cosine);
  const knn_result g = TestFixture::knn(x, std::nullopt, {.k = 2, .metric = metric::euclidean});
  for (std::int64_t r = 0; r < 4; ++r) {
    EXPECT_EQ(g.indices.view()(r, 0), r) << "row " << r << " is not its own first neighbour";
    EXPECT_EQ(g.distances.view()(r, 0), 0.0f) << "row " << r;
  }
}

TYPED_TEST(numerics, float32_overflow_gives_inf)
{
  using V = typename TestFixture::V;
  const rows_t x{{3e38, -3e38}, {-3e38, 3e38}};
  const long double six = 6e38L, three = 3e38L;
  // Exact values; V = float overflows (+inf), V = double holds them.
  SPIRA_EXPECT_DISTANCE(TestFixture::distances(x, x, metric::euclidean)[0][1],
                        std::sqrt(2.0L) * six, metric::euclidean);
  SPIRA_EXPECT_DISTANCE(TestFixture::distances(x, x, metric::manhattan)[0][1], 2 * six,
                        metric::manhattan);
  SPIRA_EXPECT_DISTANCE(TestFixture::distances(x, x, metric::chebyshev)[0][1], six,
                        metric::chebyshev);
  SPIRA_EXPECT_DISTANCE(TestFixture::distances(x, x, metric::sqeuclidean)[0][1], 2 * six * six,
                        metric::sqeuclidean);
  SPIRA_EXPECT_DISTANCE(TestFixture::distances(x, x, metric::inner_product)[0][1],
                        -2 * three * three, metric::inner_product);
  SPIRA_EXPECT_DISTANCE(TestFixture::distances(x, x, metric::cosine)[0][1], 2.0L, metric::cosine);
  const matrix self = TestFixture::distances(x, x, metric::euclidean);
  EXPECT_EQ(self[0][0], 0.0);
  EXPECT_EQ(self[1][1], 0.0);
}

TYPED_TEST(numerics, every_strategy_handles_products_beyond_the_float_range)
{
  using V = typename TestFixture::V;
  // Row 2 is orthogonal to rows 0 and 1, but its products with them overflow float (3e68): a sum
  // that meets them as +inf and -inf, or as one +inf, must not reach the result.
  const rows_t x{{3e38, -3e38}, {-3e38, 3e38}, {1e30, 1e30}};
  const long double a = V(3e38), c = V(1e30);
  const long double sq02 = (a - c) * (a - c) + (a + c) * (a + c);
  for (const auto s : {pairwise_strategy::automatic, pairwise_strategy::intersection,
                       pairwise_strategy::hybrid, pairwise_strategy::dense}) {
    SCOPED_TRACE(std::string("strategy ") + to_string(s));
    // inner_product is within the bound of BLAS, relative to Σ |x_c y_c| = 2ac (docs/metrics.md).
    const matrix ip = TestFixture::distances(x, x, metric::inner_product, 2.0, s);
    EXPECT_TRUE(within_bound<V>(ip[0][2], 0.0L, metric::inner_product, 2 * a * c));
    EXPECT_TRUE(within_bound<V>(ip[2][1], 0.0L, metric::inner_product, 2 * a * c));
    SPIRA_EXPECT_DISTANCE(ip[0][1], -2 * a * a, metric::inner_product);
    SPIRA_EXPECT_DISTANCE(ip[2][2], 2 * c * c, metric::inner_product);
    const matrix cs = TestFixture::distances(x, x, metric::cosine, 2.0, s);
    SPIRA_EXPECT_DISTANCE(cs[0][2], 1.0L, metric::cosine);
    SPIRA_EXPECT_DISTANCE(cs[0][1], 2.0L, metric::cosine);
    const matrix sq = TestFixture::distances(x, x, metric::sqeuclidean, 2.0, s);
    SPIRA_EXPECT_DISTANCE(sq[0][2], sq02, metric::sqeuclidean);
    SPIRA_EXPECT_DISTANCE(sq[2][2], 0.0L, metric::sqeuclidean);
    const matrix eu = TestFixture::distances(x, x, metric::euclidean, 2.0, s);
    SPIRA_EXPECT_DISTANCE(eu[0][2], std::sqrt(sq02), metric::euclidean);
  }
}

TYPED_TEST(numerics, minkowski_with_large_p)
{
  using V = typename TestFixture::V;
  for (const double shift : {0.0, 1e5}) {
    SCOPED_TRACE("shift " + std::to_string(shift));
    const rows_t x{{shift + 1, shift + 2, shift + 3}, {shift + 4, shift + 6, shift + 8}};
    for (const double p : {1000.0, 1e6}) {
      const matrix d = TestFixture::distances(x, x, metric::minkowski, p);
      // (3^p + 4^p + 5^p)^(1/p) = 5 (1 + (4/5)^p + (3/5)^p)^(1/p): 5 to far below float precision.
      SPIRA_EXPECT_DISTANCE(d[0][1], 5.0L, metric::minkowski);
      EXPECT_EQ(d[0][0], 0.0) << "p = " << p;
      EXPECT_EQ(d[1][1], 0.0) << "p = " << p;
    }
  }
}

TYPED_TEST(numerics, kl_divergence_of_a_row_with_itself)
{
  using V = typename TestFixture::V;
  const rows_t x{{0.5, 1e-3, 2}, {1e-12, 1, 0}};
  const matrix d = TestFixture::distances(x, x, metric::kl_divergence);
  EXPECT_EQ(d[0][0], 0.0);  // every entry at least the epsilon 1e-10
  // The documented exception: 1e-12 log(1e-12 / 1e-10) for the entry below the epsilon.
  const long double tiny = V(1e-12);
  SPIRA_EXPECT_DISTANCE(d[1][1], tiny * std::log(tiny / 1e-10L), metric::kl_divergence);
}

// ---- S3: the k-NN tie rule on the returned float32 values ---------------------------------------

TYPED_TEST(numerics, knn_tie_rule_issue_example_cosine)
{
  const rows_t x{{1, 1, 0, 0}, {0, 3, 0, 0}, {2, 0, 0, 0},
                 {0, 0, 0, 5}, {3, 0, 0, 0}, {0, 1, 0, 0}};
  // Row 0 is at cosine distance 1 - 1/sqrt(2) from rows 1, 2, 4 and 5 (1 from row 3).
  const float tie = float(1 - 1 / std::sqrt(2.0L));
  const knn_result g3 =
      TestFixture::knn(x, std::nullopt, {.k = 3, .metric = metric::cosine, .exclude_self = true});
  const knn_result g2 =
      TestFixture::knn(x, std::nullopt, {.k = 2, .metric = metric::cosine, .exclude_self = true});
  const std::vector<std::int64_t> want3{1, 2, 4}, want2{1, 2};
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(g3.indices.view()(0, c), want3[std::size_t(c)]) << "k = 3, position " << c;
    EXPECT_NEAR(g3.distances.view()(0, c), tie, 1e-5f) << "k = 3, position " << c;
  }
  for (int c = 0; c < 2; ++c) {
    EXPECT_EQ(g2.indices.view()(0, c), want2[std::size_t(c)]) << "k = 2, position " << c;
  }
  // Without exclude_self the row itself comes first (distance 0), then the same three.
  const knn_result g4 = TestFixture::knn(x, std::nullopt, {.k = 4, .metric = metric::cosine});
  const std::vector<std::int64_t> want4{0, 1, 2, 4};
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(g4.indices.view()(0, c), want4[std::size_t(c)]) << "k = 4, position " << c;
  }
}

TYPED_TEST(numerics, knn_ranks_equal_float32_values_by_index)
{
  // From the query [0, 0]: row 0 at sqrt(1 + 2^-24), just below 1 + 2^-25, row 1 at 1, row 2 at
  // 2. The first two differ in double but both are 1.0f as float32: the smaller index first.
  const double e = std::ldexp(1.0, -12);
  const rows_t index{{1, e}, {1, 0}, {2, 0}};
  const rows_t query{{0, 0}};
  for (const std::int64_t k : {1, 2}) {
    const knn_result g = TestFixture::knn(index, query, {.k = k, .metric = metric::euclidean});
    EXPECT_EQ(g.indices.view()(0, 0), 0) << "k = " << k;
    EXPECT_EQ(g.distances.view()(0, 0), 1.0f) << "k = " << k;
    if (k == 2) {
      EXPECT_EQ(g.indices.view()(0, 1), 1);
      EXPECT_EQ(g.distances.view()(0, 1), 1.0f);
    }
  }
}

TYPED_TEST(numerics, knn_on_a_shared_large_coordinate)
{
  for (const double scale : {1e5, 1e9, 1e12}) {
    SCOPED_TRACE("shared coordinate " + std::to_string(scale));
    const rows_t x{{scale, 0.5}, {scale, 0.25}, {scale, 100}, {scale, 50}};
    const knn_result g = TestFixture::knn(x, std::nullopt, {.k = 4, .metric = metric::euclidean});
    const std::vector<std::vector<std::int64_t>> want{
        {0, 1, 3, 2}, {1, 0, 3, 2}, {2, 3, 0, 1}, {3, 0, 1, 2}};
    const std::vector<std::vector<float>> dist{{0, 0.25f, 49.5f, 99.5f},
                                               {0, 0.25f, 49.75f, 99.75f},
                                               {0, 50, 99.5f, 99.75f},
                                               {0, 49.5f, 49.75f, 50}};
    for (std::size_t r = 0; r < 4; ++r) {
      for (std::size_t c = 0; c < 4; ++c) {
        EXPECT_EQ(g.indices.view()(std::int64_t(r), std::int64_t(c)), want[r][c])
            << "row " << r << " position " << c;
        EXPECT_NEAR(g.distances.view()(std::int64_t(r), std::int64_t(c)), dist[r][c],
                    1e-5 * dist[r][c])
            << "row " << r << " position " << c;
      }
    }
  }
}

TYPED_TEST(numerics, knn_with_more_untrusted_pairs_than_the_queue_holds)
{
  // 320 rows [1e9, r / 4]: every pair cancels (|x|^2 = 1e18), so the guard evaluates all 102,080
  // pairs directly; on the GPU's fused algorithm they overflow its queue of 65,536 pairs, and the
  // rows run again in groups. Exact: d(r, s) = |r - s| / 4, ties to the smaller index.
  const std::int64_t n = 320, k = 5;
  rows_t x;
  for (std::int64_t r = 0; r < n; ++r) {
    x.push_back({1e9, double(r) / 4});
  }
  constexpr bool on_gpu = std::is_same_v<typename TestFixture::R, cuda_resources>;
  const knn_params params{.k = k,
                          .metric = metric::euclidean,
                          .exclude_self = true,
                          .algo = on_gpu ? knn_algo::fused : knn_algo::automatic,
                          .strategy = pairwise_strategy::intersection};
  const knn_result g = TestFixture::knn(x, std::nullopt, params);
  for (std::int64_t r = 0; r < n; ++r) {
    std::vector<std::int64_t> order;
    for (std::int64_t s = 0; s < n; ++s) {
      if (s != r) {
        order.push_back(s);
      }
    }
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
      return std::abs(a - r) < std::abs(b - r);
    });
    for (std::int64_t c = 0; c < k; ++c) {
      const std::int64_t want = order[std::size_t(c)];
      ASSERT_EQ(g.indices.view()(r, c), want) << "row " << r << " position " << c;
      ASSERT_EQ(g.distances.view()(r, c), float(std::abs(want - r)) / 4)
          << "row " << r << " position " << c;
    }
  }
  // Cosine on the same rows: every distance is below 1e-15, so every pair is a near duplicate
  // evaluated directly; the GPU's graph is the host's, byte for byte.
  if constexpr (on_gpu) {
    knn_params cos = params;
    cos.metric = metric::cosine;
    const knn_result got = TestFixture::knn(x, std::nullopt, cos);
    const auto ci = TestFixture::csr(x);
    knn_params on_host = cos;
    on_host.algo = knn_algo::automatic;
    const knn_result want = knn_graph(host_resources{}, ci.view(), std::nullopt, on_host);
    for (std::int64_t r = 0; r < n; ++r) {
      for (std::int64_t c = 0; c < k; ++c) {
        ASSERT_EQ(got.indices.view()(r, c), want.indices.view()(r, c))
            << "cosine row " << r << " position " << c;
        ASSERT_EQ(got.distances.view()(r, c), want.distances.view()(r, c))
            << "cosine row " << r << " position " << c;
      }
    }
  }
}

}  // namespace
}  // namespace spira::test
