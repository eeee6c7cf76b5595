// select_k on both backends against the naive sort oracle (tests/selection/oracle.hpp). With the
// documented tie rule the expected output is unique, so results are compared exactly, byte for
// byte: values (NaN payloads included, as they are copied from the input) and indices.
#include "selection/keys.hpp"  // key_traits: the inverse map the CUDA radix writes values with
#include "selection/oracle.hpp"
#include "support/backend.hpp"

#include <spira/select_k.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace spira::test {
namespace {

template <class T>
std::string type_name()
{
  if constexpr (std::is_same_v<T, float>) {
    return "float";
  } else if constexpr (std::is_same_v<T, double>) {
    return "double";
  } else {
    return "half";
  }
}

/// Runs dense select_k on `res` for a rows x n row-major host matrix.
template <class T, class IndexT, class Resources>
result<T, IndexT> run_dense(const Resources& res, const std::vector<T>& in, std::int64_t rows,
                            std::int64_t n, std::int64_t k, select_order order,
                            const select_params& params)
{
  auto d_in = on(res, in);
  buffer<T> d_v(res, static_cast<std::size_t>(rows * k), "values");
  buffer<IndexT> d_i(res, static_cast<std::size_t>(rows * k), "indices");
  const memory_space sp = d_in.space();
  select_k<T, IndexT>(res, dense_view<const T>{rows, n, n, d_in.data(), sp}, k, order,
                      dense_view<T>{rows, k, k, d_v.data(), sp},
                      dense_view<IndexT>{rows, k, k, d_i.data(), sp}, params);
  return {to_host_vector(d_v), to_host_vector(d_i)};
}

/// The algorithms to exercise on `Resources` for rows of length n.
template <class Resources>
std::vector<select_algo> algos_for(std::int64_t n)
{
  if constexpr (std::is_same_v<Resources, host_resources>) {
    return {select_algo::automatic};
  } else {
    std::vector<select_algo> a{select_algo::automatic, select_algo::radix};
    if (n <= select_binary_search_max_length) {
      a.push_back(select_algo::binary_search);
    }
    return a;
  }
}

inline const char* algo_name(select_algo a)
{
  switch (a) {
    case select_algo::automatic:
      return "automatic";
    case select_algo::binary_search:
      return "binary_search";
    default:
      return "radix";
  }
}

/// Checks every algorithm, both orders, sorted and unsorted, against the oracle.
template <class T, class IndexT, class Resources>
void check_all(const Resources& res, const std::vector<T>& in, std::int64_t rows, std::int64_t n,
               std::int64_t k, const std::string& label)
{
  for (auto order : {select_order::smallest, select_order::largest}) {
    for (bool sorted : {false, true}) {
      const auto want = expected_rows<T, IndexT>(in, rows, n, n, k, order, sorted);
      for (auto algo : algos_for<Resources>(n)) {
        select_params params;
        params.algo = algo;
        params.sorted = sorted;
        const auto got = run_dense<T, IndexT>(res, in, rows, n, k, order, params);
        expect_equal(got, want, k,
                     label + " " + type_name<T>() + " rows=" + std::to_string(rows) +
                         " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                         (order == select_order::largest ? " largest" : " smallest") +
                         (sorted ? " sorted " : " unsorted ") + algo_name(algo));
        if (::testing::Test::HasFatalFailure()) {
          return;
        }
      }
    }
  }
}

template <class T>
std::vector<T> uniform_values(std::size_t count, double lo, double hi, std::uint64_t seed)
{
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<T> v(count);
  for (auto& x : v) {
    x = from_double<T>(d(gen));
  }
  return v;
}

std::vector<std::int64_t> ks_for(std::int64_t n)
{
  std::vector<std::int64_t> ks;
  for (std::int64_t k : {std::int64_t{1}, std::int64_t{31}, std::int64_t{32}, std::int64_t{33},
                         std::int64_t{1023}, std::int64_t{1024}, n}) {
    if (k <= n && std::find(ks.begin(), ks.end(), k) == ks.end()) {
      ks.push_back(k);
    }
  }
  return ks;
}

template <class Resources>
class select_k_test : public ::testing::Test {};
TYPED_TEST_SUITE(select_k_test, backends, backend_names);

// ---- hand-checked -------------------------------------------------------------------------------

TYPED_TEST(select_k_test, hand_checked_ties_zero_and_nan)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // index:                   0     1     2     3     4     5      6
  const std::vector<float> in{3.0f, 1.0f, 2.0f, 1.0f, nan, -0.0f, 0.0f};
  for (auto algo : algos_for<TypeParam>(7)) {
    select_params sorted{.algo = algo, .sorted = true};
    select_params unsorted{.algo = algo, .sorted = false};
    auto a = run_dense<float, std::int32_t>(res, in, 1, 7, 3, select_order::smallest, sorted);
    EXPECT_EQ(a.indices, (std::vector<std::int32_t>{5, 6, 1})) << algo_name(algo);
    EXPECT_TRUE(std::signbit(a.values[0]));  // -0.0 is copied from the input, not recomputed
    auto b = run_dense<float, std::int32_t>(res, in, 1, 7, 3, select_order::smallest, unsorted);
    EXPECT_EQ(b.indices, (std::vector<std::int32_t>{1, 5, 6})) << algo_name(algo);
    auto c = run_dense<float, std::int64_t>(res, in, 1, 7, 4, select_order::largest, sorted);
    EXPECT_EQ(c.indices, (std::vector<std::int64_t>{0, 2, 1, 3})) << algo_name(algo);
    EXPECT_EQ(c.values, (std::vector<float>{3.0f, 2.0f, 1.0f, 1.0f}));
    // NaN is the worst in both directions: it comes last even when largest is asked for.
    auto d = run_dense<float, std::int64_t>(res, in, 1, 7, 7, select_order::largest, sorted);
    EXPECT_EQ(d.indices, (std::vector<std::int64_t>{0, 2, 1, 3, 5, 6, 4})) << algo_name(algo);
    auto e = run_dense<float, std::int64_t>(res, in, 1, 7, 7, select_order::smallest, sorted);
    EXPECT_EQ(e.indices, (std::vector<std::int64_t>{5, 6, 1, 3, 2, 0, 4})) << algo_name(algo);
  }
}

