// spira internals shared by the CUDA GraphBLAS-style operations (spira/cuda/graphblas.cuh): the
// device twins of spira/detail/masked_update.hpp. csr_by_rows_cuda builds a canonical CSR result
// row by row in two passes on the device (count, an exclusive scan, then fill at known offsets);
// masked_update_cuda is the write-back C⟨M⟩ = accum(C, T) every operation ends with; the operand
// checks name what they check as the host versions do.
//
// A row operation is a functor with
//   template <class Out> __device__ void operator()(std::int64_t i, bool values, Out& out) const
// calling out(column, value) for each entry of row i in increasing column order (value in double,
// not read when `values` is false). One thread runs one row, so the entries of a row are folded in
// the same order as on the host and the results are the host's, bit for bit.
#pragma once

#include <spira/convert.hpp>
#include <spira/cuda/device.cuh>
#include <spira/cuda/error.cuh>
#include <spira/cuda/pairwise_strategy.hpp>
#include <spira/descriptor.hpp>
#include <spira/matrix.hpp>
#include <spira/memory.hpp>
#include <spira/resources.hpp>

#include <cuda_runtime.h>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace spira::detail {

int multiprocessor_count(int device);  // src/pairwise/pairwise_support.cu

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> transpose_validated(const cuda_resources& res,
                                               csr_view<ValueT, IndexT> a);

/// spira::validate's check of a device CSR (its extents and pointers checked by the caller) queued
/// on res.stream without waiting for it: *flag is set to 0 when `a` fails `level` (read back
/// later with other findings; src/convert/validate_cuda.cu). `report`: csr_report_words device
/// words set to all ones, for the check's findings.
template <class ValueT, class IndexT>
void check_csr_async(const cuda_resources& res, csr_view<ValueT, IndexT> a, csr_check level,
                     unsigned long long* flag, unsigned long long* report);
constexpr int csr_report_words = 4;

/// Launch shape of the one-thread-per-row kernels of the GraphBLAS operations.
struct graphblas_rows_policy {
  static constexpr int block_threads = 128;
  static constexpr int blocks_per_sm = 16;
};

/// Blocks for `n` threads of graphblas_rows_policy, at most one wave.
inline unsigned graphblas_grid(std::int64_t n, int device)
{
  const std::int64_t wave =
      std::int64_t(multiprocessor_count(device)) * graphblas_rows_policy::blocks_per_sm;
  const std::int64_t needed =
      (n + graphblas_rows_policy::block_threads - 1) / graphblas_rows_policy::block_threads;
  return unsigned(std::clamp<std::int64_t>(needed, 1, wave));
}

/// A csr_view that may be absent (C, the mask), as a kernel argument.
template <class ValueT, class IndexT>
struct maybe_csr {
  csr_view<ValueT, IndexT> v{};
  bool present = false;
};

/// C or the mask as the public functions take it (not deduced from: nullopt converts).
template <class ValueT, class IndexT>
using maybe_csr_arg = std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>>;

template <class ValueT, class IndexT>
maybe_csr<ValueT, IndexT> maybe_of(const std::optional<csr_view<ValueT, IndexT>>& m)
{
  return m ? maybe_csr<ValueT, IndexT>{*m, true} : maybe_csr<ValueT, IndexT>{};
}

#if defined(__CUDACC__)

template <class RowOp>
__global__ void rows_count_kernel(RowOp op, std::int64_t rows, offset_t* counts)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += stride) {
    offset_t n = 0;
    auto count = [&](std::int64_t, double) { ++n; };
    op(i, false, count);
    counts[i] = n;
  }
}

template <class RowOp, class ValueT, class IndexT>
__global__ void rows_fill_kernel(RowOp op, std::int64_t rows, const offset_t* ptr, IndexT* cols,
                                 ValueT* vals)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += stride) {
    offset_t p = ptr[i];
    auto write = [&](std::int64_t j, double v) {
      cols[p] = IndexT(j);
      vals[p] = ValueT(v);
      ++p;
    };
    op(i, true, write);
  }
}

