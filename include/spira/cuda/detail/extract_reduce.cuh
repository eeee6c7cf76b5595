// spira internals: extract, select_top_k and the reductions on CUDA (spira/cuda/graphblas.cuh),
// each the host operation's twin (spira/apply.hpp, spira/select.hpp, spira/ops.hpp) with the same
// results, bit for bit.
//   extract       the rows gathered (one thread per output row), then, with a column list, the
//                 product with a selector matrix S (S[cols[j], j] = 1) through mxm, which sorts
//                 each row by output column: every output column has one source, so no two
//                 values are ever combined and the values are A's;
//   select_top_k  spira::select_k on the rows of op(A), by increasing column;
//   reductions    one thread per row folds its entries in column order; a column is a row of the
//                 transpose; the scalar folds the rows' results on the host, in row order; into a
//                 masked sparse vector, the rows' results go through mxv's write-back
//                 (detail/mxv_cuda.cuh).
#pragma once

#include <spira/cuda/detail/graphblas_rows.cuh>
#include <spira/cuda/detail/mxm_cuda.cuh>
#include <spira/cuda/detail/vector_cuda.cuh>
#include <spira/detail/index_lists.hpp>
#include <spira/select_k.hpp>
#include <spira/semiring.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace spira::detail {

#if defined(__CUDACC__)

/// Row i of A(rows, :): row rows[i] of A (rows null: row i).
template <class ValueT, class IndexT>
struct gather_rows_op {
  csr_view<ValueT, IndexT> a;
  const std::int64_t* rows = nullptr;

  template <class Out>
  __device__ void operator()(std::int64_t i, bool values, Out& out) const
  {
    const std::int64_t r = rows != nullptr ? rows[i] : i;
    for (offset_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
      out(std::int64_t(a.col_idx[p]), values ? double(a.values[p]) : 0.0);
    }
  }
};

/// ⊗(a, s) = a: the selector's product keeps A's value (⊕ never meets two products).
struct first_semiring {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = true;
  template <class T>
  SPIRA_HD T multiply(T a, T) const
  {
    return a;
  }
};

template <class Accum, class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> extract_cuda(const cuda_resources& res, maybe_csr_arg<ValueT, IndexT> c,
                                        maybe_csr_arg<ValueT, IndexT> mask, const Accum& accum,
                                        csr_view<ValueT, IndexT> a,
                                        std::optional<std::span<const std::int64_t>> rows,
                                        std::optional<std::span<const std::int64_t>> cols,
                                        const descriptor& o)
{
  const char* op = "spira::extract";
  checked_operands<ValueT, IndexT> checked;
  checked.check(res, a, op, "A");
  std::optional<csr_matrix<ValueT, IndexT>> at;
  a = maybe_transposed_cuda(res, a, o.transpose_a, at);
  check_index_lists(op, rows, a.rows, cols, a.cols);
  const std::int64_t n_rows = rows ? std::int64_t(rows->size()) : a.rows;
  const std::int64_t n_cols = cols ? std::int64_t(cols->size()) : a.cols;
  check_output_operands_cuda(res, c, mask, n_rows, n_cols, op, "A(rows, cols)", checked);
  std::optional<buffer<std::int64_t>> rows_d;
  if (rows) {
    rows_d.emplace(res, std::max<std::size_t>(rows->size(), 1), "extract rows");
    copy(rows_d->data(), memory_space::device, rows->data(), memory_space::host, rows->size(), res);
  }
  const gather_rows_op<ValueT, IndexT> gather{a, rows_d ? rows_d->data() : nullptr};
  if (!cols) {
    const mask_filtered_op<gather_rows_op<ValueT, IndexT>, ValueT, IndexT> filtered{
        gather, maybe_of(mask), o.structural_mask, o.complement_mask};
    auto t = csr_by_rows_cuda<ValueT, IndexT>(res, n_rows, n_cols, filtered);
    return masked_update_cuda(res, c, mask, accum, std::move(t), o);
  }
  // S (cols(A) x n_cols): row s holds the output columns j with cols[j] = s, increasing.
  std::vector<offset_t> s_ptr(std::size_t(a.cols) + 1, 0);
  for (const std::int64_t s : *cols) {
    ++s_ptr[std::size_t(s) + 1];
  }
  for (std::size_t s = 1; s < s_ptr.size(); ++s) {
    s_ptr[s] += s_ptr[s - 1];
  }
  std::vector<IndexT> s_col(cols->size());
  std::vector<offset_t> next(s_ptr.begin(), s_ptr.end() - 1);
  for (std::size_t j = 0; j < cols->size(); ++j) {
    s_col[std::size_t(next[std::size_t((*cols)[j])]++)] = IndexT(j);
  }
  const std::vector<ValueT> s_val(cols->size(), ValueT(1));
  const auto selector =
      to_device(res, csr_view<ValueT, IndexT>{a.cols, n_cols, std::int64_t(cols->size()),
                                              s_ptr.data(), s_col.data(), s_val.data()});
  const auto gathered = csr_by_rows_cuda<ValueT, IndexT>(res, n_rows, a.cols, gather);
  const descriptor d{.structural_mask = o.structural_mask, .complement_mask = o.complement_mask};
  auto t = mxm_cuda(res, std::nullopt, mask, no_accumulator{}, first_semiring{}, gathered.view(),
                    selector.view(), d, mxm_path::automatic, op, "A(rows, :)", "the selector");
  return masked_update_cuda(res, c, mask, accum, std::move(t), o);
}

