// spira::mxv and spira::vxm with sparse vectors (host) against SuiteSparse:GraphBLAS's GrB_mxv and
// GrB_vxm, w⟨m⟩ = accum(w, op(A) ⊕.⊗ u) and accum(w, u ⊕.⊗ op(A)): every combination of mask
// (none, valued with explicit zeros, structural), complement, accumulator, replace, the transpose
// of A and w given or empty, for the built-in annihilating semirings; float and double values,
// int32 and int64 indices. Values are small integers, so both libraries compute every entry
// exactly and the results must be equal entry for entry.
#include "support/graphblas.hpp"
#include "support/oracle.hpp"

#include <semirings/graphblas.hpp>
#include <spira/mxv.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace spira::test {
namespace {

const auto* const env = ::testing::AddGlobalTestEnvironment(new graphblas_env);

template <class T>
class mxv_graphblas : public ::testing::Test {};
TYPED_TEST_SUITE(mxv_graphblas, value_index_types);

/// GrB_mxv (column = true) or GrB_vxm of the case, on operands of `type`.
template <class V, class I>
vector_entries graphblas_product(const sweep_case& k, bool column, GrB_Semiring s, GrB_BinaryOp acc,
                                 GrB_Type type, csr_view<V, I> a, sparse_vector_view<V, I> u,
                                 sparse_vector_view<V, I> w, sparse_vector_view<V, I> m)
{
  GrB_Matrix ga = nullptr;
  GrB_Vector gu = nullptr;
  grb_vector_case g;
  make_grb(a, type, &ga);
  make_grb(u, type, &gu);
  grb_vector_case_of(k, type, w, m, column ? GrB_INP0 : GrB_INP1, &g);
  GrB_BinaryOp accum = k.accumulate ? acc : nullptr;
  EXPECT_EQ(column ? GrB_mxv(g.w, g.mask, accum, s, ga, gu, g.desc)
                   : GrB_vxm(g.w, g.mask, accum, s, gu, ga, g.desc),
            GrB_SUCCESS);
  vector_entries out;
  grb_entries(g.w, type, &out);
  GrB_Matrix_free(&ga);
  GrB_Vector_free(&gu);
  grb_free(&g);
  return out;
}

/// spira's product of the case (k.transpose_a: the transpose of A, whichever side it is on).
template <class V, class I, class S, class Accum>
vector_entries spira_product(const sweep_case& k, bool column, const S& s, const Accum& acc,
                             csr_view<V, I> a, sparse_vector_view<V, I> u,
                             sparse_vector_view<V, I> w, sparse_vector_view<V, I> m)
{
  descriptor d = k.desc();
  d.transpose_a = column && k.transpose_a;
  d.transpose_b = !column && k.transpose_a;
  const auto w_in = k.with_c ? std::optional(w) : std::nullopt;
  const auto m_in = k.mask != 0 ? std::optional(m) : std::nullopt;
  const auto r = with_accum(k, acc, [&](const auto& accum) {
    return column ? mxv(host_resources{}, w_in, m_in, accum, s, a, u, d)
                  : vxm(host_resources{}, w_in, m_in, accum, s, u, a, d);
  });
  return entries_of(r.view());
}

/// Every mask / complement / accumulator / replace / transpose / w combination for one semiring,
/// both products.
template <class V, class I, class S, class Accum>
void sweep(const S& s, GrB_Semiring gs, const Accum& acc, GrB_BinaryOp gacc, bool logical,
           const char* what)
{
  const GrB_Type type = logical ? GrB_BOOL : GrB_FP64;
  const std::int64_t m = 37, n = 29;
  for (const bool column : {true, false}) {
    for (const bool ta : {false, true}) {
      // op(A) is m x n; u has n (mxv) or m (vxm) entries, the result the other size.
      const auto a = ta ? operand<V, I>(n, m, 51, logical) : operand<V, I>(m, n, 51, logical);
      const std::int64_t in = column ? n : m, out = column ? m : n;
      const auto u = vector_operand<V, I>(in, 52, logical);
      const auto w = vector_operand<V, I>(out, 53, logical);
      const auto mask = vector_operand<V, I>(out, 54, false, true);
      for (int bits = 0; bits < sweep_case::count; ++bits) {
        const auto k = sweep_case::nth(bits, ta);
        const auto want =
            graphblas_product(k, column, gs, gacc, type, a.view(), u.view(), w.view(), mask.view());
        const auto got =
            spira_product(k, column, s, acc, a.view(), u.view(), w.view(), mask.view());
        ASSERT_EQ(got, want) << what << (column ? " mxv: " : " vxm: ") << k.name();
      }
    }
  }
}

TYPED_TEST(mxv_graphblas, every_descriptor_for_every_builtin_semiring)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  for_each_builtin_semiring([](const auto& s, GrB_Semiring gs, const auto& acc, GrB_BinaryOp gacc,
                               bool logical,
                               const char* what) { sweep<V, I>(s, gs, acc, gacc, logical, what); });
}

