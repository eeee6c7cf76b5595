// select_k on very long rows (select_algo::delegate, Dr. Top-k, and the one-row radix select) on
// both backends, against the naive sort oracle (tests/selection/oracle.hpp), byte for byte: the
// distributions of Dr. Top-k's evaluation (uniform, normal, the adversarial "customized" one),
// all-equal rows, NaN and +-inf, k in {1, 32, 4096, n/2}, rows up to 2^24 elements, every sub-range
// length of both construction kernels, and a row of more than 2^31 elements (int64 indices) on a
// GPU with enough memory.
#include "selection/dispatch.hpp"  // forced sub-range lengths (selection::select_vector)
#include "selection/oracle.hpp"
#include "support/backend.hpp"

#include <spira/select_k.hpp>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <new>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace spira::test {
namespace {

enum class dist { uniform, normal, customized, all_equal, special };

const char* dist_name(dist d)
{
  switch (d) {
    case dist::uniform:
      return "uniform";
    case dist::normal:
      return "normal";
    case dist::customized:
      return "customized";
    case dist::all_equal:
      return "all_equal";
    default:
      return "nan_inf";
  }
}

/// One row of n values. customized is Dr. Top-k's adversarial case for radix and bucket top-k:
/// almost every value sits in one narrow cluster (sharing the high digits, many duplicates) and a
/// sprinkle of others keeps every other bucket non-empty, on both sides of the cluster.
template <class T>
std::vector<T> make_row(dist d, std::int64_t n, std::uint64_t seed)
{
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<T> v(static_cast<std::size_t>(n));
  const double inf = std::numeric_limits<double>::infinity();
  for (auto& x : v) {
    double y = 0;
    switch (d) {
      case dist::uniform:
        y = u(gen);
        break;
      case dist::normal:
        y = g(gen);
        break;
      case dist::customized:
        y = gen() % 1024 == 0 ? 2.0 * u(gen) : 1.0 + double(gen() % 4096) * 0x1p-20;
        break;
      case dist::all_equal:
        y = 0.5;
        break;
      case dist::special: {
        const auto r = gen() % 20;
        y = r == 0   ? std::numeric_limits<double>::quiet_NaN()
            : r == 1 ? inf
            : r == 2 ? -inf
            : r == 3 ? -0.0
            : r == 4 ? 0.0
                     : u(gen);
        break;
      }
    }
    x = from_double<T>(y);
  }
  return v;
}

/// select_k on `res` for a rows x n matrix with leading dimension ld (host array).
template <class T, class IndexT, class Resources>
result<T, IndexT> run(const Resources& res, const std::vector<T>& in, std::int64_t rows,
                      std::int64_t n, std::int64_t ld, std::int64_t k, select_order order,
                      const select_params& params)
{
  auto d_in = on(res, in);
  buffer<T> d_v(res, static_cast<std::size_t>(rows * k), "values");
  buffer<IndexT> d_i(res, static_cast<std::size_t>(rows * k), "indices");
  const memory_space sp = d_in.space();
  select_k<T, IndexT>(res, dense_view<const T>{rows, n, ld, d_in.data(), sp}, k, order,
                      dense_view<T>{rows, k, k, d_v.data(), sp},
                      dense_view<IndexT>{rows, k, k, d_i.data(), sp}, params);
  return {to_host_vector(d_v), to_host_vector(d_i)};
}

std::string label(dist d, std::int64_t n, std::int64_t k, select_order order, bool sorted)
{
  return std::string(dist_name(d)) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
         (order == select_order::largest ? " largest" : " smallest") +
         (sorted ? " sorted" : " unsorted");
}

template <class Resources>
class select_vector_test : public ::testing::Test {};
TYPED_TEST_SUITE(select_vector_test, backends, backend_names);

/// Every distribution, k in {1, 32, 4096, n/2}, both orders, against the oracle.
template <class T, class IndexT, class Resources>
void check_distributions(const Resources& res, std::int64_t n, std::uint64_t seed,
                         select_algo algo = select_algo::delegate)
{
  for (dist d : {dist::uniform, dist::normal, dist::customized, dist::all_equal, dist::special}) {
    const auto in = make_row<T>(d, n, seed + static_cast<std::uint64_t>(d));
    for (std::int64_t k : {std::int64_t{1}, std::int64_t{32}, std::int64_t{4096}, n / 2}) {
      for (auto order : {select_order::largest, select_order::smallest}) {
        const bool sorted = k == 32;
        select_params params{.algo = algo, .sorted = sorted};
        const auto got = run<T, IndexT>(res, in, 1, n, n, k, order, params);
        expect_equal(got, expected_rows<T, IndexT>(in, 1, n, n, k, order, sorted), k,
                     label(d, n, k, order, sorted));
        if (::testing::Test::HasFatalFailure()) {
          return;
        }
      }
    }
  }
}

TYPED_TEST(select_vector_test, distributions_float_int64)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  check_distributions<float, std::int64_t>(TypeParam{}, (std::int64_t{1} << 20) + 37, 11);
}

