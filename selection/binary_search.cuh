// spira selection: the binary_search algorithm (RTop-K, warp per row).
//
// One warp owns one row and keeps it in registers as order-preserving keys (selection/keys.hpp),
// lane l holding positions l, l + 32, l + 64, ... . The result of the search is a threshold
// (t_lo, t_hi, t_pos): the row takes every key < t_lo and every key in [t_lo, t_hi] at a position
// <= t_pos. Every outcome below is one such threshold, so one write phase serves them all.
//
// Exact search (max_iter <= 0). Bisecting the row's key range [min, max] takes ~12 to 20 steps
// on real data, each counting all n / 32 keys of a lane. Instead the search first narrows the
// range with a warp-private shared-memory histogram:
//  1. Histogram pass: every key in [lo, hi] adds one to bin (key - lo) >> shift, the shift chosen
//     so that the range fills at most `bins` bins (256, or 1024 for rows over 1024). A warp scan
//     over the bins finds the bin holding the k-th key. If that bin ends exactly at the k-th key
//     the threshold is "key <= end of the bin" (done); otherwise [lo, hi] becomes the bin, and
//     passes repeat while it holds more than binary_search_policy::bisect_from keys.
//  2. Bisection (RTop-K's Algorithm 1) on the narrowed range: each step counts the keys <= mid
//     (per-lane count, one warp reduction) and keeps the half holding the k-th key, with the early
//     exit as soon as a midpoint splits the row into exactly k and n - k elements. It starts a few
//     steps from the answer, since the range holds at most a few keys.
//  3. Borderline handling (the tie rule): when the range converges to one key K, the row takes
//     every key < K and the first k - count(< K) keys equal to K by position, i.e. t_pos is the
//     position of the last of them, found by ballot ranks.
// On random and real data one pass leaves a handful of keys, so a row costs about four passes over
// its registers (load, histogram, a few bisection steps, write) instead of one per step.
// Every per-element step is branch-free (selects, an out-of-range histogram word instead of a
// predicated atomic), and the row's loads are all issued before the first is used.
//
// Early stop (max_iter > 0, RTop-K's Algorithm 2): plain bisection from [min, max] for at most
// max_iter steps (bisection_step in selection/keys.hpp, which the host backend replays step for
// step), then the row takes every key < lo and fills up from [lo, hi] by position: approximate,
// but the same bytes as the host backend.
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
  static_assert(max_items * warp::size == select_binary_search_max_length);
  /// Histogram bins of the exact search's range-narrowing pass, by keys per lane: enough that on
  /// smooth data the k-th key's bin holds at most 32 keys after one pass.
  static constexpr int bins_for(int items) { return items >= 32 ? 1024 : 256; }
  /// Resident blocks per multiprocessor the register allocation must allow, by 32-bit key words
  /// per lane (keys per lane x key size / 4): without a bound the compiler spends registers on
  /// hoisting, and a row of 512 held 95 registers (a third of the possible occupancy).
  static constexpr int min_blocks_for(int key_words)
  {
    return key_words <= 8    ? 10
           : key_words <= 16 ? 8
           : key_words <= 24 ? 5
           : key_words <= 32 ? 4
           : key_words <= 64 ? 2
                             : 1;
  }
  /// The exact search narrows the key range with histogram passes until it holds at most this
  /// many keys, then bisects: a pass costs about three bisection steps and cuts the keys in the
  /// range by about the bin count, a bisection step halves them.
  static constexpr int bisect_from = 16;
};