/// Row pointers from per-row counts: `ptr` holds rows + 1 entries, the counts in [0, rows); on
/// return ptr[i] is the offset of row i and ptr[rows] the total, which is returned (one read that
/// synchronises the stream).
inline offset_t counts_to_offsets(const cuda_resources& res, buffer<offset_t>& ptr,
                                  std::int64_t rows)
{
  SPIRA_CUDA_TRY(cudaMemsetAsync(ptr.data() + rows, 0, sizeof(offset_t), res.stream));
  std::size_t bytes = 0;
  SPIRA_CUDA_TRY(
      cub::DeviceScan::ExclusiveSum(nullptr, bytes, ptr.data(), ptr.data(), rows + 1, res.stream));
  buffer<unsigned char> scratch(res, std::max<std::size_t>(bytes, 1), "scan workspace");
  SPIRA_CUDA_TRY(cub::DeviceScan::ExclusiveSum(scratch.data(), bytes, ptr.data(), ptr.data(),
                                               rows + 1, res.stream));
  offset_t total = 0;
  copy(&total, memory_space::host, ptr.data() + rows, memory_space::device, 1, res);
  return total;
}

/// A canonical rows x cols CSR matrix in device memory from a row operation (see above).
template <class ValueT, class IndexT, class RowOp>
csr_matrix<ValueT, IndexT> csr_by_rows_cuda(const cuda_resources& res, std::int64_t rows,
                                            std::int64_t cols, const RowOp& op)
{
  buffer<offset_t> ptr(res, std::size_t(rows) + 1, "CSR row pointers");
  const unsigned grid = graphblas_grid(rows, res.device);
  constexpr int block = graphblas_rows_policy::block_threads;
  if (rows > 0) {
    rows_count_kernel<<<grid, block, 0, res.stream>>>(op, rows, ptr.data());
    SPIRA_CHECK_LAUNCH();
  }
  const offset_t nnz = counts_to_offsets(res, ptr, rows);
  csr_matrix<ValueT, IndexT> out(res, rows, cols, nnz);
  out.row_ptr_buffer() = std::move(ptr);
  if (rows > 0 && nnz > 0) {
    rows_fill_kernel<<<grid, block, 0, res.stream>>>(op, rows, out.row_ptr(), out.col_idx(),
                                                     out.values());
    SPIRA_CHECK_LAUNCH();
  }
  return out;
}

/// Whether the mask allows column j of row i, `pm` walking forward through the mask's row (the
/// columns asked for increase). Without a mask every column is allowed (none when complemented).
template <class ValueT, class IndexT>
__device__ inline bool mask_allows(const maybe_csr<ValueT, IndexT>& m, bool structural,
                                   bool complement, std::int64_t j, offset_t& pm, offset_t m_end)
{
  bool in = !m.present;
  if (m.present) {
    while (pm < m_end && std::int64_t(m.v.col_idx[pm]) < j) {
      ++pm;
    }
    in = pm < m_end && std::int64_t(m.v.col_idx[pm]) == j &&
         (structural || m.v.values[pm] != ValueT(0));
  }
  return in != complement;
}

/// The entries of an inner row operation that the mask allows (T is never read elsewhere).
template <class Inner, class ValueT, class IndexT>
struct mask_filtered_op {
  Inner inner;
  maybe_csr<ValueT, IndexT> mask;
  bool structural = false;
  bool complement = false;

  template <class Out>
  __device__ void operator()(std::int64_t i, bool values, Out& out) const
  {
    offset_t pm = mask.present ? mask.v.row_ptr[i] : 0;
    const offset_t m_end = mask.present ? mask.v.row_ptr[i + 1] : 0;
    auto allowed = [&](std::int64_t j, double v) {
      if (mask_allows(mask, structural, complement, j, pm, m_end)) {
        out(j, v);
      }
    };
    inner(i, values, allowed);
  }
};

/// Row i of C⟨M⟩ = accum(C, T) from the rows of T, C and M (masked_merge_row on the host).
template <class Accum, class ValueT, class IndexT>
struct masked_merge_op {
  csr_view<ValueT, IndexT> t;
  maybe_csr<ValueT, IndexT> c;
  maybe_csr<ValueT, IndexT> mask;
  Accum accum;
  descriptor o;