// ---- random rows of many lengths and k ----------------------------------------------------------

TYPED_TEST(select_k_test, random_float_lengths_and_ks)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  for (std::int64_t n : {1, 2, 31, 32, 33, 100, 256, 1000, 2048, 2049, 5000}) {
    const std::int64_t rows = n <= 256 ? 37 : 5;
    const auto in = uniform_values<float>(rows * n, -1.0, 1.0, 1000 + n);
    for (auto k : ks_for(n)) {
      check_all<float, std::int32_t>(res, in, rows, n, k, "uniform");
      if (::testing::Test::HasFatalFailure()) {
        return;
      }
    }
  }
}

TYPED_TEST(select_k_test, long_rows)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const auto a = uniform_values<float>(3 << 16, 0.0, 1.0, 7);
  for (std::int64_t k : {1, 33, 1024, 50000}) {
    check_all<float, std::int64_t>(res, a, 3, 1 << 16, k, "long");
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
  }
  const auto b = uniform_values<float>(1 << 20, -5.0, 5.0, 8);
  for (std::int64_t k : {32, 1 << 20}) {
    check_all<float, std::int32_t>(res, b, 1, 1 << 20, k, "2^20");
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
  }
  // Rows too long for the radix cluster form whose starts are not 16-byte aligned (row r starts
  // at element 140,001 r): the multi-pass form and its candidate buffers.
  const std::int64_t odd = 140001;
  const auto c = uniform_values<float>(3 * odd, -1.0, 1.0, 9);
  for (std::int64_t k : {7, 2000, 90000}) {
    check_all<float, std::int32_t>(res, c, 3, odd, k, "unaligned");
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
  }
}

TYPED_TEST(select_k_test, double_and_half)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  for (std::int64_t n : {33, 700, 3000}) {
    const auto d = uniform_values<double>(9 * n, -1e3, 1e3, 50 + n);
    const auto h = uniform_values<half>(9 * n, -4.0, 4.0, 60 + n);  // many duplicates in half
    for (auto k : ks_for(n)) {
      check_all<double, std::int64_t>(res, d, 9, n, k, "double");
      check_all<half, std::int32_t>(res, h, 9, n, k, "half");
      if (::testing::Test::HasFatalFailure()) {
        return;
      }
    }
  }
}

// ---- special values and adversarial distributions ----------------------------------------------

template <class T>
std::vector<T> special_rows(const std::string& kind, std::int64_t rows, std::int64_t n,
                            std::uint64_t seed)
{
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<T> v(rows * n);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t i = 0; i < n; ++i) {
      const double x = u(gen);
      double y = 0;
      if (kind == "all_equal") {
        y = 0.5;
      } else if (kind == "inf_nan_mix") {
        y = x < 0.2 ? inf : x < 0.4 ? -inf : x < 0.55 ? nan : x < 0.6 ? -0.0 : x < 0.65 ? 0.0 : x;
      } else if (kind == "mostly_inf") {  // 90% .. 99.9% infinite, varying per row
        const double frac = 0.9 + 0.099 * double(r) / double(std::max<std::int64_t>(rows - 1, 1));
        y = x < frac ? (r % 2 ? -inf : inf) : u(gen) * 2 - 1;
      } else if (kind == "mostly_nan") {
        y = x < 0.95 ? nan : u(gen);
      } else if (kind == "narrow_uniform") {  // all keys share their top digits (RadiK 4.2)
        y = 128.0 + u(gen) / 64.0;
      } else if (kind == "peaked") {  // softmax-like: one outstanding token, the rest flat
        y = i == (r * 7919) % n ? 0.9 : 0.1 / double(n) * (1.0 + 1e-3 * u(gen));
      } else if (kind == "zipf") {
        y = std::floor(1.0 / std::pow(1.0 - x, 1.0 / 1.1));  // heavy tail, many duplicates
      } else if (kind == "two_values") {
        y = x < 0.5 ? 1.0 : 2.0;
      } else if (kind ==
                 "clustered") {  // most keys packed around the k-th, a few far out (RadiK 4)
        y = x < 0.8 ? 1.0 + 1e-6 * u(gen) : (x < 0.9 ? 1e3 * u(gen) : -1e3 * u(gen));
      } else if (kind == "few_distinct") {  // 40 values, each repeated beyond a candidate set
        y = std::floor(x * 40.0) / 40.0;
      } else if (kind == "ulp_cluster") {
        // 95% within 40 units in the last place of 1 (keys that differ in their lowest 6 bits
        // only), the rest far out on both sides, so the row's extremes are wide.
        const double ulp = sizeof(T) == 8 ? 0x1p-52 : sizeof(T) == 4 ? 0x1p-23 : 0x1p-10;
        y = x < 0.95 ? 1.0 + std::floor(u(gen) * 40.0) * ulp : (x < 0.975 ? 1e3 : -1e3) * u(gen);
      }
      v[r * n + i] = from_double<T>(y);
    }
  }
  return v;
}

TYPED_TEST(select_k_test, many_rows)
{
  // More tasks than a persistent radix grid holds blocks: every phase walks its tasks in strides.
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const std::int64_t rows = 3000;
  const std::int64_t n = 300;
  const auto in = special_rows<float>("zipf", rows, n, 77);
  for (std::int64_t k : {1, 32, 299}) {
    check_all<float, std::int32_t>(res, in, rows, n, k, "many rows");
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
  }
}

