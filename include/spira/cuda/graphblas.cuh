// spira: the GraphBLAS-style operations on CUDA, with a mask and an accumulator, for any operator
// struct. Include this header from a .cu file: the kernels are templates, instantiated for the
// operators in the caller's translation unit.
//
//   #include <spira/cuda/graphblas.cuh>
//   auto c = spira::mxm(cuda_res, std::nullopt, std::optional(mask_dev), spira::no_accumulator{},
//                       spira::semirings::plus_pair{}, a_dev, b_dev, desc);
//
//   mxm(res, C, M, accum, semiring, A, B, desc)          C⟨M⟩ = accum(C, A ⊕.⊗ B)   (GrB_mxm)
//   mxv(res, w, m, accum, semiring, A, u, desc)          w⟨m⟩ = accum(w, A ⊕.⊗ u)   (GrB_mxv)
//   vxm(res, w, m, accum, semiring, u, A, desc)          w⟨m⟩ = accum(w, u ⊕.⊗ A)   (GrB_vxm)
//   ewise_add / ewise_mult (res, C, M, accum, op, A, B, desc)                    (GrB_eWise*)
//   ewise_union(res, C, M, accum, op, A, alpha, B, beta, desc)          (GxB_eWiseUnion)
//   apply(res, C, M, accum, op, A, desc), apply_index(...)                        (GrB_apply)
//   select(res, C, M, accum, pred, A, desc)                                       (GrB_select)
//   transpose(res, C, M, accum, A, desc)                                          (GrB_transpose)
//   extract(res, C, M, accum, A, rows, cols, desc)                                (GrB_extract)
//   select_top_k(res, C, M, accum, A, k, order, desc)
//   reduce_rows / reduce_cols (res, A, out, monoid, map), reduce_scalar(res, A, monoid, map)
//   reduce_rows(res, w, m, accum, monoid, A, desc)        w⟨m⟩ = accum(w, ⊕ of rows of op(A))
//                                                        (GrB_Matrix_reduce_Monoid)
//
// The semantics are those of the host operations (spira/mxm.hpp, spira/ewise.hpp, spira/apply.hpp,
// spira/select.hpp; docs/graphblas.md), and so are the results, bit for bit: every value is
// computed in double and rounded to the value type once, ⊕ folds each entry's products in
// increasing k, and a row's entries are merged in column order. Operands are canonical CSR
// matrices in device memory (spira::to_device, spira::canonicalize); results are in device memory,
// ordered on res.stream. Operators (the element-wise op, accumulators, predicates) must be callable
// on the device: the monoids of spira/semiring.hpp, the predicates of spira::select_ops, a struct
// with a SPIRA_HD operator(), or a __device__ lambda (nvcc --extended-lambda). nvcc contracts a*b+c
// into one fused multiply-add unless told not to (--fmad=false): an operator written that way can
// differ from the host in the last bit; the semiring's ⊗ and ⊕ are kept apart by spira.
//
// Sparse vectors (spira::sparse_vector with cuda_resources) and the reductions' outputs are in
// device memory too; extract's index lists are in host memory, as GrB_extract takes them.
//
// Work and memory: mxm as detail/mxm_kernels.cuh describes, mxv / vxm as detail/mxv_cuda.cuh
// (Gustavson's product in two passes: the result plus, for rows with many products, a few dense
// accumulators of cols(B) doubles or sorted batches of products); the element-wise operations,
// apply, select and transpose O(nnz(A) + nnz(B) + nnz(C) + nnz(M)) with one thread per row. The
// transposes of the descriptor cost a transposed copy.
#pragma once

#include <spira/cuda/detail/extract_reduce.cuh>
#include <spira/cuda/detail/graphblas_rows.cuh>
#include <spira/cuda/detail/mxm_cuda.cuh>
#include <spira/cuda/detail/mxv_cuda.cuh>
#include <spira/descriptor.hpp>
#include <spira/matrix.hpp>
#include <spira/resources.hpp>
#include <spira/select_ops.hpp>
#include <spira/semiring.hpp>
#include <spira/vector.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace spira {

#if defined(__CUDACC__)

namespace detail {

/// Row i of an element-wise result (ewise_result on the host).
template <class Op, class ValueT, class IndexT>
struct ewise_rows_op {
  csr_view<ValueT, IndexT> a;
  csr_view<ValueT, IndexT> b;
  Op op;
  int kind;  // ewise_kind
  double alpha;
  double beta;

