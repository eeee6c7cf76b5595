// spira: the GraphBLAS matrix-matrix product with a mask and an accumulator, on the host.
//
//   C⟨M⟩ = accum(C, A ⊕.⊗ B)          (GrB_mxm(C, M, accum, semiring, A, B, descriptor))
//
// Sparse in, sparse out, for annihilating semirings (spira/semiring.hpp; the built-ins are in
// semirings/graphblas.hpp): T = A ⊕.⊗ B holds an entry (i, j) exactly where row i of A and column j
// of B share a stored index k, with value ⊕ over those k of ⊗(A[i,k], B[k,j]), the products taken
// in increasing k; then C⟨M⟩ = accum(C, T) as spira/descriptor.hpp says. Transposes apply to A
// and B before the product.
//
// Work and memory: two passes over the rows, in parallel on host_resources::num_threads() OpenMP
// threads (the result does not depend on the thread count). The first counts each row's entries
// from the patterns alone, the second computes and writes them in place, so nothing beyond the
// result, the transposed operands (when asked for) and one accumulator per thread is held:
// a dense accumulator of cols(B) values while cols(B) <= mxm_policy::dense_accumulator_max_cols,
// else the row's products gathered and sorted (O(f log f) for f products in the row). Products are
// computed in double and rounded to the value type once, as everywhere in the library.
#pragma once

#include <spira/convert.hpp>
#include <spira/descriptor.hpp>
#include <spira/detail/mxm_host.hpp>
#include <spira/matrix.hpp>
#include <spira/resources.hpp>
#include <spira/semiring.hpp>

#include <optional>
#include <type_traits>

namespace spira {

/// C⟨M⟩ = accum(C, op(A) ⊕.⊗ op(B)), returned as a new canonical CSR matrix (rows(op(A)) x
/// cols(op(B))). `c` is the current C (nullopt: empty), `mask` M (nullopt: none), both of that
/// shape; `accum` a binary operator on the value type (e.g. plus_monoid{}, min_monoid{}, a lambda)
/// or no_accumulator{}. All operands canonical CSR in host memory. Throws dimension_mismatch naming
/// the operand whose shape does not fit, invalid_argument for non-canonical operands.
template <class S, class Accum, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> mxm(
    const host_resources& res, std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> c,
    std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> mask, const Accum& accum,
    const S& semiring, csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b,
    const descriptor& options = {})
{
  return detail::mxm_host(res, c, mask, accum, semiring, a, b, options);
}

/// The plain product A ⊕.⊗ B (no C, no mask, no accumulator), with transposes from `options`.
template <class S, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> mxm(const host_resources& res, csr_view<ValueT, IndexT> a,
                                             csr_view<ValueT, IndexT> b, const S& semiring = {},
                                             const descriptor& options = {})
{
  return detail::mxm_host(res, std::nullopt, std::nullopt, no_accumulator{}, semiring, a, b,
                          options);
}

}  // namespace spira
