// spira: the device pieces of the intersection strategy of the CUDA pairwise engine: its kernel
// arguments and accumulator, the accumulation of one row of A against a tile of rows of B through
// the CSC of B, and the finalize and store of one pair (shared with the fused k-NN kernel).
#pragma once

#include <spira/cuda/detail/pairwise_context.cuh>
#include <spira/cuda/detail/pairwise_selection.cuh>

namespace spira::detail {

#if defined(__CUDACC__)

// ---- intersection through the CSC of B
// -------------------------------------------------------------

/// A pair of a selection NAMM whose fix-up needs a full row scan (all K candidates of a row are
/// stored by the other row): sides bit 0 = row i of A against row j of B, bit 1 = row j of B
/// against row i of A. Meanwhile the output holds the pair's raw ⊕ without the scanned sides.
struct selection_fallback {
  std::int64_t i, j;
  int sides;
};

/// Arguments of the intersection kernel (device pointers).
template <class D, class ValueT, class IndexT>
struct intersection_args {
  using traits = distance_traits<D, double>;
  using norm_values = typename traits::norm_values;
  static constexpr int N = distance_traits<D, ValueT>::num_terms;
  D d;
  std::int64_t rows_a, rows_b;
  std::int64_t cols;  ///< columns of the operands as the kernels see them (renumbered)
  std::int64_t dim;   ///< the declared column count, for finalize
  const offset_t* a_ptr;
  const IndexT* a_col;
  const ValueT* a_val;
  const offset_t* bt_ptr;  ///< CSC of B: column c holds the rows j of B (sorted) with their values
  const IndexT* bt_row;
  const ValueT* bt_val;
  const norm_values* norms_a;
  const norm_values* norms_b;
  const terms<double, N>* corr_a;  ///< NAMM corrections (nullptr for annihilating semirings)
  const terms<double, N>* corr_b;
  /// Sum NAMMs: ⊗(0, b) in double for every entry of the CSC of B (nullptr otherwise).
  const terms<double, N>* bt_side;
  const offset_t* b_ptr;  ///< B's rows (CSR)
  const IndexT* b_col;
  const ValueT* b_val;
  // Selection NAMMs only (nullptr otherwise): K candidates per row of A and of B.
  const IndexT* top_a_col;
  const ValueT* top_a_val;
  const IndexT* top_b_col;
  const ValueT* top_b_val;
  ValueT* out;
  std::int64_t ld;
  std::int64_t tile_cols;  ///< output columns per shared-memory tile
  // Selection NAMMs in spira::pairwise (nullptr otherwise): pairs left to the fallback kernel.
  selection_fallback* fallback;
  unsigned long long* fallback_count;
  std::int64_t fallback_capacity;
};

/// The accumulator of the intersection kernel: double for sum ⊕ (intersection_sums_in_double),
/// ValueT for selections (min, max, custom) and for dot products whose finalize does not cancel.
/// Sums feed cancelling finalizes: a NAMM's union is intersection + per-row corrections, and the
/// expansions (euclidean, hellinger, correlation...) subtract the dot from the norms, which are
/// computed in double. For dot-product-form distances the products are formed in the accumulator
/// type (double: exact for float inputs), so for two equal rows the expansion cancels to rounding
/// of the double sums and, e.g., euclidean(x, x) is 0 to about 1e-8 instead of the square root of
/// float rounding (about 1e-3).
template <class D, class ValueT>
using intersection_accumulator_t =
    std::conditional_t<intersection_sums_in_double<D>::value, double, ValueT>;

/// One product of the intersection kernel, before a NAMM's subtraction of the one-sided terms:
/// for a dot-product form, ⊗ in the accumulator type A (double: exact for float inputs);
/// otherwise ⊗ in ValueT, widened to A (a transcendental ⊗ such as jensenshannon's costs several
/// times more in double, and its rounding in ValueT is relative to the term, not to the cancelling
/// one-sided terms, which stay in double).
template <class D, class ValueT, class A>
__device__ inline terms<A, distance_traits<D, ValueT>::num_terms> intersection_multiply_d(
    const D& d, ValueT a, ValueT b)
{
  constexpr int N = distance_traits<D, ValueT>::num_terms;
  terms<A, N> r;
  if constexpr (dot_product_form<D>::value) {
    const auto p = as_terms(d.template multiply<A>(A(a), A(b)));
#pragma unroll
    for (int t = 0; t < N; ++t) {
      r[t] = A(p[t]);
    }
  } else {
    const auto p = as_terms(d.template multiply<ValueT>(a, b));
#pragma unroll
    for (int t = 0; t < N; ++t) {
      r[t] = A(p[t]);
    }
  }
  return r;
}

/// The first position in [lo, hi) of a column of B's CSC whose row is at least j (rows are sorted
/// within a column), hi if none.
template <class IndexT>
__device__ inline offset_t first_row_at_least(const IndexT* rows, offset_t lo, offset_t hi,
                                              std::int64_t j)
{
  while (lo < hi) {
    const offset_t m = lo + (hi - lo) / 2;
    if (std::int64_t(rows[m]) < j) {
      lo = m + 1;
    } else {
      hi = m;
    }
  }
  return lo;
}

/// Combines ⊗(x, y) of an entry x of A and an entry y of B into the tile's accumulator j; for a
/// NAMM with a sum ⊕ the term ⊗(x, y) - ⊗(x, 0) - ⊗(0, y), the one-sided terms given in double.
template <class D, class ValueT, class IndexT>
__device__ inline void intersection_combine(
    const intersection_args<D, ValueT, IndexT>& p, intersection_accumulator_t<D, ValueT>* acc,
    std::int64_t j, ValueT x, ValueT y,
    [[maybe_unused]] const terms<double, intersection_args<D, ValueT, IndexT>::N>& side_a,
    [[maybe_unused]] const terms<double, intersection_args<D, ValueT, IndexT>::N>& side_b)
{
  using A = intersection_accumulator_t<D, ValueT>;
  constexpr int N = intersection_args<D, ValueT, IndexT>::N;
  auto prod = intersection_multiply_d<D, ValueT, A>(p.d, x, y);
  if constexpr (sum_namm_v<D, ValueT>) {
#pragma unroll
    for (int t = 0; t < N; ++t) {
      prod[t] = A((double(prod[t]) - side_a[t]) - side_b[t]);
    }
  }
#pragma unroll
  for (int t = 0; t < N; ++t) {
    atomic_combine<typename D::add_monoid>(&acc[j * N + t], prod[t]);
  }
}

/// intersection_accumulate for a row of A of many nonzeros against a B whose rows all fit the
/// tile (no column of B needs cutting): warp w takes nonzeros w, w + warps, ... of the row (as the
/// walk entry by entry does) in batches of up to 32, a lane loading one's column bounds (the loads
/// of a batch side by side), and a warp scan gives the batch's products. Where those are few for
/// its entries (columns of fewer than intersection_spread_column_entries entries, on average) the
/// products are spread evenly over the lanes, each lane finding its entry among the batch's by a
/// search over the scan (shuffles), so that short columns do not leave most lanes idle; otherwise
/// entry by entry, the warp's lanes walking the column. Whole block; the caller synchronises
/// before reading acc.
template <class D, class ValueT, class IndexT>
__device__ void intersection_accumulate_batches(const intersection_args<D, ValueT, IndexT>& p,
                                                std::int64_t i,
                                                intersection_accumulator_t<D, ValueT>* acc)
{
  constexpr int N = intersection_args<D, ValueT, IndexT>::N;
  constexpr int U = cuda_pairwise_policy::intersection_unroll;
  constexpr bool sum_namm = sum_namm_v<D, ValueT>;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  const offset_t a_end = p.a_ptr[i + 1];
  const terms<double, N> none{};
  // Lane l of round r holds nonzero first + (32 r + l) warps.
  const offset_t first = p.a_ptr[i] + warp;
  for (offset_t k0 = first; k0 < a_end; k0 += offset_t(warps) * 32) {
    const offset_t k = k0 + offset_t(lane) * warps;
    ValueT x = ValueT(0);
    offset_t lo = 0, hi = 0;
    if (k < a_end) {
      const std::int64_t c = p.a_col[k];
      x = p.a_val[k];
      lo = p.bt_ptr[c];
      hi = p.bt_ptr[c + 1];
    }
    const int entries = __popc(__ballot_sync(full_warp, k < a_end));
    // Inclusive scan of the column lengths, each capped at 2^20 so that the sums fit an int (the
    // spread products are taken only when no length reaches the cap).
    const int length = hi - lo < offset_t(1) << 20 ? int(hi - lo) : 1 << 20;
    int end = length;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const int before = __shfl_up_sync(full_warp, end, d);
      end += lane >= d ? before : 0;
    }
    const int total = __shfl_sync(full_warp, end, 31);
    if (total < entries * cuda_pairwise_policy::intersection_spread_column_entries) {
      // The batch's products f = 0 .. total - 1, S rounds of 32 lanes a step: product f belongs
      // to entry e, the first lane whose inclusive end exceeds f, at lo_e + f - (end_e - len_e).
      // (S = 2 rather than U keeps the fused k-NN kernel within 48 registers a thread: five
      // blocks an SM.)
      constexpr int S = 2;
      for (int f0 = 0; f0 < total; f0 += 32 * S) {
        int es[S];
        offset_t qs[S];
        IndexT row[S];
        ValueT val[S];
#pragma unroll
        for (int u = 0; u < S; ++u) {
          const int f = f0 + u * 32 + lane;
          int e = 0;
#pragma unroll
          for (int step = 16; step > 0; step /= 2) {
            e += __shfl_sync(full_warp, end, e + step - 1) <= f ? step : 0;
          }
          const int start = __shfl_sync(full_warp, end, e) - __shfl_sync(full_warp, length, e);
          es[u] = e;
          qs[u] = __shfl_sync(full_warp, lo, e) + (f - start);
          row[u] = f < total ? p.bt_row[qs[u]] : IndexT(0);
          val[u] = f < total ? p.bt_val[qs[u]] : ValueT(0);
        }
#pragma unroll
        for (int u = 0; u < S; ++u) {
          const ValueT x_e = __shfl_sync(full_warp, x, es[u]);
          if (f0 + u * 32 + lane < total) {
            intersection_combine(p, acc, row[u], x_e, val[u],
                                 sum_namm ? one_sided_d<D, true>(p.d, x_e) : none,
                                 sum_namm ? p.bt_side[qs[u]] : none);
          }
        }
      }
      continue;
    }
    for (int e = 0; e < entries; ++e) {
      const offset_t lo_e = __shfl_sync(full_warp, lo, e);
      const offset_t hi_e = __shfl_sync(full_warp, hi, e);
      const ValueT x_e = __shfl_sync(full_warp, x, e);
      const terms<double, N> side_a = sum_namm ? one_sided_d<D, true>(p.d, x_e) : none;
      for (offset_t q0 = lo_e; q0 < hi_e; q0 += offset_t(32) * U) {
        IndexT row[U];
        ValueT val[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const offset_t q = q0 + u * 32 + lane;
          row[u] = q < hi_e ? p.bt_row[q] : IndexT(0);
          val[u] = q < hi_e ? p.bt_val[q] : ValueT(0);
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const offset_t q = q0 + u * 32 + lane;
          if (q < hi_e) {
            intersection_combine(p, acc, row[u], x_e, val[u], side_a,
                                 sum_namm ? p.bt_side[q] : none);
          }
        }
      }
    }
  }
}