  template <class Out>
  __device__ void operator()(std::int64_t i, bool values, Out& out) const
  {
    constexpr int mult = 1;
    constexpr int fill = 2;
    offset_t pa = a.row_ptr[i];
    offset_t pb = b.row_ptr[i];
    const offset_t ea = a.row_ptr[i + 1];
    const offset_t eb = b.row_ptr[i + 1];
    while (pa < ea || pb < eb) {
      const bool only_b = pa == ea || (pb < eb && b.col_idx[pb] < a.col_idx[pa]);
      const bool only_a = pb == eb || (pa < ea && a.col_idx[pa] < b.col_idx[pb]);
      if (!only_a && !only_b) {
        out(std::int64_t(a.col_idx[pa]),
            values ? double(op(double(a.values[pa]), double(b.values[pb]))) : 0.0);
        ++pa;
        ++pb;
      } else if (only_a) {
        if (kind != mult) {
          const double x = double(a.values[pa]);
          out(std::int64_t(a.col_idx[pa]), !values ? 0.0 : kind == fill ? double(op(x, beta)) : x);
        }
        ++pa;
      } else {
        if (kind != mult) {
          const double y = double(b.values[pb]);
          out(std::int64_t(b.col_idx[pb]), !values ? 0.0 : kind == fill ? double(op(alpha, y)) : y);
        }
        ++pb;
      }
    }
  }
};

/// Row i of the entries (i, j, x) of `a` for which keep(x, i, j) holds, with value(x, i, j).
template <class Keep, class Value, class ValueT, class IndexT>
struct filter_map_op {
  csr_view<ValueT, IndexT> a;
  Keep keep;
  Value value;

  template <class Out>
  __device__ void operator()(std::int64_t i, bool values, Out& out) const
  {
    for (offset_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      const double x = double(a.values[p]);
      const auto j = std::int64_t(a.col_idx[p]);
      if (keep(x, i, j)) {
        out(j, values ? double(value(x, i, j)) : 0.0);
      }
    }
  }
};

struct keep_every {
  __device__ bool operator()(double, std::int64_t, std::int64_t) const { return true; }
};
struct same_value {
  __device__ double operator()(double x, std::int64_t, std::int64_t) const { return x; }
};
template <class Op>
struct unary_value {
  Op op;
  __device__ double operator()(double x, std::int64_t, std::int64_t) const { return double(op(x)); }
};
template <class Op>
struct index_value {
  Op op;
  __device__ double operator()(double x, std::int64_t i, std::int64_t j) const
  {
    return double(op(x, i, j));
  }
};

/// T of a row operation over op(A)'s shape, filtered by the mask, then C⟨M⟩ = accum(C, T).
template <class Accum, class RowOp, class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> rows_then_update(const cuda_resources& res, std::int64_t rows,
                                            std::int64_t cols,
                                            const std::optional<csr_view<ValueT, IndexT>>& c,
                                            const std::optional<csr_view<ValueT, IndexT>>& mask,
                                            const Accum& accum, const RowOp& row,
                                            const descriptor& o)
{
  const mask_filtered_op<RowOp, ValueT, IndexT> filtered{row, maybe_of(mask), o.structural_mask,
                                                         o.complement_mask};
  auto t = csr_by_rows_cuda<ValueT, IndexT>(res, rows, cols, filtered);
  return masked_update_cuda(res, c, mask, accum, std::move(t), o);
}

/// op(A) of a unary operation, checked with C and the mask; `store` keeps a transpose.
template <class ValueT, class IndexT>
csr_view<ValueT, IndexT> unary_operand_cuda(const cuda_resources& res, const char* op,
                                            csr_view<ValueT, IndexT> a,
                                            const std::optional<csr_view<ValueT, IndexT>>& c,
                                            const std::optional<csr_view<ValueT, IndexT>>& mask,
                                            bool transpose,
                                            std::optional<csr_matrix<ValueT, IndexT>>& store)
{
  checked_operands<ValueT, IndexT> checked;
  checked.check(res, a, op, "A");
  const std::int64_t rows = transpose ? a.cols : a.rows;
  const std::int64_t cols = transpose ? a.rows : a.cols;
  check_output_operands_cuda(res, c, mask, rows, cols, op, transpose ? "Aᵀ" : "A", checked);
  return maybe_transposed_cuda(res, a, transpose, store);
}

template <class Accum, class Op, class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> ewise_cuda(const cuda_resources& res, const char* name,
                                      const std::optional<csr_view<ValueT, IndexT>>& c,
                                      const std::optional<csr_view<ValueT, IndexT>>& mask,
                                      const Accum& accum, int kind, const Op& op,
                                      csr_view<ValueT, IndexT> a, double alpha,
                                      csr_view<ValueT, IndexT> b, double beta, const descriptor& o)
{
  const device_guard guard(res.device);
  checked_operands<ValueT, IndexT> checked;
  checked.check(res, a, name, "A");
  checked.check(res, b, name, "B");
  const std::int64_t a_rows = o.transpose_a ? a.cols : a.rows;
  const std::int64_t a_cols = o.transpose_a ? a.rows : a.cols;
  const std::int64_t b_rows = o.transpose_b ? b.cols : b.rows;
  const std::int64_t b_cols = o.transpose_b ? b.rows : b.cols;
  const char* ta = o.transpose_a ? "Aᵀ" : "A";
  const char* tb = o.transpose_b ? "Bᵀ" : "B";
  expects<dimension_mismatch>(a_rows == b_rows && a_cols == b_cols, name, ": ", ta, " is ", a_rows,
                              " x ", a_cols, " but ", tb, " is ", b_rows, " x ", b_cols);
  check_output_operands_cuda(res, c, mask, a_rows, a_cols, name, ta, checked);
  std::optional<csr_matrix<ValueT, IndexT>> at, bt;
  a = maybe_transposed_cuda(res, a, o.transpose_a, at);
  b = maybe_transposed_cuda(res, b, o.transpose_b, bt);
  const ewise_rows_op<Op, ValueT, IndexT> row{a, b, op, kind, alpha, beta};
  return rows_then_update(res, a.rows, a.cols, c, mask, accum, row, o);
}

}  // namespace detail

