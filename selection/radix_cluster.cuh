// spira selection: the radix algorithm for rows that fit in the shared memory of one thread-block
// cluster (sm_90 and newer): one cluster per row, the row read from global memory exactly once.
//
// The multi-pass radix select (selection/radix.cuh) re-reads the row from global memory in every
// digit pass and pays a grid barrier or a launch per pass, plus a zeroed global workspace. For a
// few long rows (LLM-style batches: 16 x 131072) those fixed costs dominate. Here a cluster of up
// to radix_cluster_policy::max_cluster blocks holds the row's keys in shared memory, and the blocks
// combine their digit histograms through distributed shared memory with one cluster barrier per
// pass: no global workspace, no atomics in global memory, one launch.
//
// Per row (every block of the cluster runs the same control flow on the same merged numbers):
//  1. Load: each block converts its contiguous chunk of the row to order-preserving keys
//     (selection/keys.hpp) into shared memory, reading global memory once, and finds the chunk's
//     smallest and largest key. The row's extremes (one cluster exchange) give the common prefix
//     of all keys: those bits are skipped, so the digit passes start at the highest bit in which
//     the keys differ (adaptive to narrow value ranges; an all-equal row needs no pass at all).
//  2. Digit passes, a digit at a time (8 bits, radix_cluster_policy::digit_bits) from the
//     top of the differing bits: each block counts the keys that match the prefix fixed so far
//     into a shared histogram (one plain atomic per key: the H200 combines a warp's atomics on
//     one address, so peaked inputs do not serialise), the cluster barrier publishes it, and
//     every block sums the cluster's histograms bin by bin and picks the bin holding the k-th
//     key. A row is finished as soon as the chosen bin holds exactly the elements still needed,
//     or when the last bit is fixed.
//  3. Result: a threshold key K and a count R: the row's selection is every key < K plus the
//     first R keys == K in position order (the tie rule). Each warp ranks its elements with
//     ballots, a block scan ranks the warps' tiles in position order, and one more cluster
//     exchange gives the counts of the blocks before; every selected element is written at its
//     rank, so the output lists the selection by increasing position, independent of scheduling.
//
// Histogram counts are integers, so their atomic accumulation is order independent: the output is
// deterministic. Learned from RadiK (../shared/papers/003_11c2643dfc496ce3.txt: MSD radix select,
// hierarchical counting); the cluster form is specific to this implementation.
#pragma once

#include "selection/keys.hpp"
#include "selection/warp.cuh"

#include <cub/block/block_scan.cuh>
#include <cooperative_groups.h>

#include <cstdint>
#include <type_traits>

