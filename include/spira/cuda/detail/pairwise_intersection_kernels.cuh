// spira: the kernels of the intersection strategy of the CUDA pairwise engine: the intersection
// kernel, the warp-per-pair fallback of selection NAMMs, and the setup's kernels (one-sided terms
// of B, column counts, the selection statistics).
#pragma once

#include <spira/cuda/detail/pairwise_context.cuh>
#include <spira/cuda/detail/pairwise_intersection_device.cuh>
#include <spira/cuda/detail/pairwise_selection.cuh>

namespace spira::detail {

#if defined(__CUDACC__)

// ---- intersection kernels -----------------------------------------------------------------------

/// Block (x: rows of A, grid-stride; y: tiles of tile_cols output columns, grid-stride). For row i
/// and the tile [j0, j1): the shared accumulator starts at e⊕, intersection_accumulate fills it and
/// the tile is finalized straight into the output (intersection_store).
template <class D, class ValueT, class IndexT>
__global__ void intersection_kernel(intersection_args<D, ValueT, IndexT> p)
{
  using add = typename D::add_monoid;
  using A = intersection_accumulator_t<D, ValueT>;
  constexpr int N = intersection_args<D, ValueT, IndexT>::N;
  extern __shared__ unsigned char smem_raw[];
  A* acc = reinterpret_cast<A*>(smem_raw);
  const std::int64_t tiles = (p.rows_b + p.tile_cols - 1) / p.tile_cols;
  for (std::int64_t tile = blockIdx.y; tile < tiles; tile += gridDim.y) {
    const std::int64_t j0 = tile * p.tile_cols;
    const std::int64_t width = p.tile_cols < p.rows_b - j0 ? p.tile_cols : p.rows_b - j0;
    for (std::int64_t i = blockIdx.x; i < p.rows_a; i += gridDim.x) {
      for (std::int64_t e = threadIdx.x; e < width * N; e += blockDim.x) {
        acc[e] = add::template identity<A>();
      }
      __syncthreads();
      intersection_accumulate(p, i, j0, width, acc);
      __syncthreads();
      ValueT* out_row = p.out + i * p.ld + j0;
      for (std::int64_t jj = threadIdx.x; jj < width; jj += blockDim.x) {
        terms<A, N> a;
#pragma unroll
        for (int t = 0; t < N; ++t) {
          a[t] = acc[jj * N + t];
        }
        intersection_store(p, i, j0 + jj, a, out_row + jj);
      }
      __syncthreads();
    }
  }
}

/// The pairs the intersection kernel left to it (selection NAMMs): one warp per pair scans the
/// row(s) whose K candidates were all shared, reduces with ⊕, combines with the raw ⊕ stored in
/// the output and writes the finalized value.
template <class D, class ValueT, class IndexT>
__global__ void selection_fallback_kernel(intersection_args<D, ValueT, IndexT> p)
{
  using add = typename D::add_monoid;
  const unsigned long long stored = *p.fallback_count;
  const std::int64_t n =
      stored < (unsigned long long)p.fallback_capacity ? std::int64_t(stored) : p.fallback_capacity;
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t e = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; e < n;
       e += warps) {
    const selection_fallback f = p.fallback[e];
    const offset_t a_begin = p.a_ptr[f.i], a_n = p.a_ptr[f.i + 1] - a_begin;
    const offset_t b_begin = p.b_ptr[f.j], b_n = p.b_ptr[f.j + 1] - b_begin;
    ValueT best = add::template identity<ValueT>();
    if (f.sides & 1) {
      best = add{}(best,
                   scan_outside<D, ValueT, IndexT, true>(p.d, p.a_col + a_begin, p.a_val + a_begin,
                                                         lane, a_n, 32, p.b_col + b_begin, b_n));
    }
    if (f.sides & 2) {
      best = add{}(best,
                   scan_outside<D, ValueT, IndexT, false>(p.d, p.b_col + b_begin, p.b_val + b_begin,
                                                          lane, b_n, 32, p.a_col + a_begin, a_n));
    }
    best = warp_reduce<add, ValueT, 1>(terms<ValueT, 1>{{best}})[0];
    if (lane == 0) {
      ValueT* dst = p.out + f.i * p.ld + f.j;
      const terms<ValueT, 1> a{{add{}(*dst, best)}};
      *dst = ValueT(finalize_device(p.d, a, p.norms_a[f.i], p.norms_b[f.j], p.dim,
                                    static_cast<const terms<double, 1>*>(nullptr)));
    }
  }
}

