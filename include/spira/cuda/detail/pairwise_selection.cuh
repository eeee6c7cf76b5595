// spira: the union of a one-term NAMM with a min / max ⊕ (chebyshev) from its intersection and a
// few best entries per row (the CUDA pairwise engine's intersection strategy).
#pragma once

#include <spira/cuda/detail/pairwise_context.cuh>

namespace spira::detail {

#if defined(__CUDACC__)

// ---- selection NAMMs (min / max ⊕): the union from the intersection and per-row best entries ----

/// Candidates kept per row for the selection fix-up (the best entries by ⊗(x, 0) / ⊗(0, x)).
inline constexpr int selection_candidates = 4;

/// top[i * K + r] = the r-th best entry of row i by the one-sided product (column, product);
/// column -1 past the end of a short row. One warp per row, K rounds of a warp arg-best
/// (ties: the smaller position).
template <class D, class ValueT, class IndexT, bool Left>
__global__ void row_candidates_kernel(D d, const offset_t* row_ptr, const IndexT* col_idx,
                                      const ValueT* values, std::int64_t rows, IndexT* top_col,
                                      ValueT* top_val)
{
  using add = typename D::add_monoid;
  constexpr int K = selection_candidates;
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows;
       i += warps) {
    const offset_t rb = row_ptr[i], re = row_ptr[i + 1];
    offset_t picked[K];
#pragma unroll
    for (int r = 0; r < K; ++r) {
      offset_t best_k = -1;
      ValueT best = add::template identity<ValueT>();
      for (offset_t k = rb + lane; k < re; k += 32) {
        bool taken = false;
#pragma unroll
        for (int q = 0; q < K; ++q) {
          taken = taken || (q < r && picked[q] == k);
        }
        if (taken) {
          continue;
        }
        const ValueT x = values[k];
        const ValueT p = Left ? ValueT(as_terms(d.template multiply<ValueT>(x, ValueT(0)))[0])
                              : ValueT(as_terms(d.template multiply<ValueT>(ValueT(0), x))[0]);
        if (best_k < 0 || (add{}(p, best) == p && p != best)) {
          best = p;
          best_k = k;
        }
      }
      for (int off = 16; off > 0; off >>= 1) {
        const ValueT ob = __shfl_down_sync(full_warp, best, off);
        const offset_t ok = __shfl_down_sync(full_warp, best_k, off);
        const bool better = ok >= 0 && (best_k < 0 || (add{}(ob, best) == ob && ob != best) ||
                                        (ob == best && ok < best_k));
        if (better) {
          best = ob;
          best_k = ok;
        }
      }
      best_k = __shfl_sync(full_warp, best_k, 0);
      best = __shfl_sync(full_warp, best, 0);
      picked[r] = best_k;
      if (lane == 0) {
        top_col[i * K + r] = best_k < 0 ? IndexT(-1) : col_idx[best_k];
        top_val[i * K + r] = best;
      }
    }
  }
}

/// True when the sorted columns [cols, cols + n) hold c.
template <class IndexT>
__device__ inline bool sorted_contains(const IndexT* cols, offset_t n, IndexT c)
{
  offset_t lo = 0, hi = n;
  while (lo < hi) {
    const offset_t mid = lo + (hi - lo) / 2;
    const IndexT x = cols[mid];
    if (x == c) {
      return true;
    }
    if (x < c) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return false;
}

/// The candidates' part of best_outside: true and in `best` the first of the row's K candidates
/// whose column the other row does not store (e⊕ when the row has no such entry among fewer than
/// K); false when all K candidates are stored by the other row and the row has more entries, so
/// that the rest of the row must be scanned (scan_outside).
template <class D, class ValueT, class IndexT>
__device__ inline bool candidates_outside(const IndexT* top_col, const ValueT* top_val,
                                          offset_t row_n, const IndexT* other_cols,
                                          offset_t other_n, ValueT& best)
{
  using add = typename D::add_monoid;
  constexpr int K = selection_candidates;
  best = add::template identity<ValueT>();
  for (int r = 0; r < K; ++r) {
    const IndexT c = top_col[r];
    if (c == IndexT(-1)) {
      return true;
    }
    if (!sorted_contains(other_cols, other_n, c)) {
      best = top_val[r];
      return true;
    }
  }
  return row_n <= K;
}

/// ⊕ of the one-sided products of the entries first, first + stride, ... below row_n of a row
/// whose columns the other row does not store (one thread: stride 1; a warp: lane, 32).
template <class D, class ValueT, class IndexT, bool Left>
__device__ inline ValueT scan_outside(const D& d, const IndexT* row_cols, const ValueT* row_vals,
                                      offset_t first, offset_t row_n, offset_t stride,
                                      const IndexT* other_cols, offset_t other_n)
{
  using add = typename D::add_monoid;
  ValueT best = add::template identity<ValueT>();
  for (offset_t k = first; k < row_n; k += stride) {
    if (sorted_contains(other_cols, other_n, row_cols[k])) {
      continue;
    }
    const ValueT x = row_vals[k];
    best = add{}(best, Left ? ValueT(as_terms(d.template multiply<ValueT>(x, ValueT(0)))[0])
                            : ValueT(as_terms(d.template multiply<ValueT>(ValueT(0), x))[0]));
  }
  return best;
}

/// ⊕ over the entries of a row whose columns the other row does not store, of the one-sided
/// product: the first of the row's K candidates missing from the other row, or a full scan when
/// all K are present and the row has more.
template <class D, class ValueT, class IndexT, bool Left>
__device__ inline ValueT best_outside(const D& d, const IndexT* top_col, const ValueT* top_val,
                                      const IndexT* row_cols, const ValueT* row_vals,
                                      offset_t row_n, const IndexT* other_cols, offset_t other_n)
{
  ValueT best;
  if (candidates_outside<D, ValueT, IndexT>(top_col, top_val, row_n, other_cols, other_n, best)) {
    return best;
  }
  return scan_outside<D, ValueT, IndexT, Left>(d, row_cols, row_vals, 0, row_n, 1, other_cols,
                                               other_n);
}

#endif  // __CUDACC__

}  // namespace spira::detail
