// spira selection: the binary_search algorithm (RTop-K, warp per row).
//
// One warp owns one row and keeps it in registers as order-preserving keys (selection/keys.hpp),
// converted with number_key: a row's NaNs show in its key extremes, and only such a row pays for
// turning their keys into the worst.
// Slots: lane l holds, in its group g, the four consecutive slots 128 g + 4 l ... 128 g + 4 l + 3,
// so that a group is one 16-byte load per lane (binary_search_detail::vec, span). Slot q holds
// position q - off, where off is how far the row starts past a vector boundary (on-demand offset
// padding: the row is read from the boundary below it); off = 0 and element loads for a row that
// would then overflow the warp or whose boundary lies before the value array. The `off` leading
// slots and the slots past the row end hold the worst key and are never taken. The result of the
// search is a threshold (t_lo, t_hi, t_q): the row takes every key < t_lo and every key in
// [t_lo, t_hi] at a slot <= t_q. Every outcome below is one such threshold, so one write phase
// serves them all.
//
// Exact search (max_iter <= 0). Bisecting the row's key range [min, max] takes ~12 to 20 steps
// on real data, each counting all n / 32 keys of a lane. Instead the search first narrows the
// range with a warp-private shared-memory histogram:
//  1. Histogram pass: every key in [lo, hi] adds one to bin (key - lo) >> shift, the shift chosen
//     so that the range fills at most `bins` bins (256, or 1024 for rows over 1024). A warp scan
//     over the lanes' bin totals, then one over the owner lane's bins, finds the bin holding the
//     k-th key. If that bin ends exactly at the k-th key the threshold is "key <= end of the bin"
//     (done); otherwise [lo, hi] becomes the bin, and passes repeat while it holds more than
//     binary_search_policy::bisect_from keys.
//  2. Bisection (RTop-K's Algorithm 1) on the narrowed range: each step counts the keys <= mid
//     (per-lane count, one warp reduction) and keeps the half holding the k-th key, with the early
//     exit as soon as a midpoint splits the row into exactly k and n - k elements. It starts a few
//     steps from the answer, since the range holds at most a few keys.
//  3. Borderline handling (the tie rule): when the range converges to one key K, the row takes
//     every key < K and the first k - count(< K) keys equal to K by position, i.e. t_q is the
//     slot of the last of them, found by ballot ranks.
// On random and real data one pass leaves a handful of keys, so a row costs about four passes over
// its registers (load, histogram, a few bisection steps, write) instead of one per step.
//  0. Rows of at least 1,024 slots (binary_search_policy::lane_bound_min_items) and k <= 32 first
//     take the k-th smallest of the 32 lanes' best keys as an upper bound: k lanes hold a key at
//     most that large, so the k-th key is within it. Where at most 32 keys are (random data: a
//     few more than k), they are gathered in shared memory with their slots and ranked by
//     (key, slot) directly, which gives the threshold without a histogram pass; otherwise the
//     passes above start from the bound.
// A row of at most k elements is copied whole to the output (its own loads), without a search.
// Per-element steps are selects, not branches (an out-of-range histogram word instead of a
// predicated atomic), and the row's loads are all issued before the first is used.
//
// Early stop (max_iter > 0, RTop-K's Algorithm 2): plain bisection from [min, max] for at most
// max_iter steps (bisection_step in selection/keys.hpp, which the host backend replays step for
// step), then the row takes every key < lo and fills up from [lo, hi] by position: approximate,
// but the same bytes as the host backend.
//
// Output ranks follow slot (= position) order, from the lanes' taken counts per group packed four
// to a word and one warp scan per word, so the unsorted output lists the selected elements by
// increasing index without any atomics; they are staged in shared memory and written with
// coalesced stores.
#pragma once

#include "selection/binary_search_rows.cuh"
#include "selection/keys.hpp"
#include "selection/warp.cuh"

