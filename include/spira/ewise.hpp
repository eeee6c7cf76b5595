// spira: the element-wise operations of GraphBLAS on the host, with a mask and an accumulator:
//
//   ewise_add(res, C, M, accum, op, A, B, desc)               T = A ∪ B   (GrB_eWiseAdd)
//   ewise_mult(res, C, M, accum, op, A, B, desc)              T = A ∩ B   (GrB_eWiseMult)
//   ewise_union(res, C, M, accum, op, A, alpha, B, beta, desc) T = A ∪ B   (GxB_eWiseUnion)
//
// then C⟨M⟩ = accum(C, T) (spira/descriptor.hpp). With op(x, y) any binary operator on the compute
// type (double; a monoid such as plus_monoid{}, or a lambda), T holds:
//   add:   op(A[i,j], B[i,j]) where both store (i, j), A[i,j] or B[i,j] where only one does;
//   mult:  op(A[i,j], B[i,j]) where both store (i, j), nothing elsewhere;
//   union: op(A[i,j], B[i,j]) where both store (i, j), op(A[i,j], beta) where only A does,
//          op(alpha, B[i,j]) where only B does.
// op's first argument always comes from A. transpose_a / transpose_b of the descriptor transpose A
// and B first; op(A) and op(B) must have the same shape, as C and the mask. Every operand is a
// canonical CSR matrix in host memory; the result is canonical, computed in double and rounded to
// the value type once, the same for any number of threads. Work O(nnz(A) + nnz(B) + nnz(C) +
// nnz(M)); memory: T and the result (and the transposes, when asked for).
#pragma once

#include <spira/convert.hpp>
#include <spira/descriptor.hpp>
#include <spira/detail/masked_update.hpp>
#include <spira/matrix.hpp>
#include <spira/resources.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace spira {

namespace detail {

enum class ewise_kind { add, mult, fill };

/// T of an element-wise operation (the checks done).
template <class Op, class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> ewise_result(const host_resources& res, ewise_kind kind, const Op& op,
                                        csr_view<ValueT, IndexT> a, host_compute_t alpha,
                                        csr_view<ValueT, IndexT> b, host_compute_t beta)
{
  using T = host_compute_t;
  const auto row = [&](std::int64_t i, bool values, auto&& out) {
    offset_t pa = a.row_ptr[i], pb = b.row_ptr[i];
    const offset_t ea = a.row_ptr[i + 1], eb = b.row_ptr[i + 1];
    while (pa < ea || pb < eb) {
      const bool only_b = pa == ea || (pb < eb && b.col_idx[pb] < a.col_idx[pa]);
      const bool only_a = pb == eb || (pa < ea && a.col_idx[pa] < b.col_idx[pb]);
      if (!only_a && !only_b) {
        out(std::int64_t(a.col_idx[pa]), values ? T(op(T(a.values[pa]), T(b.values[pb]))) : 0);
        ++pa, ++pb;
      } else if (only_a) {
        if (kind != ewise_kind::mult) {
          const T x = T(a.values[pa]);
          out(std::int64_t(a.col_idx[pa]), !values                    ? 0
                                           : kind == ewise_kind::fill ? T(op(x, beta))
                                                                      : x);
        }
        ++pa;
      } else {
        if (kind != ewise_kind::mult) {
          const T y = T(b.values[pb]);
          out(std::int64_t(b.col_idx[pb]), !values                    ? 0
                                           : kind == ewise_kind::fill ? T(op(alpha, y))
                                                                      : y);
        }
        ++pb;
      }
    }
  };
  return csr_by_rows<ValueT, IndexT>(
      res, a.rows, a.cols, a.nnz + b.nnz, [] { return no_row_state{}; },
      [&](no_row_state, std::int64_t i, bool values, auto&& out) { row(i, values, out); });
}

template <class Accum, class Op, class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> ewise(const host_resources& res, const char* op_name,
                                 const std::optional<csr_view<ValueT, IndexT>>& c,
                                 const std::optional<csr_view<ValueT, IndexT>>& mask,
                                 const Accum& accum, ewise_kind kind, const Op& op,
                                 csr_view<ValueT, IndexT> a, host_compute_t alpha,
                                 csr_view<ValueT, IndexT> b, host_compute_t beta,
                                 const descriptor& o)
{
  using T = host_compute_t;
  static_assert(std::is_invocable_r_v<T, const Op&, T, T>,
                "the element-wise operator must be callable as op(a, b)");
  const std::string name(op_name);
  require_host_space(a.space, op_name, "A");
  require_host_space(b.space, op_name, "B");
  validate(res, a, csr_check::canonical, (name + ": A").c_str());
  validate(res, b, csr_check::canonical, (name + ": B").c_str());
  std::optional<csr_matrix<ValueT, IndexT>> at, bt;
  a = maybe_transposed(res, a, o.transpose_a, at);
  b = maybe_transposed(res, b, o.transpose_b, bt);
  const char* ta = o.transpose_a ? "Aᵀ" : "A";
  const char* tb = o.transpose_b ? "Bᵀ" : "B";
  expects<dimension_mismatch>(a.rows == b.rows && a.cols == b.cols, op_name, ": ", ta, " is ",
                              a.rows, " x ", a.cols, " but ", tb, " is ", b.rows, " x ", b.cols);
  check_output_operands(res, c, mask, a.rows, a.cols, op_name, ta);
  const auto t = ewise_result(res, kind, op, a, alpha, b, beta);
  return masked_update(res, c, mask, accum, t.view(), o);
}

}  // namespace detail

/// C⟨M⟩ = accum(C, op(A) ∪ op(B)): op where both store an entry, the stored value where one does.
template <class Accum, class Op, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> ewise_add(
    const host_resources& res, std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> c,
    std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> mask, const Accum& accum,
    const Op& op, csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b,
    const descriptor& options = {})
{
  return detail::ewise(res, "spira::ewise_add", c, mask, accum, detail::ewise_kind::add, op, a, 0,
                       b, 0, options);
}

/// C⟨M⟩ = accum(C, op(A) ∩ op(B)): op where both store an entry, nothing elsewhere.
template <class Accum, class Op, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> ewise_mult(
    const host_resources& res, std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> c,
    std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> mask, const Accum& accum,
    const Op& op, csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b,
    const descriptor& options = {})
{
  return detail::ewise(res, "spira::ewise_mult", c, mask, accum, detail::ewise_kind::mult, op, a, 0,
                       b, 0, options);
}

/// C⟨M⟩ = accum(C, T), T the union of op(A) and op(B) with `alpha` standing in for A's missing
/// entries and `beta` for B's: op(a, b), op(a, beta) or op(alpha, b).
template <class Accum, class Op, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> ewise_union(
    const host_resources& res, std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> c,
    std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> mask, const Accum& accum,
    const Op& op, csr_view<ValueT, IndexT> a, std::type_identity_t<ValueT> alpha,
    csr_view<ValueT, IndexT> b, std::type_identity_t<ValueT> beta, const descriptor& options = {})
{
  return detail::ewise(res, "spira::ewise_union", c, mask, accum, detail::ewise_kind::fill, op, a,
                       detail::host_compute_t(alpha), b, detail::host_compute_t(beta), options);
}

}  // namespace spira