TYPED_TEST(select_vector_test, distributions_double_int32)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  check_distributions<double, std::int32_t>(TypeParam{}, 300007, 21);
}

TYPED_TEST(select_vector_test, distributions_half_int32)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  check_distributions<half, std::int32_t>(TypeParam{}, 200003, 31);
}

TYPED_TEST(select_vector_test, row_of_2_pow_24)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const std::int64_t n = std::int64_t{1} << 24;
  for (dist d : {dist::uniform, dist::customized}) {
    const auto in = make_row<float>(d, n, 41);
    // One oracle sort per row: the best 4096 in rank order; a smaller k takes a prefix of it.
    const auto ranked =
        expected_rows<float, std::int64_t>(in, 1, n, n, 4096, select_order::largest, true);
    for (std::int64_t k : {std::int64_t{32}, std::int64_t{4096}}) {
      std::vector<std::pair<std::int64_t, float>> top;
      for (std::int64_t j = 0; j < k; ++j) {
        top.emplace_back(ranked.indices[j], ranked.values[j]);
      }
      std::sort(top.begin(), top.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      result<float, std::int64_t> want;
      for (const auto& [i, v] : top) {
        want.indices.push_back(i);
        want.values.push_back(v);
      }
      for (auto algo : {select_algo::delegate, select_algo::radix}) {
        select_params params{.algo = algo};
        const auto got =
            run<float, std::int64_t>(res, in, 1, n, n, k, select_order::largest, params);
        expect_equal(got, want, k, label(d, n, k, select_order::largest, false));
      }
    }
  }
}

// The one-row radix select (selection/radix_vector.cuh: rows of at least
// radix_vector_policy::min_length = 2^18): its candidate buffer taken (uniform, normal, NaN/inf,
// k = n/2) and not (all-equal and clustered rows: more candidates than the buffer holds), ties
// taken by position, every value type.
TYPED_TEST(select_vector_test, one_row_radix_float_int64)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  check_distributions<float, std::int64_t>(TypeParam{}, (std::int64_t{1} << 20) + 37, 12,
                                           select_algo::radix);
}

TYPED_TEST(select_vector_test, one_row_radix_double_half_int32)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  check_distributions<double, std::int32_t>(TypeParam{}, 300007, 22, select_algo::radix);
  check_distributions<half, std::int32_t>(TypeParam{}, 270001, 32, select_algo::radix);
}

/// The first digit alone decides (the k best sit alone in the top bins: the copy pass writes the
/// output), and a row that does not start on a 16-byte boundary (single-element loads).
TYPED_TEST(select_vector_test, one_row_radix_first_digit_and_unaligned)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const std::int64_t n = (std::int64_t{1} << 19) + 3;
  auto in = make_row<float>(dist::uniform, n + 1, 81);
  std::mt19937_64 gen(82);
  for (int j = 0; j < 1000; ++j) {
    in[1 + gen() % n] = 4.0f;
  }
  const std::vector<float> tail(in.begin() + 1, in.end());
  auto d_in = on(res, in);
  for (std::int64_t k : {std::int64_t{1}, std::int64_t{500}, std::int64_t{999}, std::int64_t{1000},
                         std::int64_t{70000}}) {
    for (auto order : {select_order::largest, select_order::smallest}) {
      for (std::int64_t skew : {0, 1}) {
        const std::vector<float>& row = skew ? tail : in;
        const std::int64_t len = skew ? n : n + 1;
        buffer<float> d_v(res, static_cast<std::size_t>(k), "values");
        buffer<std::int32_t> d_i(res, static_cast<std::size_t>(k), "indices");
        const memory_space sp = d_in.space();
        select_k<float, std::int32_t>(
            res, dense_view<const float>{1, len, len, d_in.data() + skew, sp}, k, order,
            dense_view<float>{1, k, k, d_v.data(), sp},
            dense_view<std::int32_t>{1, k, k, d_i.data(), sp}, {.algo = select_algo::radix});
        const result<float, std::int32_t> got{to_host_vector(d_v), to_host_vector(d_i)};
        expect_equal(got, expected_rows<float, std::int32_t>(row, 1, len, len, k, order, false), k,
                     label(dist::uniform, len, k, order, false) + " skew=" + std::to_string(skew));
      }
    }
  }
}