namespace binary_search_detail {

/// Number of significant bits of x (0 for x == 0).
template <class Key>
__device__ __forceinline__ int bit_width(Key x)
{
  if constexpr (sizeof(Key) == 8) {
    return 64 - __clzll(static_cast<long long>(x));
  } else {
    return 32 - __clz(static_cast<int>(x));
  }
}

/// Position of the need-th (1-based) valid key in [a, b], counting in position order; every lane
/// gets the same answer. The caller guarantees that at least `need` such keys exist.
template <int Items, class Key>
__device__ __forceinline__ int nth_position(const Key (&key)[Items], int n, Key a, Key b, int need)
{
  const int lane = warp::lane_id();
  const unsigned below_me = warp::lanes_below();
  const Key width = b - a;
  int seen = 0;
  int found = n;
#pragma unroll
  for (int j = 0; j < Items; ++j) {
    const bool in = j * warp::size + lane < n && Key(key[j] - a) <= width;
    const unsigned m = __ballot_sync(warp::full_mask, in);
    if (found == n && seen + __popc(m) >= need) {  // uniform over the warp
      const bool is_it = in && seen + __popc(m & below_me) + 1 == need;
      found = j * warp::size + __ffs(__ballot_sync(warp::full_mask, is_it)) - 1;
    }
    seen += __popc(m);
  }
  return found;
}

/// Narrows [lo, hi], the key range holding the k-th key (keys < lo: `below` of them, below < k),
/// with histogram passes over the row's registers, for the exact search. `hist` is the warp's
/// zeroed histogram of Bins + 1 words (left zeroed; the extra word counts keys outside the range).
/// Returns the number of keys left in [lo, hi], or -1 when a bin ends exactly at the k-th key;
/// then [lo, hi] is left empty (lo = hi + 1) with every key <= hi selected, as after
/// bisection_step's exact split.
template <int Items, int Bins, class Key>
__device__ __forceinline__ int narrow_by_histogram(const Key (&key)[Items], int n, int k,
                                                    Key& lo, Key& hi, std::int64_t& below,
                                                    unsigned* hist)
{
  constexpr int bins_per_lane = Bins / warp::size;
  static_assert(bins_per_lane % 4 == 0);
  constexpr int digit_bits = Bins == 1024 ? 10 : 8;
  static_assert((1 << digit_bits) == Bins);
  const int lane = warp::lane_id();
  const int need = k - static_cast<int>(below);  // to take from [lo, hi]
  const Key range = hi - lo;
  const int excess = bit_width(range) - digit_bits;
  const int shift = excess > 0 ? excess : 0;

  // ---- histogram of [lo, hi]; keys outside it (and past the row end) count in hist[Bins] -----
#pragma unroll
  for (int j = 0; j < Items; ++j) {
    const Key d = key[j] - lo;
    const bool in = (j * warp::size + lane < n) & (d <= range);
    atomicAdd(&hist[in ? static_cast<unsigned>(d >> shift) : unsigned(Bins)], 1u);
  }
  __syncwarp();

  // ---- the bin of the need-th key: lane l owns bins [l * bins_per_lane, ...) ------------------
  uint4* mine = reinterpret_cast<uint4*>(hist) + lane * (bins_per_lane / 4);
  unsigned lane_total = 0;
#pragma unroll
  for (int q = 0; q < bins_per_lane / 4; ++q) {
    const uint4 v = mine[q];
    lane_total += v.x + v.y + v.z + v.w;
  }
  const unsigned lane_incl = warp::inclusive_sum(lane_total);
  const int owner = __ffs(__ballot_sync(warp::full_mask, lane_incl >= unsigned(need))) - 1;
  // Every lane walks its bins again, zeroing them for the next pass; the owner lane's walk finds
  // the first bin whose running count reaches `need`.
  unsigned running = lane_incl - lane_total;
  int q_found = 0;
  unsigned before = 0;  // keys of [lo, hi] below the bin
  unsigned in_bin = 0;
#pragma unroll
  for (int q = 0; q < bins_per_lane / 4; ++q) {
    const uint4 v = mine[q];
    mine[q] = make_uint4(0u, 0u, 0u, 0u);
    const unsigned c[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (running < unsigned(need) && running + c[e] >= unsigned(need)) {
        q_found = 4 * q + e;
        before = running;
        in_bin = c[e];
      }
      running += c[e];
    }
  }
  if (lane == 0) { hist[Bins] = 0; }
  const int bin = owner * bins_per_lane + __shfl_sync(warp::full_mask, q_found, owner);
  before = __shfl_sync(warp::full_mask, before, owner);
  in_bin = __shfl_sync(warp::full_mask, in_bin, owner);
  __syncwarp();  // the zeroing above is complete before the next pass counts

  const Key bin_lo = lo + (Key(bin) << shift);
  const Key bin_mask = (Key(1) << shift) - 1;
  const Key bin_hi = Key(hi - bin_lo) > bin_mask ? Key(bin_lo + bin_mask) : hi;
  below += before;
  if (below + in_bin == std::int64_t(k)) {  // every key <= bin_hi; bin_hi < the row's max key
    lo = bin_hi + 1;
    hi = bin_hi;
    below = k;
    return -1;
  }
  lo = bin_lo;
  hi = bin_hi;
  return static_cast<int>(in_bin);
}

}  // namespace binary_search_detail