TYPED_TEST(select_k_test, many_rows_beyond_one_wave)
{
  // On CUDA: more rows than the radix cluster form takes and more tasks than one co-resident
  // wave, so the multi-pass form runs one kernel per phase and digit, every digit pass read from
  // the rows (each kind of pass has its own loop: first key digit, later key digits, position
  // digits for the ties).
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const std::int64_t rows = 1100;
  const std::int64_t n = 2100;
  for (const std::string kind :
       {"clustered", "ulp_cluster", "few_distinct", "all_equal", "mostly_inf"}) {
    const auto f = special_rows<float>(kind, rows, n, 21);
    for (std::int64_t k : {1, 33, 1024}) {
      check_all<float, std::int32_t>(res, f, rows, n, k, "many rows " + kind);
      if (::testing::Test::HasFatalFailure()) {
        return;
      }
    }
  }
  const auto u = uniform_values<float>(rows * n, -1.0, 1.0, 22);
  const auto d = uniform_values<double>(rows * n, -1.0, 1.0, 23);
  for (std::int64_t k : {std::int64_t{1}, std::int64_t{33}, std::int64_t{1024}, n - 1}) {
    check_all<float, std::int32_t>(res, u, rows, n, k, "many rows uniform");
    check_all<double, std::int64_t>(res, d, rows, n, k, "many rows uniform");
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
  }
}

TYPED_TEST(select_k_test, special_and_adversarial)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  for (const std::string kind :
       {"all_equal", "inf_nan_mix", "mostly_inf", "mostly_nan", "narrow_uniform", "peaked", "zipf",
        "two_values", "clustered", "few_distinct", "ulp_cluster"}) {
    for (std::int64_t n : {64, 300, 1500, 4100}) {
      const std::int64_t rows = 11;
      const auto f = special_rows<float>(kind, rows, n, 3 + n);
      const auto d = special_rows<double>(kind, rows, n, 4 + n);
      const auto h = special_rows<half>(kind, rows, n, 5 + n);
      for (std::int64_t k : {std::int64_t{1}, std::int64_t{33}, n / 2, n}) {
        check_all<float, std::int32_t>(res, f, rows, n, k, kind);
        check_all<double, std::int64_t>(res, d, rows, n, k, kind);
        check_all<half, std::int64_t>(res, h, rows, n, k, kind);
        if (::testing::Test::HasFatalFailure()) {
          return;
        }
      }
    }
  }
}

TYPED_TEST(select_k_test, small_k_on_long_rows)
{
  // k <= 32 on rows of up to 2,048 elements: on CUDA, for rows of 32 or 64 keys a lane (1,024
  // and 2,048 here; 257, 513 and 700 keep the histogram passes), the binary search first bounds
  // the k-th key by the k-th best of the lanes' best keys. Random rows leave at most 32 keys within
  // the bound (ranked directly); ramps and ties leave more (histogram passes from the bound); NaNs,
  // infinities and rows that end inside a lane's group put the worst key among the lanes' best.
  // k = n takes the whole row (written without a search), from misaligned row starts for odd n.
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  for (std::int64_t n : {257, 513, 700, 1024, 2048}) {
    const std::int64_t rows = 9;
    std::vector<std::pair<std::string, std::vector<float>>> inputs;
    inputs.emplace_back("uniform", uniform_values<float>(rows * n, -1.0, 1.0, 90 + n));
    std::vector<float> ramp(rows * n);  // rising and falling rows: one lane holds the best keys
    for (std::int64_t i = 0; i < rows * n; ++i) {
      ramp[i] = static_cast<float>(i % n) * (i / n % 2 != 0 ? -1.0f : 1.0f);
    }
    inputs.emplace_back("ramp", std::move(ramp));
    for (const std::string kind :
         {"two_values", "inf_nan_mix", "mostly_nan", "few_distinct", "zipf", "all_equal"}) {
      inputs.emplace_back(kind, special_rows<float>(kind, rows, n, 95 + n));
    }
    for (const auto& [kind, in] : inputs) {
      for (std::int64_t k : {std::int64_t{2}, std::int64_t{5}, std::int64_t{16}, std::int64_t{17},
                             std::int64_t{32}, n}) {
        check_all<float, std::int32_t>(res, in, rows, n, k, "small k " + kind);
        if (::testing::Test::HasFatalFailure()) {
          return;
        }
      }
    }
    const auto d = uniform_values<double>(rows * n, -1.0, 1.0, 91 + n);
    const auto h = uniform_values<half>(rows * n, -4.0, 4.0, 92 + n);
    for (std::int64_t k : {std::int64_t{3}, std::int64_t{16}, std::int64_t{32}}) {
      check_all<double, std::int64_t>(res, d, rows, n, k, "small k uniform");
      check_all<half, std::int32_t>(res, h, rows, n, k, "small k uniform");
      if (::testing::Test::HasFatalFailure()) {
        return;
      }
    }
  }
}

TYPED_TEST(select_k_test, special_and_adversarial_long_rows)
{
  // Rows spread over several blocks of the radix select (on CUDA: clusters of 3, 5 and 8 blocks
  // for 40,000 and 131,072 elements, and the multi-pass form for double rows of 131,072).
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  for (const std::string kind : {"all_equal", "inf_nan_mix", "mostly_inf", "narrow_uniform",
                                 "peaked", "zipf", "two_values"}) {
    for (std::int64_t n : {40000, 131072}) {
      const std::int64_t rows = 3;
      const auto f = special_rows<float>(kind, rows, n, 13 + n);
      const auto d = special_rows<double>(kind, rows, n, 14 + n);
      const auto h = special_rows<half>(kind, rows, n, 15 + n);
      for (std::int64_t k : {std::int64_t{1}, std::int64_t{50}, n / 2 + 1}) {
        check_all<float, std::int32_t>(res, f, rows, n, k, kind);
        check_all<double, std::int64_t>(res, d, rows, n, k, kind);
        check_all<half, std::int64_t>(res, h, rows, n, k, kind);
        if (::testing::Test::HasFatalFailure()) {
          return;
        }
      }
    }
  }
}