/// The copy pass of the one-row radix select with its copies packed together: each block keeps
/// radix_vector_policy::stage of them in shared memory, so a stretch of candidates denser than
/// that makes its blocks read their tiles again. A stretch of distinct values above the rest
/// (into the candidate buffer) and a stretch of equal values that the first digit takes whole
/// (straight to the output), both orders (the row negated for the smallest).
template <class T, class Resources>
void check_packed_copies(const Resources& res, std::int64_t n, std::uint64_t seed)
{
  const std::int64_t at = 300001;
  auto row = make_row<T>(dist::uniform, n, seed);
  std::mt19937_64 gen(seed + 1);
  std::uniform_real_distribution<double> high(2.0, 3.0);
  for (std::int64_t j = at; j < at + 12000; ++j) {
    row[static_cast<std::size_t>(j)] = from_double<T>(high(gen));
  }
  auto equal = make_row<T>(dist::uniform, n, seed + 2);
  std::fill(equal.begin() + at, equal.begin() + at + 6000, from_double<T>(4.0));
  const auto run_both = [&](std::vector<T> in, std::int64_t k, const std::string& what) {
    for (auto order : {select_order::largest, select_order::smallest}) {
      if (order == select_order::smallest) {
        for (auto& x : in) {
          x = -x;
        }
      }
      const auto got =
          run<T, std::int64_t>(res, in, 1, n, n, k, order, {.algo = select_algo::radix});
      expect_equal(got, expected_rows<T, std::int64_t>(in, 1, n, n, k, order, false), k,
                   what + " " + label(dist::uniform, n, k, order, false));
    }
  };
  for (std::int64_t k : {std::int64_t{1000}, std::int64_t{5000}, std::int64_t{11000}}) {
    run_both(row, k, "distinct stretch");
  }
  run_both(equal, 6000, "equal stretch");
}

/// Rows of one tile per block of the copy pass (2^20 floats), of two or more (2^22 floats), and
/// doubles (whose tiles of 2,048 fit the shared copies whole, so only chunks of several tiles
/// overflow them).
TYPED_TEST(select_vector_test, one_row_radix_packed_copies)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  check_packed_copies<float>(res, (std::int64_t{1} << 20) + 37, 91);
  check_packed_copies<float>(res, (std::int64_t{1} << 22) + 37, 94);
  check_packed_copies<double>(res, (std::int64_t{1} << 21) + 37, 97);
}

/// Several rows with a leading dimension larger than the row, sorted and unsorted, and automatic.
TYPED_TEST(select_vector_test, strided_rows)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const std::int64_t rows = 3;
  const std::int64_t n = 150001;
  const std::int64_t ld = n + 7;
  const auto in = make_row<float>(dist::normal, rows * ld, 51);
  for (auto algo : {select_algo::delegate, select_algo::automatic}) {
    for (bool sorted : {false, true}) {
      for (std::int64_t k : {std::int64_t{1}, std::int64_t{1000}}) {
        select_params params{.algo = algo, .sorted = sorted};
        const auto got =
            run<float, std::int32_t>(res, in, rows, n, ld, k, select_order::smallest, params);
        expect_equal(
            got,
            expected_rows<float, std::int32_t>(in, rows, n, ld, k, select_order::smallest, sorted),
            k, label(dist::normal, n, k, select_order::smallest, sorted));
      }
    }
  }
}

/// Same input, same bytes (the result is unique; this also catches any scheduling dependence).
TYPED_TEST(select_vector_test, deterministic)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const std::int64_t n = 1 << 20;
  const auto in = make_row<float>(dist::customized, n, 61);
  for (auto algo : {select_algo::delegate, select_algo::radix}) {
    select_params params{.algo = algo};
    const auto a = run<float, std::int64_t>(res, in, 1, n, n, 5000, select_order::largest, params);
    const auto b = run<float, std::int64_t>(res, in, 1, n, n, 5000, select_order::largest, params);
    EXPECT_EQ(a.indices, b.indices);
    EXPECT_EQ(0, std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)));
  }
}

