// spira selection: the binary_search algorithm (RTop-K, warp per row).
//
// One warp owns one row and keeps it in registers as order-preserving keys (selection/keys.hpp),
// lane l holding positions l, l + 32, l + 64, ... . The warp bisects the key range [min, max] of
// the row: each step counts the keys <= mid (every lane counts its own registers, the warp sums
// with one reduction) and keeps the half that contains the k-th key. Because the bisection runs
// on integer keys it is exact after at most key_bits steps, and it stops early as soon as a
// midpoint splits the row into exactly k and n - k elements (RTop-K's Algorithm 1 early exit).
//
// Borderline handling (the tie rule): when the bisection converges to the k-th key K, the row
// takes every key < K and then the first k - count(< K) keys equal to K by increasing position.
// With max_iter (RTop-K's Algorithm 2) the loop may stop with lo < hi; the row then takes every
// key < lo and fills up from the keys in [lo, hi] by increasing position: approximate, but the
// same bytes as the host backend, which runs this procedure step for step.
//
// Output positions come from ballots in position order, so the unsorted output lists the
// selected elements by increasing index without any atomics.
#pragma once

#include "selection/keys.hpp"
#include "selection/warp.cuh"

#include <cstdint>

namespace spira::selection {

/// Tuning of the binary_search kernel.
struct binary_search_policy {
  static constexpr int warps_per_block = 4;
  /// Most keys per lane. The instantiated kernels hold 4, 8, 16, 24, 32 or 64 keys per lane; a
  /// batch uses the smallest that fits its longest row (src/selection/select_k_cuda.cu).
  static constexpr int max_items = 64;
  static_assert(max_items * warp::size == select_binary_search_max_length);
};

template <class T, class IndexT, int Items>
__global__ void __launch_bounds__(binary_search_policy::warps_per_block * warp::size)
  binary_search_kernel(row_source<T, IndexT> src, row_sink<T, IndexT> dst, std::int64_t k,
                       bool largest, int max_iter)
{
  using traits = key_traits<T>;
  using key_type = typename traits::key_type;
  const std::int64_t row = std::int64_t(blockIdx.x) * binary_search_policy::warps_per_block +
                           threadIdx.x / warp::size;
  if (row >= src.rows) { return; }  // uniform over the warp
  const int lane = warp::lane_id();
  const std::int64_t first = src.begin(row);
  const int n = static_cast<int>(src.length(row));
  const T* in = src.values + first;

  // ---- load: the row as keys, in registers --------------------------------------------------
  key_type key[Items];
  key_type lo = traits::worst;
  key_type hi = 0;
#pragma unroll
  for (int j = 0; j < Items; ++j) {
    const int i = j * warp::size + lane;
    key[j] = i < n ? traits::to_key(in[i], largest) : traits::worst;
    if (i < n) {
      lo = key[j] < lo ? key[j] : lo;
      hi = key[j] > hi ? key[j] : hi;
    }
  }

  // ---- search: bisection on [lo, hi] ---------------------------------------------------------
  std::int64_t below = 0;  // keys < lo
  std::int64_t need = n;   // taken from [lo, hi] in position order
  if (n > k) {
    lo = warp::reduce_min(lo);
    hi = warp::reduce_max(hi);
    for (int it = 0; lo < hi && it < max_iter; ++it) {
      const key_type mid = bisection_mid(lo, hi);
      unsigned c = 0;
#pragma unroll
      for (int j = 0; j < Items; ++j) {
        c += (j * warp::size + lane < n && key[j] <= mid) ? 1u : 0u;
      }
      c = __reduce_add_sync(warp::full_mask, c);
      if (bisection_step(lo, hi, below, mid, std::int64_t(c), k)) { break; }
    }
    need = k - below;
  } else {
    lo = 0;
    hi = traits::worst;
  }

  // ---- select and write, in position order ---------------------------------------------------
  T* out_v = dst.values + row * dst.ld_values;
  IndexT* out_i = dst.indices + row * dst.ld_indices;
  const unsigned below_me = warp::lanes_below();
  int written = 0;
  int filled = 0;
#pragma unroll
  for (int j = 0; j < Items; ++j) {
    const int i = j * warp::size + lane;
    const bool valid = i < n;
    const bool less = valid && key[j] < lo;
    const bool fill = valid && !less && key[j] <= hi;
    const unsigned fill_mask = __ballot_sync(warp::full_mask, fill);
    const bool take = less || (fill && filled + __popc(fill_mask & below_me) < need);
    const unsigned take_mask = __ballot_sync(warp::full_mask, take);
    if (take) {
      const int pos = written + __popc(take_mask & below_me);
      out_v[pos] = in[i];
      out_i[pos] = src.index_at(first, i);
    }
    written += __popc(take_mask);
    filled += __popc(fill_mask);
  }
  // ---- pad rows shorter than k ---------------------------------------------------------------
  const T pad = traits::padding(largest);
  for (std::int64_t pos = written + lane; pos < k; pos += warp::size) {
    out_v[pos] = pad;
    out_i[pos] = IndexT{-1};
  }
}

}  // namespace spira::selection
