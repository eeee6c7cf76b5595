// spira::mxm (host) against SuiteSparse:GraphBLAS's GrB_mxm, C⟨M⟩ = accum(C, op(A) ⊕.⊗ op(B)):
// every combination of mask (none, valued with explicit zeros, structural), complement,
// accumulator (none or a monoid), replace, transposes of A and B, and C given or empty, for the
// built-in annihilating semirings, on random matrices with empty rows and columns; float and
// double values, int32 and int64 indices, and both ways of computing the product (Gustavson's and
// the masked dot product). Values are small integers, so both libraries compute every entry exactly
// and the results must be equal entry for entry.
#include "support/graphblas.hpp"
#include "support/oracle.hpp"

#include <semirings/graphblas.hpp>
#include <spira/mxm.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace spira::test {
namespace {

const auto* const env = ::testing::AddGlobalTestEnvironment(new graphblas_env);

/// GrB_mxm of the case with GraphBLAS semiring `s` and accumulator `acc` on matrices of `type`.
template <class V, class I>
void graphblas_mxm(const sweep_case& k, GrB_Semiring s, GrB_BinaryOp acc, GrB_Type type,
                   csr_view<V, I> a, csr_view<V, I> b, csr_view<V, I> c, csr_view<V, I> m,
                   entry_list* out)
{
  GrB_Matrix ga = nullptr, gb = nullptr;
  grb_case g;
  make_grb(a, type, &ga);
  make_grb(b, type, &gb);
  grb_case_of(k, type, c, m, &g);
  SPIRA_GRB_OK(GrB_mxm(g.c, g.mask, k.accumulate ? acc : nullptr, s, ga, gb, g.desc));
  grb_entries(g.c, type, out);
  GrB_Matrix_free(&ga);
  GrB_Matrix_free(&gb);
  grb_free(&g);
}

template <class V, class I, class S, class Accum>
entry_list spira_mxm(const sweep_case& k, const S& s, const Accum& acc, csr_view<V, I> a,
                     csr_view<V, I> b, csr_view<V, I> c, csr_view<V, I> m,
                     detail::mxm_method method)
{
  const auto r = with_accum(k, acc, [&](const auto& accum) {
    return detail::mxm_host(host_resources{}, k.c_of(c), k.mask_of(m), accum, s, a, b, k.desc(),
                            "spira::mxm", "A", "B", method);
  });
  return entries_of(r.view());
}

template <class T>
class mxm_graphblas : public ::testing::Test {};
TYPED_TEST_SUITE(mxm_graphblas, value_index_types);

/// Every mask / complement / accumulator / replace / transpose / C combination for one semiring.
/// method: how spira computes the product (masked_dot: wherever a mask that is not complemented
/// allows it, Gustavson's product elsewhere).
template <class V, class I, class S, class Accum>
void sweep(const S& s, GrB_Semiring gs, const Accum& acc, GrB_BinaryOp gacc, bool logical,
           const char* what, detail::mxm_method method)
{
  const GrB_Type type = logical ? GrB_BOOL : GrB_FP64;
  const std::int64_t m = 37, inner = 29, n = 41;
  for (int t = 0; t < 4; ++t) {
    const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
    const auto a = ta ? operand<V, I>(inner, m, 11, logical) : operand<V, I>(m, inner, 11, logical);
    const auto b = tb ? operand<V, I>(n, inner, 12, logical) : operand<V, I>(inner, n, 12, logical);
    const auto c = operand<V, I>(m, n, 13, logical);
    const auto mask = operand<V, I>(m, n, 14, false, true);
    for (int bits = 0; bits < sweep_case::count; ++bits) {
      const auto k = sweep_case::nth(bits, ta, tb);
      entry_list want;
      graphblas_mxm(k, gs, gacc, type, a.view(), b.view(), c.view(), mask.view(), &want);
      const auto got = spira_mxm(k, s, acc, a.view(), b.view(), c.view(), mask.view(), method);
      ASSERT_EQ(got, want) << what << ": " << k.name();
    }
  }
}

TYPED_TEST(mxm_graphblas, every_descriptor_for_every_builtin_semiring)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  for (const auto method : {detail::mxm_method::automatic, detail::mxm_method::gustavson,
                            detail::mxm_method::masked_dot}) {
    for_each_builtin_semiring(
        [&](const auto& s, GrB_Semiring gs, const auto& acc, GrB_BinaryOp gacc, bool logical,
            const char* what) { sweep<V, I>(s, gs, acc, gacc, logical, what, method); });
  }
}

