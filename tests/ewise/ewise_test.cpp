// spira::ewise_add, ewise_mult and ewise_union (host) against SuiteSparse:GraphBLAS's
// GrB_eWiseAdd, GrB_eWiseMult and GxB_eWiseUnion: every combination of mask (none, valued with
// explicit zeros, structural), complement, accumulator, replace, transposes and C given or empty,
// for commutative and non-commutative operators and accumulators (minus: the first argument comes
// from A, an accumulator's from C), float and double, int32 and int64 indices. Values are small
// integers: both libraries compute every entry exactly.
#include "support/graphblas.hpp"

#include <spira/ewise.hpp>
#include <spira/semiring.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <utility>

namespace spira::test {
namespace {

const auto* const env = ::testing::AddGlobalTestEnvironment(new graphblas_env);

enum class kind { add, mult, fill };
constexpr double alpha = 2, beta = -3;  // ewise_union's stand-ins for missing entries

template <class V, class I>
void graphblas_ewise(kind w, const sweep_case& k, GrB_BinaryOp op, GrB_BinaryOp acc, GrB_Type type,
                     csr_view<V, I> a, csr_view<V, I> b, csr_view<V, I> c, csr_view<V, I> m,
                     entry_list* out)
{
  GrB_Matrix ga = nullptr, gb = nullptr;
  grb_case g;
  make_grb(a, type, &ga);
  make_grb(b, type, &gb);
  grb_case_of(k, type, c, m, &g);
  GrB_BinaryOp accum = k.accumulate ? acc : nullptr;
  if (w == kind::add) {
    SPIRA_GRB_OK(GrB_Matrix_eWiseAdd_BinaryOp(g.c, g.mask, accum, op, ga, gb, g.desc));
  } else if (w == kind::mult) {
    SPIRA_GRB_OK(GrB_Matrix_eWiseMult_BinaryOp(g.c, g.mask, accum, op, ga, gb, g.desc));
  } else {
    GrB_Scalar sa = nullptr, sb = nullptr;
    SPIRA_GRB_OK(GrB_Scalar_new(&sa, GrB_FP64));
    SPIRA_GRB_OK(GrB_Scalar_new(&sb, GrB_FP64));
    SPIRA_GRB_OK(GrB_Scalar_setElement_FP64(sa, alpha));
    SPIRA_GRB_OK(GrB_Scalar_setElement_FP64(sb, beta));
    SPIRA_GRB_OK(GxB_Matrix_eWiseUnion(g.c, g.mask, accum, op, ga, sa, gb, sb, g.desc));
    GrB_Scalar_free(&sa);
    GrB_Scalar_free(&sb);
  }
  grb_entries(g.c, type, out);
  GrB_Matrix_free(&ga);
  GrB_Matrix_free(&gb);
  grb_free(&g);
}

template <class V, class I, class Op, class Accum>
entry_list spira_ewise(kind w, const sweep_case& k, const Op& op, const Accum& acc,
                       csr_view<V, I> a, csr_view<V, I> b, csr_view<V, I> c, csr_view<V, I> m)
{
  const host_resources res{};
  const auto run = [&](const auto& accum) {
    if (w == kind::add) {
      return ewise_add(res, k.c_of(c), k.mask_of(m), accum, op, a, b, k.desc());
    }
    if (w == kind::mult) {
      return ewise_mult(res, k.c_of(c), k.mask_of(m), accum, op, a, b, k.desc());
    }
    return ewise_union(res, k.c_of(c), k.mask_of(m), accum, op, a, V(alpha), b, V(beta), k.desc());
  };
  const auto r = with_accum(k, acc, run);
  return entries_of(r.view());
}

template <class T>
class ewise_graphblas : public ::testing::Test {};
TYPED_TEST_SUITE(ewise_graphblas, value_index_types);

template <class V, class I, class Op, class Accum>
void sweep(const Op& op, GrB_BinaryOp gop, const Accum& acc, GrB_BinaryOp gacc, bool logical,
           const char* what)
{
  const GrB_Type type = logical ? GrB_BOOL : GrB_FP64;
  const std::int64_t m = 31, n = 43;
  for (const kind w : {kind::add, kind::mult, kind::fill}) {
    if (logical && w == kind::fill) {
      continue;  // alpha and beta are not truth values
    }
    for (int t = 0; t < 4; ++t) {
      const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
      const auto a = ta ? operand<V, I>(n, m, 51, logical) : operand<V, I>(m, n, 51, logical);
      const auto b = tb ? operand<V, I>(n, m, 52, logical) : operand<V, I>(m, n, 52, logical);
      const auto c = operand<V, I>(m, n, 53, logical);
      const auto mask = operand<V, I>(m, n, 54, false, true);
      for (int bits = 0; bits < sweep_case::count; ++bits) {
        const auto k = sweep_case::nth(bits, ta, tb);
        entry_list want;
        graphblas_ewise(w, k, gop, gacc, type, a.view(), b.view(), c.view(), mask.view(), &want);
        const auto got = spira_ewise(w, k, op, acc, a.view(), b.view(), c.view(), mask.view());
        ASSERT_EQ(got, want) << what << " " << "amu"[int(w)] << ": " << k.name();
      }
    }
  }
}

TYPED_TEST(ewise_graphblas, every_descriptor_and_operator)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  const auto minus = [](double x, double y) { return x - y; };
  const auto times = [](double x, double y) { return x * y; };
  const auto first = [](double x, double) { return x; };
  sweep<V, I>(plus_monoid{}, GrB_PLUS_FP64, minus, GrB_MINUS_FP64, false, "plus");
  sweep<V, I>(minus, GrB_MINUS_FP64, plus_monoid{}, GrB_PLUS_FP64, false, "minus");
  sweep<V, I>(times, GrB_TIMES_FP64, min_monoid{}, GrB_MIN_FP64, false, "times");
  sweep<V, I>(first, GrB_FIRST_FP64, max_monoid{}, GrB_MAX_FP64, false, "first");
  sweep<V, I>(lor_monoid{}, GrB_LOR, lor_monoid{}, GrB_LOR, true, "lor");
}

TEST(ewise, bad_arguments_name_the_operand)
{
  const auto a = random_csr<float, std::int32_t>({.rows = 10, .cols = 8, .seed = 61});
  const auto b = random_csr<float, std::int32_t>({.rows = 10, .cols = 7, .seed = 62});
  const auto wrong = random_csr<float, std::int32_t>({.rows = 9, .cols = 8, .seed = 63});
  const host_resources res{};
  expect_throw_with<dimension_mismatch>(
      [&] {
        (void)ewise_add(res, std::nullopt, std::nullopt, no_accumulator{}, plus_monoid{}, a.view(),
                        b.view());
      },
      "spira::ewise_add: A is 10 x 8 but B is 10 x 7");
  expect_throw_with<dimension_mismatch>(
      [&] {
        (void)ewise_mult(res, std::optional(wrong.view()), std::nullopt, no_accumulator{},
                         plus_monoid{}, a.view(), a.view());
      },
      "spira::ewise_mult: C is 9 x 8");
  expect_throw_with<dimension_mismatch>(
      [&] {
        (void)ewise_union(res, std::nullopt, std::optional(wrong.view()), no_accumulator{},
                          plus_monoid{}, a.view(), 0.0f, a.view(), 0.0f);
      },
      "spira::ewise_union: mask is 9 x 8");
}

}  // namespace
}  // namespace spira::test