TYPED_TEST(select_k_test, adversarial_rows_beyond_the_cluster_form)
{
  // On CUDA: float and half rows too long for the radix cluster form, so the multi-pass form (one
  // cooperative launch, with candidate buffers) runs them, and double rows there too. Its key
  // digits start where the keys still in question differ (radix_narrow): values packed within a
  // few units in the last place, all-equal rows (straight to the ties after the first pass),
  // infinities and NaN at the extremes.
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const std::int64_t rows = 2;
  const std::int64_t n = 150001;
  for (const std::string kind :
       {"ulp_cluster", "narrow_uniform", "clustered", "all_equal", "two_values", "inf_nan_mix"}) {
    const auto f = special_rows<float>(kind, rows, n, 31 + kind.size());
    const auto d = special_rows<double>(kind, rows, n, 32 + kind.size());
    const auto h = special_rows<half>(kind, rows, n, 33 + kind.size());
    for (std::int64_t k : {std::int64_t{1}, std::int64_t{50}, std::int64_t{5000}, n / 2 + 1}) {
      check_all<float, std::int32_t>(res, f, rows, n, k, kind);
      check_all<double, std::int64_t>(res, d, rows, n, k, kind);
      check_all<half, std::int32_t>(res, h, rows, n, k, kind);
      if (::testing::Test::HasFatalFailure()) {
        return;
      }
    }
  }
}

// ---- determinism, leading dimensions, approximate mode ------------------------------------------

TYPED_TEST(select_k_test, strided_views_and_repeatability)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const std::int64_t rows = 20;
  const std::int64_t n = 300;
  const std::int64_t ld = 317;
  const std::int64_t k = 40;
  const std::int64_t ldo = 45;
  const auto full = special_rows<float>("zipf", rows, ld, 99);
  std::vector<float> packed;
  for (std::int64_t r = 0; r < rows; ++r) {
    packed.insert(packed.end(), full.begin() + r * ld, full.begin() + r * ld + n);
  }
  for (auto algo : algos_for<TypeParam>(n)) {
    auto d_in = on(res, full);
    const memory_space sp = d_in.space();
    std::vector<float> first_v;
    for (int rep = 0; rep < 2; ++rep) {
      buffer<float> d_v(res, rows * ldo, "values");
      buffer<std::int32_t> d_i(res, rows * ldo, "indices");
      select_k<float, std::int32_t>(res, dense_view<const float>{rows, n, ld, d_in.data(), sp}, k,
                                    select_order::largest,
                                    dense_view<float>{rows, k, ldo, d_v.data(), sp},
                                    dense_view<std::int32_t>{rows, k, ldo, d_i.data(), sp},
                                    select_params{.algo = algo, .sorted = true});
      const auto v = to_host_vector(d_v);
      const auto i = to_host_vector(d_i);
      const auto want =
          expected_rows<float, std::int32_t>(packed, rows, n, n, k, select_order::largest, true);
      for (std::int64_t r = 0; r < rows; ++r) {
        for (std::int64_t j = 0; j < k; ++j) {
          ASSERT_EQ(i[r * ldo + j], want.indices[r * k + j]) << algo_name(algo);
          ASSERT_EQ(v[r * ldo + j], want.values[r * k + j]) << algo_name(algo);
        }
      }
      std::vector<float> compact;
      for (std::int64_t r = 0; r < rows; ++r) {
        compact.insert(compact.end(), v.begin() + r * ldo, v.begin() + r * ldo + k);
      }
      if (rep == 0) {
        first_v = compact;
      } else {
        EXPECT_EQ(first_v, compact);
      }
    }
  }
}

TYPED_TEST(select_k_test, max_iter_is_exact_when_converged_and_matches_host)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const std::int64_t rows = 64;
  for (std::int64_t n : {100, 768, 2048}) {
    const auto in = uniform_values<float>(rows * n, 0.0, 1.0, 11 + n);
    for (std::int64_t k : {1, 32, 96}) {
      for (int it : {1, 4, 8, 64}) {
        select_params p{.algo = select_algo::automatic, .sorted = false, .max_iter = it};
        const auto got =
            run_dense<float, std::int32_t>(res, in, rows, n, k, select_order::largest, p);
        const auto on_host = run_dense<float, std::int32_t>(host_resources{}, in, rows, n, k,
                                                            select_order::largest, p);
        EXPECT_EQ(got.indices, on_host.indices) << "n=" << n << " k=" << k << " max_iter=" << it;
        EXPECT_EQ(got.values, on_host.values);
        // Every slot is filled with a distinct element of the row.
        for (std::int64_t r = 0; r < rows; ++r) {
          for (std::int64_t j = 0; j < k; ++j) {
            const auto idx = got.indices[r * k + j];
            ASSERT_TRUE(idx >= 0 && idx < n);
            ASSERT_EQ(got.values[r * k + j], in[r * n + idx]);
            if (j > 0) {
              ASSERT_LT(got.indices[r * k + j - 1], idx);
            }
          }
        }
        if (it >= 64) {  // 32-bit keys: 32 bisection steps always converge
          const auto want =
              expected_rows<float, std::int32_t>(in, rows, n, n, k, select_order::largest, false);
          EXPECT_EQ(got.indices, want.indices);
        }
      }
    }
  }
}

// ---- ragged CSR rows
// -----------------------------------------------------------------------------

