// spira::apply, apply_index, transpose and extract (host) against GraphBLAS's GrB_apply (unary and
// index-unary), GrB_transpose and GrB_extract: every combination of mask, complement,
// accumulator, replace, a transposed A and C given or empty; extract with index lists that repeat
// and come unsorted, and with all rows or columns.
#include "support/graphblas.hpp"

#include <spira/apply.hpp>
#include <spira/semiring.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace spira::test {
namespace {

const auto* const env = ::testing::AddGlobalTestEnvironment(new graphblas_env);

template <class T>
class apply_graphblas : public ::testing::Test {};
TYPED_TEST_SUITE(apply_graphblas, value_index_types);

TYPED_TEST(apply_graphblas, unary_and_index_unary)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  const auto acc = [](const sweep_case& k) { return k.accumulate ? GrB_PLUS_FP64 : nullptr; };
  sweep_unary<V, I>(
      30, 40, 30, 40,
      [&](const sweep_case& k, grb_case& g, GrB_Matrix ga) {
        SPIRA_GRB_OK(GrB_Matrix_apply(g.c, g.mask, acc(k), GrB_AINV_FP64, ga, g.desc));
      },
      [&](const sweep_case& k, csr_view<V, I> a, csr_view<V, I> c, csr_view<V, I> m) {
        return with_accum(k, plus_monoid{}, [&](const auto& accum) {
          return apply(
              host_resources{}, k.c_of(c), k.mask_of(m), accum, [](double x) { return -x; }, a,
              k.desc());
        });
      },
      "apply ainv");
  sweep_unary<V, I>(
      30, 40, 30, 40,
      [&](const sweep_case& k, grb_case& g, GrB_Matrix ga) {
        SPIRA_GRB_OK(GrB_Matrix_apply_IndexOp_INT64(g.c, g.mask, acc(k), GrB_ROWINDEX_INT64, ga,
                                                    std::int64_t{5}, g.desc));
      },
      [&](const sweep_case& k, csr_view<V, I> a, csr_view<V, I> c, csr_view<V, I> m) {
        return with_accum(k, plus_monoid{}, [&](const auto& accum) {
          return apply_index(
              host_resources{}, k.c_of(c), k.mask_of(m), accum,
              [](double, std::int64_t i, std::int64_t) { return double(i + 5); }, a, k.desc());
        });
      },
      "apply_index rowindex");
  sweep_unary<V, I>(
      30, 40, 30, 40,
      [&](const sweep_case& k, grb_case& g, GrB_Matrix ga) {
        SPIRA_GRB_OK(GrB_Matrix_apply_IndexOp_INT64(g.c, g.mask, acc(k), GrB_COLINDEX_INT64, ga,
                                                    std::int64_t{-1}, g.desc));
      },
      [&](const sweep_case& k, csr_view<V, I> a, csr_view<V, I> c, csr_view<V, I> m) {
        return with_accum(k, plus_monoid{}, [&](const auto& accum) {
          return apply_index(
              host_resources{}, k.c_of(c), k.mask_of(m), accum,
              [](double, std::int64_t, std::int64_t j) { return double(j - 1); }, a, k.desc());
        });
      },
      "apply_index colindex");
}

TYPED_TEST(apply_graphblas, transpose)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  // GrB_transpose(C, M, accum, A, desc) with GrB_INP0 = GrB_TRAN gives C = A: op(A) is 40 x 30,
  // C is 30 x 40 either way.
  sweep_unary<V, I>(
      40, 30, 30, 40,
      [&](const sweep_case& k, grb_case& g, GrB_Matrix ga) {
        SPIRA_GRB_OK(
            GrB_transpose(g.c, g.mask, k.accumulate ? GrB_PLUS_FP64 : nullptr, ga, g.desc));
      },
      [&](const sweep_case& k, csr_view<V, I> a, csr_view<V, I> c, csr_view<V, I> m) {
        return with_accum(k, plus_monoid{}, [&](const auto& accum) {
          return transpose(host_resources{}, k.c_of(c), k.mask_of(m), accum, a, k.desc());
        });
      },
      "transpose");
}

TYPED_TEST(apply_graphblas, extract_with_repeated_unsorted_and_all_indices)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  const std::vector<std::int64_t> rows{5, 0, 29, 5, 12, 7, 7, 3};
  const std::vector<std::int64_t> cols{39, 2, 2, 17, 0, 21, 8, 33, 11, 2};
  for (int which = 0; which < 3; ++which) {  // both lists; all rows; all columns
    const bool all_rows = which == 1, all_cols = which == 2;
    const std::int64_t nr = all_rows ? 30 : std::int64_t(rows.size());
    const std::int64_t nc = all_cols ? 40 : std::int64_t(cols.size());
    const auto rs = all_rows ? std::nullopt : std::optional(std::span<const std::int64_t>(rows));
    const auto cs = all_cols ? std::nullopt : std::optional(std::span<const std::int64_t>(cols));
    std::vector<GrB_Index> gr(rows.begin(), rows.end()), gc(cols.begin(), cols.end());
    sweep_unary<V, I>(
        30, 40, nr, nc,
        [&](const sweep_case& k, grb_case& g, GrB_Matrix ga) {
          SPIRA_GRB_OK(GrB_Matrix_extract(g.c, g.mask, k.accumulate ? GrB_PLUS_FP64 : nullptr, ga,
                                          all_rows ? GrB_ALL : gr.data(), GrB_Index(nr),
                                          all_cols ? GrB_ALL : gc.data(), GrB_Index(nc), g.desc));
        },
        [&](const sweep_case& k, csr_view<V, I> a, csr_view<V, I> c, csr_view<V, I> m) {
          return with_accum(k, plus_monoid{}, [&](const auto& accum) {
            return extract(host_resources{}, k.c_of(c), k.mask_of(m), accum, a, rs, cs, k.desc());
          });
        },
        all_rows   ? "extract, all rows"
        : all_cols ? "extract, all columns"
                   : "extract");
  }
}

TEST(apply, bad_arguments_name_the_operand)
{
  const auto a = random_csr<float, std::int32_t>({.rows = 10, .cols = 8, .seed = 97});
  const auto wrong = random_csr<float, std::int32_t>({.rows = 10, .cols = 8, .seed = 98});
  const host_resources res{};
  expect_throw_with<dimension_mismatch>(
      [&] {
        (void)transpose(res, std::optional(wrong.view()), std::nullopt, no_accumulator{}, a.view());
      },
      "spira::transpose: C is 10 x 8 but Aᵀ is 8 x 10");
  const std::vector<std::int64_t> bad{1, 10};
  expect_throw_with<invalid_argument>(
      [&] {
        (void)extract(res, std::nullopt, std::nullopt, no_accumulator{}, a.view(),
                      std::optional(std::span<const std::int64_t>(bad)), std::nullopt);
      },
      "spira::extract: rows[1] = 10 is outside [0, 10)");
}

}  // namespace
}  // namespace spira::test