/// select_vector on one device row of n elements with the delegate sub-range length forced.
template <class T, class IndexT>
result<T, IndexT> forced_delegate(const cuda_resources& res, const T* row, std::int64_t n,
                                  std::int64_t k, bool largest, bool sorted, std::int64_t alpha)
{
  buffer<T> d_v(res, k, "values");
  buffer<IndexT> d_i(res, k, "indices");
  selection::problem p;
  p.k = k;
  p.largest = largest;
  p.max_length = n;
  p.algo = select_algo::delegate;
  p.sorted = sorted;
  p.delegate_subrange = alpha;
  selection::select_vector(res, selection::row_source<T, IndexT>{row, 1, n, n, nullptr, nullptr},
                           selection::row_sink<T, IndexT>{d_v.data(), d_i.data(), k, k}, p);
  return {to_host_vector(d_v), to_host_vector(d_i)};
}

/// The delegate algorithm forced to each sub-range length in `alphas` on a row of n elements that
/// starts `skew` elements into its buffer (skew > 0: not 16-byte aligned, the construction
/// kernel's single-element loads).
template <class T>
void check_subranges(const cuda_resources& res, std::int64_t n, std::int64_t skew,
                     std::initializer_list<dist> dists, std::initializer_list<std::int64_t> alphas,
                     std::initializer_list<std::int64_t> ks)
{
  for (dist d : dists) {
    const auto row = make_row<T>(d, n + skew, 71 + static_cast<std::uint64_t>(d));
    const std::vector<T> in(row.begin() + skew, row.end());
    buffer<T> d_row = on(res, row);
    for (std::int64_t k : ks) {
      for (bool largest : {true, false}) {
        const auto order = largest ? select_order::largest : select_order::smallest;
        const auto want = expected_rows<T, std::int64_t>(in, 1, n, n, k, order, false);
        for (std::int64_t alpha : alphas) {
          const auto got = forced_delegate<T, std::int64_t>(res, d_row.data() + skew, n, k, largest,
                                                            false, alpha);
          expect_equal(got, want, k,
                       label(d, n, k, order, false) + " alpha=" + std::to_string(alpha) +
                           " skew=" + std::to_string(skew));
          if (::testing::Test::HasFatalFailure()) {
            return;
          }
        }
      }
    }
  }
}

/// Both construction kernels at every sub-range length: the tile kernel with one sub-range per
/// thread (32), several threads and several warps per sub-range, the warp kernel above
/// delegate_policy::tile_max_subrange, a short last sub-range and tile, rows that are not 16-byte
/// aligned, every value type, and k beyond the number of delegates (the fallback to a plain radix
/// select). All-equal and clustered rows overflow the planned candidate vector and take the
/// exact-size redo.
TYPED_TEST(select_vector_test, every_subrange_length)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  if constexpr (std::is_same_v<TypeParam, host_resources>) {
    GTEST_SKIP() << "sub-range lengths are a detail of the CUDA delegate kernels";
  } else {
    TypeParam res{};
    const auto all = {dist::uniform, dist::customized, dist::all_equal, dist::special};
    check_subranges<float>(res, 300001, 0, all,
                           {32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 65536, 262144},
                           {1, 100, 5000, 20000});
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
    check_subranges<float>(res, 300001, 1, {dist::uniform, dist::normal, dist::special},
                           {32, 256, 512, 4096, 16384}, {1, 5000});
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
    check_subranges<double>(res, 100003, 0, all, {32, 64, 2048, 8192, 16384}, {1, 77, 3000});
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
    check_subranges<double>(res, 100003, 1, {dist::normal}, {32, 4096, 16384}, {77});
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
    check_subranges<half>(res, 100003, 0, all, {32, 64, 2048, 16384, 32768}, {1, 77, 3000});
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
    check_subranges<half>(res, 100003, 3, {dist::uniform}, {32, 8192}, {77});
  }
}

/// Delegate vectors on both sides of the cluster radix kernel's limit (131,072 float keys): with
/// alpha = 32 and 64 a row of 2^21 + 5 elements has 131,074 and 65,538 delegates, so the first
/// top-k runs the multi-pass radix select and the cluster kernel respectively.
TYPED_TEST(select_vector_test, long_delegate_vectors)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  if constexpr (std::is_same_v<TypeParam, host_resources>) {
    GTEST_SKIP() << "the delegate vector's length is a detail of the CUDA delegate kernels";
  } else {
    check_subranges<float>(TypeParam{}, (std::int64_t{1} << 21) + 5, 1,
                           {dist::uniform, dist::normal}, {32, 64}, {100, 20000});
  }
}

