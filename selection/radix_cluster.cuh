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
//  1. Load: each block converts its contiguous chunk of the row (whole quads of four elements,
//     read with one vector load where the row is aligned) to order-preserving keys
//     (selection/keys.hpp) in shared memory, reading global memory once, and counts the keys'
//     first digit (their top 8 bits) and the chunk's smallest and largest key on the way.
//  2. Digit passes: after each count the cluster barrier publishes the blocks' histograms, and
//     every block sums them bin by bin through distributed shared memory and picks the bin
//     holding the k-th key. The next digit (8 bits, radix_cluster_policy::digit_bits) starts at
//     the highest bit in which the keys still in question can differ: those of the chosen bin
//     within the row's extremes, so values clustered near the k-th take no pass for their
//     common bits, and an all-equal row takes only the first. Counting is one plain shared
//     atomic per key (the H200 combines a warp's atomics on one address, so peaked inputs do not
//     serialise). A row is finished as soon as the chosen bin holds exactly the elements still
//     needed, when the keys in question are all equal, or when the last bit is fixed.
//  3. Result: a threshold key K and a count R: the row's selection is every key < K plus the
//     first R keys == K in position order (the tie rule). The picks also sum the counts of the
//     cluster's earlier blocks, which place this block's selection in the output without another
//     exchange; a count sweep and a warp scan place each warp, and every selected element is
//     written at its rank, so the output lists the selection by increasing position,
//     independent of scheduling.
//
// Histogram counts are integers, so their atomic accumulation is order independent: the output is
// deterministic. Learned from RadiK (../shared/papers/003_11c2643dfc496ce3.txt: MSD radix select,
// hierarchical counting); the cluster form is specific to this implementation.
#pragma once

#include "selection/keys.hpp"
#include "selection/warp.cuh"