template <class M, class Map, class ValueT, class IndexT, class Out>
__global__ void reduce_rows_kernel(csr_view<ValueT, IndexT> a, M m, Map map, Out* out)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.rows;
       i += stride) {
    double acc = M::template identity<double>();
    for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      acc = m(acc, rounded(double(map(double(a.values[k])))));  // map's result unfused
    }
    out[i] = Out(acc);
  }
}

/// out[i] = ⊕ of map over row i of a (a validated, device), in column order.
template <class M, class Map, class ValueT, class IndexT, class Out>
void reduce_rows_cuda(const cuda_resources& res, csr_view<ValueT, IndexT> a, Out* out, const M& m,
                      const Map& map)
{
  if (a.rows > 0) {
    reduce_rows_kernel<<<graphblas_grid(a.rows, res.device), graphblas_rows_policy::block_threads,
                         0, res.stream>>>(a, m, map, out);
    SPIRA_CHECK_LAUNCH();
  }
}

/// t[i] = the ⊕ of m over the stored entries of row i, in column order, for the rows with any
/// (a dense copy: no entry for an empty row).
template <class M, class ValueT, class IndexT>
__global__ void reduce_rows_vector_kernel(csr_view<ValueT, IndexT> a, M m, unsigned char* t_state,
                                          double* t_value)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.rows;
       i += stride) {
    if (a.row_ptr[i] == a.row_ptr[i + 1]) {
      continue;
    }
    double acc = M::template identity<double>();
    for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      acc = m(acc, double(a.values[k]));
    }
    t_state[i] = 2;
    t_value[i] = double(ValueT(acc));  // T is a matrix of ValueT on the host too
  }
}

/// w⟨m⟩ = accum(w, T), T[i] the ⊕ of m over row i of op(A) (spira/mxv.hpp's reduce_rows).
template <class M, class Accum, class ValueT, class IndexT>
sparse_vector<ValueT, IndexT> reduce_rows_masked_cuda(
    const cuda_resources& res,
    const std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>>& w,
    const std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>>& mask,
    const Accum& accum, const M& m, csr_view<ValueT, IndexT> a, const descriptor& o)
{
  const char* op = "spira::reduce_rows";
  const device_guard guard(res.device);
  checked_operands<ValueT, IndexT>().check(res, a, op, "A");
  const std::int64_t size = o.transpose_a ? a.cols : a.rows;
  check_output_vectors_cuda<ValueT, IndexT>(
      res, w, mask, size, op, concat(o.transpose_a ? "Aᵀ" : "A", " has ", size, " rows"));
  std::optional<csr_matrix<ValueT, IndexT>> at;
  a = maybe_transposed_cuda(res, a, o.transpose_a, at);
  std::optional<dense_vector_copy> m_dense;
  if (mask) {
    m_dense.emplace(res, size);
    scatter_vector(res, *mask, *m_dense);
  }
  dense_vector_copy t(res, size);
  if (a.rows > 0) {
    reduce_rows_vector_kernel<<<graphblas_grid(a.rows, res.device),
                                graphblas_rows_policy::block_threads, 0, res.stream>>>(
        a, m, t.state(), t.value());
    SPIRA_CHECK_LAUNCH();
  }
  return vector_write_back<Accum, ValueT, IndexT>(res, w, m_dense ? m_dense->state() : nullptr,
                                                  accum, o, t.state(), t.value(), size);
}

#endif  // __CUDACC__

}  // namespace spira::detail
