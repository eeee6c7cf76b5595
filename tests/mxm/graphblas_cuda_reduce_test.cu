// The reductions on CUDA (spira/cuda/graphblas.cuh) against the host ones, which
// tests/reduce/reduce_test.cpp checks against SuiteSparse:GraphBLAS: rows, columns and the scalar
// into dense outputs, and rows (or columns, transposed) into a masked sparse vector for every
// combination of mask (none, valued with explicit zeros, structural), complement, accumulator,
// replace, transpose and w given or empty; the same entries, bit for bit, also where sums round.
#include "support/backend.hpp"
#include "support/sweep.hpp"

#include <spira/cuda/graphblas.cuh>
#include <spira/mxv.hpp>
#include <spira/ops.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

namespace spira::test {
namespace {

template <class T>
class reduce_cuda : public ::testing::Test {};
TYPED_TEST_SUITE(reduce_cuda, cuda_value_index_types);

struct square_map {
  SPIRA_HD double operator()(double x) const { return x * x; }
};

/// The reductions on the GPU equal the host's, bit for bit (sums that round, a map, max).
TYPED_TEST(reduce_cuda, dense_outputs_give_the_host_bytes)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  const cuda_resources res{};
  const auto a = random_csr<V, I>(
      {.rows = 700, .cols = 500, .mean_degree = 40, .signed_values = true, .seed = 81});
  const auto ad = to_device(res, a.view());
  const auto check = [&](const auto& m, const auto& map, const char* what) {
    std::vector<V> want_r(std::size_t(a.rows())), want_c(std::size_t(a.cols()));
    reduce_rows(host_resources{}, a.view(), std::span<V>(want_r), m, map);
    reduce_cols(host_resources{}, a.view(), std::span<V>(want_c), m, map);
    buffer<V> got_r(res, want_r.size()), got_c(res, want_c.size());
    reduce_rows(res, ad.view(), std::span<V>(got_r.data(), got_r.size()), m, map);
    reduce_cols(res, ad.view(), std::span<V>(got_c.data(), got_c.size()), m, map);
    std::vector<V> r(want_r.size()), c(want_c.size());
    copy(r.data(), memory_space::host, got_r.data(), memory_space::device, r.size(), res);
    copy(c.data(), memory_space::host, got_c.data(), memory_space::device, c.size(), res);
    EXPECT_EQ(r, want_r) << what;
    EXPECT_EQ(c, want_c) << what;
    const V want_s = reduce_scalar(host_resources{}, a.view(), m, map);
    const V got_s = reduce_scalar(res, ad.view(), m, map);
    EXPECT_EQ(std::memcmp(&want_s, &got_s, sizeof(V)), 0)
        << what << ": " << got_s << " vs " << want_s;
  };
  check(plus_monoid{}, identity_map{}, "plus");
  check(plus_monoid{}, square_map{}, "plus of squares");
  check(max_monoid{}, identity_map{}, "max");
  expect_throw_with<dimension_mismatch>(
      [&] {
        buffer<V> out(res, 3);
        reduce_rows(res, ad.view(), std::span<V>(out.data(), 3), plus_monoid{});
      },
      "spira::reduce_rows: out has 3 entries but A has 700 rows");
}

/// reduce_rows into a masked sparse vector, every descriptor: the CUDA result equals the host's.
/// `rounding`: A with signed values of many digits (sums that round), else operand()'s.
template <class V, class I, class M, class Accum>
void masked_sweep(const M& m, const Accum& acc, bool rounding, const char* what)
{
  const cuda_resources res{};
  const std::int64_t rows = 37, cols = 29;
  for (const bool ta : {false, true}) {
    const std::int64_t ar = ta ? cols : rows, ac = ta ? rows : cols;
    const auto a =
        rounding
            ? random_csr<V, I>(
                  {.rows = ar, .cols = ac, .mean_degree = 12, .signed_values = true, .seed = 107})
            : operand<V, I>(ar, ac, 103, false);
    const auto w = vector_operand<V, I>(rows, 104, false);
    const auto mask = vector_operand<V, I>(rows, 105, false, true);
    const auto ad = to_device(res, a.view());
    const auto wd = vector_on_device(res, w), md = vector_on_device(res, mask);
    for (int bits = 0; bits < sweep_case::count; ++bits) {
      const auto k = sweep_case::nth(bits, ta);
      const auto run = [&](const auto& r, const auto& av, const auto& wv, const auto& mv) {
        const auto w_in = k.with_c ? std::optional(wv) : std::nullopt;
        const auto m_in = k.mask != 0 ? std::optional(mv) : std::nullopt;
        return with_accum(k, acc, [&](const auto& accum) {
          return reduce_rows(r, w_in, m_in, accum, m, av, k.desc());
        });
      };
      const auto want = entries_of(run(host_resources{}, a.view(), w.view(), mask.view()).view());
      const auto got = vector_host_entries(run(res, ad.view(), wd.view(), md.view()));
      ASSERT_EQ(got, want) << what << ": " << k.name();
    }
  }
}

TYPED_TEST(reduce_cuda, into_a_masked_vector_every_descriptor)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  for (const bool rounding : {false, true}) {
    masked_sweep<V, I>(plus_monoid{}, plus_monoid{}, rounding, "plus");
    masked_sweep<V, I>(min_monoid{}, max_monoid{}, rounding, "min");
    masked_sweep<V, I>(max_monoid{}, plus_monoid{}, rounding, "max");
  }
}

TEST(reduce_cuda_errors, vectors_name_what_is_wrong)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = float;
  using I = std::int32_t;
  const cuda_resources res{};
  const auto ad = to_device(res, operand<V, I>(10, 8, 1, false).view());
  const auto w = vector_on_device(res, vector_operand<V, I>(8, 2, false));
  expect_throw_with<dimension_mismatch>(
      [&] {
        (void)reduce_rows(res, std::optional(w.view()), std::nullopt, no_accumulator{},
                          plus_monoid{}, ad.view());
      },
      "spira::reduce_rows: w has size 8 but A has 10 rows");
  const auto host_a = operand<V, I>(10, 8, 1, false);
  expect_throw_with<invalid_argument>(
      [&] {
        (void)reduce_rows(res, std::nullopt, std::nullopt, no_accumulator{}, plus_monoid{},
                          host_a.view());
      },
      "spira::reduce_rows: A is in host memory");
}

}  // namespace
}  // namespace spira::test