/// C⟨M⟩ = accum(C, op(A) ⊕.⊗ op(B)) on the GPU (spira/mxm.hpp says what each argument does).
template <class S, class Accum, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> mxm(const cuda_resources& res,
                                             detail::maybe_csr_arg<ValueT, IndexT> c,
                                             detail::maybe_csr_arg<ValueT, IndexT> mask,
                                             const Accum& accum, const S& semiring,
                                             csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b,
                                             const descriptor& options = {})
{
  return detail::mxm_cuda(res, c, mask, accum, semiring, a, b, options);
}

/// The plain product A ⊕.⊗ B on the GPU, with transposes from `options`.
template <class S, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> mxm(const cuda_resources& res, csr_view<ValueT, IndexT> a,
                                             csr_view<ValueT, IndexT> b, const S& semiring = {},
                                             const descriptor& options = {})
{
  return detail::mxm_cuda(res, std::nullopt, std::nullopt, no_accumulator{}, semiring, a, b,
                          options);
}

template <class ValueT, class IndexT>
using maybe_vector_arg = std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>>;

/// w⟨m⟩ = accum(w, op(A) ⊕.⊗ u) on the GPU (spira/mxv.hpp); vectors in device memory.
template <class S, class Accum, class ValueT, class IndexT>
[[nodiscard]] sparse_vector<ValueT, IndexT> mxv(const cuda_resources& res,
                                                maybe_vector_arg<ValueT, IndexT> w,
                                                maybe_vector_arg<ValueT, IndexT> mask,
                                                const Accum& accum, const S& semiring,
                                                csr_view<ValueT, IndexT> a,
                                                sparse_vector_view<ValueT, IndexT> u,
                                                const descriptor& options = {})
{
  return detail::vector_product_cuda(res, w, mask, accum, semiring, a, u, options, true);
}

/// w⟨m⟩ = accum(w, u ⊕.⊗ op(A)) on the GPU (spira/mxv.hpp); vectors in device memory.
template <class S, class Accum, class ValueT, class IndexT>
[[nodiscard]] sparse_vector<ValueT, IndexT> vxm(const cuda_resources& res,
                                                maybe_vector_arg<ValueT, IndexT> w,
                                                maybe_vector_arg<ValueT, IndexT> mask,
                                                const Accum& accum, const S& semiring,
                                                sparse_vector_view<ValueT, IndexT> u,
                                                csr_view<ValueT, IndexT> a,
                                                const descriptor& options = {})
{
  return detail::vector_product_cuda(res, w, mask, accum, semiring, a, u, options, false);
}