/// T holds the value type (spira/descriptor.hpp): in float, an accumulator reads each entry of T
/// rounded to float, as GraphBLAS's FP32 T is, in every descriptor case of both products. A is a
/// permutation with real values, so that each entry of T is one product: GraphBLAS, which folds
/// sums in float where spira folds them in double, computes the same T, and only the rounding
/// before the accumulator is tested.
TEST(mxv, accumulator_reads_t_in_the_value_type)
{
  using V = float;
  using I = std::int32_t;
  const host_resources res{};
  // The case that showed it: t = u a = 11.86... rounds to float before w + t.
  const std::vector<I> zero{0};
  const auto a1 =
      make_csr<V, I>(res, 1, 1, std::vector<offset_t>{0, 1}, zero, std::vector<V>{0x1.84b9dcp-1f});
  const auto u1 = make_sparse_vector<V, I>(res, 1, zero, std::vector<V>{0x1.e39442p+3f});
  const auto w1 = make_sparse_vector<V, I>(res, 1, zero, std::vector<V>{0x1.adfcccp+2f});
  const auto one = vxm(res, std::optional(w1.view()), std::nullopt, plus_monoid{},
                       semirings::plus_times{}, u1.view(), a1.view());
  ASSERT_EQ(one.nnz(), 1);
  EXPECT_EQ(one.values()[0], 0x1.231224p+4f);  // 0x1.231226p+4 if t were not rounded first
  // Every descriptor case against GraphBLAS.
  const std::int64_t n = 61;
  std::vector<offset_t> ptr(std::size_t(n) + 1);
  std::vector<I> col(static_cast<std::size_t>(n));
  std::vector<V> val(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    ptr[std::size_t(i) + 1] = i + 1;
    col[std::size_t(i)] = I((i * 17 + 5) % n);
    val[std::size_t(i)] = V(0.25 + 0.731 * double((i * 29) % 23));
  }
  const auto a = make_csr<V, I>(res, n, n, ptr, col, val);
  const auto u = real_vector<V, I>(n, 81);
  const auto w = real_vector<V, I>(n, 82);
  const auto mask = vector_operand<V, I>(n, 83, false, true);
  for (const bool column : {true, false}) {
    for (const bool ta : {false, true}) {
      for (int bits = 0; bits < sweep_case::count; ++bits) {
        const auto k = sweep_case::nth(bits, ta);
        const auto want = graphblas_product(k, column, GrB_PLUS_TIMES_SEMIRING_FP32, GrB_PLUS_FP32,
                                            GrB_FP32, a.view(), u.view(), w.view(), mask.view());
        const auto got = spira_product(k, column, semirings::plus_times{}, plus_monoid{}, a.view(),
                                       u.view(), w.view(), mask.view());
        ASSERT_EQ(got, want) << (column ? "mxv: " : "vxm: ") << k.name();
      }
    }
  }
}

/// The pull folds a row's products in pull_fold's order (32 partial folds by position, then a
/// pairwise tree), in mxv and in vxm with transpose_b: a row of 40 products 1e16, 1, ..., 1, -1e16
/// (position 32), 1, ... sums to 38 in that order (1e16 and -1e16 meet in the first partial fold
/// before any 1 is added to them) and to 7 in increasing k (each 1 added to 1e16 rounds away). The
/// push (vxm of A's column, mxv with transpose_a) folds in increasing k.
TEST(mxv, pull_folds_in_its_fixed_order)
{
  using V = double;
  using I = std::int32_t;
  const host_resources res{};
  const std::int64_t n = 40;
  std::vector<I> col(static_cast<std::size_t>(n));
  std::vector<V> val(col.size(), 1.0);
  for (std::int64_t k = 0; k < n; ++k) {
    col[std::size_t(k)] = I(k);
  }
  val[0] = 1e16;
  val[32] = -1e16;
  const std::vector<V> ones(col.size(), 1.0);
  const auto row = make_csr<V, I>(res, 1, n, std::vector<offset_t>{0, n}, col, val);
  const auto u = make_sparse_vector<V, I>(res, n, col, ones);
  const auto pulled = mxv(res, row.view(), u.view(), semirings::plus_times{});
  ASSERT_EQ(pulled.nnz(), 1);
  EXPECT_EQ(pulled.values()[0], 38.0);
  const auto pulled_t =
      vxm(res, u.view(), row.view(), semirings::plus_times{}, descriptor{.transpose_b = true});
  ASSERT_EQ(pulled_t.nnz(), 1);
  EXPECT_EQ(pulled_t.values()[0], 38.0);
  // The same products by the push: A's row as a column, read by u's entries in increasing k.
  std::vector<offset_t> ptr(static_cast<std::size_t>(n) + 1);
  for (std::int64_t k = 0; k <= n; ++k) {
    ptr[std::size_t(k)] = k;
  }
  const auto column = make_csr<V, I>(res, n, 1, ptr, std::vector<I>(col.size(), I(0)), val);
  const auto pushed = vxm(res, u.view(), column.view(), semirings::plus_times{});
  ASSERT_EQ(pushed.nnz(), 1);
  EXPECT_EQ(pushed.values()[0], 7.0);
}

