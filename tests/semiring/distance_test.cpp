// The built-in metrics (spira::pairwise_distance) against the naive float64 oracle and against
// hand-checked numbers; names, directions and argument validation.
#include "support/oracle.hpp"

#include <spira/distance.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace spira::test {
namespace {

template <class V, class I>
std::vector<std::vector<double>> run(metric m, const csr_matrix<V, I>& a, const csr_matrix<V, I>& b,
                                     double p = 2.0, int threads = 0)
{
  dense_matrix<V> out(host_resources{}, a.rows(), b.rows());
  pairwise_distance(host_resources{threads}, a.view(), b.view(), out.view(), {.metric = m, .p = p});
  std::vector<std::vector<double>> r(a.rows(), std::vector<double>(b.rows()));
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    for (std::int64_t j = 0; j < b.rows(); ++j) {
      r[i][j] = out.data()[i * b.rows() + j];
    }
  }
  return r;
}

template <class V, class I>
csr_matrix<V, I> from_dense(const std::vector<std::vector<double>>& d)
{
  std::vector<offset_t> rp{0};
  std::vector<I> ci;
  std::vector<V> va;
  for (const auto& row : d) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (row[c] != 0) {
        ci.push_back(I(c));
        va.push_back(V(row[c]));
      }
    }
    rp.push_back(offset_t(ci.size()));
  }
  return make_csr<V, I>(host_resources{}, std::int64_t(d.size()), std::int64_t(d[0].size()), rp, ci,
                        va, csr_check::canonical);
}

// Tolerance: relative to the value, with an absolute floor. The engine computes in double and
// rounds once to the output type; for float the inputs are the same floats the oracle sees, so only
// the final rounding (2^-24) and double cancellation in the expanded forms remain.
template <class V>
double tolerance(double want)
{
  const double rel = std::is_same_v<V, float> ? 2e-6 : 1e-11;
  return rel * (1.0 + std::abs(want));
}

template <class V>
void expect_matrix_near(const std::vector<std::vector<double>>& got,
                        const std::vector<std::vector<double>>& want, const std::string& what)
{
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].size(), want[i].size()) << what;
    for (std::size_t j = 0; j < want[i].size(); ++j) {
      if (std::isinf(want[i][j])) {
        EXPECT_EQ(got[i][j], want[i][j]) << what << " at (" << i << ", " << j << ")";
      } else {
        EXPECT_NEAR(got[i][j], want[i][j], tolerance<V>(want[i][j]))
            << what << " at (" << i << ", " << j << ")";
      }
    }
  }
}

// ---- names
// ----------------------------------------------------------------------------------------

TEST(metric_names, round_trip_the_scipy_names)
{
  const std::vector<std::string> names{
      "cosine",      "euclidean",     "sqeuclidean", "manhattan",     "chebyshev",    "minkowski",
      "canberra",    "braycurtis",    "hamming",     "jaccard",       "dice",         "russellrao",
      "correlation", "jensenshannon", "hellinger",   "kl_divergence", "inner_product"};
  ASSERT_EQ(all_metrics().size(), names.size());
  for (const auto& n : names) {
    EXPECT_EQ(to_string(metric_from_string(n)), n);
  }
  for (const metric m : all_metrics()) {
    EXPECT_EQ(metric_from_string(to_string(m)), m);
  }
}

TEST(metric_names, unknown_name_lists_the_valid_ones)
{
  try {
    (void)metric_from_string("cosinus");
    FAIL() << "expected spira::invalid_argument";
  } catch (const invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'cosinus'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cityblock (manhattan)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("manhattan"), std::string::npos) << msg;
    EXPECT_NE(msg.find("kl_divergence"), std::string::npos) << msg;
  }
  EXPECT_THROW((void)metric_from_string("Cosine"), invalid_argument);
  EXPECT_THROW((void)metric_from_string(""), invalid_argument);
}

TEST(metric_names, scipy_and_sklearn_aliases)
{
  EXPECT_EQ(metric_from_string("cityblock"), metric::manhattan);
  EXPECT_EQ(metric_from_string("l1"), metric::manhattan);
  EXPECT_EQ(metric_from_string("l2"), metric::euclidean);
  ASSERT_EQ(metric_aliases().size(), 3u);
  for (const metric_alias& a : metric_aliases()) {
    EXPECT_EQ(metric_from_string(a.name), a.target);
  }
  EXPECT_THROW((void)metric_from_string("L1"), invalid_argument);
}