/// The plain products op(A) ⊕.⊗ u and u ⊕.⊗ op(A) on the GPU.
template <class S, class ValueT, class IndexT>
[[nodiscard]] sparse_vector<ValueT, IndexT> mxv(const cuda_resources& res,
                                                csr_view<ValueT, IndexT> a,
                                                sparse_vector_view<ValueT, IndexT> u,
                                                const S& semiring, const descriptor& options = {})
{
  return detail::vector_product_cuda(res, std::nullopt, std::nullopt, no_accumulator{}, semiring, a,
                                     u, options, true);
}
template <class S, class ValueT, class IndexT>
[[nodiscard]] sparse_vector<ValueT, IndexT> vxm(const cuda_resources& res,
                                                sparse_vector_view<ValueT, IndexT> u,
                                                csr_view<ValueT, IndexT> a, const S& semiring,
                                                const descriptor& options = {})
{
  return detail::vector_product_cuda(res, std::nullopt, std::nullopt, no_accumulator{}, semiring, a,
                                     u, options, false);
}

/// C⟨M⟩ = accum(C, op(A) ∪ op(B)) on the GPU (spira/ewise.hpp).
template <class Accum, class Op, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> ewise_add(
    const cuda_resources& res, detail::maybe_csr_arg<ValueT, IndexT> c,
    detail::maybe_csr_arg<ValueT, IndexT> mask, const Accum& accum, const Op& op,
    csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b, const descriptor& options = {})
{
  return detail::ewise_cuda(res, "spira::ewise_add", c, mask, accum, 0, op, a, 0.0, b, 0.0,
                            options);
}

/// C⟨M⟩ = accum(C, op(A) ∩ op(B)) on the GPU (spira/ewise.hpp).
template <class Accum, class Op, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> ewise_mult(
    const cuda_resources& res, detail::maybe_csr_arg<ValueT, IndexT> c,
    detail::maybe_csr_arg<ValueT, IndexT> mask, const Accum& accum, const Op& op,
    csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b, const descriptor& options = {})
{
  return detail::ewise_cuda(res, "spira::ewise_mult", c, mask, accum, 1, op, a, 0.0, b, 0.0,
                            options);
}

/// C⟨M⟩ = accum(C, T), T the union of op(A) and op(B) with alpha and beta standing in for missing
/// entries, on the GPU (spira/ewise.hpp).
template <class Accum, class Op, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> ewise_union(
    const cuda_resources& res, detail::maybe_csr_arg<ValueT, IndexT> c,
    detail::maybe_csr_arg<ValueT, IndexT> mask, const Accum& accum, const Op& op,
    csr_view<ValueT, IndexT> a, std::type_identity_t<ValueT> alpha, csr_view<ValueT, IndexT> b,
    std::type_identity_t<ValueT> beta, const descriptor& options = {})
{
  return detail::ewise_cuda(res, "spira::ewise_union", c, mask, accum, 2, op, a, double(alpha), b,
                            double(beta), options);
}

/// C⟨M⟩ = accum(C, T), T(i,j) = op(op(A)(i,j)), on the GPU (spira/apply.hpp).
template <class Accum, class Op, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> apply(const cuda_resources& res,
                                               detail::maybe_csr_arg<ValueT, IndexT> c,
                                               detail::maybe_csr_arg<ValueT, IndexT> mask,
                                               const Accum& accum, const Op& op,
                                               csr_view<ValueT, IndexT> a,
                                               const descriptor& options = {})
{
  const detail::device_guard guard(res.device);
  std::optional<csr_matrix<ValueT, IndexT>> at;
  a = detail::unary_operand_cuda(res, "spira::apply", a, c, mask, options.transpose_a, at);
  using row_t = detail::filter_map_op<detail::keep_every, detail::unary_value<Op>, ValueT, IndexT>;
  return detail::rows_then_update(res, a.rows, a.cols, c, mask, accum,
                                  row_t{a, {}, detail::unary_value<Op>{op}}, options);
}