/// Breadth-first search levels by repeated masked vxm with lor_land (the next frontier: the
/// neighbours of the frontier not yet visited), against levels computed by a plain queue.
TEST(mxv, breadth_first_search_levels)
{
  using V = float;
  using I = std::int32_t;
  const std::int64_t n = 400;
  const auto g = random_csr<V, I>({.rows = n, .cols = n, .mean_degree = 3, .seed = 61});
  std::vector<std::int64_t> want(std::size_t(n), -1);
  std::vector<std::int64_t> queue{0};
  want[0] = 0;
  for (std::size_t q = 0; q < queue.size(); ++q) {
    const std::int64_t i = queue[q];
    for (offset_t p = g.row_ptr()[i]; p < g.row_ptr()[i + 1]; ++p) {
      const auto j = std::int64_t(g.col_idx()[p]);
      if (want[std::size_t(j)] < 0) {
        want[std::size_t(j)] = want[std::size_t(i)] + 1;
        queue.push_back(j);
      }
    }
  }
  const host_resources res{};
  const std::vector<I> start{0};
  const std::vector<V> one{1};
  auto frontier = make_sparse_vector<V, I>(res, n, start, one);
  auto visited = make_sparse_vector<V, I>(res, n, start, one);
  std::vector<std::int64_t> got(std::size_t(n), -1);
  got[0] = 0;
  const descriptor next{.structural_mask = true, .complement_mask = true, .replace = true};
  csr_matrix<V, I> eye(res, n, n, n);
  for (std::int64_t i = 0; i <= n; ++i) {
    eye.row_ptr()[i] = i;
  }
  for (std::int64_t i = 0; i < n; ++i) {
    eye.col_idx()[i] = I(i);
    eye.values()[i] = V(1);
  }
  for (std::int64_t level = 1; frontier.nnz() > 0; ++level) {
    frontier = vxm(res, std::nullopt, std::optional(visited.view()), no_accumulator{},
                   semirings::lor_land{}, frontier.view(), g.view(), next);
    for (std::int64_t p = 0; p < frontier.nnz(); ++p) {
      got[std::size_t(frontier.indices()[p])] = level;
    }
    // visited ∪= frontier: the frontier accumulated into visited with lor.
    visited = vxm(res, std::optional(visited.view()), std::nullopt, lor_monoid{},
                  semirings::lor_land{}, frontier.view(), eye.view());
  }
  EXPECT_EQ(got, want);
}

TEST(mxv, bad_arguments_name_the_operand)
{
  using namespace spira::semirings;
  const host_resources res{};
  const auto a = random_csr<float, std::int32_t>({.rows = 10, .cols = 8, .seed = 71});
  const auto u8 = vector_operand<float, std::int32_t>(8, 72, false);
  const auto u9 = vector_operand<float, std::int32_t>(9, 73, false);
  const auto w7 = vector_operand<float, std::int32_t>(7, 74, false);
  expect_throw_with<dimension_mismatch>([&] { (void)mxv(res, a.view(), u9.view(), plus_times{}); },
                                        "spira::mxv: u has size 9 but A is 10 x 8");
  expect_throw_with<dimension_mismatch>([&] { (void)vxm(res, u8.view(), a.view(), plus_times{}); },
                                        "spira::vxm: u has size 8 but A is 10 x 8");
  expect_throw_with<dimension_mismatch>(
      [&] {
        (void)mxv(res, std::optional(w7.view()), std::nullopt, no_accumulator{}, plus_times{},
                  a.view(), u8.view());
      },
      "spira::mxv: w has size 7 but the product has size 10");
  expect_throw_with<dimension_mismatch>(
      [&] {
        (void)vxm(res, std::nullopt, std::optional(w7.view()), no_accumulator{}, plus_times{},
                  u8.view(), a.view(), {.transpose_b = true});
      },
      "spira::vxm: mask has size 7 but the product has size 10 (Aᵀ is 8 x 10)");
  // Indices out of order.
  const std::vector<std::int32_t> idx{3, 1};
  const std::vector<float> x{1, 2};
  const sparse_vector_view<float, std::int32_t> bad{8, 2, idx.data(), x.data()};
  expect_throw_with<invalid_argument>([&] { (void)mxv(res, a.view(), bad, plus_times{}); },
                                      "spira::mxv: u: index 1 (entry 1) follows 3");
  expect_throw_with<invalid_argument>(
      [&] { (void)make_sparse_vector<float, std::int32_t>(res, 2, idx, x); },
      "make_sparse_vector: index 3 (entry 0) is outside [0, 2)");
}

}  // namespace
}  // namespace spira::test