TEST(metric_names, only_inner_product_is_a_similarity)
{
  for (const metric m : all_metrics()) {
    EXPECT_EQ(is_similarity(m), m == metric::inner_product);
  }
}

// ---- hand-checked
// ---------------------------------------------------------------------------------

// X = [[0,2,0,3],[0,0,0,0],[1,1,1,1]], Y = [[0,1,0,3],[0,0,0,0],[2,0,0,0.5]].
// Expected values: scipy 1.10.1 `cdist(X, Y, name)` (cityblock for manhattan, minkowski with p=3;
// the boolean metrics jaccard, dice and russellrao on X != 0 and Y != 0),
// rounded to 15 digits, except where scipy gives nan/inf; those entries hold the documented results
// (docs/metrics.md) and are marked "doc". hellinger, kl_divergence and inner_product are not in
// scipy and were computed with numpy from the formulas in docs/metrics.md.
struct hand_case {
  metric m;
  double p;
  std::vector<std::vector<double>> want;
};

std::vector<hand_case> hand_cases()
{
  const double js_max = std::sqrt(std::log(2.0));  // doc: empty row vs non-empty row
  return {
      {metric::cosine,
       2,
       {{0.035236178762268, 1 /*doc*/, 0.798198161801106},
        {1 /*doc*/, 0 /*doc*/, 1 /*doc*/},
        {0.367544467966324, 1 /*doc*/, 0.393660937409168}}},
      {metric::euclidean,
       2,
       {{1.0, 3.605551275463989, 3.774917217635375},
        {3.16227766016838, 0.0, 2.06155281280883},
        {2.449489742783178, 2.0, 1.802775637731994}}},
      {metric::sqeuclidean, 2, {{1, 13, 14.25}, {10, 0, 4.25}, {6, 4, 3.25}}},
      {metric::manhattan, 2, {{1, 5, 6.5}, {4, 0, 2.5}, {4, 4, 3.5}}},
      {metric::chebyshev, 2, {{1, 3, 2.5}, {3, 0, 2}, {2, 1, 1}}},
      {metric::minkowski,
       3,
       {{1.0, 3.2710663101885897, 3.162351771708685},
        {3.0365889718756622, 0.0, 2.010362879294529},
        {2.154434690031884, 1.5874010519681994, 1.462008869106433}}},
      {metric::canberra,
       2,
       {{0.333333333333333, 2, 2.714285714285714}, {2, 0, 2}, {2.5, 4, 2.666666666666667}}},
      {metric::braycurtis,
       2,
       {{0.111111111111111, 1, 0.866666666666667}, {1, 0 /*doc*/, 1}, {0.5, 1, 0.538461538461538}}},
      {metric::hamming, 2, {{0.25, 0.5, 0.75}, {0.5, 0, 0.5}, {0.75, 1, 1}}},
      {metric::jaccard, 2, {{0, 1, 0.666666666666667}, {1, 0, 1}, {0.5, 1, 0.5}}},
      {metric::dice,
       2,
       {{0, 1, 0.5}, {1, 0 /*doc*/, 1}, {0.333333333333333, 1, 0.333333333333333}}},
      {metric::russellrao, 2, {{0.5, 1, 0.75}, {1, 1, 1}, {0.5, 1, 0.5}}},
      {metric::correlation,
       2,
       {{0.057190958417937, 1 /*doc*/, 1.381528726074437},
        {1 /*doc*/, 0 /*doc*/, 1 /*doc*/},
        {1 /*doc*/, 0 /*doc*/, 1 /*doc*/}}},
      {metric::jensenshannon,
       2,
       {{0.113611718462412, js_max /*doc*/, 0.684261004816453},
        {js_max /*doc*/, 0 /*doc*/, js_max /*doc*/},
        {0.488561984921622, js_max /*doc*/, 0.500421596227546}}},
      {metric::hellinger,
       2,
       {{0.29289321881345254, 1.5811388300841895, 1.5891051345359157},
        {1.4142135623730947, 0.0, 1.118033988749895},
        {1.126032500610494, 1.414213562373095, 1.0623933623853066}}},
      {metric::kl_divergence,
       2,
       {{1.3862943611198906, 119.81138587682649, 52.813274628684965},
        {0, 0, 0},
        {44.95308957121281, 92.10340371976183, 46.05170185988092}}},
      {metric::inner_product, 2, {{11, 0, 1.5}, {0, 0, 0}, {4, 0, 2.5}}},
  };
}

