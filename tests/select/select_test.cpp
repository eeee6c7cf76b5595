// spira::select and spira::select_top_k (host) with mask, accumulator, replace and a transposed
// A: select against GraphBLAS's GrB_select with every index-unary predicate of the spec; top-k
// against a naive per-row sort (ties to the smaller column; values in {1, 2, 3}, so ties abound)
// written into C by GrB_apply(identity) under the same mask and accumulator.
#include "support/graphblas.hpp"

#include <spira/select.hpp>
#include <spira/semiring.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace spira::test {
namespace {

const auto* const env = ::testing::AddGlobalTestEnvironment(new graphblas_env);

template <class T>
class select_graphblas : public ::testing::Test {};
TYPED_TEST_SUITE(select_graphblas, value_index_types);

TYPED_TEST(select_graphblas, every_index_unary_predicate)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  using namespace select_ops;
  // pred against GrB_select with gop and the thunk (an int64 for the index predicates, a double
  // for the value ones), accumulating with acc / gacc.
  const auto check = [](auto pred, GrB_IndexUnaryOp gop, auto thunk, auto acc, GrB_BinaryOp gacc,
                        const char* what) {
    sweep_unary<V, I>(
        33, 47, 33, 47,
        [&](const sweep_case& k, grb_case& g, GrB_Matrix ga) {
          GrB_BinaryOp accum = k.accumulate ? gacc : nullptr;
          if constexpr (std::is_same_v<decltype(thunk), double>) {
            SPIRA_GRB_OK(GrB_Matrix_select_FP64(g.c, g.mask, accum, gop, ga, thunk, g.desc));
          } else {
            SPIRA_GRB_OK(GrB_Matrix_select_INT64(g.c, g.mask, accum, gop, ga, thunk, g.desc));
          }
        },
        [&](const sweep_case& k, csr_view<V, I> a, csr_view<V, I> c, csr_view<V, I> m) {
          return with_accum(k, acc, [&](const auto& accum) {
            return select(host_resources{}, k.c_of(c), k.mask_of(m), accum, pred, a, k.desc());
          });
        },
        what);
  };
  const auto by_index = [&](auto pred, GrB_IndexUnaryOp gop, std::int64_t thunk, const char* what) {
    check(pred, gop, thunk, plus_monoid{}, GrB_PLUS_FP64, what);
  };
  by_index(tril{-2}, GrB_TRIL, -2, "tril");
  by_index(triu{3}, GrB_TRIU, 3, "triu");
  by_index(diag{1}, GrB_DIAG, 1, "diag");
  by_index(offdiag{0}, GrB_OFFDIAG, 0, "offdiag");
  by_index(row_le{10}, GrB_ROWLE, 10, "row_le");
  by_index(row_gt{5}, GrB_ROWGT, 5, "row_gt");
  by_index(col_le{20}, GrB_COLLE, 20, "col_le");
  by_index(col_gt{7}, GrB_COLGT, 7, "col_gt");
  const auto by_value = [&](auto pred, GrB_IndexUnaryOp gop, double thunk, const char* what) {
    check(pred, gop, thunk, min_monoid{}, GrB_MIN_FP64, what);
  };
  by_value(value_eq{2}, GrB_VALUEEQ_FP64, 2, "value_eq");
  by_value(value_ne{2}, GrB_VALUENE_FP64, 2, "value_ne");
  by_value(value_gt{1}, GrB_VALUEGT_FP64, 1, "value_gt");
  by_value(value_ge{2}, GrB_VALUEGE_FP64, 2, "value_ge");
  by_value(value_lt{3}, GrB_VALUELT_FP64, 3, "value_lt");
  by_value(value_le{2}, GrB_VALUELE_FP64, 2, "value_le");
}