/// max_iter <= 0: exact search (histogram pass, then bisection on the narrowed range);
/// max_iter > 0: at most that many bisection steps over the whole row (approximate, RTop-K's
/// Algorithm 2).
template <class T, class IndexT, int Items>
__global__ void __launch_bounds__(binary_search_policy::warps_per_block * warp::size,
                                  binary_search_policy::min_blocks_for(
                                    Items * int(sizeof(typename key_traits<T>::key_type)) / 4))
  binary_search_kernel(row_source<T, IndexT> src, row_sink<T, IndexT> dst, std::int64_t k,
                       bool largest, int max_iter)
{
  using traits = key_traits<T>;
  using key_type = typename traits::key_type;
  constexpr int warps = binary_search_policy::warps_per_block;
  constexpr int bins = binary_search_policy::bins_for(Items);
  __shared__ alignas(16) unsigned hist_all[warps][bins + 4];  // + the out-of-range count

  const int w = static_cast<int>(threadIdx.x) / warp::size;
  const std::int64_t row = std::int64_t(blockIdx.x) * warps + w;
  if (row >= src.rows) { return; }  // uniform over the warp
  const int lane = warp::lane_id();
  const std::int64_t first = src.begin(row);
  const int n = static_cast<int>(src.length(row));
  const T* in = src.values + first;

  // ---- load: the row as keys, in registers --------------------------------------------------
  // Every load is issued before the first is used (positions past the row end re-read its last
  // element), so a warp has its whole row in flight at once instead of one load per latency.
  key_type key[Items];
  key_type lo = traits::worst;
  key_type hi = 0;
  if (n > 0) {  // uniform over the warp
    T raw[Items];
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      const int i = j * warp::size + lane;
      raw[j] = in[i < n ? i : n - 1];
    }
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      const int i = j * warp::size + lane;
      key[j] = i < n ? traits::to_key(raw[j], largest) : traits::worst;
      if (i < n) {
        lo = key[j] < lo ? key[j] : lo;
        hi = key[j] > hi ? key[j] : hi;
      }
    }
  } else {
#pragma unroll
    for (int j = 0; j < Items; ++j) { key[j] = traits::worst; }
  }

  // ---- the threshold: take keys < t_lo, and keys in [t_lo, t_hi] at positions <= t_pos -------
  key_type t_lo = traits::worst;  // n <= k: every element
  key_type t_hi = traits::worst;
  int t_pos = std::numeric_limits<int>::max();
  if (n > k) {
    lo = warp::reduce_min(lo);
    hi = warp::reduce_max(hi);
    std::int64_t below = 0;  // keys < lo
    bool found = false;
    if (max_iter <= 0) {
      // Exact: histogram passes while the range holds more than bisect_from keys, then bisection.
      unsigned* hist = hist_all[w];
#pragma unroll
      for (int q = 0; q < bins / warp::size / 4; ++q) {
        reinterpret_cast<uint4*>(hist)[lane * (bins / warp::size / 4) + q] =
          make_uint4(0u, 0u, 0u, 0u);
      }
      if (lane == 0) { hist[bins] = 0; }
      __syncwarp();
      int left = n;  // keys in [lo, hi]
      while (left > binary_search_policy::bisect_from && lo < hi) {
        left = binary_search_detail::narrow_by_histogram<Items, bins>(
          key, n, static_cast<int>(k), lo, hi, below, hist);
        found = left < 0;
      }
    }
    const int steps = max_iter > 0 ? max_iter : std::numeric_limits<int>::max();
    for (int it = 0; !found && lo < hi && it < steps; ++it) {
      const key_type mid = bisection_mid(lo, hi);
      unsigned c = 0;
#pragma unroll
      for (int j = 0; j < Items; ++j) {
        c += key[j] <= mid ? 1u : 0u;  // keys past the row end are worst > mid
      }
      c = __reduce_add_sync(warp::full_mask, c);
      found = bisection_step(lo, hi, below, mid, std::int64_t(c), k);
    }
    t_lo = lo;
    t_hi = hi;
    if (lo <= hi) {  // fill up from [lo, hi] by position (an exact split leaves lo > hi)
      t_pos = binary_search_detail::nth_position(key, n, lo, hi, static_cast<int>(k - below));
    }
  }

  // ---- select and write, in position order ---------------------------------------------------
  // In groups of 4 keys per lane: ranks from ballots, then the group's loads (all issued before
  // the first is used), then its stores.
  T* out_v = dst.values + row * dst.ld_values;
  IndexT* out_i = dst.indices + row * dst.ld_indices;
  const unsigned below_me = warp::lanes_below();
  constexpr int group = 4;
  static_assert(Items % group == 0);
  int written = 0;
#pragma unroll
  for (int g = 0; g < Items; g += group) {
    int pos[group];
#pragma unroll
    for (int j = 0; j < group; ++j) {
      const int i = (g + j) * warp::size + lane;
      // Non-short-circuit operators: selects, not branches.
      const bool take = (i < n) & ((key[g + j] < t_lo) | ((key[g + j] <= t_hi) & (i <= t_pos)));
      const unsigned take_mask = __ballot_sync(warp::full_mask, take);
      pos[j] = take ? written + __popc(take_mask & below_me) : -1;
      written += __popc(take_mask);
    }
    T val[group];
    IndexT idx[group];
#pragma unroll
    for (int j = 0; j < group; ++j) {
      const int i = (g + j) * warp::size + lane;
      if (pos[j] >= 0) {
        val[j] = in[i];
        idx[j] = src.index_at(first, i);
      }
    }
#pragma unroll
    for (int j = 0; j < group; ++j) {
      if (pos[j] >= 0) {
        out_v[pos[j]] = val[j];
        out_i[pos[j]] = idx[j];
      }
    }
  }
  // ---- pad rows shorter than k ---------------------------------------------------------------
  const T pad = traits::padding(largest);
  for (std::int64_t pos = written + lane; pos < k; pos += warp::size) {
    out_v[pos] = pad;
    out_i[pos] = IndexT{-1};
  }
}

}  // namespace spira::selection
