// select_k on both backends against the naive sort oracle (tests/selection/oracle.hpp). With the
// documented tie rule the expected output is unique, so results are compared exactly, byte for
// byte: values (NaN payloads included, as they are copied from the input) and indices.
#include "selection/oracle.hpp"
#include "selection/select_k_support.hpp"
#include "support/backend.hpp"

#include <spira/select_k.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace spira::test {
namespace {

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