template <class V>
double hand_tolerance()
{
  return std::is_same_v<V, float> ? 2e-6 : 1e-13;
}

template <class T>
class distance_typed : public ::testing::Test {};
using value_index =
    ::testing::Types<std::pair<float, std::int32_t>, std::pair<float, std::int64_t>,
                     std::pair<double, std::int32_t>, std::pair<double, std::int64_t>>;
TYPED_TEST_SUITE(distance_typed, value_index);

TYPED_TEST(distance_typed, hand_checked_three_by_three)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  const auto x = from_dense<V, I>({{0, 2, 0, 3}, {0, 0, 0, 0}, {1, 1, 1, 1}});
  const auto y = from_dense<V, I>({{0, 1, 0, 3}, {0, 0, 0, 0}, {2, 0, 0, 0.5}});
  const auto cases = hand_cases();
  ASSERT_EQ(cases.size(), all_metrics().size());
  for (const auto& hc : cases) {
    const auto got = run(hc.m, x, y, hc.p);
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        EXPECT_NEAR(got[i][j], hc.want[i][j], hand_tolerance<V>() * (1 + std::abs(hc.want[i][j])))
            << to_string(hc.m) << " at (" << i << ", " << j << ")";
      }
    }
  }
}

// ---- random matrices against the oracle
// ------------------------------------------------------------

// A (37 x 61) and B (23 x 61) with power-law row degrees, empty rows and empty columns; values
// positive, signed (where the metric allows) or small integers (so that equal values occur for
// hamming / jaccard).
TYPED_TEST(distance_typed, every_metric_matches_the_oracle_on_random_matrices)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  for (const int variant : {0, 1, 2}) {
    random_options oa{.rows = 37, .cols = 61, .mean_degree = 7, .seed = 11u + variant};
    random_options ob{.rows = 23, .cols = 61, .mean_degree = 5, .seed = 97u + variant};
    oa.signed_values = ob.signed_values = variant == 1;
    oa.small_integers = ob.small_integers = variant == 2;
    const auto a = random_csr<V, I>(oa);
    const auto b = random_csr<V, I>(ob);
    const auto da = densify(a), db = densify(b);
    for (const metric m : all_metrics()) {
      if (variant == 1 && requires_nonnegative(m)) {
        continue;
      }
      for (const double p : m == metric::minkowski ? std::vector<double>{1.0, 1.5, 2.0, 3.0}
                                                   : std::vector<double>{2.0}) {
        const std::string what = std::string(to_string(m)) + " p=" + std::to_string(p) +
                                 " variant " + std::to_string(variant);
        expect_matrix_near<V>(run(m, a, b, p), oracle::pairwise(m, da, db, p), what);
      }
    }
  }
}

TYPED_TEST(distance_typed, self_distance_is_exactly_zero_and_result_is_thread_independent)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  const auto a = random_csr<V, I>({.rows = 50, .cols = 80, .mean_degree = 9, .seed = 5});
  for (const metric m : all_metrics()) {
    const auto one = run(m, a, a, 3.0, 1);
    const auto many = run(m, a, a, 3.0, 3);
    EXPECT_EQ(one, many) << to_string(m);
    // inner_product is a similarity; russellrao(x, x) = (k - nnz(x)) / k is not 0 (as in scipy).
    if (is_similarity(m) || m == metric::russellrao) {
      continue;
    }
    for (std::int64_t i = 0; i < a.rows(); ++i) {
      EXPECT_EQ(one[i][i], 0.0) << to_string(m) << " row " << i;
    }
  }
}

TYPED_TEST(distance_typed, constant_rows_and_explicit_zeros_follow_the_documented_rules)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  // Row 0 is constant (all 2), row 1 stores explicit zeros only, row 2 is ordinary.
  const auto a = make_csr<V, I>(host_resources{}, 3, 3, std::vector<offset_t>{0, 3, 5, 7},
                                std::vector<I>{0, 1, 2, 0, 2, 0, 1},
                                std::vector<V>{2, 2, 2, 0, 0, 1, 3}, csr_check::canonical);
  const auto d = densify(a);
  for (const metric m : all_metrics()) {
    expect_matrix_near<V>(run(m, a, a, 2.0), oracle::pairwise(m, d, d, 2.0), to_string(m));
  }
}