template <class V, class I>
csr_matrix<V, I> ragged(std::int64_t rows, std::int64_t cols, std::uint64_t seed)
{
  std::mt19937_64 gen(seed);
  std::vector<offset_t> ptr{0};
  std::vector<I> col;
  std::vector<V> val;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    // empty rows, short rows, rows around a warp, and a few long ones
    const std::int64_t deg = r % 5 == 0 ? 0 : r % 7 == 0 ? 3000 + r : std::int64_t(u(gen) * 80);
    std::vector<I> cs;
    for (std::int64_t c = 0; c < cols && std::int64_t(cs.size()) < deg; ++c) {
      if (u(gen) < double(deg) / double(cols) * 1.5) {
        cs.push_back(static_cast<I>(c));
      }
    }
    for (auto c : cs) {
      col.push_back(c);
      val.push_back(static_cast<V>(std::floor(u(gen) * 50)));  // duplicates: the tie rule matters
    }
    ptr.push_back(static_cast<offset_t>(col.size()));
  }
  return make_csr<V, I>(host_resources{}, rows, cols, ptr, col, val);
}

/// A copy of a host CSR matrix on the backend (plain copies of its three arrays).
template <class V, class I, class Resources>
csr_matrix<V, I> csr_on(const Resources& res, const csr_matrix<V, I>& h)
{
  csr_matrix<V, I> d(res, h.rows(), h.cols(), h.nnz());
  copy(d.row_ptr(), d.space(), h.row_ptr(), memory_space::host, h.rows() + 1, cuda_of(res));
  copy(d.col_idx(), d.space(), h.col_idx(), memory_space::host, h.nnz(), cuda_of(res));
  copy(d.values(), d.space(), h.values(), memory_space::host, h.nnz(), cuda_of(res));
  return d;
}

/// A host copy of a CSR matrix of either space.
template <class V, class I>
csr_matrix<V, I> csr_to_host(const csr_matrix<V, I>& m)
{
  csr_matrix<V, I> h(host_resources{}, m.rows(), m.cols(), m.nnz());
  copy(h.row_ptr(), memory_space::host, m.row_ptr(), m.space(), m.rows() + 1, m.cuda());
  copy(h.col_idx(), memory_space::host, m.col_idx(), m.space(), m.nnz(), m.cuda());
  copy(h.values(), memory_space::host, m.values(), m.space(), m.nnz(), m.cuda());
  return h;
}

TYPED_TEST(select_k_test, ragged_csr_rows)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const auto h = ragged<float, std::int32_t>(60, 5000, 17);
  const auto hv = h.view();
  const auto d = csr_on(res, h);
  for (std::int64_t k : {1, 32, 33, 100, 4000}) {
    for (auto order : {select_order::smallest, select_order::largest}) {
      for (bool sorted : {false, true}) {
        for (auto algo : algos_for<TypeParam>(3100)) {
          if (algo == select_algo::binary_search) {
            continue;
          }  // rows longer than 2048
          const select_params params{.algo = algo, .sorted = sorted};
          dense_matrix<float> v(res, h.rows(), k);
          dense_matrix<std::int32_t> i(res, h.rows(), k);
          select_k(res, d.view(), k, order, v.view(), i.view(), params);
          const auto hv_out = to_host_vector(v.storage());
          const auto hi_out = to_host_vector(i.storage());
          const auto csr = csr_to_host(select_k(res, d.view(), k, order, params));
          std::int64_t nnz = 0;
          for (std::int64_t r = 0; r < h.rows(); ++r) {
            std::vector<float> row(hv.values + hv.row_ptr[r], hv.values + hv.row_ptr[r + 1]);
            std::vector<std::int64_t> cols(hv.col_idx + hv.row_ptr[r],
                                           hv.col_idx + hv.row_ptr[r + 1]);
            const auto want = oracle_select(row, cols, k, order == select_order::largest, sorted);
            for (std::int64_t j = 0; j < k; ++j) {
              ASSERT_EQ(hi_out[r * k + j], want.indices[j])
                  << "row " << r << " slot " << j << " k=" << k << " " << algo_name(algo);
              ASSERT_EQ(hv_out[r * k + j], want.values[j]) << "row " << r;
            }
            const std::int64_t m = std::min<std::int64_t>(k, row.size());
            ASSERT_EQ(csr.row_ptr()[r + 1] - csr.row_ptr()[r], m) << "row " << r;
            for (std::int64_t j = 0; j < m; ++j) {
              ASSERT_EQ(csr.col_idx()[csr.row_ptr()[r] + j], want.indices[j]);
              ASSERT_EQ(csr.values()[csr.row_ptr()[r] + j], want.values[j]);
            }
            nnz += m;
          }
          EXPECT_EQ(csr.nnz(), nnz);
          EXPECT_EQ(csr.cols(), h.cols());
        }
      }
    }
  }
}