#include <cstdint>
#include <limits>
#include <type_traits>

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
  /// hoisting, and a row of 512 held 95 registers (a third of the possible occupancy). With the
  /// staged write, 10 and 8 blocks (48 and 64 registers) spilled for 8 and 16 words. Rows of 1024
  /// and 2048 floats (32 and 64 words) fit 80 and 128 registers without spilling, and the extra
  /// warps made them faster on an H100 than 4 and 2 blocks (96 and 168 registers): new / base
  /// median 0.96 (1024) and 0.94 (2048), every one of 36 shapes below 1, against a median of
  /// 1.01 for the unchanged rows of 768 (bench/results/binary-search-occupancy-2026-11-26/).
  static constexpr int min_blocks_for(int key_words)
  {
    return key_words <= 8    ? 9
           : key_words <= 16 ? 7
           : key_words <= 24 ? 5
           : key_words <= 32 ? 6
           : key_words <= 64 ? 4
                             : 1;
  }
  /// The exact search narrows the key range with histogram passes until it holds at most this
  /// many keys, then bisects: a pass costs about three bisection steps and cuts the keys in the
  /// range by about the bin count, a bisection step halves them.
  static constexpr int bisect_from = 16;
  /// Keys per lane from which the exact search of a row with k <= 32 first bounds the k-th key by
  /// the k-th smallest of the lanes' best keys (binary_search_detail::kth_lane_best): on random
  /// data a few more than k keys are within the bound, and when at most 32 are, they are ranked
  /// directly instead of narrowed by histogram passes, whose shared-memory atomics dominate the
  /// search of long rows. On an H100 (16,384 N(0,1) rows, k = 1 to 32) rows of 1,024 took 0.42 to
  /// 0.73 of the time without it and rows of 2,048 0.65 to 0.77, but rows of 512 and 768 (16 and
  /// 24 keys a lane) 1.00 to 1.15: there a histogram pass is cheaper than the bound's ranking
  /// (bench/results/select-lane-bound-2026-11-27).
  static constexpr int lane_bound_min_items = 32;
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

/// Number of keys <= mid in the lane's registers. For 32-bit keys each comparison is the carry of a
/// subtraction added in (two instructions a key instead of a compare and a select).
template <int Items, class Key>
__device__ __forceinline__ unsigned count_at_most(const Key (&key)[Items], Key mid)
{
  unsigned c = 0;
  if constexpr (sizeof(Key) == 4) {
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      unsigned scratch;
      asm("sub.cc.u32 %0, %2, %3;\n\taddc.u32 %1, %1, 0;"
          : "=r"(scratch), "+r"(c)
          : "r"(mid), "r"(key[j]));  // carry = no borrow = key <= mid
    }
  } else {
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      c += key[j] <= mid ? 1u : 0u;
    }
  }
  return c;
}

/// Slot of the need-th (1-based) key in [a, b], counting in slot order over the slots >= off (the
/// leading padding slots hold the worst key, which can lie in [a, b]; the trailing ones come after
/// every row element, so the need-th is found before them); every lane gets the same answer. The
/// caller guarantees that at least `need` such keys exist.
template <int Items, class Key>
__device__ __forceinline__ int nth_slot(const Key (&key)[Items], int off, Key a, Key b, int need)
{
  const int lane = warp::lane_id();
  const unsigned below_me = warp::lanes_below();
  const Key width = b - a;
  int seen = 0;
  int found = -1;
#pragma unroll
  for (int g = 0; g < Items / vec; ++g) {
    bool in[vec];
    unsigned m[vec];
    int total = 0;
#pragma unroll
    for (int e = 0; e < vec; ++e) {
      in[e] = Key(key[g * vec + e] - a) <= width && (g > 0 || vec * lane + e >= off);
      m[e] = __ballot_sync(warp::full_mask, in[e]);
      total += __popc(m[e]);
    }
    if (found < 0 && seen + total >= need) {  // uniform over the warp
      int rank = seen;  // keys of [a, b] in the slots before this lane's in the group
#pragma unroll
      for (int e = 0; e < vec; ++e) {
        rank += __popc(m[e] & below_me);
      }
      int mine = -1;
#pragma unroll
      for (int e = 0; e < vec; ++e) {
        rank += in[e] ? 1 : 0;
        mine = in[e] && rank == need ? e : mine;
      }
      const int winner = __ffs(__ballot_sync(warp::full_mask, mine >= 0)) - 1;
      found = g * span + vec * winner + __shfl_sync(warp::full_mask, mine, winner);
    }
    seen += total;
  }
  return found;
}