/// Accumulates ⊕ over the shared columns of row i of A and rows [j0, j0 + width) of B into the
/// block's shared accumulator acc (width x N terms), which the caller has set to e⊕: each warp
/// takes nonzeros (c, a) of row i and its lanes walk the part of column c of B that falls in the
/// tile (its start found by binary search when j0 > 0; the walk stops at the tile's end), loading
/// intersection_unroll entries per lane before combining ⊗ into acc with the monoid's
/// shared-memory atomic (intersection_combine). For a NAMM with a sum ⊕ the one-sided terms are
/// in double: ⊗(a, 0) once per nonzero of A, ⊗(0, b) from bt_side. A row of at least
/// intersection_batch_entries nonzeros against a B that fits the tile goes by batches of its
/// nonzeros instead (intersection_accumulate_batches). The whole block calls it; the caller
/// synchronises before reading acc.
template <class D, class ValueT, class IndexT>
__device__ void intersection_accumulate(const intersection_args<D, ValueT, IndexT>& p,
                                        std::int64_t i, std::int64_t j0, std::int64_t width,
                                        intersection_accumulator_t<D, ValueT>* acc)
{
  constexpr int N = intersection_args<D, ValueT, IndexT>::N;
  constexpr int U = cuda_pairwise_policy::intersection_unroll;
  constexpr bool sum_namm = sum_namm_v<D, ValueT>;
  const offset_t a_begin = p.a_ptr[i], a_end = p.a_ptr[i + 1];
  if (j0 == 0 && width >= p.rows_b &&
      a_end - a_begin >= cuda_pairwise_policy::intersection_batch_entries) {
    intersection_accumulate_batches(p, i, acc);
    return;
  }
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  const terms<double, N> none{};
  for (offset_t k = a_begin + warp; k < a_end; k += warps) {
    const std::int64_t c = p.a_col[k];
    const ValueT x = p.a_val[k];
    offset_t lo = p.bt_ptr[c];
    const offset_t hi = p.bt_ptr[c + 1];
    if (lo == hi) {
      continue;
    }
    if (j0 > 0) {
      lo = first_row_at_least(p.bt_row, lo, hi, j0);
    }
    const terms<double, N> side_a = sum_namm ? one_sided_d<D, true>(p.d, x) : none;
    for (offset_t q0 = lo; q0 < hi; q0 += offset_t(32) * U) {
      IndexT row[U];
      ValueT val[U];
      terms<double, N> side_b[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const offset_t q = q0 + u * 32 + lane;
        const bool in = q < hi;
        row[u] = in ? p.bt_row[q] : IndexT(0);
        val[u] = in ? p.bt_val[q] : ValueT(0);
        side_b[u] = sum_namm && in ? p.bt_side[q] : none;
      }
      bool past = false;  // this lane reached the end of the column or of the tile
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const offset_t q = q0 + u * 32 + lane;
        const std::int64_t j = std::int64_t(row[u]) - j0;
        if (q >= hi || j >= width) {
          past = true;
          continue;
        }
        intersection_combine(p, acc, j, x, val[u], side_a, side_b[u]);
      }
      // Entries are sorted by row: once a lane is past the tile, every later round is too.
      if (__any_sync(full_warp, past)) {
        break;
      }
    }
  }
}