/// C⟨M⟩ = accum(C, T), T(i,j) = op(op(A)(i,j), i, j), on the GPU (spira/apply.hpp).
template <class Accum, class Op, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> apply_index(const cuda_resources& res,
                                                     detail::maybe_csr_arg<ValueT, IndexT> c,
                                                     detail::maybe_csr_arg<ValueT, IndexT> mask,
                                                     const Accum& accum, const Op& op,
                                                     csr_view<ValueT, IndexT> a,
                                                     const descriptor& options = {})
{
  const detail::device_guard guard(res.device);
  std::optional<csr_matrix<ValueT, IndexT>> at;
  a = detail::unary_operand_cuda(res, "spira::apply_index", a, c, mask, options.transpose_a, at);
  using row_t = detail::filter_map_op<detail::keep_every, detail::index_value<Op>, ValueT, IndexT>;
  return detail::rows_then_update(res, a.rows, a.cols, c, mask, accum,
                                  row_t{a, {}, detail::index_value<Op>{op}}, options);
}

/// C⟨M⟩ = accum(C, T), T the entries of op(A) where pred(value, row, col) holds, on the GPU
/// (spira/select.hpp; spira::select_ops has GraphBLAS's predicates).
template <class Accum, class Pred, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> select(const cuda_resources& res,
                                                detail::maybe_csr_arg<ValueT, IndexT> c,
                                                detail::maybe_csr_arg<ValueT, IndexT> mask,
                                                const Accum& accum, const Pred& pred,
                                                csr_view<ValueT, IndexT> a,
                                                const descriptor& options = {})
{
  const detail::device_guard guard(res.device);
  std::optional<csr_matrix<ValueT, IndexT>> at;
  a = detail::unary_operand_cuda(res, "spira::select", a, c, mask, options.transpose_a, at);
  using row_t = detail::filter_map_op<Pred, detail::same_value, ValueT, IndexT>;
  return detail::rows_then_update(res, a.rows, a.cols, c, mask, accum, row_t{a, pred, {}}, options);
}

/// C⟨M⟩ = accum(C, Aᵀ) (A itself when the descriptor's transpose_a is set), on the GPU.
template <class Accum, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> transpose(const cuda_resources& res,
                                                   detail::maybe_csr_arg<ValueT, IndexT> c,
                                                   detail::maybe_csr_arg<ValueT, IndexT> mask,
                                                   const Accum& accum, csr_view<ValueT, IndexT> a,
                                                   const descriptor& options = {})
{
  const detail::device_guard guard(res.device);
  std::optional<csr_matrix<ValueT, IndexT>> at;
  a = detail::unary_operand_cuda(res, "spira::transpose", a, c, mask, !options.transpose_a, at);
  if (!c && !mask && !options.complement_mask) {
    return at ? std::move(*at) : to_device(res, a);  // T itself
  }
  using row_t = detail::filter_map_op<detail::keep_every, detail::same_value, ValueT, IndexT>;
  return detail::rows_then_update(res, a.rows, a.cols, c, mask, accum, row_t{a, {}, {}}, options);
}

/// C⟨M⟩ = accum(C, T), T(i,j) = op(A)(rows[i], cols[j]) where op(A) stores it, on the GPU
/// (spira/apply.hpp); the index lists in host memory (nullopt: all, in order).
template <class Accum, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> extract(const cuda_resources& res,
                                                 detail::maybe_csr_arg<ValueT, IndexT> c,
                                                 detail::maybe_csr_arg<ValueT, IndexT> mask,
                                                 const Accum& accum, csr_view<ValueT, IndexT> a,
                                                 std::optional<std::span<const std::int64_t>> rows,
                                                 std::optional<std::span<const std::int64_t>> cols,
                                                 const descriptor& options = {})
{
  const detail::device_guard guard(res.device);
  return detail::extract_cuda(res, c, mask, accum, a, rows, cols, options);
}

/// C⟨M⟩ = accum(C, T), T the min(k, stored) best values of each row of op(A), on the GPU
/// (spira/select.hpp; spira::select_k's order, ties to the smaller column).
template <class Accum, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> select_top_k(
    const cuda_resources& res, detail::maybe_csr_arg<ValueT, IndexT> c,
    detail::maybe_csr_arg<ValueT, IndexT> mask, const Accum& accum, csr_view<ValueT, IndexT> a,
    std::int64_t k, select_order order, const descriptor& options = {})
{
  detail::expects(k >= 1, "spira::select_top_k: k = ", k, " must be at least 1");
  const detail::device_guard guard(res.device);
  std::optional<csr_matrix<ValueT, IndexT>> at;
  a = detail::unary_operand_cuda(res, "spira::select_top_k", a, c, mask, options.transpose_a, at);
  select_params params;
  params.sorted = false;  // by increasing column: a canonical CSR
  const auto t = select_k(res, a, k, order, params);
  using row_t = detail::filter_map_op<detail::keep_every, detail::same_value, ValueT, IndexT>;
  return detail::rows_then_update(res, a.rows, a.cols, c, mask, accum, row_t{t.view(), {}, {}},
                                  options);
}