#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

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
  /// (measured with commit 5437801, its bench/results; in 1,024-thread blocks they were 11-14%
  /// slower before).
  static constexpr int digit_bits = 8;
  /// Keys a thread reads at once (one vector access of shared or global memory).
  static constexpr int vec = 4;
  /// Shared memory for one block's keys.
  static constexpr int key_bytes = 64 * 1024;
  /// Elements one block holds.
  template <class Key>
  static constexpr int capacity = key_bytes / static_cast<int>(sizeof(Key));
  /// Dynamic shared memory per block at most: the keys (the launcher sizes it for the longest
  /// chunk). Later passes scan the whole chunk again: a shared candidate buffer of the keys that
  /// match the first digit (RadiK's write buffer) cost more to fill than the scans it saved, once
  /// counting took plain atomics (measured with commit 5437801, its bench/results).
  static constexpr int dynamic_smem = key_bytes;
  /// The cluster form is taken while the batch has at most this many blocks per multiprocessor.
  /// Beyond, the multi-pass form, which packs short rows densely, is faster: on the H200 (radix
  /// forced; bench/results/select_k-2026-11-21.json and -v2.json of commit 0c1c71c and after,
  /// without and with the cluster form for every batch) 16,384 rows of 256 to 2,048 took
  /// 1.4-2.2x longer in the cluster form, while 1,024 x 2,048 (8 waves) and 16 or 64 rows of
  /// 131,072 took 15-56% less.
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
/// 4 x Threads, at most capacity<key_type>; the launcher checks), and the dynamic shared memory
/// holds chunk_capacity keys.
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
  using wide_count = unsigned long long;  // (count << 32) | count in the earlier blocks
  constexpr int threads = Threads;
  constexpr int warps = threads / warp::size;
  constexpr int vec = radix_cluster_policy::vec;
  constexpr int cap = policy::template capacity<key_type>;
  constexpr int slots = cap / (vec * threads);  // quads per thread at most
  constexpr int digit_bits = policy::digit_bits;
  constexpr int bins = 1 << digit_bits;
  constexpr int bin_warps = bins / warp::size;
  constexpr int key_bits = traits::bits;
  constexpr int first_shift = key_bits - digit_bits;
  static_assert(cap % (vec * threads) == 0 && bin_warps < warps);
  static_assert(cap < (1 << 16), "per-block counts are packed in 16 bits");
  // Four consecutive keys (values): one vector access of shared (global) memory.
  struct alignas(vec * sizeof(key_type)) key_quad {
    key_type v[vec];
  };
  struct alignas(vec * sizeof(T)) value_quad {
    T v[vec];
  };
  // Quads loaded before the first is converted: 64 bytes in flight per thread and group.
  constexpr int load_group =
      std::max(1, std::min(slots, 64 / static_cast<int>(sizeof(value_quad))));
  static_assert(slots % load_group == 0);

  extern __shared__ __align__(32) unsigned char radix_cluster_smem[];
  key_quad* keys = reinterpret_cast<key_quad*>(radix_cluster_smem);
  // This block's counts, one buffer per pass parity.
  __shared__ unsigned hist[2][bins];
  __shared__ wide_count scan_total[bin_warps];
  __shared__ unsigned warp_count[warps];  // packed (== K) << 16 | (< K)
  __shared__ key_type block_lo, block_hi, row_lo, row_hi;
  __shared__ int pick_digit;
  __shared__ unsigned pick_below, pick_count, pick_before_below, pick_before_count;

  cg::cluster_group cluster = cg::this_cluster();
  const unsigned csize = cluster.num_blocks();
  const unsigned rank = cluster.block_rank();
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = warp::lane_id();
  const int warp_id = tid / warp::size;
  const std::int64_t row = blockIdx.x / csize;

  const std::int64_t n = src.length(row);
  const std::int64_t first = src.begin(row);
  // Chunks of whole quads: a vector load of the row is aligned in every block or in none.
  const std::int64_t chunk = ((n + csize - 1) / csize + vec - 1) / vec * vec;
  const std::int64_t begin = std::min<std::int64_t>(n, rank * chunk);
  const int len = static_cast<int>(std::min<std::int64_t>(n, begin + chunk) - begin);
  const T* in = src.values + first + begin;
  // Warp w owns the quads [w * used, (w + 1) * used) x 32 of the chunk, lane-interleaved: quad
  // slot j of a lane is quad (w * used + j) * 32 + lane, positions 4 x that to 4 x that + 3.
  const int used = chunk_capacity / (vec * threads);
  const auto quad_of = [&](int j) { return (warp_id * used + j) * warp::size + lane; };
  // f(q, keys[q]) for this thread's quads in slot order (the sweeps after the load).
  const auto for_each_quad = [&](auto&& f) {
#pragma unroll
    for (int j = 0; j < slots; ++j) {
      if (j >= used) {
        break;
      }  // uniform: slots past the chunk capacity are empty
      const int q = quad_of(j);
      f(q, keys[q]);
    }
  };

  // ---- 1. load the chunk as keys, counting the first digit; the chunk's extremes ---------------
  if (tid < bins) {
    hist[0][tid] = 0;
    hist[1][tid] = 0;
  }
  if (tid == 0) {
    block_lo = traits::worst;
    block_hi = 0;
  }
  __syncthreads();
  key_type lo = traits::worst;
  key_type hi = 0;
  const bool aligned = reinterpret_cast<std::uintptr_t>(in) % sizeof(value_quad) == 0;