/// A key (16, 32 or 64 bits) from lane `src`.
template <class Key>
__device__ __forceinline__ Key shfl_key(Key x, int src)
{
  if constexpr (sizeof(Key) == 8) {
    return __shfl_sync(warp::full_mask, static_cast<unsigned long long>(x), src);
  } else {
    return static_cast<Key>(__shfl_sync(warp::full_mask, static_cast<unsigned>(x), src));
  }
}

/// For 1 <= k <= 32: the k-th smallest of the lanes' best (smallest) keys, ties by lane. Each of
/// the k lanes ranked before it holds a key <= the result, so at least k keys of the row are.
template <class Key>
__device__ __forceinline__ Key kth_lane_best(Key best, int k)
{
  const int lane = warp::lane_id();
  int rank = 0;
#pragma unroll
  for (int j = 0; j < warp::size; ++j) {
    const Key other = shfl_key(best, j);
    rank += (other < best) | ((other == best) & (j < lane)) ? 1 : 0;
  }
  const int owner = __ffs(__ballot_sync(warp::full_mask, rank == k - 1)) - 1;
  return shfl_key(best, owner);
}

/// The need-th (1-based) smallest key of the row by (key, slot) among the keys <= bound, when at
/// most 32 keys are <= bound (`mine` of them in this lane, `total` in the warp): its key and its
/// slot, on every lane. The candidates go through the warp's shared memory (`cand_key`,
/// `cand_slot`: 32 entries each) and lane t ranks candidate t against all of them. Padding slots
/// hold the worst key, which is never <= bound.
template <int Items, class Key>
__device__ __forceinline__ void nth_candidate(const Key (&key)[Items], Key bound, unsigned mine,
                                              unsigned total, int need, Key* cand_key,
                                              int* cand_slot, Key& kth, int& kth_slot)
{
  const int lane = warp::lane_id();
  int at = static_cast<int>(warp::inclusive_sum(mine) - mine);
#pragma unroll
  for (int j = 0; j < Items; ++j) {
    if (key[j] <= bound) {
      cand_key[at] = key[j];
      cand_slot[at] = (j / vec) * span + vec * lane + j % vec;
      ++at;
    }
  }
  __syncwarp();
  const bool holds = static_cast<unsigned>(lane) < total;
  const Key x = holds ? cand_key[lane] : Key(0);
  const int q = holds ? cand_slot[lane] : 0;
  int rank = 0;
  for (unsigned u = 0; u < total; ++u) {  // uniform bound; broadcast reads
    const Key other = cand_key[u];
    rank += (other < x) | ((other == x) & (cand_slot[u] < q)) ? 1 : 0;
  }
  const int owner = __ffs(__ballot_sync(warp::full_mask, holds && rank == need - 1)) - 1;
  kth = shfl_key(x, owner);
  kth_slot = __shfl_sync(warp::full_mask, q, owner);
  __syncwarp();  // every read is done before the buffer is used again
}