/// The value of pair (i, j) from its accumulated terms `a`: the finalize of D, with the NAMM
/// corrections of a sum ⊕ or, for a selection ⊕, each row's best entry outside the other row.
template <class D, class ValueT, class IndexT>
__device__ ValueT intersection_finalize(
    const intersection_args<D, ValueT, IndexT>& p, std::int64_t i, std::int64_t j,
    terms<intersection_accumulator_t<D, ValueT>, intersection_args<D, ValueT, IndexT>::N> a)
{
  using add = typename D::add_monoid;
  constexpr int N = intersection_args<D, ValueT, IndexT>::N;
  if constexpr (sum_namm_v<D, ValueT> || accuracy_traits<D, double>::guarded) {
    const bool corrected = sum_namm_v<D, ValueT>;
    return ValueT(finalize_pair_device(
        p.d, a, p.norms_a[i], p.norms_b[j], p.dim, corrected ? &p.corr_a[i] : nullptr,
        corrected ? &p.corr_b[j] : nullptr, csr_rows<ValueT, IndexT>{p.a_ptr, p.a_col, p.a_val}, i,
        csr_rows<ValueT, IndexT>{p.b_ptr, p.b_col, p.b_val}, j));
  } else {
    if constexpr (selection_namm_v<D, ValueT>) {
      // The union: the intersection's ⊕ and each row's best entry outside the other row.
      constexpr int K = selection_candidates;
      const offset_t a_begin = p.a_ptr[i], a_n = p.a_ptr[i + 1] - a_begin;
      const offset_t b_begin = p.b_ptr[j], b_n = p.b_ptr[j + 1] - b_begin;
      const ValueT from_a = best_outside<D, ValueT, IndexT, true>(
          p.d, p.top_a_col + i * K, p.top_a_val + i * K, p.a_col + a_begin, p.a_val + a_begin, a_n,
          p.b_col + b_begin, b_n);
      const ValueT from_b = best_outside<D, ValueT, IndexT, false>(
          p.d, p.top_b_col + j * K, p.top_b_val + j * K, p.b_col + b_begin, p.b_val + b_begin, b_n,
          p.a_col + a_begin, a_n);
      a[0] = add{}(add{}(a[0], from_a), from_b);
    }
    return ValueT(finalize_device(p.d, a, p.norms_a[i], p.norms_b[j], p.dim,
                                  static_cast<const terms<double, N>*>(nullptr)));
  }
}