/// out[i] = ⊕ over the stored entries of row i of map(A) on the GPU (spira/ops.hpp); `out` in
/// device memory. A valid CSR in device memory.
template <class M, class Map = identity_map, class ValueT, class IndexT>
void reduce_rows(const cuda_resources& res, csr_view<ValueT, IndexT> a, std::span<ValueT> out,
                 const M& m = {}, const Map& map = {})
{
  static_assert(monoid<M, double>, "spira::reduce_rows: M must model spira::monoid");
  const detail::device_guard guard(res.device);
  detail::require_device_space(a.space, "spira::reduce_rows", "A");
  validate(res, a, csr_check::valid, "spira::reduce_rows: A");
  detail::expects<dimension_mismatch>(std::int64_t(out.size()) == a.rows,
                                      "spira::reduce_rows: out has ", out.size(),
                                      " entries but A has ", a.rows, " rows");
  detail::reduce_rows_cuda(res, a, out.data(), m, map);
}

/// w⟨m⟩ = accum(w, T), T[i] the ⊕ of monoid `m` over the stored entries of row i of op(A), on the
/// GPU (spira/mxv.hpp's reduce_rows: no entry for an empty row, transpose_a reduces columns);
/// vectors in device memory.
template <class M, class Accum, class ValueT, class IndexT>
[[nodiscard]] sparse_vector<ValueT, IndexT> reduce_rows(const cuda_resources& res,
                                                        maybe_vector_arg<ValueT, IndexT> w,
                                                        maybe_vector_arg<ValueT, IndexT> mask,
                                                        const Accum& accum, const M& m,
                                                        csr_view<ValueT, IndexT> a,
                                                        const descriptor& options = {})
{
  static_assert(monoid<M, double>, "spira::reduce_rows: M must model spira::monoid");
  return detail::reduce_rows_masked_cuda(res, w, mask, accum, m, a, options);
}

/// out[j] = ⊕ over the stored entries of column j of map(A), in increasing row order, on the GPU;
/// `out` in device memory. A canonical CSR in device memory (transposed: O(nnz) device memory).
template <class M, class Map = identity_map, class ValueT, class IndexT>
void reduce_cols(const cuda_resources& res, csr_view<ValueT, IndexT> a, std::span<ValueT> out,
                 const M& m = {}, const Map& map = {})
{
  static_assert(monoid<M, double>, "spira::reduce_cols: M must model spira::monoid");
  const detail::device_guard guard(res.device);
  detail::checked_operands<ValueT, IndexT>().check(res, a, "spira::reduce_cols", "A");
  detail::expects<dimension_mismatch>(std::int64_t(out.size()) == a.cols,
                                      "spira::reduce_cols: out has ", out.size(),
                                      " entries but A has ", a.cols, " columns");
  const auto t = detail::transpose_validated(res, a);
  detail::reduce_rows_cuda(res, t.view(), out.data(), m, map);
}

/// ⊕ over every stored entry of map(A) on the GPU: each row's in column order, then the rows' in
/// row order (the host's order: the same value); M must be callable on the host too (SPIRA_HD).
template <class M, class Map = identity_map, class ValueT, class IndexT>
[[nodiscard]] ValueT reduce_scalar(const cuda_resources& res, csr_view<ValueT, IndexT> a,
                                   const M& m = {}, const Map& map = {})
{
  static_assert(monoid<M, double>, "spira::reduce_scalar: M must model spira::monoid");
  const detail::device_guard guard(res.device);
  detail::require_device_space(a.space, "spira::reduce_scalar", "A");
  validate(res, a, csr_check::valid, "spira::reduce_scalar: A");
  buffer<double> rows(res, std::size_t(std::max<std::int64_t>(a.rows, 1)), "row reductions");
  detail::reduce_rows_cuda(res, a, rows.data(), m, map);
  std::vector<double> host(std::size_t(a.rows));
  copy(host.data(), memory_space::host, rows.data(), memory_space::device, host.size(), res);
  double acc = M::template identity<double>();
  for (const double r : host) {
    acc = m(acc, r);
  }
  return ValueT(acc);
}

#endif  // __CUDACC__

}  // namespace spira
