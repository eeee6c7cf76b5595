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
using value_index =
    ::testing::Types<std::pair<float, std::int32_t>, std::pair<float, std::int64_t>,
                     std::pair<double, std::int32_t>, std::pair<double, std::int64_t>>;
TYPED_TEST_SUITE(apply_graphblas, value_index);

/// For both orientations of A (rows_a x cols_a as op(A)) and every case of the sweep, with C and
/// the mask out_rows x out_cols: grb(k, g, ga) runs GraphBLAS into g.c, mine(k, a, c, mask) spira.
template <class V, class I, class Grb, class Mine>
void sweep_unary(std::int64_t rows_a, std::int64_t cols_a, std::int64_t out_rows,
                 std::int64_t out_cols, const Grb& grb, const Mine& mine, const char* what)
{
  for (const bool ta : {false, true}) {
    const auto a =
        ta ? operand<V, I>(cols_a, rows_a, 91, false) : operand<V, I>(rows_a, cols_a, 91, false);
    const auto c = operand<V, I>(out_rows, out_cols, 92, false);
    const auto mask = operand<V, I>(out_rows, out_cols, 93, false, true);
    for (int bits = 0; bits < sweep_case::count; ++bits) {
      const auto k = sweep_case::nth(bits, ta);
      GrB_Matrix ga = nullptr;
      grb_case g;
      to_graphblas(a.view(), GrB_FP64, &ga);
      grb_case_of(k, GrB_FP64, c.view(), mask.view(), &g);
      grb(k, g, ga);
      entry_list want;
      from_graphblas(g.c, GrB_FP64, &want);
      GrB_Matrix_free(&ga);
      grb_free(&g);
      const auto got = mine(k, a.view(), c.view(), mask.view());
      ASSERT_EQ(entries_of(got.view()), want) << what << ": " << k.name();
    }
  }
}

/// Runs spira's operation with the case's accumulator (plus) or none.
template <class Fn>
auto with_accum(const sweep_case& k, const Fn& fn)
{
  return k.accumulate ? fn(plus_monoid{}) : fn(no_accumulator{});
}

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
        return with_accum(k, [&](const auto& accum) {
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
        return with_accum(k, [&](const auto& accum) {
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
        return with_accum(k, [&](const auto& accum) {
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
  // GrB_transpose(C, M, accum, A, desc) with GrB_INP0 = GrB_TRAN gives C = A: the sweep's A is
  // 40 x 30 (its transposed form 30 x 40) and C is 30 x 40 either way.
  for (const bool ta : {false, true}) {
    const auto a = ta ? operand<V, I>(30, 40, 94, false) : operand<V, I>(40, 30, 94, false);
    const auto c = operand<V, I>(30, 40, 95, false);
    const auto mask = operand<V, I>(30, 40, 96, false, true);
    for (int bits = 0; bits < sweep_case::count; ++bits) {
      const auto k = sweep_case::nth(bits, ta);
      GrB_Matrix ga = nullptr;
      grb_case g;
      to_graphblas(a.view(), GrB_FP64, &ga);
      grb_case_of(k, GrB_FP64, c.view(), mask.view(), &g);
      SPIRA_GRB_OK(GrB_transpose(g.c, g.mask, k.accumulate ? GrB_PLUS_FP64 : nullptr, ga, g.desc));
      entry_list want;
      from_graphblas(g.c, GrB_FP64, &want);
      GrB_Matrix_free(&ga);
      grb_free(&g);
      const auto got = with_accum(k, [&](const auto& accum) {
        return transpose(host_resources{}, k.c_of(c.view()), k.mask_of(mask.view()), accum,
                         a.view(), k.desc());
      });
      ASSERT_EQ(entries_of(got.view()), want) << "transpose: " << k.name();
    }
  }
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
          return with_accum(k, [&](const auto& accum) {
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