/// Ragged rows around the radix cluster form's block capacity (16,384 keys of 32 bits, 8,192 of
/// 64): rows shorter than the cluster (empty trailing blocks), chunks of unequal length, empty
/// rows, and k larger than some rows (padding), with NaN, infinities, signed zeros and many ties.
/// `shift` > 0 reads the matrix from value and column arrays that start `shift` elements into their
/// allocations (so that no row starts where the allocation's alignment says).
template <class V, class Resources>
void check_ragged_long(const Resources& res, const std::vector<std::int64_t>& degrees,
                       const std::vector<std::int64_t>& ks, std::int64_t shift = 0)
{
  using I = std::int32_t;
  const std::int64_t rows = static_cast<std::int64_t>(degrees.size());
  std::int64_t longest = 0;
  for (auto d : degrees) {
    longest = std::max(longest, d);
  }
  const std::int64_t cols = 2 * longest + 2;
  std::mt19937_64 gen(91 + longest);
  std::uniform_int_distribution<int> u(0, 49);
  std::vector<offset_t> ptr{0};
  std::vector<I> col;
  std::vector<V> val;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t j = 0; j < degrees[r]; ++j) {
      col.push_back(static_cast<I>(2 * j + (r & 1)));
      const double x = j % 1009 == 0  ? std::numeric_limits<double>::quiet_NaN()
                       : j % 613 == 0 ? std::numeric_limits<double>::infinity()
                       : j % 401 == 0 ? -std::numeric_limits<double>::infinity()
                       : j % 7 == 0   ? -0.0
                                      : u(gen) / 4.0 - 6.0;
      val.push_back(static_cast<V>(x));
    }
    ptr.push_back(static_cast<offset_t>(col.size()));
  }
  const auto h = make_csr<V, I>(host_resources{}, rows, cols, ptr, col, val);
  const auto hv = h.view();
  const auto d = csr_on(res, h);
  auto view = d.view();
  csr_matrix<V, I> shifted(res, rows, cols, h.nnz() + shift);
  if (shift > 0) {
    copy(shifted.col_idx() + shift, shifted.space(), h.col_idx(), memory_space::host, h.nnz(),
         cuda_of(res));
    copy(shifted.values() + shift, shifted.space(), h.values(), memory_space::host, h.nnz(),
         cuda_of(res));
    view.col_idx = shifted.col_idx() + shift;
    view.values = shifted.values() + shift;
  }
  for (std::int64_t k : ks) {
    for (auto order : {select_order::smallest, select_order::largest}) {
      for (bool sorted : {false, true}) {
        for (auto algo : algos_for<Resources>(longest)) {
          const select_params params{.algo = algo, .sorted = sorted};
          dense_matrix<V> v(res, rows, k);
          dense_matrix<I> i(res, rows, k);
          select_k(res, view, k, order, v.view(), i.view(), params);
          const auto got_v = to_host_vector(v.storage());
          const auto got_i = to_host_vector(i.storage());
          for (std::int64_t r = 0; r < rows; ++r) {
            std::vector<V> row(hv.values + hv.row_ptr[r], hv.values + hv.row_ptr[r + 1]);
            std::vector<std::int64_t> cs(hv.col_idx + hv.row_ptr[r],
                                         hv.col_idx + hv.row_ptr[r + 1]);
            const auto want = oracle_select(row, cs, k, order == select_order::largest, sorted);
            for (std::int64_t j = 0; j < k; ++j) {
              ASSERT_EQ(got_i[r * k + j], want.indices[j])
                  << type_name<V>() << " row " << r << " (" << degrees[r] << " elements) slot " << j
                  << " k=" << k << (sorted ? " sorted " : " unsorted ") << algo_name(algo)
                  << " shift " << shift;
              ASSERT_TRUE(same_bits(got_v[r * k + j], want.values[j]))
                  << type_name<V>() << " row " << r << " slot " << j << " k=" << k;
            }
          }
        }
      }
    }
  }
}

TYPED_TEST(select_k_test, ragged_csr_long_rows)
{
  // On CUDA: clusters of 7 blocks (float) and 8 blocks (double) where most rows fill only some of
  // the blocks, or none.
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  check_ragged_long<float>(res, {0, 1, 3, 7, 100000, 16385, 40000, 5, 16384, 2},
                           {1, 3, 6, 50, 20000, 110000});
  if (::testing::Test::HasFatalFailure()) {
    return;
  }
  check_ragged_long<double>(res, {2, 0, 8193, 9, 60000, 8192, 20001, 1},
                            {1, 4, 9, 1000, 30000, 65000});
}

TYPED_TEST(select_k_test, ragged_csr_rows_at_every_alignment)
{
  // On CUDA (binary_search): rows that start between vector boundaries are read from the boundary
  // below with padding slots, rows that would then overflow the warp fall back to element loads,
  // and value arrays that start off a boundary; NaN, infinities, signed zeros and many ties.
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  for (std::int64_t shift : {0, 1, 3}) {
    check_ragged_long<float>(res, {3, 256, 255, 256, 254, 256, 1, 128, 129, 0, 256, 2, 64},
                             {1, 7, 32, 33, 128, 255, 300}, shift);
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
    check_ragged_long<double>(res, {1, 255, 256, 127, 128, 3, 129}, {1, 31, 64, 200}, shift);
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
    check_ragged_long<float>(res, {5, 2048, 2045, 1, 1500, 2047, 700}, {1, 100, 1024, 2048}, shift);
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
  }
}

TYPED_TEST(select_k_test, ragged_csr_rows_beyond_the_cluster_form)
{
  // On CUDA: the multi-pass radix form (one cooperative launch) on rows that start anywhere, with
  // so many ties that the k-th key's copies move to the candidate buffers and the position digits
  // are decided there.
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  check_ragged_long<float>(res, {3, 150001, 0, 200003, 7}, {1, 50, 70000});
  if (::testing::Test::HasFatalFailure()) {
    return;
  }
  check_ragged_long<double>(res, {70001, 5, 100003}, {1, 33, 40000});
}

// ---- argument validation
// --------------------------------------------------------------------------

template <class F>
std::string message_of(F&& f)
{
  try {
    f();
  } catch (const spira::invalid_argument& e) {
    return e.what();
  }
  return "no exception";
}