  template <class Out>
  __device__ void operator()(std::int64_t i, bool values, Out& out) const
  {
    constexpr bool accumulate = !std::is_same_v<Accum, no_accumulator>;
    constexpr std::int64_t end = INT64_MAX;
    offset_t pt = t.row_ptr[i];
    const offset_t t_end = t.row_ptr[i + 1];
    offset_t pc = c.present ? c.v.row_ptr[i] : 0;
    const offset_t c_end = c.present ? c.v.row_ptr[i + 1] : 0;
    offset_t pm = mask.present ? mask.v.row_ptr[i] : 0;
    const offset_t m_end = mask.present ? mask.v.row_ptr[i + 1] : 0;
    while (pt < t_end || pc < c_end) {
      const std::int64_t jt = pt < t_end ? std::int64_t(t.col_idx[pt]) : end;
      const std::int64_t jc = pc < c_end ? std::int64_t(c.v.col_idx[pc]) : end;
      const std::int64_t j = jt < jc ? jt : jc;
      const bool has_t = jt == j;
      const bool has_c = jc == j;
      if (mask_allows(mask, o.structural_mask, o.complement_mask, j, pm, m_end)) {
        if (has_t && (!accumulate || !has_c)) {
          out(j, values ? double(t.values[pt]) : 0.0);
        } else if (has_c && accumulate) {
          if constexpr (accumulate) {
            const double cv = values ? double(c.v.values[pc]) : 0.0;
            out(j, !values ? 0.0 : has_t ? double(accum(cv, double(t.values[pt]))) : cv);
          }
        }
      } else if (has_c && !o.replace) {
        out(j, values ? double(c.v.values[pc]) : 0.0);
      }
      pt += has_t ? 1 : 0;
      pc += has_c ? 1 : 0;
    }
  }
};

/// The operands one call has checked (device memory, canonical): a view given twice (A ⊕.⊗ Aᵀ,
/// a mask that is A) is validated once, each validation being a device pass and a read back.
template <class ValueT, class IndexT>
class checked_operands {
 public:
  void check(const cuda_resources& res, csr_view<ValueT, IndexT> v, const char* op,
             const char* name)
  {
    require_device_space(v.space, op, name);
    for (const auto& w : seen_) {
      if (w.rows == v.rows && w.cols == v.cols && w.nnz == v.nnz && w.row_ptr == v.row_ptr &&
          w.col_idx == v.col_idx && w.values == v.values) {
        return;
      }
    }
    validate(res, v, csr_check::canonical, (std::string(op) + ": " + name).c_str());
    seen_.push_back(v);
  }

 private:
  std::vector<csr_view<ValueT, IndexT>> seen_;
};

/// C and the mask: device memory, canonical, rows x cols (`shape` names the result's operands).
template <class ValueT, class IndexT>
void check_output_operands_cuda(const cuda_resources& res,
                                const std::optional<csr_view<ValueT, IndexT>>& c,
                                const std::optional<csr_view<ValueT, IndexT>>& mask,
                                std::int64_t rows, std::int64_t cols, const char* op,
                                const char* shape, checked_operands<ValueT, IndexT>& checked)
{
  const auto check = [&](const std::optional<csr_view<ValueT, IndexT>>& m, const char* name) {
    if (m) {
      checked.check(res, *m, op, name);
      expects<dimension_mismatch>(m->rows == rows && m->cols == cols, op, ": ", name, " is ",
                                  m->rows, " x ", m->cols, " but ", shape, " is ", rows, " x ",
                                  cols);
    }
  };
  check(c, "C");
  check(mask, "mask");
}

/// `a` as given, or its transpose (kept in `store`) when `transpose` is set; `a` validated.
template <class ValueT, class IndexT>
csr_view<ValueT, IndexT> maybe_transposed_cuda(const cuda_resources& res,
                                               csr_view<ValueT, IndexT> a, bool transpose,
                                               std::optional<csr_matrix<ValueT, IndexT>>& store)
{
  if (!transpose) {
    return a;
  }
  store = transpose_validated(res, a);
  return store->view();
}

/// The new C from the old one, the mask, the accumulator and the computed T (canonical, device,
/// the shape of C), consuming T. Without C the result is T itself: T holds only the entries the
/// mask allows (every operation filters its T by mask_allows), and accum(C, T) is T.
template <class Accum, class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> masked_update_cuda(const cuda_resources& res,
                                              const std::optional<csr_view<ValueT, IndexT>>& c,
                                              const std::optional<csr_view<ValueT, IndexT>>& mask,
                                              const Accum& accum, csr_matrix<ValueT, IndexT>&& t,
                                              const descriptor& o)
{
  if (!c) {
    return std::move(t);
  }
  const masked_merge_op<Accum, ValueT, IndexT> op{t.view(), maybe_of(c), maybe_of(mask), accum, o};
  return csr_by_rows_cuda<ValueT, IndexT>(res, t.rows(), t.cols(), op);
}

#endif  // __CUDACC__

}  // namespace spira::detail