namespace spira::selection {

/// Tuning of the cluster radix kernel.
struct radix_cluster_policy {
  /// Block sizes: a batch whose clusters all fit the device at once with one block of
  /// wide_threads per multiprocessor runs so (more warps per row: the passes are bound by the
  /// latency of each warp's walk over its keys); a larger batch runs two blocks of
  /// narrow_threads per multiprocessor. A block takes 64 registers per thread either way, so a
  /// wide block fills a register file: with clusters of 8, which stay within one GPC, only 15
  /// rows of 131,072 fit the H200 at once in wide blocks, and the 16th ran as a second wave.
  static constexpr int wide_threads = 1024;
  static constexpr int narrow_threads = 512;
  static constexpr int min_blocks(int threads) { return threads == narrow_threads ? 2 : 1; }
  /// Blocks per cluster at most: the portable cluster size, schedulable on every sm_90 part.
  static constexpr int max_cluster = 8;
  /// Digit width. 11-bit digits finish a uniform float row of 131,072 in two passes instead of
  /// three, but every block reads every other block's 2,048 bins per pass: with plain-atomic
  /// counting they were as fast for 16 rows of 131,072 and 7% slower for 64
  /// (bench/results/radix-cluster-counting-2026-11-22/; in 1,024-thread blocks they were 11-14%
  /// slower before).
  static constexpr int digit_bits = 8;
  /// Shared memory for one block's keys.
  static constexpr int key_bytes = 64 * 1024;
  /// Elements one block holds.
  template <class Key>
  static constexpr int capacity = key_bytes / static_cast<int>(sizeof(Key));
  /// Dynamic shared memory per block at most: the keys (the launcher sizes it for the longest
  /// chunk). Later passes scan the whole chunk again: a shared candidate buffer of the keys that
  /// match the first digit (RadiK's write buffer) cost more to fill than the scans it saved, once
  /// counting took plain atomics (bench/results/radix-cluster-counting-2026-11-22/).
  static constexpr int dynamic_smem = key_bytes;
  /// The cluster form is taken while the batch has at most this many blocks per multiprocessor.
  /// Beyond, the multi-pass form, which packs short rows densely, is faster: on
  /// the H200 (radix forced; bench/results/select_k-2026-11-21.json without the cluster form,
  /// -v2.json with it for every batch) 16,384 rows of 256 to 2,048 took 1.4-2.2x longer in the
  /// cluster form, while 1,024 x 2,048 (8 waves) and 16 or 64 rows of 131,072 took 15-56% less.
  static constexpr int max_waves = 8;
};

/// The longest row the cluster form takes for value type T.
template <class T>
constexpr std::int64_t radix_cluster_max_length()
{
  return std::int64_t(radix_cluster_policy::max_cluster) *
         radix_cluster_policy::capacity<typename key_traits<T>::key_type>;
}

namespace detail_cluster {

/// atomicMin (Max = false) or atomicMax (Max = true) on a key (std::uint64_t is not the
/// unsigned long long of the atomics' overloads).
template <bool Max, class Key>
__device__ __forceinline__ void atomic_bound(Key* p, Key v)
{
  using word = std::conditional_t<sizeof(Key) == 8, unsigned long long, unsigned>;
  auto* q = reinterpret_cast<word*>(p);
  if constexpr (Max) {
    atomicMax(q, static_cast<word>(v));
  } else {
    atomicMin(q, static_cast<word>(v));
  }
}

}  // namespace detail_cluster

/// One cluster per row; gridDim.x = rows x cluster size, blockDim.x = Threads (wide_threads or
/// narrow_threads). A block's chunk holds at most `chunk_capacity` elements (a multiple of
/// Threads, at most capacity<key_type>; the launcher checks), and the dynamic shared memory holds
/// chunk_capacity keys.
template <class T, class IndexT, int Threads>
__global__ void __launch_bounds__(Threads, radix_cluster_policy::min_blocks(Threads))
  radix_cluster_kernel(row_source<T, IndexT> src, row_sink<T, IndexT> dst, std::int64_t k,
                       bool largest, int chunk_capacity)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  using traits = key_traits<T>;
  using key_type = typename traits::key_type;
  using policy = radix_cluster_policy;
  constexpr int threads = Threads;
  constexpr int warps = threads / warp::size;
  constexpr int cap = policy::template capacity<key_type>;
  constexpr int items = cap / threads;
  constexpr int tiles = items * warps;  // (item, warp) tiles of 32 positions
  constexpr int digit_bits = policy::digit_bits;
  constexpr int bins = 1 << digit_bits;
  static_assert(bins <= threads, "thread t merges and scans bin t");
  constexpr int word_bits = static_cast<int>(sizeof(key_type)) * 8;
  static_assert(cap % threads == 0 && tiles <= threads);
  static_assert(cap < (1 << 16), "per-block counts are packed in 16 bits");
  using block_scan = cub::BlockScan<unsigned, threads>;

  extern __shared__ __align__(16) unsigned char radix_cluster_smem[];
  key_type* keys = reinterpret_cast<key_type*>(radix_cluster_smem);
  // This block's counts, one buffer per pass parity.
  __shared__ unsigned hist[2][bins];
  __shared__ unsigned tile_rank[tiles];       // packed (== K) << 16 | (< K), then their prefixes
  __shared__ typename block_scan::TempStorage scan_tmp;
  __shared__ key_type block_lo, block_hi, row_lo, row_hi;
  __shared__ unsigned block_total;            // packed like tile_rank, read by later ranks
  __shared__ unsigned before_less, before_eq;
  __shared__ int pick_digit;
  __shared__ unsigned pick_below, pick_count;

  cg::cluster_group cluster = cg::this_cluster();
  const unsigned csize = cluster.num_blocks();
  const unsigned rank = cluster.block_rank();
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = warp::lane_id();
  const int warp_id = tid / warp::size;
  const std::int64_t row = blockIdx.x / csize;

  const std::int64_t n = src.length(row);
  const std::int64_t first = src.begin(row);
  const std::int64_t chunk = (n + csize - 1) / csize;
  const std::int64_t begin = std::min<std::int64_t>(n, rank * chunk);
  const int len = static_cast<int>(std::min<std::int64_t>(n, begin + chunk) - begin);
  const T* in = src.values + first + begin;
  const int used = chunk_capacity / threads;  // item slots per thread that can hold elements