TYPED_TEST(select_k_test, ragged_csr_double_int64_and_validation)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const auto h = ragged<double, std::int64_t>(45, 700, 23);
  const auto hv = h.view();
  const auto d = csr_on(res, h);
  for (std::int64_t k : {1, 17, 64}) {
    for (auto order : {select_order::smallest, select_order::largest}) {
      const select_params params{.sorted = true};
      dense_matrix<double> v(res, h.rows(), k);
      dense_matrix<std::int64_t> i(res, h.rows(), k);
      select_k(res, d.view(), k, order, v.view(), i.view(), params);
      const auto got_v = to_host_vector(v.storage());
      const auto got_i = to_host_vector(i.storage());
      for (std::int64_t r = 0; r < h.rows(); ++r) {
        std::vector<double> row(hv.values + hv.row_ptr[r], hv.values + hv.row_ptr[r + 1]);
        std::vector<std::int64_t> cols(hv.col_idx + hv.row_ptr[r], hv.col_idx + hv.row_ptr[r + 1]);
        const auto want = oracle_select(row, cols, k, order == select_order::largest, true);
        for (std::int64_t j = 0; j < k; ++j) {
          ASSERT_EQ(got_i[r * k + j], want.indices[j]) << "row " << r << " slot " << j;
          ASSERT_TRUE(same_bits(got_v[r * k + j], want.values[j])) << "row " << r;
        }
      }
    }
  }
  dense_matrix<double> v(res, h.rows(), 3);
  dense_matrix<std::int64_t> i(res, h.rows(), 3);
  EXPECT_NE(message_of([&] {
              select_k(res, d.view(), 0, select_order::smallest, v.view(), i.view());
            }).find("k must be >= 1"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              select_k(res, d.view(), 4, select_order::smallest, v.view(), i.view());
            }).find("out_values must be 45 x 4"),
            std::string::npos);
}

TYPED_TEST(select_k_test, rejects_bad_arguments_naming_them)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const std::vector<float> in(4 * 10, 1.0f);
  auto d_in = on(res, in);
  buffer<float> v(res, 4 * 10);
  buffer<std::int64_t> i(res, 4 * 10);
  const auto sp = d_in.space();
  const auto other = sp == memory_space::host ? memory_space::device : memory_space::host;
  const dense_view<const float> x{4, 10, 10, d_in.data(), sp};
  auto call = [&](std::int64_t k, dense_view<float> ov, dense_view<std::int64_t> oi,
                  select_params p = {}) {
    return message_of(
        [&] { select_k<float, std::int64_t>(res, x, k, select_order::smallest, ov, oi, p); });
  };
  const dense_view<float> v3{4, 3, 3, v.data(), sp};
  const dense_view<std::int64_t> i3{4, 3, 3, i.data(), sp};
  EXPECT_NE(call(0, {4, 0, 0, v.data(), sp}, {4, 0, 0, i.data(), sp}).find("k must be in [1, 10]"),
            std::string::npos);
  EXPECT_NE(call(11, {4, 11, 11, v.data(), sp}, {4, 11, 11, i.data(), sp}).find("got 11"),
            std::string::npos);
  EXPECT_NE(call(3, {4, 4, 4, v.data(), sp}, i3).find("out_values must be 4 x 3"),
            std::string::npos);
  EXPECT_NE(call(3, v3, {3, 3, 3, i.data(), sp}).find("out_indices must be 4 x 3"),
            std::string::npos);
  EXPECT_NE(call(3, {4, 3, 3, v.data(), other}, i3).find("out_values is in"), std::string::npos);
  EXPECT_NE(call(3, v3, i3, {.algo = select_algo::radix, .max_iter = 3}).find("max_iter"),
            std::string::npos);
  EXPECT_NE(call(3, v3, i3, {.max_iter = 0}).find("max_iter must be >= 1"), std::string::npos);
  EXPECT_NE(message_of([&] {
              select_k<float, std::int64_t>(res,
                                            dense_view<const float>{4, 10, 10, d_in.data(), other},
                                            3, select_order::smallest, v3, i3);
            }).find("in is in"),
            std::string::npos);
  // binary_search is limited to short rows
  const std::vector<float> wide(3000, 1.0f);
  auto d_wide = on(res, wide);
  EXPECT_NE(message_of([&] {
              select_k<float, std::int64_t>(
                  res, dense_view<const float>{1, 3000, 3000, d_wide.data(), sp}, 3,
                  select_order::smallest, dense_view<float>{1, 3, 3, v.data(), sp},
                  dense_view<std::int64_t>{1, 3, 3, i.data(), sp},
                  select_params{.algo = select_algo::binary_search});
            }).find("binary_search"),
            std::string::npos);
}

TEST(select_k, half_conversion_round_trips)
{
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const auto h = half::from_bits(static_cast<std::uint16_t>(b));
    const float f = static_cast<float>(h);
    if (std::isnan(f)) {
      continue;
    }
    EXPECT_EQ(half(f).bits, h.bits) << b;
  }
  EXPECT_EQ(half(1.0f).bits, 0x3c00);
  EXPECT_EQ(half(65504.0f).bits, 0x7bff);
  EXPECT_EQ(half(65520.0f).bits, 0x7c00);            // rounds to infinity
  EXPECT_EQ(half(1.0f + 1.0f / 2048).bits, 0x3c00);  // tie to even
  EXPECT_EQ(half(1.0f + 3.0f / 2048).bits, 0x3c02);
  EXPECT_TRUE(std::isnan(static_cast<float>(half(std::numeric_limits<float>::quiet_NaN()))));
}

