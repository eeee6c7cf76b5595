// spira selection: the binary_search algorithm (RTop-K, warp per row).
//
// One warp owns one row and keeps it in registers as order-preserving keys (selection/keys.hpp),
// lane l holding positions l, l + 32, l + 64, ... . The warp searches the key range [min, max] of
// the row: each step counts the keys <= mid (every lane counts its own registers, the warp sums
// with one reduction) and keeps the part of [lo, hi] that contains the k-th key. Because the
// search runs on integer keys it is exact, and it stops early as soon as a midpoint splits the row
// into exactly k and n - k elements (RTop-K's Algorithm 1 early exit).
//
// Pivot choice. When a batch's longest row exceeds 768 keys (binary_search_policy), the exact
// search places mid by interpolation: with `want` of the `count` keys in [lo, hi] still to take,
// mid = lo + (hi - lo) * want / count, i.e. where the k-th key would sit if the keys were spread
// evenly over [lo, hi]. On smooth data this needs a few steps instead of the ~log2(range / gap) of
// plain bisection. Safeguard: after a step that fails to halve the interval the next step bisects,
// so the interval at least halves every two steps and the worst case stays within 2 x key_bits
// steps. Shorter rows bisect at every step (there a step costs little more than the pivot), and so
// does the approximate max_iter mode (RTop-K's Algorithm 2), because its output depends on the path
// and the host backend replays exactly that path (selection/keys.hpp, bisection_step).
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
#include <limits>

namespace spira::selection {

/// Tuning of the binary_search kernel.
struct binary_search_policy {
  static constexpr int warps_per_block = 4;
  /// Most keys per lane. The instantiated kernels hold 4, 8, 16, 24, 32 or 64 keys per lane; a
  /// batch uses the smallest that fits its longest row (src/selection/select_k_cuda.cu).
  static constexpr int max_items = 64;
  /// The exact search interpolates from this many keys per lane (rows over 768) and bisects below:
  /// on the H200 (uniform rows; bench/results/select_k-2026-11-21.json bisecting, -v2.json
  /// interpolating at every length) interpolation took 7-14% less time for rows of 1,024 and
  /// 2,048, about the same for 512 and 768, and 4-27% more for 256, where a step costs little more
  /// than the pivot's arithmetic.
  static constexpr int interpolate_from_items = 32;
  static_assert(max_items * warp::size == select_binary_search_max_length);
};

/// The interpolation pivot in [lo, hi - 1] (lo < hi): where the `want`-th of the `count` keys in
/// [lo, hi] would lie if they were spread evenly (0 < want < count). Float arithmetic suffices (it
/// only guides the search; the counts decide); the conversions saturate.
template <class Key>
__device__ __forceinline__ Key interpolation_mid(Key lo, Key hi, std::int64_t want,
                                                 std::int64_t count)
{
  const Key width = hi - lo;
  if constexpr (sizeof(Key) == 8) {
    const unsigned long long off =
      __double2ull_rz(static_cast<double>(width) *
                      (static_cast<double>(want) / static_cast<double>(count)));
    return lo + (off < width ? Key(off) : Key(width - 1));
  } else {
    const unsigned off = __float2uint_rz(static_cast<float>(width) *
                                         (static_cast<float>(want) / static_cast<float>(count)));
    return lo + (off < width ? Key(off) : Key(width - 1));
  }
}

/// max_iter <= 0: exact search (interpolation with the bisection safeguard); max_iter > 0: at most
/// that many bisection steps (approximate, RTop-K's Algorithm 2).
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

  // ---- search on [lo, hi] --------------------------------------------------------------------
  // Keys past the row end are traits::worst and mid < hi <= the row's largest key, so they are
  // never counted: the count loop needs no bounds test.
  std::int64_t below = 0;  // keys < lo
  std::int64_t need = n;   // taken from [lo, hi] in position order
  if (n > k) {
    lo = warp::reduce_min(lo);
    hi = warp::reduce_max(hi);
    const bool exact = max_iter <= 0;
    const bool interpolate = exact && Items >= binary_search_policy::interpolate_from_items;
    const int steps = exact ? std::numeric_limits<int>::max() : max_iter;
    std::int64_t at_most_hi = n;  // keys <= hi
    key_type checkpoint = hi - lo;
    int misses = 0;  // steps since the interval last halved against checkpoint
    for (int it = 0; lo < hi && it < steps; ++it) {
      const key_type mid = interpolate && misses == 0
                             ? interpolation_mid(lo, hi, k - below, at_most_hi - below)
                             : bisection_mid(lo, hi);
      unsigned c = 0;
#pragma unroll
      for (int j = 0; j < Items; ++j) {
        c += key[j] <= mid ? 1u : 0u;
      }
      c = __reduce_add_sync(warp::full_mask, c);
      if (bisection_step(lo, hi, below, mid, std::int64_t(c), k)) { break; }
      if (std::int64_t(c) > k) { at_most_hi = c; }
      if (key_type(hi - lo) <= checkpoint / 2) {
        checkpoint = hi - lo;
        misses = 0;
      } else {
        ++misses;
      }
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
