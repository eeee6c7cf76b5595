// spira: GraphBLAS select on the host, with a mask and an accumulator:
//
//   select(res, C, M, accum, pred, A, desc)                T = the entries of op(A) where
//                                                           pred(value, row, col) holds
//   select_top_k(res, C, M, accum, A, k, order, desc)      T = the k best stored values of each
//                                                           row of op(A) (ties to the smaller
//                                                           column)
//
// then C⟨M⟩ = accum(C, T) (spira/descriptor.hpp); op(A) is Aᵀ with the descriptor's transpose_a.
// The predicates of GraphBLAS's index-unary select are in spira::select_ops (tril, triu, diag,
// offdiag, row_le, row_gt, col_le, col_gt and the value comparisons); any callable
// pred(double value, std::int64_t row, std::int64_t col) -> bool will do. select_top_k is
// spira::select_k on the rows (docs/selection.md: NaN is the worst value, -0 equals +0). Operands:
// canonical CSR in host memory; results canonical, the same for any number of threads.
// Work O(nnz(A) + nnz(C) + nnz(M)) for select, plus select_k's for select_top_k.
#pragma once

#include <spira/config.hpp>
#include <spira/convert.hpp>
#include <spira/descriptor.hpp>
#include <spira/detail/masked_update.hpp>
#include <spira/matrix.hpp>
#include <spira/resources.hpp>
#include <spira/select_k.hpp>
#include <spira/select_ops.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace spira {

/// C⟨M⟩ = accum(C, T), T the entries of op(A) for which pred(value, row, col) holds (GrB_select).
template <class Accum, class Pred, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> select(
    const host_resources& res, std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> c,
    std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> mask, const Accum& accum,
    const Pred& pred, csr_view<ValueT, IndexT> a, const descriptor& options = {})
{
  using T = detail::host_compute_t;
  static_assert(std::is_invocable_r_v<bool, const Pred&, T, std::int64_t, std::int64_t>,
                "spira::select: pred must be callable as pred(value, row, col) -> bool");
  std::optional<csr_matrix<ValueT, IndexT>> at;
  a = detail::unary_operand(res, "spira::select", a, c, mask, options, at);
  const auto t =
      detail::filter_map(res, a, pred, [](T x, std::int64_t, std::int64_t) { return x; });
  return detail::masked_update(res, c, mask, accum, t.view(), options);
}

/// C⟨M⟩ = accum(C, T), T the min(k, stored) best values of each row of op(A) (largest or smallest,
/// by spira::select_k's order; ties to the smaller column), k >= 1.
template <class Accum, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> select_top_k(
    const host_resources& res, std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> c,
    std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> mask, const Accum& accum,
    csr_view<ValueT, IndexT> a, std::int64_t k, select_order order, const descriptor& options = {})
{
  detail::expects(k >= 1, "spira::select_top_k: k = ", k, " must be at least 1");
  std::optional<csr_matrix<ValueT, IndexT>> at;
  a = detail::unary_operand(res, "spira::select_top_k", a, c, mask, options, at);
  select_params params;
  params.sorted = false;  // by increasing column: a canonical CSR
  const auto t = select_k(res, a, k, order, params);
  return detail::masked_update(res, c, mask, accum, t.view(), options);
}

}  // namespace spira