/// key_traits<T>::from_key inverts to_key bit for bit, except for the keys that several values
/// share (zero's, for -0 and +0, and the worst, for every NaN), which exact_key reports; and
/// number_key, the map without the NaN rule, puts a value inside number_key_range iff it is a
/// number, where it agrees with to_key.
template <class T, class Bits>
void expect_keys_invert(Bits bits, bool largest)
{
  using traits = selection::key_traits<T>;
  const T v = std::bit_cast<T>(bits);
  double d = 0;
  if constexpr (std::is_same_v<T, half>) {
    d = static_cast<float>(v);
  } else {
    d = static_cast<double>(v);
  }
  const auto key = traits::to_key(v, largest);
  const auto number = traits::number_key(v, largest);
  ASSERT_EQ(selection::number_key_range<T>(largest).contains(number), !std::isnan(d))
      << type_name<T>() << " bits " << bits;
  if (!std::isnan(d)) {
    ASSERT_EQ(number, key) << type_name<T>() << " bits " << bits;
  }
  const bool shared = std::isnan(d) || d == 0;
  ASSERT_EQ(traits::exact_key(key, largest), !shared) << type_name<T>() << " bits " << bits;
  if (!shared) {
    EXPECT_EQ(std::bit_cast<Bits>(traits::from_key(key, largest)), bits) << type_name<T>();
  } else if (d == 0) {
    EXPECT_EQ(std::bit_cast<Bits>(traits::from_key(key, largest)), Bits{0}) << type_name<T>();
  }
}

TEST(select_k, radix_narrow_keeps_the_bits_the_keys_in_question_share)
{
  using selection::radix_narrow;
  // Chosen bin 0x12 of the top 8 bits; the row's keys span [0x12345600, 0x123456ff]: the next
  // digit is the lowest 8 bits.
  std::uint32_t prefix = 0x12000000u;
  EXPECT_EQ(radix_narrow(prefix, 24, 0x12345600u, 0x123456ffu), 8);
  EXPECT_EQ(prefix, 0x12345600u);
  // The extremes lie outside the bin: the bin's own ends bound the keys in question.
  prefix = 0x12000000u;
  EXPECT_EQ(radix_narrow(prefix, 24, 0x00000001u, 0xfffffff0u), 24);
  EXPECT_EQ(prefix, 0x12000000u);
  // Only the row's smallest key can be in the bin's upper part: [0x12ff0000, 0x12ffffff].
  prefix = 0x12000000u;
  EXPECT_EQ(radix_narrow(prefix, 24, 0x12ff0000u, 0xffffffffu), 16);
  EXPECT_EQ(prefix, 0x12ff0000u);
  // One key value in question: 0 bits left, prefix is that key.
  prefix = 0x12000000u;
  EXPECT_EQ(radix_narrow(prefix, 24, 0x12abcdefu, 0x12abcdefu), 0);
  EXPECT_EQ(prefix, 0x12abcdefu);
  // The last digit (shift 0) always leaves one key.
  prefix = 0x123456aau;
  EXPECT_EQ(radix_narrow(prefix, 0, 0x0u, 0xffffffffu), 0);
  EXPECT_EQ(prefix, 0x123456aau);
  // 64-bit keys: extremes 2^40 and 3 * 2^40 in bin 0 differ from bit 41 down.
  std::uint64_t wide = 0;
  EXPECT_EQ(radix_narrow(wide, 56, std::uint64_t{1} << 40, std::uint64_t{3} << 40), 42);
  EXPECT_EQ(wide, 0u);
  wide = std::uint64_t{0x7f} << 56;
  EXPECT_EQ(radix_narrow(wide, 56, wide | 5u, wide | 7u), 2);
  EXPECT_EQ(wide, (std::uint64_t{0x7f} << 56) | 4u);
}

TEST(select_k, key_maps_invert_and_set_nan_apart)
{
  for (const bool largest : {false, true}) {
    for (std::uint32_t b = 0; b < 0x10000u; ++b) {
      expect_keys_invert<half>(static_cast<std::uint16_t>(b), largest);
    }
    // Every float exponent and sign with a spread of mantissas, and the neighbours of the
    // special values.
    for (std::uint64_t b = 0; b < (1ull << 32); b += 65521) {
      expect_keys_invert<float>(static_cast<std::uint32_t>(b), largest);
    }
    for (const std::uint32_t b : {0x0u, 0x80000000u, 0x1u, 0x80000001u, 0x7f7fffffu, 0x7f800000u,
                                  0xff800000u, 0x7f800001u, 0xffc00000u, 0x7fffffffu}) {
      expect_keys_invert<float>(b, largest);
    }
    std::mt19937_64 gen(7);
    for (int i = 0; i < 200000; ++i) {
      expect_keys_invert<double>(gen(), largest);
    }
    for (const std::uint64_t b : {0x0ull, 0x8000000000000000ull, 0x1ull, 0x7ff0000000000000ull,
                                  0xfff0000000000000ull, 0x7ff0000000000001ull}) {
      expect_keys_invert<double>(b, largest);
    }
  }
}

TEST(select_k, host_only_build_reports_not_compiled)
{
  if (cuda_compiled()) {
    GTEST_SKIP() << "this build contains the CUDA backend";
  }
  const std::vector<float> in(8, 1.0f);
  std::vector<float> v(2);
  std::vector<std::int32_t> i(2);
  EXPECT_THROW(
      (select_k<float, std::int32_t>(
          cuda_resources{}, dense_view<const float>{1, 8, 8, in.data(), memory_space::device}, 2,
          select_order::smallest, dense_view<float>{1, 2, 2, v.data(), memory_space::device},
          dense_view<std::int32_t>{1, 2, 2, i.data(), memory_space::device})),
      not_compiled);
}

}  // namespace
/// The dense select_k is constrained on its value and index types: a call with another type fails
/// to compile at the call, naming the parameter (T or IndexT) and the concept, instead of failing
/// to link.
template <class T, class I>
concept select_k_callable =
    requires(dense_view<const T> in, dense_view<T> values, dense_view<I> indices) {
      select_k<T, I>(host_resources{}, in, 1, select_order::smallest, values, indices);
    };
static_assert(select_k_callable<float, std::int64_t>);
static_assert(select_k_callable<half, std::int32_t>);
static_assert(select_value_type<double> && !select_value_type<int> && !select_value_type<long>);
static_assert(select_index_type<std::int32_t> && !select_index_type<std::uint32_t>);

}  // namespace spira::test