/// intersection_finalize for a caller that evaluates untrusted pairs itself (the fused k-NN):
/// for a guarded D the fast value and whether the guard trusts it (trusted_pair_device), so the
/// kernel holds no direct evaluation; for other distances intersection_finalize, always trusted.
template <class D, class ValueT, class IndexT>
__device__ double intersection_fast_value(
    const intersection_args<D, ValueT, IndexT>& p, std::int64_t i, std::int64_t j,
    terms<intersection_accumulator_t<D, ValueT>, intersection_args<D, ValueT, IndexT>::N> a,
    bool& trusted)
{
  if constexpr (accuracy_traits<D, double>::guarded) {
    const bool corrected = sum_namm_v<D, ValueT>;
    return trusted_pair_device(p.d, a, p.norms_a[i], p.norms_b[j], p.dim,
                               corrected ? &p.corr_a[i] : nullptr,
                               corrected ? &p.corr_b[j] : nullptr, trusted);
  } else {
    trusted = true;
    return double(intersection_finalize(p, i, j, a));
  }
}

/// The direct value of pair (i, j) of the operands of p (detail::direct_value in double).
template <class D, class ValueT, class IndexT>
__device__ double intersection_direct_value(const intersection_args<D, ValueT, IndexT>& p,
                                            std::int64_t i, std::int64_t j)
{
  return detail::direct_value<D, double>(
      p.d, csr_rows<ValueT, IndexT>{p.a_ptr, p.a_col, p.a_val}[i],
      csr_rows<ValueT, IndexT>{p.b_ptr, p.b_col, p.b_val}[j], p.norms_a[i], p.norms_b[j], p.dim);
}