// ---- setup kernels ------------------------------------------------------------------------------

/// side[q] = ⊗(0, values[q]) in double, for every entry of the CSC of B (sum NAMMs).
template <class D, class ValueT, int N>
__global__ void right_sides_kernel(D d, const ValueT* values, std::int64_t n,
                                   terms<double, N>* side)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t q = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; q < n; q += stride) {
    side[q] = one_sided_d<D, false>(d, values[q]);
  }
}

/// counts[c] += 1 for every stored column c (the caller zeroes counts).
template <class IndexT>
__global__ void column_counts_kernel(const IndexT* col_idx, std::int64_t nnz,
                                     unsigned long long* counts)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < nnz; k += stride) {
    atomicAdd(&counts[col_idx[k]], 1ull);
  }
}

/// stats[0] += Σ_c nnz(A[:,c]) nnz(B[:,c]) (counts_a == nullptr: A is B) and stats[1] += the
/// search steps of the selection fix-up over `samples` pairs: all pairs in order when there are
/// at most `samples`, else pairs drawn by a fixed hash of the sample index (deterministic). A row
/// whose K candidates are all stored by the other row costs deg x log2(2 + other degree).
template <class D, class ValueT, class IndexT>
__global__ void selection_statistics_kernel(intersection_args<D, ValueT, IndexT> p,
                                            const unsigned long long* counts_a,
                                            std::int64_t samples, double* stats)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  const std::int64_t tid = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  double products = 0, steps = 0;
  for (std::int64_t c = tid; c < p.cols; c += stride) {
    const double nb = double(p.bt_ptr[c + 1] - p.bt_ptr[c]);
    products += (counts_a == nullptr ? nb : double(counts_a[c])) * nb;
  }
  constexpr int K = selection_candidates;
  const bool all_pairs = double(p.rows_a) * double(p.rows_b) <= double(samples);
  for (std::int64_t s = tid; s < samples; s += stride) {
    std::int64_t i, j;
    if (all_pairs) {
      if (s >= p.rows_a * p.rows_b) {
        break;
      }
      i = s / p.rows_b;
      j = s % p.rows_b;
    } else {
      i = std::int64_t(murmur_mix(std::uint64_t(2 * s + 1)) % std::uint64_t(p.rows_a));
      j = std::int64_t(murmur_mix(std::uint64_t(2 * s + 2)) % std::uint64_t(p.rows_b));
    }
    const offset_t a_begin = p.a_ptr[i], a_n = p.a_ptr[i + 1] - a_begin;
    const offset_t b_begin = p.b_ptr[j], b_n = p.b_ptr[j + 1] - b_begin;
    ValueT unused;
    if (!candidates_outside<D, ValueT, IndexT>(p.top_a_col + i * K, p.top_a_val + i * K, a_n,
                                               p.b_col + b_begin, b_n, unused)) {
      steps += double(a_n) * log2(2.0 + double(b_n));
    }
    if (!candidates_outside<D, ValueT, IndexT>(p.top_b_col + j * K, p.top_b_val + j * K, b_n,
                                               p.a_col + a_begin, a_n, unused)) {
      steps += double(b_n) * log2(2.0 + double(a_n));
    }
  }
  auto r = warp_reduce<plus_monoid, double, 2>(terms<double, 2>{{products, steps}});
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&stats[0], r[0]);
    atomicAdd(&stats[1], r[1]);
  }
}

#endif  // __CUDACC__

}  // namespace spira::detail