TYPED_TEST(distance_typed, nan_input_is_not_hidden_by_the_clamp_of_expanded_forms)
{
  // The expanded forms clamp rounding below zero to 0; a NaN must stay NaN, not become a distance
  // of 0 that would make the row everyone's nearest neighbour.
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  const V nan = std::numeric_limits<V>::quiet_NaN();
  const auto a = make_csr<V, I>(host_resources{}, 2, 3, std::vector<offset_t>{0, 2, 4},
                                std::vector<I>{0, 2, 0, 1}, std::vector<V>{1, nan, 2, 3},
                                csr_check::canonical);
  for (const metric m : {metric::sqeuclidean, metric::euclidean, metric::minkowski}) {
    const auto out = run(m, a, a, 3.0);
    EXPECT_TRUE(std::isnan(out[0][0])) << to_string(m);
    EXPECT_TRUE(std::isnan(out[0][1])) << to_string(m);
    EXPECT_TRUE(std::isnan(out[1][0])) << to_string(m);
    EXPECT_EQ(out[1][1], 0.0) << to_string(m);
  }
}

// ---- argument validation -----------------------------------------------------------------------

template <class Fn>
std::string message_of(Fn fn)
{
  try {
    fn();
  } catch (const invalid_argument& e) {
    return e.what();
  }
  return "no exception";
}

TEST(distance_arguments, are_validated_with_clear_messages)
{
  using V = double;
  using I = std::int32_t;
  const auto a = random_csr<V, I>({.rows = 4, .cols = 6, .seed = 1});
  const auto b = random_csr<V, I>({.rows = 5, .cols = 6, .seed = 2});
  const auto wide = random_csr<V, I>({.rows = 5, .cols = 7, .seed = 3});
  dense_matrix<V> out(host_resources{}, 4, 5);
  const host_resources res{};

  EXPECT_THROW(pairwise_distance(res, a.view(), wide.view(), out.view(), {}), dimension_mismatch);
  auto msg = message_of([&] { pairwise_distance(res, a.view(), wide.view(), out.view(), {}); });
  EXPECT_NE(msg.find("A has 6 columns but B has 7"), std::string::npos) << msg;

  dense_matrix<V> bad_out(host_resources{}, 5, 4);
  EXPECT_THROW(pairwise_distance(res, a.view(), b.view(), bad_out.view(), {}), dimension_mismatch);

  msg = message_of([&] {
    pairwise_distance(res, a.view(), b.view(), out.view(), {.metric = metric::minkowski, .p = 0.5});
  });
  EXPECT_NE(msg.find("p >= 1"), std::string::npos) << msg;

  // Unsorted columns in row 0 of B.
  const auto unsorted = make_csr<V, I>(res, 5, 6, std::vector<offset_t>{0, 2, 2, 2, 2, 2},
                                       std::vector<I>{3, 1}, std::vector<V>{1, 1});
  msg = message_of([&] { pairwise_distance(res, a.view(), unsorted.view(), out.view(), {}); });
  EXPECT_NE(msg.find("B"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not canonical"), std::string::npos) << msg;

  const auto negative = make_csr<V, I>(res, 5, 6, std::vector<offset_t>{0, 0, 1, 1, 1, 1},
                                       std::vector<I>{4}, std::vector<V>{-0.5});
  msg = message_of([&] {
    pairwise_distance(res, a.view(), negative.view(), out.view(),
                      {.metric = metric::jensenshannon});
  });
  EXPECT_NE(msg.find("non-negative"), std::string::npos) << msg;
  EXPECT_NE(msg.find("row 1, column 4"), std::string::npos) << msg;
  // Negative values are fine for metrics that allow them.
  EXPECT_NO_THROW(
      pairwise_distance(res, a.view(), negative.view(), out.view(), {.metric = metric::manhattan}));
}

TEST(distance_arguments, empty_operands_give_empty_output)
{
  const auto a = random_csr<float, std::int32_t>({.rows = 0, .cols = 6, .seed = 1});
  const auto b = random_csr<float, std::int32_t>({.rows = 3, .cols = 6, .seed = 2});
  dense_matrix<float> out(host_resources{}, 0, 3);
  EXPECT_NO_THROW(pairwise_distance(host_resources{}, a.view(), b.view(), out.view(),
                                    {.metric = metric::cosine}));
}

}  // namespace
}  // namespace spira::test