#pragma unroll
  for (int g = 0; g < slots; g += load_group) {
    if (g >= used) {
      break;
    }  // uniform: slots past the chunk capacity are empty
    value_quad raw[load_group];
#pragma unroll
    for (int j = 0; j < load_group; ++j) {
      if (g + j >= used) {
        break;
      }  // uniform
      const int p = quad_of(g + j) * vec;
      if (aligned && p + vec <= len) {
        raw[j] = *reinterpret_cast<const value_quad*>(in + p);
      } else {
#pragma unroll
        for (int e = 0; e < vec; ++e) {
          raw[j].v[e] = p + e < len ? in[p + e] : T{};
        }
      }
    }
#pragma unroll
    for (int j = 0; j < load_group; ++j) {
      if (g + j >= used) {
        break;
      }
      const int q = quad_of(g + j);
      key_quad kq;
#pragma unroll
      for (int e = 0; e < vec; ++e) {
        const bool valid = q * vec + e < len;
        const key_type key = valid ? traits::to_key(raw[j].v[e], largest) : traits::worst;
        kq.v[e] = key;
        if (valid) {
          lo = key < lo ? key : lo;
          hi = key > hi ? key : hi;
          atomicAdd(&hist[0][static_cast<unsigned>(key >> first_shift)], 1u);
        }
      }
      keys[q] = kq;
    }
  }
  lo = warp::reduce_min(lo);
  hi = warp::reduce_max(hi);
  if (lane == 0) {
    detail_cluster::atomic_bound<false>(&block_lo, lo);
    detail_cluster::atomic_bound<true>(&block_hi, hi);
  }
  __syncthreads();
  cluster.sync();  // the first digit's histograms and the chunks' extremes are published

  // ---- 2. the threshold: every key < K, then the first R keys == K by position --------------
  // Each pass: every block sums the cluster's histograms bin by bin (thread t: bin t, all remote
  // loads in flight at once), together with the counts of the blocks before it in the cluster
  // (which give this block's place in the output without another exchange); a scan over the
  // bins finds the bin holding the `remaining`-th key.
  const auto pick = [&](int pass, unsigned remaining) {
    const unsigned* h = hist[pass & 1];
    wide_count mine = 0;
    if (tid < bins) {
#pragma unroll
      for (int r = 0; r < policy::max_cluster; ++r) {
        if (r < static_cast<int>(csize)) {
          const unsigned c = cluster.map_shared_rank(h, r)[tid];
          mine += (wide_count(c) << 32) | (r < static_cast<int>(rank) ? c : 0u);
        }
      }
      // The other buffer was last read by the cluster in pass - 1, before this pass's barrier.
      hist[(pass + 1) & 1][tid] = 0;
    }
    wide_count inclusive = mine;
    if (warp_id < bin_warps) {
      inclusive = warp::inclusive_sum(inclusive);
      if (lane == warp::size - 1) {
        scan_total[warp_id] = inclusive;
      }
    } else if (pass == 0 && warp_id == bin_warps) {  // the row's extremes
      key_type l = traits::worst;
      key_type u = 0;
      if (lane < static_cast<int>(csize)) {
        l = *cluster.map_shared_rank(&block_lo, lane);
        u = *cluster.map_shared_rank(&block_hi, lane);
      }
      l = warp::reduce_min(l);
      u = warp::reduce_max(u);
      if (lane == 0) {
        row_lo = l;
        row_hi = u;
      }
    }
    __syncthreads();
    if (tid < bins) {
      wide_count below = inclusive - mine;
      for (int w = 0; w < warp_id; ++w) {
        below += scan_total[w];
      }
      const auto below_all = static_cast<unsigned>(below >> 32);
      const auto count_all = static_cast<unsigned>(mine >> 32);
      if (below_all < remaining && below_all + count_all >= remaining) {
        pick_digit = tid;
        pick_below = below_all;
        pick_count = count_all;
        pick_before_below = static_cast<unsigned>(below);
        pick_before_count = static_cast<unsigned>(mine);
      }
    }
    __syncthreads();
  };

  key_type K = traits::worst;  // n <= k: every element
  bool whole = true;           // every key <= K is selected (else the first R keys == K)
  unsigned R = 0;
  unsigned before_less = static_cast<unsigned>(begin);  // selected keys in the earlier blocks
  unsigned before_eq = 0;
  if (n > k) {
    auto remaining = static_cast<unsigned>(k);
    key_type prefix = 0;  // the keys in question: key >> top == prefix >> top
    int top = key_bits;
    int shift = first_shift;
    before_less = 0;
    for (int pass = 0;; ++pass) {
      if (pass > 0) {
        unsigned* h = hist[pass & 1];
        const unsigned digit_mask = (1u << (top - shift)) - 1u;
        const key_type want = prefix >> top;
        for_each_quad([&](int q, const key_quad& kq) {
#pragma unroll
          for (int e = 0; e < vec; ++e) {
            const key_type key = kq.v[e];
            if (q * vec + e < len && (key >> top) == want) {
              atomicAdd(&h[static_cast<unsigned>(key >> shift) & digit_mask], 1u);
            }
          }
        });
        __syncthreads();
        cluster.sync();
      }
      pick(pass, remaining);
      prefix |= key_type(pick_digit) << shift;
      remaining -= pick_below;
      before_less += pick_before_below;
      const key_type low_ones = shift > 0 ? key_type((key_type(1) << shift) - 1) : key_type(0);
      if (pick_count == remaining) {  // the bin is taken whole: every key <= its last key
        K = prefix | low_ones;
        before_less += pick_before_count;
        break;
      }
      // The next digit ends at the highest bit in which the keys still in question can differ
      // (radix_narrow: values clustered near the k-th take no pass for their common bits).
      top = radix_narrow(prefix, shift, row_lo, row_hi);
      if (top == 0) {  // every key in question equals K: the first `remaining` of them
        K = prefix;
        whole = false;
        R = remaining;
        before_eq = pick_before_count;
        break;
      }
      shift = top > digit_bits ? top - digit_bits : 0;
    }
  }
  // This block reads no other block's shared memory from here on; its own histograms may still be
  // read until the cluster's last pick, so its exit waits on the barrier it arrives at now.
  auto arrived = cluster.barrier_arrive();

  // ---- 3. rank and write in position order
  // ------------------------------------------------------- Position order is (warp, slot, lane,
  // element): each warp counts its selected keys, the warps before it give its start, and it walks
  // its tiles of 32 quads keeping running counts.
  const auto selected = [&](key_type key, int p, bool& less, bool& eq) {
    less = p < len && (whole ? key <= K : key < K);
    eq = !whole && p < len && key == K;
  };
  {
    unsigned c_less = 0;
    unsigned c_eq = 0;
    for_each_quad([&](int q, const key_quad& kq) {
#pragma unroll
      for (int e = 0; e < vec; ++e) {
        bool less, eq;
        selected(kq.v[e], q * vec + e, less, eq);
        c_less += less;
        c_eq += eq;
      }
    });
    const unsigned total = __reduce_add_sync(warp::full_mask, (c_eq << 16) | c_less);
    if (lane == 0) {
      warp_count[warp_id] = total;
    }
  }
  __syncthreads();
  const unsigned earlier =
      __reduce_add_sync(warp::full_mask, lane < warp_id ? warp_count[lane] : 0u);
  unsigned less_run = before_less + (earlier & 0xffffu);
  unsigned eq_run = before_eq + (earlier >> 16);
  T* out_v = dst.values + row * dst.ld_values;
  IndexT* out_i = dst.indices + row * dst.ld_indices;
  for_each_quad([&](int q, const key_quad& kq) {
    bool less[vec], eq[vec];
    unsigned mine = 0;  // packed like warp_count
#pragma unroll
    for (int e = 0; e < vec; ++e) {
      selected(kq.v[e], q * vec + e, less[e], eq[e]);
      mine += (unsigned(eq[e]) << 16) | unsigned(less[e]);
    }
    if (!__any_sync(warp::full_mask, mine != 0)) {
      return;
    }  // uniform over the warp
    // This lane's place in the tile: the keys of the lanes below (an exclusive warp scan).
    const unsigned inclusive = warp::inclusive_sum(mine);
    const unsigned tile = __shfl_sync(warp::full_mask, inclusive, warp::size - 1);
    unsigned less_before = less_run + ((inclusive - mine) & 0xffffu);
    unsigned eq_before = eq_run + ((inclusive - mine) >> 16);
    less_run += tile & 0xffffu;
    eq_run += tile >> 16;
    // Every read of the quad's selected elements is issued before the first write: a CSR row's
    // column indices (and the value of a zero or NaN) cost one memory latency per quad, not one
    // per element.
    bool take[vec];
    std::int64_t pos[vec];
    T value[vec];
    IndexT index[vec];
#pragma unroll
    for (int e = 0; e < vec; ++e) {
      take[e] = less[e] || (eq[e] && eq_before < R);
      pos[e] = less_before + (eq_before < R ? eq_before : R);
      less_before += less[e];
      eq_before += eq[e];
      if (take[e]) {
        const int p = q * vec + e;
        const key_type key = kq.v[e];
        // The value from its key: no read of the row again, except for zeros and NaNs (whose
        // keys do not tell their bits).
        value[e] = traits::exact_key(key, largest) ? traits::from_key(key, largest) : in[p];
        index[e] = src.index_at(first, begin + p);
      }
    }
#pragma unroll
    for (int e = 0; e < vec; ++e) {
      if (take[e]) {
        out_v[pos[e]] = value[e];
        out_i[pos[e]] = index[e];
      }
    }
  });
  // Padding of rows shorter than k, by the cluster's first block.
  if (rank == 0) {
    const T pad = traits::padding(largest);
    for (std::int64_t pos = (n < k ? n : k) + tid; pos < k; pos += threads) {
      out_v[pos] = pad;
      out_i[pos] = IndexT{-1};
    }
  }
  cluster.barrier_wait(std::move(arrived));
#else
  __trap();  // the launcher only uses this kernel on devices and binaries of sm_90 or newer
#endif
}

}  // namespace spira::selection