  // ---- 1. load the chunk as keys; the row's extremes --------------------------------------------
  if (tid == 0) {
    block_lo = traits::worst;
    block_hi = 0;
  }
  __syncthreads();
  key_type lo = traits::worst;
  key_type hi = 0;
  // In groups of load_group elements per thread, every load of a group issued before the first
  // is used (positions past the chunk re-read its last element): a thread keeps load_group loads
  // in flight instead of one per memory latency.
  constexpr int load_group = items < 16 ? items : 16;
  static_assert(items % load_group == 0);
  if (len > 0) {  // uniform over the block
#pragma unroll
    for (int g = 0; g < items; g += load_group) {
      if (g >= used) { break; }  // uniform: slots past the chunk capacity are empty
      T raw[load_group];
#pragma unroll
      for (int j = 0; j < load_group; ++j) {
        const int i = (g + j) * threads + tid;
        raw[j] = in[i < len ? i : len - 1];
      }
#pragma unroll
      for (int j = 0; j < load_group; ++j) {
        const int i = (g + j) * threads + tid;
        if (i < len) {
          const key_type key = traits::to_key(raw[j], largest);
          keys[i] = key;
          lo = key < lo ? key : lo;
          hi = key > hi ? key : hi;
        }
      }
    }
  }
  lo = warp::reduce_min(lo);
  hi = warp::reduce_max(hi);
  if (lane == 0) {
    detail_cluster::atomic_bound<false>(&block_lo, lo);
    detail_cluster::atomic_bound<true>(&block_hi, hi);
  }
  __syncthreads();
  cluster.sync();
  if (warp_id == 0) {
    lo = traits::worst;
    hi = 0;
    if (lane < static_cast<int>(csize)) {
      lo = *cluster.map_shared_rank(&block_lo, lane);
      hi = *cluster.map_shared_rank(&block_hi, lane);
    }
    lo = warp::reduce_min(lo);
    hi = warp::reduce_max(hi);
    if (lane == 0) {
      row_lo = lo;
      row_hi = hi;
    }
  }
  __syncthreads();

  // ---- 2. the threshold: every key < K, then the first R keys == K by position --------------
  key_type K = traits::worst;
  std::int64_t R = n;  // n <= k: the whole row
  if (n > k) {
    lo = row_lo;
    hi = row_hi;
    K = lo;
    R = k;  // an all-equal row: its first k elements
    if (lo != hi) {
      // Bits above `top` are fixed in `prefix`; `remaining` keys are still to be taken among
      // those that match it.
      int top = 64 - __clzll(static_cast<unsigned long long>(lo ^ hi));  // bit width of lo ^ hi
      key_type prefix = top >= word_bits ? key_type(0) : key_type((lo >> top) << top);
      std::int64_t remaining = k;
      for (int pass = 0;; ++pass) {
        const int shift = top > digit_bits ? top - digit_bits : 0;
        const unsigned digit_mask = (1u << (top - shift)) - 1u;
        unsigned* h = hist[pass & 1];
        // hist[pass & 1] was last read by the other blocks in pass - 2, which they finished
        // before the cluster barrier of pass - 1.
        if (tid < bins) { h[tid] = 0; }
        __syncthreads();
        if (pass == 0) {  // every key shares the common prefix
#pragma unroll
          for (int j = 0; j < items; ++j) {
            if (j >= used) { break; }
            const int i = j * threads + tid;
            const key_type key = i < len ? keys[i] : key_type(0);
            warp::count_in_bin(h, static_cast<unsigned>(key >> shift) & digit_mask, i < len);
          }
        } else {
#pragma unroll
          for (int j = 0; j < items; ++j) {
            if (j >= used) { break; }
            const int i = j * threads + tid;
            const key_type key = i < len ? keys[i] : key_type(0);
            const bool match = i < len && (key >> top) == (prefix >> top);
            warp::count_in_bin(h, static_cast<unsigned>(key >> shift) & digit_mask, match);
          }
        }
        __syncthreads();
        cluster.sync();
        {
          // Thread t sums bin t over the cluster (all remote loads in flight at once), a block
          // scan ranks the sums, and the thread whose bin holds the running count `remaining`
          // picks the digit.
          unsigned mine = 0;
#pragma unroll
          for (int r = 0; r < policy::max_cluster; ++r) {
            if (r < static_cast<int>(csize) && tid < bins) {
              mine += cluster.map_shared_rank(h, r)[tid];
            }
          }
          unsigned below = 0;
          block_scan(scan_tmp).ExclusiveSum(mine, below);
          const auto want = static_cast<unsigned>(remaining);
          if (below < want && below + mine >= want) {
            pick_digit = tid;
            pick_below = below;
            pick_count = mine;
          }
        }
        __syncthreads();
        prefix |= key_type(pick_digit) << shift;
        remaining -= pick_below;
        if (pick_count == remaining) {  // the bin is taken whole: every key <= its last key
          K = prefix | (shift > 0 ? key_type((key_type(1) << shift) - 1) : key_type(0));
          R = n;
          break;
        }
        if (shift == 0) {  // every bit fixed: K itself, and the first `remaining` copies of it
          K = prefix;
          R = remaining;
          break;
        }
        top = shift;
      }
    }
  }