TYPED_TEST(select_vector_test, small_rows)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  if constexpr (std::is_same_v<TypeParam, host_resources>) {
    GTEST_SKIP() << "sub-range lengths are a detail of the CUDA delegate kernels";
  } else {
    TypeParam res{};
    const std::int64_t n = 20011;
    for (dist d : {dist::uniform, dist::all_equal, dist::special}) {
      const auto in = make_row<double>(d, n, 81 + static_cast<std::uint64_t>(d));
      buffer<double> d_in = on(res, in);
      for (std::int64_t k : {std::int64_t{1}, std::int64_t{64}, std::int64_t{3000}}) {
        const auto want =
            expected_rows<double, std::int32_t>(in, 1, n, n, k, select_order::largest, true);
        for (std::int64_t alpha : {32, 256, 512, 4096}) {
          const auto got =
              forced_delegate<double, std::int32_t>(res, d_in.data(), n, k, true, true, alpha);
          expect_equal(
              got, want, k,
              label(d, n, k, select_order::largest, true) + " alpha=" + std::to_string(alpha));
          if (::testing::Test::HasFatalFailure()) {
            return;
          }
        }
      }
    }
  }
}

TYPED_TEST(select_vector_test, rejects_bad_arguments)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  // delegate applies to dense rows only
  const std::vector<offset_t> ptr{0, 2, 3};
  const std::vector<std::int32_t> col{0, 1, 3};
  const std::vector<float> val{1.0f, 2.0f, 3.0f};
  const auto m = make_csr<float, std::int32_t>(host_resources{}, 2, 4, ptr, col, val);
  const auto rows = on_backend(res, m);
  EXPECT_THROW(select_k(res, rows.view(), 1, select_order::largest,
                        select_params{.algo = select_algo::delegate}),
               invalid_argument);
  // automatic on CSR rows never runs delegate
  EXPECT_NO_THROW(select_k(res, rows.view(), 1, select_order::largest));
  // max_iter is for binary_search only
  const std::vector<float> in(4096, 1.0f);
  select_params approx{.algo = select_algo::delegate, .max_iter = 4};
  EXPECT_THROW((run<float, std::int32_t>(res, in, 1, 4096, 4096, 8, select_order::largest, approx)),
               invalid_argument);
}

TEST(select_vector, choose_select_algo_by_shape)
{
  using enum select_algo;
  EXPECT_EQ(choose_select_algo(1, 2048, 32, select_dtype::f32), binary_search);
  EXPECT_EQ(choose_select_algo(1, std::int64_t{1} << 24, 16, select_dtype::f32), delegate);
  EXPECT_EQ(choose_select_algo(1, std::int64_t{1} << 30, 4096, select_dtype::f32), delegate);
  EXPECT_EQ(choose_select_algo(1, std::int64_t{1} << 24, std::int64_t{1} << 23, select_dtype::f32),
            radix);
  EXPECT_EQ(choose_select_algo(16, 131072, 50, select_dtype::f32), radix);
  EXPECT_EQ(choose_select_algo(1, std::int64_t{1} << 22, 16, select_dtype::f32), radix);
  EXPECT_EQ(choose_select_algo(1, std::int64_t{1} << 24, std::int64_t{1} << 15, select_dtype::f32),
            delegate);
  EXPECT_EQ(choose_select_algo(1, std::int64_t{1} << 24, std::int64_t{1} << 16, select_dtype::f32),
            radix);
  EXPECT_EQ(choose_select_algo(1, std::int64_t{1} << 26, std::int64_t{1} << 18, select_dtype::f32),
            delegate);
  EXPECT_EQ(choose_select_algo(4, std::int64_t{1} << 24, std::int64_t{1} << 17, select_dtype::f32),
            delegate);
  EXPECT_EQ(choose_select_algo(4, std::int64_t{1} << 24, std::int64_t{1} << 18, select_dtype::f32),
            radix);
  EXPECT_EQ(choose_select_algo(100000, std::int64_t{1} << 21, 16, select_dtype::f32), radix);
}