/// The k best entries of each row of a rows x cols matrix given by its entries, by a full sort:
/// (value, then the smaller column).
template <class V, class I>
csr_matrix<V, I> naive_top_k(const entry_list& e, std::int64_t rows, std::int64_t cols,
                             std::int64_t k, bool largest)
{
  std::vector<std::vector<std::pair<std::int64_t, double>>> r(static_cast<std::size_t>(rows));
  for (const auto& [i, j, v] : e) {
    r[std::size_t(i)].emplace_back(j, v);
  }
  std::vector<offset_t> ptr{0};
  std::vector<I> idx;
  std::vector<V> vals;
  for (auto& row : r) {
    std::sort(row.begin(), row.end(), [&](const auto& x, const auto& y) {
      if (x.second != y.second) {
        return largest ? x.second > y.second : x.second < y.second;
      }
      return x.first < y.first;
    });
    row.resize(std::min<std::size_t>(row.size(), std::size_t(k)));
    std::sort(row.begin(), row.end());
    for (const auto& [j, v] : row) {
      idx.push_back(I(j));
      vals.push_back(V(v));
    }
    ptr.push_back(offset_t(idx.size()));
  }
  return make_csr<V, I>(host_resources{}, rows, cols, ptr, idx, vals, csr_check::canonical);
}

TYPED_TEST(select_graphblas, top_k_per_row_with_ties)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  for (const std::int64_t kk : {1, 3, 100}) {
    for (const bool largest : {true, false}) {
      sweep_unary<V, I>(
          33, 47, 33, 47,
          [&](const sweep_case& k, grb_case& g, GrB_Matrix ga) {
            // The oracle's op(A): A's entries, swapped when the descriptor transposes it.
            GrB_Index nr = 0, nc = 0;
            SPIRA_GRB_OK(GrB_Matrix_nrows(&nr, ga));
            SPIRA_GRB_OK(GrB_Matrix_ncols(&nc, ga));
            entry_list e;
            grb_entries(ga, GrB_FP64, &e);
            if (k.transpose_a) {
              for (auto& [i, j, v] : e) {
                std::swap(i, j);
              }
              std::swap(nr, nc);
            }
            const auto want = naive_top_k<V, I>(e, std::int64_t(nr), std::int64_t(nc), kk, largest);
            GrB_Matrix gt = nullptr;
            make_grb(want.view(), GrB_FP64, &gt);
            // The descriptor's transpose applied to A already: none for the identity's input.
            SPIRA_GRB_OK(GrB_Descriptor_set(g.desc, GrB_INP0, GxB_DEFAULT));
            SPIRA_GRB_OK(GrB_Matrix_apply(g.c, g.mask, k.accumulate ? GrB_PLUS_FP64 : nullptr,
                                          GrB_IDENTITY_FP64, gt, g.desc));
            GrB_Matrix_free(&gt);
          },
          [&](const sweep_case& k, csr_view<V, I> a, csr_view<V, I> c, csr_view<V, I> m) {
            const auto order = largest ? select_order::largest : select_order::smallest;
            return with_accum(k, plus_monoid{}, [&](const auto& acc) {
              return select_top_k(host_resources{}, k.c_of(c), k.mask_of(m), acc, a, kk, order,
                                  k.desc());
            });
          },
          largest ? "top-k largest" : "top-k smallest");
    }
  }
}

TEST(select, bad_arguments_name_the_operand)
{
  const auto a = random_csr<float, std::int32_t>({.rows = 10, .cols = 8, .seed = 81});
  const auto wrong = random_csr<float, std::int32_t>({.rows = 8, .cols = 10, .seed = 82});
  const host_resources res{};
  expect_throw_with<dimension_mismatch>(
      [&] {
        (void)select(res, std::optional(wrong.view()), std::nullopt, no_accumulator{},
                     select_ops::tril{}, a.view());
      },
      "spira::select: C is 8 x 10 but A is 10 x 8");
  expect_throw_with<invalid_argument>(
      [&] {
        (void)select_top_k(res, std::nullopt, std::nullopt, no_accumulator{}, a.view(), 0,
                           select_order::largest);
      },
      "k = 0 must be at least 1");
}

}  // namespace
}  // namespace spira::test