  // ---- 3. rank and write in position order -------------------------------------------------------
  const unsigned below_me = warp::lanes_below();
  // Usually the last bin is taken whole (R = n): every key <= K is selected, which one ballot per
  // tile ranks; keys == K are only told apart when R cuts among them.
  const bool whole = R >= n;
#pragma unroll
  for (int j = 0; j < items; ++j) {
    if (j >= used) { break; }  // uniform: slots past the chunk capacity are empty
    const int i = j * threads + tid;
    const key_type key = i < len ? keys[i] : key_type(0);
    const unsigned less = __ballot_sync(warp::full_mask, i < len && (whole ? key <= K : key < K));
    const unsigned eq = whole ? 0u : __ballot_sync(warp::full_mask, i < len && key == K);
    if (lane == 0) {
      tile_rank[j * warps + warp_id] = (unsigned(__popc(eq)) << 16) | unsigned(__popc(less));
    }
  }
  __syncthreads();
  {
    // Tiles in (item, warp) order are in position order: position j * threads + warp * 32 + lane.
    const unsigned v = tid < used * warps ? tile_rank[tid] : 0u;
    unsigned exclusive = 0;
    unsigned total = 0;
    block_scan(scan_tmp).ExclusiveSum(v, exclusive, total);
    if (tid < used * warps) { tile_rank[tid] = exclusive; }
    if (tid == 0) { block_total = total; }
  }
  __syncthreads();
  cluster.sync();
  if (warp_id == 0) {
    unsigned t = 0;
    if (lane < static_cast<int>(rank)) { t = *cluster.map_shared_rank(&block_total, lane); }
    const unsigned less = __reduce_add_sync(warp::full_mask, t & 0xffffu);
    const unsigned eq = __reduce_add_sync(warp::full_mask, t >> 16);
    if (lane == 0) {
      before_less = less;
      before_eq = eq;
    }
  }
  __syncthreads();
  T* out_v = dst.values + row * dst.ld_values;
  IndexT* out_i = dst.indices + row * dst.ld_indices;
#pragma unroll
  for (int j = 0; j < items; ++j) {
    if (j >= used) { break; }  // uniform: slots past the chunk capacity are empty
    const int i = j * threads + tid;
    const key_type key = i < len ? keys[i] : key_type(0);
    const bool is_less = i < len && (whole ? key <= K : key < K);
    const bool is_eq = !whole && i < len && key == K;
    const unsigned less = __ballot_sync(warp::full_mask, is_less);
    const unsigned eq = whole ? 0u : __ballot_sync(warp::full_mask, is_eq);
    if (is_less || is_eq) {
      const unsigned tile = tile_rank[j * warps + warp_id];
      const std::int64_t less_rank = before_less + (tile & 0xffffu) + __popc(less & below_me);
      const std::int64_t eq_rank = before_eq + (tile >> 16) + __popc(eq & below_me);
      if (is_less || eq_rank < R) {
        const std::int64_t pos = less_rank + (eq_rank < R ? eq_rank : R);
        // The value from its key: no read of the row again, except for zeros and NaNs (whose
        // keys do not tell their bits).
        out_v[pos] = traits::exact_key(key, largest) ? traits::from_key(key, largest) : in[i];
        out_i[pos] = src.index_at(first, begin + i);
      }
    }
  }
  // Padding of rows shorter than k, by the cluster's first block.
  if (rank == 0) {
    const T pad = traits::padding(largest);
    for (std::int64_t pos = (n < k ? n : k) + tid; pos < k; pos += threads) {
      out_v[pos] = pad;
      out_i[pos] = IndexT{-1};
    }
  }
  // block_total (and the histograms) may still be read by the cluster's other blocks: a block's
  // shared memory must outlive those reads.
  cluster.sync();
#else
  __trap();  // the launcher only uses this kernel on devices and binaries of sm_90 or newer
#endif
}

}  // namespace spira::selection