/// B wider than the dense accumulator's limit: the rows' products are gathered and sorted instead;
/// the same result as GraphBLAS, and as the dense accumulator on the same product restricted to
/// the columns it can hold.
TEST(mxm, wide_b_uses_sorted_products)
{
  using V = double;
  using I = std::int64_t;
  const std::int64_t n = detail::mxm_policy::dense_accumulator_max_cols + 1000;
  const auto a = operand<V, I>(50, 40, 21, false);
  auto narrow = operand<V, I>(40, 300, 22, false);
  // The same entries spread over n columns (column c -> c * (n / 300)).
  csr_matrix<V, I> b(host_resources{}, 40, n, narrow.nnz());
  std::copy_n(narrow.row_ptr(), 41, b.row_ptr());
  for (std::int64_t p = 0; p < narrow.nnz(); ++p) {
    b.col_idx()[p] = narrow.col_idx()[p] * (n / 300);
    b.values()[p] = narrow.values()[p];
  }
  const sweep_case k{.mask = 0};
  entry_list want;
  graphblas_mxm(k, GrB_PLUS_TIMES_SEMIRING_FP64, GrB_PLUS_FP64, GrB_FP64, a.view(), b.view(),
                csr_view<V, I>{50, n, 0, std::vector<offset_t>(51, 0).data(), nullptr, nullptr},
                csr_view<V, I>{}, &want);
  const auto got = mxm(host_resources{}, a.view(), b.view(), semirings::plus_times{});
  EXPECT_EQ(entries_of(got.view()), want);
  const auto dense = mxm(host_resources{}, a.view(), narrow.view(), semirings::plus_times{});
  ASSERT_EQ(got.nnz(), dense.nnz());
  for (std::int64_t p = 0; p < got.nnz(); ++p) {
    ASSERT_EQ(got.col_idx()[p], dense.col_idx()[p] * (n / 300));
    ASSERT_EQ(got.values()[p], dense.values()[p]);
  }
}

/// The masked dot product folds the same products in the same order as Gustavson's product: the
/// same bytes, also for values whose sums round (uniform random floats), with a valued mask.
TEST(mxm, masked_dot_product_gives_the_same_bytes)
{
  const auto a = random_csr<float, std::int32_t>({.rows = 200, .cols = 150, .seed = 33});
  const auto b = random_csr<float, std::int32_t>({.rows = 180, .cols = 150, .seed = 34});
  const auto m = random_csr<float, std::int32_t>({.rows = 200, .cols = 180, .seed = 35});
  const descriptor o{.transpose_b = true};
  const auto run = [&](detail::mxm_method method) {
    return detail::mxm_host(host_resources{}, std::nullopt, std::optional(m.view()),
                            no_accumulator{}, semirings::plus_times{}, a.view(), b.view(), o,
                            "spira::mxm", "A", "B", method);
  };
  const auto gustavson = run(detail::mxm_method::gustavson);
  const auto dot = run(detail::mxm_method::masked_dot);
  ASSERT_GT(gustavson.nnz(), 0);
  EXPECT_EQ(entries_of(gustavson.view()), entries_of(dot.view()));
}

/// The same bytes for any number of threads (a product large enough for three of them: a small one
/// runs on the calling thread, detail::threads_for).
TEST(mxm, result_does_not_depend_on_the_thread_count)
{
  const auto a =
      random_csr<float, std::int32_t>({.rows = 2000, .cols = 1500, .mean_degree = 40, .seed = 31});
  const auto b =
      random_csr<float, std::int32_t>({.rows = 1500, .cols = 1000, .mean_degree = 40, .seed = 32});
  const host_resources three_threads{.threads = 3};
  const auto costs = detail::mxm_costs_of(a.view(), b.view(), false, nullptr);
  ASSERT_EQ(detail::threads_for(three_threads, std::int64_t(costs.gustavson)), 3);
  const auto one = mxm(host_resources{.threads = 1}, a.view(), b.view(), semirings::plus_times{});
  const auto three = mxm(three_threads, a.view(), b.view(), semirings::plus_times{});
  EXPECT_EQ(entries_of(one.view()), entries_of(three.view()));
}

TEST(mxm, bad_arguments_name_the_operand)
{
  using namespace spira::semirings;
  const auto a = random_csr<float, std::int32_t>({.rows = 10, .cols = 8, .seed = 41});
  const auto b = random_csr<float, std::int32_t>({.rows = 9, .cols = 7, .seed = 42});
  const auto b8 = random_csr<float, std::int32_t>({.rows = 8, .cols = 7, .seed = 43});
  const auto wrong = random_csr<float, std::int32_t>({.rows = 10, .cols = 6, .seed = 44});
  const host_resources res{};
  expect_throw_with<dimension_mismatch>([&] { (void)mxm(res, a.view(), b.view(), plus_times{}); },
                                        "inner dimensions differ");
  expect_throw_with<dimension_mismatch>(
      [&] {
        (void)mxm(res, std::optional(wrong.view()), std::nullopt, no_accumulator{}, plus_times{},
                  a.view(), b8.view());
      },
      "spira::mxm: C is 10 x 6");
  expect_throw_with<dimension_mismatch>(
      [&] {
        (void)mxm(res, std::nullopt, std::optional(wrong.view()), no_accumulator{}, plus_times{},
                  a.view(), b8.view());
      },
      "spira::mxm: mask is 10 x 6");
  // Unsorted columns in A's row 0.
  auto bad = random_csr<float, std::int32_t>({.rows = 10, .cols = 8, .mean_degree = 4, .seed = 45});
  std::int64_t row = 0;
  while (bad.row_ptr()[row + 1] - bad.row_ptr()[row] < 2) {
    ++row;
  }
  std::swap(bad.col_idx()[bad.row_ptr()[row]], bad.col_idx()[bad.row_ptr()[row] + 1]);
  expect_throw_with<invalid_argument>([&] { (void)mxm(res, bad.view(), b8.view(), plus_times{}); },
                                      "spira::mxm: A");
}

}  // namespace
}  // namespace spira::test