// ---- more than 2^31 elements: int64 indices (GPU machine only, not CI) --------------------------

TYPED_TEST(select_vector_test, row_beyond_int32_on_gpu)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  if constexpr (std::is_same_v<TypeParam, host_resources>) {
    GTEST_SKIP() << "the > 2^31-element row runs on the CUDA backend only (8.6 GB)";
  } else {
    TypeParam res{};
    const std::int64_t big = std::int64_t{1} << 31;
    const std::int64_t n = big + (std::int64_t{1} << 20) + 3;
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
    if (cuda_free_memory(res) < bytes + bytes / 2 + (std::size_t{4} << 30)) {
      GTEST_SKIP() << "needs about " << (bytes * 3 / 2 >> 30) + 4 << " GiB of free GPU memory";
    }
    std::vector<float> in;
    try {
      in.resize(static_cast<std::size_t>(n));
    } catch (const std::bad_alloc&) {
      GTEST_SKIP() << "needs " << (bytes >> 30) << " GiB of host memory";
    }
    for (std::int64_t i = 0; i < n; ++i) {  // [0, 1), 2^24 distinct values
      in[i] = float((static_cast<std::uint64_t>(i) * 2654435761u) & 0xffffffu) * 0x1p-24f;
    }
    // Planted answers across the 2^31 boundary, with ties broken by the smaller index.
    const std::vector<std::int64_t> top3{0, big - 1, big, big + 1, big + 12345, n - 1};
    const std::vector<std::int64_t> top2{n - 2, big + 9, big + 5, 7};  // ties: 7, big + 5 win
    const std::vector<std::int64_t> low3{1, big + 100, n - 3};
    const std::vector<std::int64_t> low2{big + 200, big + 50, 3};  // ties: 3, big + 50 win
    for (auto i : top3) {
      in[i] = 3.0f;
    }
    for (auto i : top2) {
      in[i] = 2.0f;
    }
    for (auto i : low3) {
      in[i] = -3.0f;
    }
    for (auto i : low2) {
      in[i] = -2.0f;
    }
    buffer<float> d_in = on(res, in);
    in.clear();
    in.shrink_to_fit();
    const std::vector<std::int64_t> want_largest{0,       7,       big - 1,     big,
                                                 big + 1, big + 5, big + 12345, n - 1};
    const std::vector<std::int64_t> want_smallest{1, 3, big + 50, big + 100, n - 3};
    for (auto algo : {select_algo::delegate, select_algo::radix, select_algo::automatic}) {
      for (auto order : {select_order::largest, select_order::smallest}) {
        const auto& want = order == select_order::largest ? want_largest : want_smallest;
        const auto k = static_cast<std::int64_t>(want.size());
        buffer<float> d_v(res, k, "values");
        buffer<std::int64_t> d_i(res, k, "indices");
        const auto dev = memory_space::device;
        select_k<float, std::int64_t>(res, dense_view<const float>{1, n, n, d_in.data(), dev}, k,
                                      order, dense_view<float>{1, k, k, d_v.data(), dev},
                                      dense_view<std::int64_t>{1, k, k, d_i.data(), dev},
                                      {.algo = algo});
        const auto idx = to_host_vector(d_i);
        const auto val = to_host_vector(d_v);
        EXPECT_EQ(idx, want) << "algo " << static_cast<int>(algo);
        for (std::size_t j = 0; j < want.size(); ++j) {
          const bool three = order == select_order::largest
                                 ? std::find(top3.begin(), top3.end(), want[j]) != top3.end()
                                 : std::find(low3.begin(), low3.end(), want[j]) != low3.end();
          const float v = (three ? 3.0f : 2.0f) * (order == select_order::largest ? 1.0f : -1.0f);
          EXPECT_EQ(val[j], v) << "slot " << j;
        }
      }
    }
    // int32 indices cannot name positions beyond 2^31 - 1: refused with a message.
    buffer<float> d_v(res, 1, "values");
    buffer<std::int32_t> d_i(res, 1, "indices");
    const auto dev = memory_space::device;
    EXPECT_THROW((select_k<float, std::int32_t>(
                     res, dense_view<const float>{1, n, n, d_in.data(), dev}, 1,
                     select_order::largest, dense_view<float>{1, 1, 1, d_v.data(), dev},
                     dense_view<std::int32_t>{1, 1, 1, d_i.data(), dev})),
                 invalid_argument);
  }
}

}  // namespace
}  // namespace spira::test