/// Writes pair (i, j) to *dst: intersection_finalize, except for a selection NAMM with a fallback
/// list (spira::pairwise), where a pair whose fix-up needs a row scan stores its raw ⊕ and is
/// queued for selection_fallback_kernel (one warp per pair instead of one thread scanning a long
/// row); when the list is full the thread scans itself.
template <class D, class ValueT, class IndexT>
__device__ inline void intersection_store(
    const intersection_args<D, ValueT, IndexT>& p, std::int64_t i, std::int64_t j,
    terms<intersection_accumulator_t<D, ValueT>, intersection_args<D, ValueT, IndexT>::N> a,
    ValueT* dst)
{
  if constexpr (selection_namm_v<D, ValueT>) {
    if (p.fallback != nullptr) {
      using add = typename D::add_monoid;
      constexpr int K = selection_candidates;
      const offset_t a_begin = p.a_ptr[i], a_n = p.a_ptr[i + 1] - a_begin;
      const offset_t b_begin = p.b_ptr[j], b_n = p.b_ptr[j + 1] - b_begin;
      ValueT from_a, from_b;
      const bool done_a = candidates_outside<D, ValueT, IndexT>(
          p.top_a_col + i * K, p.top_a_val + i * K, a_n, p.b_col + b_begin, b_n, from_a);
      const bool done_b = candidates_outside<D, ValueT, IndexT>(
          p.top_b_col + j * K, p.top_b_val + j * K, b_n, p.a_col + a_begin, a_n, from_b);
      a[0] = add{}(add{}(a[0], from_a), from_b);
      if (!(done_a && done_b)) {
        const unsigned long long slot = atomicAdd(p.fallback_count, 1ull);
        if (slot < (unsigned long long)p.fallback_capacity) {
          p.fallback[slot] = selection_fallback{i, j, (done_a ? 0 : 1) | (done_b ? 0 : 2)};
          *dst = ValueT(a[0]);
          return;
        }
        if (!done_a) {
          a[0] = add{}(
              a[0], scan_outside<D, ValueT, IndexT, true>(p.d, p.a_col + a_begin, p.a_val + a_begin,
                                                          0, a_n, 1, p.b_col + b_begin, b_n));
        }
        if (!done_b) {
          a[0] = add{}(a[0], scan_outside<D, ValueT, IndexT, false>(p.d, p.b_col + b_begin,
                                                                    p.b_val + b_begin, 0, b_n, 1,
                                                                    p.a_col + a_begin, a_n));
        }
      }
      *dst = ValueT(finalize_device(p.d, a, p.norms_a[i], p.norms_b[j], p.dim,
                                    static_cast<const terms<double, 1>*>(nullptr)));
      return;
    }
  }
  *dst = intersection_finalize(p, i, j, a);
}

#endif  // __CUDACC__

}  // namespace spira::detail