/// Narrows [lo, hi], the key range holding the k-th key (keys < lo: `below` of them, below < k),
/// with histogram passes over the row's registers, for the exact search. `hist` is the warp's
/// zeroed histogram of Bins + 1 words (left zeroed; the extra word counts keys outside the range).
/// `pads` slots hold the padding key `worst`. Returns the number of keys left in [lo, hi], or -1
/// when a bin ends exactly at the k-th key; then [lo, hi] is left empty (lo = hi + 1) with every
/// key <= hi selected, as after bisection_step's exact split.
template <int Items, int Bins, class Key>
__device__ __forceinline__ int narrow_by_histogram(const Key (&key)[Items], Key worst, int pads,
                                                   int k, Key& lo, Key& hi, int& below,
                                                   unsigned* hist)
{
  constexpr int bins_per_lane = Bins / warp::size;
  static_assert(bins_per_lane % 4 == 0);
  constexpr int digit_bits = Bins == 1024 ? 10 : 8;
  static_assert((1 << digit_bits) == Bins);
  const int lane = warp::lane_id();
  const unsigned need = static_cast<unsigned>(k - below);  // to take from [lo, hi]
  const Key range = hi - lo;
  const int excess = bit_width(range) - digit_bits;
  const int shift = excess > 0 ? excess : 0;

  // ---- histogram of [lo, hi]; keys outside it count in hist[Bins] ----------------------------
#pragma unroll
  for (int j = 0; j < Items; ++j) {
    const Key d = key[j] - lo;
    atomicAdd(&hist[d <= range ? static_cast<unsigned>(d >> shift) : unsigned(Bins)], 1u);
  }
  __syncwarp();
  if (hi == worst && pads > 0) {  // the padding slots counted in the range's last bin
    if (lane == 0) {
      hist[range >> shift] -= static_cast<unsigned>(pads);
    }
    __syncwarp();
  }

  // ---- the lane whose bins hold the need-th key: lane l owns bins [l * bins_per_lane, ...) ----
  uint4* mine = reinterpret_cast<uint4*>(hist) + lane * (bins_per_lane / 4);
  unsigned lane_total = 0;
#pragma unroll
  for (int q = 0; q < bins_per_lane / 4; ++q) {
    const uint4 v = mine[q];
    lane_total += v.x + v.y + v.z + v.w;
  }
  const unsigned lane_incl = warp::inclusive_sum(lane_total);
  const int owner = __ffs(__ballot_sync(warp::full_mask, lane_incl >= need)) - 1;
  const unsigned owner_before = __shfl_sync(warp::full_mask, lane_incl - lane_total, owner);

  // ---- the bin among the owner's: lane b < bins_per_lane reads bin owner * bins_per_lane + b --
  const unsigned count = lane < bins_per_lane ? hist[owner * bins_per_lane + lane] : 0u;
  __syncwarp();  // every read above is done before the zeroing
#pragma unroll
  for (int q = 0; q < bins_per_lane / 4; ++q) {
    mine[q] = make_uint4(0u, 0u, 0u, 0u);
  }
  if (lane == 0) {
    hist[Bins] = 0;
  }
  unsigned incl = count;
#pragma unroll
  for (int d = 1; d < bins_per_lane; d *= 2) {
    const unsigned o = __shfl_up_sync(warp::full_mask, incl, d, bins_per_lane);
    incl += lane % bins_per_lane >= d ? o : 0u;
  }
  incl += owner_before;
  const int b = __ffs(__ballot_sync(warp::full_mask, lane < bins_per_lane && incl >= need)) - 1;
  const int bin = owner * bins_per_lane + b;
  const unsigned in_bin = __shfl_sync(warp::full_mask, count, b);
  const unsigned before = __shfl_sync(warp::full_mask, incl, b) - in_bin;  // keys of [lo, hi]
  __syncwarp();  // the zeroing above is complete before the next pass counts

  const Key bin_lo = lo + (Key(bin) << shift);
  const Key bin_mask = (Key(1) << shift) - 1;
  const Key bin_hi = Key(hi - bin_lo) > bin_mask ? Key(bin_lo + bin_mask) : hi;
  below += static_cast<int>(before);
  if (below + static_cast<int>(in_bin) == k) {  // every key <= bin_hi; bin_hi < the row's max
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
/// Algorithm 2). LaneBound: the exact search starts from the lanes' best keys (stage 0 above; the
/// launcher sets it for k <= 32 and rows of at least binary_search_policy::lane_bound_min_items
/// keys a lane, and the kernels without it hold none of its code).
template <class T, class IndexT, int Items, bool LaneBound>
__global__ void __launch_bounds__(
    binary_search_policy::warps_per_block* warp::size,
    binary_search_policy::min_blocks_for(Items* int(sizeof(typename key_traits<T>::key_type)) / 4))
    binary_search_kernel(row_source<T, IndexT> src, row_sink<T, IndexT> dst, std::int64_t k,
                         bool largest, int max_iter)
{
  using traits = key_traits<T>;
  using key_type = typename traits::key_type;
  using binary_search_detail::span;
  using binary_search_detail::vec;
  constexpr int warps = binary_search_policy::warps_per_block;
  constexpr int bins = binary_search_policy::bins_for(Items);
  constexpr int groups = Items / vec;
  static_assert(Items % vec == 0);
  // Per warp: the histogram of the search (+ the out-of-range count), then the output stage of
  // taken slots (at least one group's), followed by one word per lane that takes the lane's stores
  // of slots not taken.
  constexpr int stage_entries = bins > span ? bins : span;
  constexpr int warp_words = stage_entries + warp::size;
  __shared__ alignas(16) unsigned smem[warps][warp_words];

  const int w = static_cast<int>(threadIdx.x) / warp::size;
  const int lane = warp::lane_id();
  const int lane_q = vec * lane;
  const std::int64_t row = std::int64_t(blockIdx.x) * warps + w;
  if (row >= src.rows) {
    return;
  }  // uniform over the warp
  const auto at = binary_search_detail::locate_row<Items>(src, row, lane);
  if (at.n <= k) {  // uniform over the warp: every element, then the padding
    binary_search_detail::copy_whole_row<Items>(
        at, src.col_idx != nullptr ? src.col_idx + (at.first - at.off) : nullptr,
        dst.values + row * dst.ld_values, dst.indices + row * dst.ld_indices, lane);
    const T pad = traits::padding(largest);
    for (std::int64_t pos = at.n + lane; pos < k; pos += warp::size) {
      dst.values[row * dst.ld_values + pos] = pad;
      dst.indices[row * dst.ld_indices + pos] = IndexT{-1};
    }
    return;
  }
  T raw[Items];  // every load is issued before the first is used: the whole row in flight
  binary_search_detail::load_row(at, lane, raw);
  const std::int64_t first = at.first;
  const int n = at.n;
  const int off = at.off;
  const int end = at.end;

  // ---- the row as keys, in registers ---------------------------------------------------------
  key_type key[Items];
  key_type lo = traits::worst;
  key_type hi = 0;
#pragma unroll
  for (int g = 0; g < groups; ++g) {
    if ((g + 1) * span <= end && (g > 0 || off == 0)) {  // uniform: every slot holds the row
#pragma unroll
      for (int e = 0; e < vec; ++e) {
        const key_type x = traits::number_key(raw[g * vec + e], largest);
        key[g * vec + e] = x;
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
      }
    } else {
#pragma unroll
      for (int e = 0; e < vec; ++e) {
        const int q = g * span + lane_q + e;
        const bool valid = (g > 0 || q >= off) && q < end;
        const key_type x = valid ? traits::number_key(raw[g * vec + e], largest) : traits::worst;
        key[g * vec + e] = x;
        lo = x < lo ? x : lo;
        hi = valid && x > hi ? x : hi;
      }
    }
  }

  // ---- the threshold: take keys < t_lo, and keys in [t_lo, t_hi] at slots <= t_q -------------
  key_type t_lo;
  key_type t_hi;
  int t_q;
  {
    const int kk = static_cast<int>(k);
    key_type best = lo;  // the lane's
    lo = warp::reduce_min(lo);
    hi = warp::reduce_max(hi);
    // The keys are number_key's, which leaves NaNs outside the numbers' key range: the extremes
    // show whether the row has any, and only then do their keys become the worst.
    const auto numbers = number_key_range<T>(largest);
    if (!numbers.contains(lo) || !numbers.contains(hi)) {  // uniform over the warp
      lo = traits::worst;
      hi = traits::worst;
#pragma unroll
      for (int j = 0; j < Items; ++j) {
        key[j] = numbers.contains(key[j]) ? key[j] : traits::worst;
        lo = key[j] < lo ? key[j] : lo;
      }
      best = lo;
      lo = warp::reduce_min(lo);
    }
    int below = 0;  // keys < lo
    bool found = false;
    int ranked_slot = -1;  // >= 0: the k-th key is lo = hi, at this slot
    if (max_iter <= 0) {
      int left = n;  // keys in [lo, hi]
      if constexpr (LaneBound) {
        if (kk <= warp::size) {
          const key_type bound = binary_search_detail::kth_lane_best(best, kk);
          if (bound < hi) {  // uniform; a bound of the worst key (padding, NaNs) is no bound
            const unsigned mine = binary_search_detail::count_at_most(key, bound);
            const unsigned total = __reduce_add_sync(warp::full_mask, mine);
            hi = bound;  // at least k keys are <= bound
            left = static_cast<int>(total);
            if (total <= unsigned(warp::size)) {
              auto* cand_key = reinterpret_cast<key_type*>(smem[w]);
              auto* cand_slot = reinterpret_cast<int*>(cand_key + warp::size);
              binary_search_detail::nth_candidate(key, bound, mine, total, kk, cand_key, cand_slot,
                                                  lo, ranked_slot);
              hi = lo;
              found = true;
            }
          }
        }
      }
      // Exact: histogram passes while the range holds more than bisect_from keys, then bisection.
      if (!found) {  // uniform over the warp
        unsigned* hist = smem[w];
#pragma unroll
        for (int q = 0; q < bins / warp::size / 4; ++q) {
          reinterpret_cast<uint4*>(hist)[lane * (bins / warp::size / 4) + q] =
              make_uint4(0u, 0u, 0u, 0u);
        }
        if (lane == 0) {
          hist[bins] = 0;
        }
        __syncwarp();
        while (left > binary_search_policy::bisect_from && lo < hi) {
          left = binary_search_detail::narrow_by_histogram<Items, bins>(
              key, traits::worst, Items * warp::size - n, kk, lo, hi, below, hist);
          found = left < 0;
        }
      }
    }
    const int steps = max_iter > 0 ? max_iter : std::numeric_limits<int>::max();
    for (int it = 0; !found && lo < hi && it < steps; ++it) {
      const key_type mid = bisection_mid(lo, hi);
      // Padding slots hold the worst key, > mid.
      const unsigned c =
          __reduce_add_sync(warp::full_mask, binary_search_detail::count_at_most(key, mid));
      found = bisection_step(lo, hi, below, mid, static_cast<int>(c), kk);
    }
    t_lo = lo;
    t_hi = hi;
    t_q = ranked_slot;
    if (ranked_slot < 0 && lo <= hi) {  // fill up from [lo, hi] by position (an exact split
                                        // leaves lo > hi)
      t_q = binary_search_detail::nth_slot(key, off, lo, hi, kk - below);
    }
  }

  // ---- select and write, in position order ---------------------------------------------------
  // The take flags first, as bits (slot g * span + lane_q + e: bit g * vec + e), so that the keys
  // are dead before the stores. After an exact split (t_lo > t_hi) a slot is taken iff its key is
  // < t_lo, which the padding slots' worst key never is; otherwise the tie rule's slot bound and
  // the leading padding slots enter too.
  using take_bits = std::conditional_t<(Items > 32), std::uint64_t, unsigned>;
  take_bits taken = 0;
  if (t_lo > t_hi) {  // uniform over the warp
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      taken |= take_bits(key[j] < t_lo) << j;
    }
  } else {
    // Slot g * span + lane_q + e <= t_q iff g * span + e <= t_lane.
    const int t_lane = t_q - lane_q;
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      const key_type x = key[j];
      // Non-short-circuit operators: selects, not branches.
      bool t = (x < t_lo) | ((x <= t_hi) & ((j / vec) * span + j % vec <= t_lane));
      if (j < vec) {
        t &= lane_q + j >= off;
      }  // leading padding slots
      taken |= take_bits(t) << j;
    }
  }
  // Output ranks: the lane's taken slots per group, one byte per group (four groups a word; a
  // group's sum over the warp is at most span = 128), and one warp scan per word gives every
  // group's rank of the lane's first taken slot and the group's total. The output lists the
  // groups in order, in a group the lanes in order, in a lane its slots in order: position
  // order.
  constexpr int count_words = (groups + 3) / 4;
  unsigned below[count_words];  // the lanes below this one: taken slots per group
  unsigned total[count_words];  // the warp: taken slots per group
#pragma unroll
  for (int c = 0; c < count_words; ++c) {
    unsigned mine = 0;
#pragma unroll
    for (int g = 4 * c; g < groups && g < 4 * c + 4; ++g) {
      mine |= unsigned(__popc(static_cast<unsigned>(taken >> (g * vec)) & 0xfu)) << (8 * (g % 4));
    }
    const unsigned incl = warp::inclusive_sum(mine);
    below[c] = incl - mine;
    total[c] = __shfl_sync(warp::full_mask, incl, warp::size - 1);
  }
  const auto byte_of = [](const unsigned(&words)[count_words], int g) {
    return static_cast<int>((words[g / 4] >> (8 * (g % 4))) & 0xffu);
  };

  // The taken slots are staged in shared memory in output order, and written out with coalesced
  // stores (values read again, a cache hit; for CSR rows the column indices of the taken slots)
  // when the next group could overflow the stage, and at the end.
  T* out_v = dst.values + row * dst.ld_values;
  IndexT* out_i = dst.indices + row * dst.ld_indices;
  const T* row_in = src.values + (first - off);  // slot q: row_in[q]
  const IndexT* row_idx = src.col_idx != nullptr ? src.col_idx + (first - off) : nullptr;
  unsigned* stage = smem[w];
  int written = 0;  // elements stored to the output
  int staged = 0;   // elements in the stage
  const auto flush = [&] {
    __syncwarp();  // the stage is complete
#pragma unroll 1
    for (int t = lane; t < staged; t += warp::size) {
      const int q = static_cast<int>(stage[t]);
      out_v[written + t] = row_in[q];
      out_i[written + t] =
          row_idx != nullptr ? row_idx[q] : static_cast<IndexT>(static_cast<unsigned>(q - off));
    }
    written += staged;
    staged = 0;
    __syncwarp();  // the stage is read before it is filled again
  };
  __syncwarp();  // the search's last histogram reads are done before the stage is filled
#pragma unroll
  for (int g = 0; g < groups; ++g) {
    const int count = byte_of(total, g);
    if (count == 0) {
      continue;
    }  // uniform over the warp
    if (staged + count > stage_entries) {
      flush();
    }  // uniform over the warp
    int rank = staged + byte_of(below, g);
#pragma unroll
    for (int e = 0; e < vec; ++e) {
      // Branch-free: a slot not taken is stored to the lane's word past the stage.
      const bool take = (taken >> (g * vec + e)) & 1u;
      stage[take ? rank : stage_entries + lane] = static_cast<unsigned>(g * span + lane_q + e);
      rank += take ? 1 : 0;
    }
    staged += count;
  }
  flush();
  // ---- pad rows shorter than k ---------------------------------------------------------------
  const T pad = traits::padding(largest);
  for (std::int64_t pos = written + lane; pos < k; pos += warp::size) {
    out_v[pos] = pad;
    out_i[pos] = IndexT{-1};
  }
}

}  // namespace spira::selection
