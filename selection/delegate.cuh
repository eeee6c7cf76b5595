// spira selection: delegate-centric top-k of very long rows (Dr. Top-k, Gaihre et al., SC'21:
// ../shared/papers/002_4b99e314b8542618.txt). The kernels of select_algo::delegate; the host side
// that sequences them and runs both top-k steps with the radix select is select_vector_cuda.cu.
//
// Everything works on the order-preserving keys of selection/keys.hpp and on the total order
// (key, position) of a row, so every rule below is exact, ties and NaN included:
//  * the row is cut into sub-ranges of `alpha` elements; the delegates of a sub-range are its
//    beta best elements (Rule 1 with beta = 1, the "beta delegate" of section 4.3 otherwise),
//    written to the delegate vector D in position order, sub-range after sub-range, so D is sorted
//    by position and the rank order inside D is the rank order inside the row;
//  * the first top-k selects the k best elements of D; its worst element t is the threshold. The k
//    best elements of D are elements of the row, so the row's k-th element is no worse than t and
//    only elements <= t can be selected (Rule 2: delegate top-k filtering);
//  * a sub-range whose beta-th delegate is worse than t contributes exactly its delegates <= t:
//    every other element of it is worse than its beta-th delegate (Rule 3). Only the sub-ranges
//    whose beta delegates are all <= t ("full" sub-ranges, at most k / beta of them) are read
//    again (in pieces of at most 1024 elements, a warp each), and only their elements <= t kept;
//  * the candidates (delegates <= t of the other sub-ranges, elements <= t of the full ones) are
//    written in position order, at offsets from a prefix sum over sub-ranges (no atomic order),
//    and the second top-k selects the k best of them (the host sequence in select_vector_cuda.cu
//    sizes the candidate vector before the count is known and redoes a row that overflows it).
//
// Delegate construction reads the row once, coalesced, in one of two forms (section 5.3):
//  * sub-ranges up to delegate_policy::tile_max_subrange: a block loads a tile of whole
//    sub-ranges into shared memory with 16-byte loads, each thread scans a run of consecutive
//    elements of it (strided computing), dismissing a whole vector with one value comparison,
//    and the runs of a sub-range merge by shuffles and shared memory (delegate_tile_kernel);
//  * longer sub-ranges: a warp per sub-range, lanes reading consecutive 16-byte vectors with the
//    next ones in flight, dismissing a vector with one value comparison against a bound the warp
//    shares, then a butterfly merge of the lanes' best lists (delegate_warp_kernel).
#pragma once

#include "selection/dispatch.hpp"
#include "selection/keys.hpp"
#include "selection/warp.cuh"

#include <cuda_fp16.h>
#include <cub/block/block_reduce.cuh>

#include <cstdint>
#include <type_traits>

namespace spira::selection {

/// Tuning of the delegate algorithm.
struct delegate_policy {
  /// Delegates per sub-range (Dr. Top-k's beta).
  static constexpr int beta = delegate_beta;
  /// Threads of the warp-per-sub-range and warp-per-piece kernels.
  static constexpr int block_threads = 256;
  /// Loads in flight per lane in the warp-per-sub-range (scalar) and warp-per-piece kernels.
  static constexpr int unroll = 8;
  /// Threads of delegate_tile_kernel.
  static constexpr int tile_threads = 256;
  /// Consecutive elements a tile-kernel thread scans: a divisor of every sub-range length (>= 32),
  /// and a tile of at most 32 KiB.
  template <class T>
  static constexpr int run = sizeof(T) <= 4 ? 32 : 16;
  /// Elements of a construction tile.
  template <class T>
  static constexpr int tile = tile_threads * run<T>;
  /// Sub-ranges up to this length are built by delegate_tile_kernel (a tile of whole sub-ranges
  /// per block), longer ones by delegate_warp_kernel (a warp streaming each sub-range). Measured
  /// on the H200, n = 2^28 floats, construction alone (docs/selection.md, "delegate"): the tile
  /// kernel takes 0.53-0.58 ms for alpha = 32 to 512 where the previous lane- and warp-per-sub-
  /// range kernels took 0.76-0.90 ms; the warp kernel took 0.55, 0.39 and 0.28 ms for alpha =
  /// 2048, 8192 and 65536 where the tile kernel takes 0.59, 0.60 and 0.41 ms (0.27 ms at 8192
  /// since its warp-shared bound; end to end it is still 1.18-1.34x slower at 512, equal at 1024).
  /// The tile kernel's branch-free insertion came after these measurements and only made it
  /// faster (0.45 ms at alpha = 512); longer sub-ranges on the tile kernel were not measured.
  static constexpr std::int64_t tile_max_subrange = 1024;
  /// 16-byte vectors in flight per lane in delegate_warp_kernel.
  static constexpr int vector_unroll = 4;
  /// Full sub-ranges are read again in pieces of this many elements, a warp each.
  static constexpr std::int64_t piece = 1024;
};

/// The threshold t of Rule 2: an element of the row, as (key, position).
template <class Key>
struct delegate_threshold {
  Key key;
  std::int64_t pos;
};

template <class Key>
__device__ __forceinline__ bool ranks_before(Key ka, std::int64_t pa, Key kb, std::int64_t pb)
{
  return ka < kb || (ka == kb && pa < pb);
}

/// A shuffle for any value type of select_k (binary16 travels as its bits).
template <class T>
__device__ __forceinline__ T shfl_xor_value(T v, int mask)
{
  if constexpr (std::is_same_v<T, half>) {
    const unsigned b = __shfl_xor_sync(warp::full_mask, static_cast<unsigned>(v.bits), mask);
    return half::from_bits(static_cast<std::uint16_t>(b));
  } else {
    return __shfl_xor_sync(warp::full_mask, v, mask);
  }
}

/// The best B elements seen so far, best first. Empty slots hold (worst key, INT64_MAX), which
/// ranks after every element of a row (a NaN has the worst key but a smaller position).
template <class T, int B>
struct best_list {
  using key_type = typename key_traits<T>::key_type;
  key_type key[B];
  std::int64_t pos[B];
  T val[B];

  __device__ __forceinline__ void clear()
  {
#pragma unroll
    for (int j = 0; j < B; ++j) {
      key[j] = key_traits<T>::worst;
      pos[j] = INT64_MAX;
      val[j] = T{};
    }
  }
  /// Inserts (k, p, v) by the full order: carried down the list, swapping where it ranks first.
  __device__ __forceinline__ void insert(key_type k, std::int64_t p, T v)
  {
#pragma unroll
    for (int j = 0; j < B; ++j) {
      if (ranks_before(k, p, key[j], pos[j])) {
        const key_type tk = key[j];
        const std::int64_t tp = pos[j];
        const T tv = val[j];
        key[j] = k;
        pos[j] = p;
        val[j] = v;
        k = tk;
        p = tp;
        v = tv;
      }
    }
  }
  /// For elements offered in increasing position: one key comparison rejects almost all of them
  /// (an equal key at a later position never ranks first, the full order decides the rest).
  __device__ __forceinline__ void offer(key_type k, std::int64_t p, T v)
  {
    if (k <= key[B - 1]) {
      insert(k, p, v);
    }
  }
  /// Writes the `count` (<= B) best entries in position order to out_val / out_pos.
  template <class IndexT>
  __device__ __forceinline__ void write_by_position(int count, T* out_val, IndexT* out_pos)
  {
    // Sort by position (empty slots, at INT64_MAX, go last): a small unrolled exchange sort.
#pragma unroll
    for (int a = 0; a < B; ++a) {
#pragma unroll
      for (int b = a + 1; b < B; ++b) {
        if (pos[b] < pos[a]) {
          const key_type tk = key[a];
          const std::int64_t tp = pos[a];
          const T tv = val[a];
          key[a] = key[b];
          pos[a] = pos[b];
          val[a] = val[b];
          key[b] = tk;
          pos[b] = tp;
          val[b] = tv;
        }
      }
    }
#pragma unroll
    for (int j = 0; j < B; ++j) {
      if (j < count) {
        out_val[j] = val[j];
        out_pos[j] = static_cast<IndexT>(pos[j]);
      }
    }
  }
};

/// One entry of a best list while the delegates are built: an element's key and its offset in its
/// sub-range, ordered by (key, offset), which is the row's total order inside one sub-range. Keys
/// of up to 32 bits pack with the offset into one 64-bit word whose integer order is that order
/// (one comparison, two shuffles); 64-bit keys keep the pair.
template <class Key, bool Packed = (sizeof(Key) <= 4)>
struct delegate_entry {
  std::uint64_t bits;
  __device__ __forceinline__ static delegate_entry make(Key k, unsigned offset)
  {
    return {(std::uint64_t(k) << 32) | offset};
  }
  /// Ranks after every element (an element's offset is below 2^32 - 1).
  __device__ __forceinline__ static delegate_entry empty() { return {~std::uint64_t{0}}; }
  __device__ __forceinline__ Key key() const { return static_cast<Key>(bits >> 32); }
  __device__ __forceinline__ unsigned offset() const { return static_cast<unsigned>(bits); }
  __device__ __forceinline__ bool operator<(const delegate_entry& o) const { return bits < o.bits; }
  __device__ __forceinline__ delegate_entry shfl_xor(int d) const
  {
    return {__shfl_xor_sync(warp::full_mask, bits, d)};
  }
};

template <class Key>
struct delegate_entry<Key, false> {
  Key key_;
  unsigned off;
  __device__ __forceinline__ static delegate_entry make(Key k, unsigned offset)
  {
    return {k, offset};
  }
  __device__ __forceinline__ static delegate_entry empty() { return {~Key{0}, ~0u}; }
  __device__ __forceinline__ Key key() const { return key_; }
  __device__ __forceinline__ unsigned offset() const { return off; }
  __device__ __forceinline__ bool operator<(const delegate_entry& o) const
  {
    return key_ < o.key_ || (key_ == o.key_ && off < o.off);
  }
  __device__ __forceinline__ delegate_entry shfl_xor(int d) const
  {
    return {__shfl_xor_sync(warp::full_mask, key_, d), __shfl_xor_sync(warp::full_mask, off, d)};
  }
};

/// The construction kernel's quick test compares values, not keys: a vector's best value against
/// the value of a thread's last kept key (float for float and binary16, double for double). A
/// value passes when it is at least as good, -0 and +0 comparing equal, and NaN never passing;
/// what passes is ranked exactly by keys.
template <class T>
struct delegate_compare {
  using type = float;
  __device__ __forceinline__ static float of(T v) { return v; }
  /// The value of a key that is not the worst (a number's key; -0 comes back as +0).
  __device__ __forceinline__ static float of_key(std::uint32_t key, bool largest)
  {
    return key_traits<float>::from_key(key, largest);
  }
};

template <>
struct delegate_compare<double> {
  using type = double;
  __device__ __forceinline__ static double of(double v) { return v; }
  __device__ __forceinline__ static double of_key(std::uint64_t key, bool largest)
  {
    return key_traits<double>::from_key(key, largest);
  }
};

template <>
struct delegate_compare<half> {
  using type = float;
  __device__ __forceinline__ static float of(half v)
  {
    return __half2float(__ushort_as_half(v.bits));
  }
  __device__ __forceinline__ static float of_key(std::uint32_t key, bool largest)
  {
    return of(key_traits<half>::from_key(key, largest));
  }
};

/// The quick test of a 16-byte vector x of elements: whether its best value is at least as good as
/// `worst_kept` (always when `open`, nothing kept to compare with). A NaN element drops out of the
/// best value, so a vector of NaNs only passes when open.
template <bool Largest, class T>
__device__ __forceinline__ bool delegate_vector_passes(
    const T* x, bool open, typename delegate_compare<T>::type worst_kept)
{
  using cmp = delegate_compare<T>;
  typename cmp::type m = cmp::of(x[0]);
#pragma unroll
  for (int c = 1; c < 16 / static_cast<int>(sizeof(T)); ++c) {
    m = Largest ? ::fmax(m, cmp::of(x[c])) : ::fmin(m, cmp::of(x[c]));
  }
  return open || (Largest ? m >= worst_kept : m <= worst_kept);
}

/// Inserts e into the best list b (best first): carried down the list, swapping where it ranks
/// first.
template <class E, int B>
__device__ __forceinline__ void delegate_insert(E (&b)[B], E e)
{
#pragma unroll
  for (int j = 0; j < B; ++j) {
    if (e < b[j]) {
      const E t = b[j];
      b[j] = e;
      e = t;
    }
  }
}

/// The shape of one row's sub-ranges and delegate vector.
struct delegate_layout {
  std::int64_t n = 0;      ///< row length
  std::int64_t alpha = 0;  ///< sub-range length (a power of two >= 32)
  std::int64_t m = 0;      ///< sub-ranges: ceil(n / alpha)
  /// Delegates of sub-range s: min(beta, its length), at D[s * beta ...).
  __host__ __device__ std::int64_t length(std::int64_t s) const
  {
    const std::int64_t rest = n - s * alpha;
    return rest < alpha ? rest : alpha;
  }
  __host__ __device__ int delegates(std::int64_t s) const
  {
    const std::int64_t len = length(s);
    return len < delegate_policy::beta ? static_cast<int>(len) : delegate_policy::beta;
  }
  /// Entries of D: beta per sub-range, fewer only for a short last sub-range.
  __host__ __device__ std::int64_t delegate_count() const
  {
    return (m - 1) * delegate_policy::beta + delegates(m - 1);
  }
};

// ---- delegate construction ----------------------------------------------------------------------

/// A value whose key is the worst (a NaN): fills a construction tile past the row's end, where it
/// ranks after every element of the row by (key, position).
template <class T>
__device__ __forceinline__ T delegate_pad()
{
  if constexpr (std::is_same_v<T, half>) {
    return half::from_bits(0x7fff);
  } else if constexpr (std::is_same_v<T, double>) {
    return __longlong_as_double(0x7fffffffffffffffll);
  } else {
    return __int_as_float(0x7fffffff);
  }
}

/// Sub-ranges of at most delegate_policy::tile_max_subrange elements (section 5.3 of the paper:
/// coalesced loads to shared memory, strided computing). A block of delegate_policy::tile_threads
/// threads loads a tile of tile<T> elements (whole sub-ranges) into shared memory with coalesced
/// 16-byte loads (single elements when the row is not 16-byte aligned, and in the row's last
/// tile, whose positions past the row hold delegate_pad). The `group` = alpha / run consecutive
/// threads of a sub-range then read its 16-byte vectors round-robin (thread g: vectors g, g +
/// group, ...; consecutive lanes read consecutive vectors, so from group = 8 on a quarter-warp
/// touches every bank once), each thread seeing its `run` elements in increasing position. Every
/// element goes through a branch-free insertion into the thread's best B keys: with positions
/// increasing, a strict key comparison is the (key, position) order, and no thread of the warp
/// waits on another's data-dependent branch (a quick test per vector, tried first, sent the warp
/// down the insertion path for nearly every vector, some lane of 32 always passing). The lists of
/// a sub-range merge by shuffles within a warp, then shared memory across warps.
template <class T, class IndexT, bool Vector>
__global__ void __launch_bounds__(delegate_policy::tile_threads)
    delegate_tile_kernel(const T* in, delegate_layout l, bool largest, T* d_val, IndexT* d_pos)
{
  using traits = key_traits<T>;
  using key_type = typename traits::key_type;
  using E = delegate_entry<key_type>;
  constexpr int B = delegate_policy::beta;
  constexpr int threads = delegate_policy::tile_threads;
  constexpr int warps = threads / warp::size;
  constexpr int run = delegate_policy::run<T>;
  constexpr int tile = delegate_policy::tile<T>;
  constexpr int per_vector = 16 / static_cast<int>(sizeof(T));
  constexpr int vectors = run / per_vector;  // 16-byte vectors of a thread's run
  static_assert(run % per_vector == 0 && run >= B);
  __shared__ __align__(16) T values[tile];
  __shared__ E warp_best[warps][B];

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = warp::lane_id();
  const std::int64_t first = std::int64_t(blockIdx.x) * tile;
  const int limit = static_cast<int>(std::min<std::int64_t>(tile, l.n - first));
  const int group = static_cast<int>(l.alpha / run);  // threads per sub-range (a power of two)
  const int g = tid & (group - 1);                    // this thread's rank in its group

  // This thread's best B keys, best first, and their run indices (j * per_vector + c for element
  // c of its j-th vector).
  key_type best_key[B];
  int best_idx[B];
#pragma unroll
  for (int b = 0; b < B; ++b) {
    best_key[b] = traits::worst;
    best_idx[b] = 0;
  }
  auto scan = [&](auto largest_tag) {
    constexpr bool L = decltype(largest_tag)::value;
    const uint4* vec = reinterpret_cast<const uint4*>(values) + (tid - g) * vectors + g;
#pragma unroll
    for (int j = 0; j < vectors; ++j) {
      const uint4 q = vec[j * group];
      const T* x = reinterpret_cast<const T*>(&q);
#pragma unroll
      for (int c = 0; c < per_vector; ++c) {
        const int idx = j * per_vector + c;  // a constant after unrolling
        const key_type key = traits::to_key(x[c], L);
        // before[b]: the key ranks before best[b] (always for the slots not yet filled).
        bool before[B];
#pragma unroll
        for (int b = 0; b < B; ++b) {
          before[b] = b >= idx || key < best_key[b];
        }
#pragma unroll
        for (int b = B - 1; b > 0; --b) {
          best_key[b] = before[b - 1] ? best_key[b - 1] : before[b] ? key : best_key[b];
          best_idx[b] = before[b - 1] ? best_idx[b - 1] : before[b] ? idx : best_idx[b];
        }
        best_key[0] = before[0] ? key : best_key[0];
        best_idx[0] = before[0] ? idx : best_idx[0];
      }
    }
  };
  // Writes sub-range s's delegates in position order, values from the tile.
  auto write = [&](E(&b)[B], std::int64_t s) {
    if (s >= l.m) {
      return;
    }
#pragma unroll
    for (int a = 0; a < B; ++a) {
#pragma unroll
      for (int c = a + 1; c < B; ++c) {
        if (b[c].offset() < b[a].offset()) {
          const E x = b[a];
          b[a] = b[c];
          b[c] = x;
        }
      }
    }
    const int count = l.delegates(s);
#pragma unroll
    for (int j = 0; j < B; ++j) {
      if (j < count) {
        const std::int64_t pos = s * l.alpha + b[j].offset();
        d_val[s * B + j] = values[pos - first];
        d_pos[s * B + j] = static_cast<IndexT>(pos);
      }
    }
  };
  // Load the tile (coalesced) and scan this thread's run of it.
  if (limit == tile) {
    using raw_type = std::conditional_t<Vector, uint4, T>;
    constexpr int raw_count = Vector ? vectors : run;
    const raw_type* src = reinterpret_cast<const raw_type*>(in + first);
    raw_type* dst = reinterpret_cast<raw_type*>(values);
    raw_type raw[raw_count];
#pragma unroll
    for (int i = 0; i < raw_count; ++i) {
      raw[i] = src[i * threads + tid];
    }
#pragma unroll
    for (int i = 0; i < raw_count; ++i) {
      dst[i * threads + tid] = raw[i];
    }
  } else {  // the row's last tile: single elements, as far as the row goes
#pragma unroll 8
    for (int i = 0; i < run; ++i) {
      const int e = i * threads + tid;
      values[e] = e < limit ? in[first + e] : delegate_pad<T>();
    }
  }
  __syncthreads();
  if (largest) {
    scan(std::true_type{});
  } else {
    scan(std::false_type{});
  }
  // Run index -> offset in the sub-range: element c of the thread's j-th vector, the sub-range's
  // vector j * group + g.
  E best[B];
#pragma unroll
  for (int b = 0; b < B; ++b) {
    const int j = best_idx[b] / per_vector;
    const int c = best_idx[b] % per_vector;
    best[b] = E::make(best_key[b], static_cast<unsigned>((j * group + g) * per_vector + c));
  }

  // Merge the lists of each sub-range: `group` consecutive threads hold one.
  const int in_warp = group < warp::size ? group : warp::size;
  for (int d = 1; d < in_warp; d *= 2) {
    E other[B];
#pragma unroll
    for (int j = 0; j < B; ++j) {
      other[j] = best[j].shfl_xor(d);
    }
#pragma unroll
    for (int j = 0; j < B; ++j) {
      delegate_insert(best, other[j]);
    }
  }
  if (group <= warp::size) {
    if ((lane & (group - 1)) == 0) {
      write(best, (first + tid * run) / l.alpha);
    }
    return;
  }
  if (lane == 0) {
#pragma unroll
    for (int j = 0; j < B; ++j) {
      warp_best[tid / warp::size][j] = best[j];
    }
  }
  __syncthreads();
  const int per = group / warp::size;  // warps per sub-range
  if (tid < warps / per) {             // thread q merges the tile's sub-range q
    E b[B];
#pragma unroll
    for (int j = 0; j < B; ++j) {
      b[j] = warp_best[tid * per][j];
    }
    for (int w = 1; w < per; ++w) {
#pragma unroll
      for (int j = 0; j < B; ++j) {
        delegate_insert(b, warp_best[tid * per + w][j]);
      }
    }
    write(b, (first + std::int64_t(tid) * l.alpha) / l.alpha);
  }
}

/// Larger sub-ranges: a warp per sub-range, lanes on consecutive elements, shuffle merge. With
/// Vector, every lane loads 16 bytes (16 / sizeof(T) elements) at a time: `in` must be 16-byte
/// aligned (then so is every sub-range, alpha being a power of two >= 32).
template <class T, class IndexT, bool Vector>
__global__ void __launch_bounds__(delegate_policy::block_threads)
    delegate_warp_kernel(const T* in, delegate_layout l, bool largest, T* d_val, IndexT* d_pos)
{
  using traits = key_traits<T>;
  constexpr int B = delegate_policy::beta;
  const std::int64_t s = std::int64_t(blockIdx.x) * (delegate_policy::block_threads / warp::size) +
                         threadIdx.x / warp::size;
  if (s >= l.m) {
    return;
  }  // warp-uniform
  const int lane = warp::lane_id();
  const std::int64_t first = s * l.alpha;
  const std::int64_t last = first + l.length(s);
  best_list<T, B> best;
  best.clear();
  std::int64_t tail = first;  // elements from here on are read one at a time
  if constexpr (Vector) {
    constexpr int V = 16 / static_cast<int>(sizeof(T));
    constexpr int U = delegate_policy::vector_unroll;
    const std::int64_t vectors = (last - first) / V;
    const uint4* vin = reinterpret_cast<const uint4*>(in + first);
    constexpr std::int64_t stride = std::int64_t(warp::size) * U;
    using cmp = delegate_compare<T>;
    using C = typename cmp::type;
    // A vector is dismissed with one comparison of its best value against a bound that the whole
    // warp shares: the best of the lanes' B-th kept keys (that lane holds B elements at least as
    // good, so nothing worse can be among the sub-range's B best). A bound per lane would let
    // some lane of the warp take the ranking path for most vectors, and the warp with it.
    auto scan = [&](auto largest_tag) {
      constexpr bool L = decltype(largest_tag)::value;
      // Software pipelined: the next U vectors are in flight while the current ones are scanned.
      uint4 cur[U];
      uint4 nxt[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t j = u * warp::size + lane;
        if (j < vectors) {
          cur[u] = vin[j];
        }
      }
      for (std::int64_t b = 0; b < vectors; b += stride) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const std::int64_t j = b + stride + u * warp::size + lane;
          if (j < vectors) {
            nxt[u] = vin[j];
          }
        }
        const auto bound = warp::reduce_min(best.key[B - 1]);
        const bool open = bound >= traits::worst;  // the bound is empty or a NaN: all pass
        const C worst_kept = open ? C{} : cmp::of_key(bound, L);
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const std::int64_t j = b + u * warp::size + lane;
          const T* x = reinterpret_cast<const T*>(&cur[u]);
          if (j < vectors && delegate_vector_passes<L>(x, open, worst_kept)) {
#pragma unroll
            for (int c = 0; c < V; ++c) {
              best.offer(traits::to_key(x[c], L), first + j * V + c, x[c]);
            }
          }
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
          cur[u] = nxt[u];
        }
      }
    };
    if (largest) {
      scan(std::true_type{});
    } else {
      scan(std::false_type{});
    }
    tail = first + vectors * V;
  }
  constexpr int U = delegate_policy::unroll;
  for (std::int64_t base = tail; base < last; base += std::int64_t(warp::size) * U) {
    T v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t e = base + u * warp::size + lane;
      v[u] = e < last ? in[e] : T{};
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t e = base + u * warp::size + lane;
      if (e < last) {
        best.offer(traits::to_key(v[u], largest), e, v[u]);
      }
    }
  }
  // Butterfly: after log2(32) rounds every lane holds the best B of the whole sub-range.
#pragma unroll
  for (int d = warp::size / 2; d > 0; d /= 2) {
    typename traits::key_type ok[B];
    std::int64_t op[B];
    T ov[B];
#pragma unroll
    for (int j = 0; j < B; ++j) {
      ok[j] = __shfl_xor_sync(warp::full_mask, best.key[j], d);
      op[j] = __shfl_xor_sync(warp::full_mask, best.pos[j], d);
      ov[j] = shfl_xor_value(best.val[j], d);
    }
#pragma unroll
    for (int j = 0; j < B; ++j) {
      best.insert(ok[j], op[j], ov[j]);
    }
  }
  if (lane == 0) {
    best.write_by_position(l.delegates(s), d_val + s * B, d_pos + s * B);
  }
}

// ---- threshold ----------------------------------------------------------------------------------

/// The counters the candidate steps accumulate into: the number of full sub-ranges and the
/// leading 0 of the candidate offsets.
struct delegate_counters {
  unsigned long long* full_count;
  std::int64_t* first_offset;
  __device__ void zero() const
  {
    *full_count = 0;
    *first_offset = 0;
  }
};

template <class Key>
struct worse_of {
  __device__ __forceinline__ delegate_threshold<Key> operator()(
      const delegate_threshold<Key>& a, const delegate_threshold<Key>& b) const
  {
    return ranks_before(a.key, a.pos, b.key, b.pos) ? b : a;
  }
};

/// Rule 2's threshold t, the worst of the k delegates the first top-k selected, as a reduction
/// over the grid: block b reduces selected entries [b * per_block, (b + 1) * per_block) into
/// out[b] (with one block, out is t itself; with more, delegate_threshold_merge_kernel reduces the
/// blocks' results). The order is total, so the result does not depend on the reduction order.
/// The kernel that writes t also zeroes the counters of the candidate steps after it (`reset`).
template <class T, class IndexT, int Threads>
__global__ void __launch_bounds__(Threads)
    delegate_threshold_kernel(const T* sel_val, const IndexT* sel_pos, std::int64_t k,
                              std::int64_t per_block, bool largest,
                              delegate_threshold<typename key_traits<T>::key_type>* out,
                              delegate_counters reset)
{
  using key_type = typename key_traits<T>::key_type;
  using reduce = cub::BlockReduce<delegate_threshold<key_type>, Threads>;
  constexpr int U = 4;  // loads in flight per thread
  __shared__ typename reduce::TempStorage tmp;
  delegate_threshold<key_type> mine{0, -1};  // ranks before every element
  const std::int64_t begin = std::int64_t(blockIdx.x) * per_block;
  const std::int64_t end = begin + per_block < k ? begin + per_block : k;
  for (std::int64_t i0 = begin + threadIdx.x; i0 < end; i0 += std::int64_t(U) * Threads) {
    T v[U];
    IndexT p[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t i = i0 + std::int64_t(u) * Threads;
      v[u] = sel_val[i < end ? i : i0];
      p[u] = sel_pos[i < end ? i : i0];
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const delegate_threshold<key_type> x{key_traits<T>::to_key(v[u], largest),
                                           static_cast<std::int64_t>(p[u])};
      mine = worse_of<key_type>{}(mine, x);  // a repeated i0 changes nothing
    }
  }
  const auto worst = reduce(tmp).Reduce(mine, worse_of<key_type>{});
  if (threadIdx.x == 0) {
    out[blockIdx.x] = worst;
    if (gridDim.x == 1) {
      reset.zero();
    }
  }
}

/// t = the worst of the blocks' results of delegate_threshold_kernel (one block).
template <class Key, int Threads>
__global__ void __launch_bounds__(Threads)
    delegate_threshold_merge_kernel(const delegate_threshold<Key>* partial, int count,
                                    delegate_threshold<Key>* t, delegate_counters reset)
{
  using reduce = cub::BlockReduce<delegate_threshold<Key>, Threads>;
  __shared__ typename reduce::TempStorage tmp;
  delegate_threshold<Key> mine{0, -1};
  for (int i = static_cast<int>(threadIdx.x); i < count; i += Threads) {
    mine = worse_of<Key>{}(mine, partial[i]);
  }
  const auto worst = reduce(tmp).Reduce(mine, worse_of<Key>{});
  if (threadIdx.x == 0) {
    *t = worst;
    reset.zero();
  }
}

// ---- candidates (Rules 2 and 3) -----------------------------------------------------------------

/// Delegates of sub-range s that are <= t, and whether s is full (all beta delegates <= t and more
/// elements than delegates: the rest of it may hold elements <= t).
template <class T, class IndexT>
__device__ __forceinline__ int delegates_taken(
    const T* d_val, const IndexT* d_pos, const delegate_layout& l, std::int64_t s, bool largest,
    delegate_threshold<typename key_traits<T>::key_type> t, bool& full)
{
  const int d = l.delegates(s);
  int taken = 0;
#pragma unroll
  for (int j = 0; j < delegate_policy::beta; ++j) {
    if (j < d) {
      const std::int64_t at = s * delegate_policy::beta + j;
      taken += ranks_before(t.key, t.pos, key_traits<T>::to_key(d_val[at], largest),
                            static_cast<std::int64_t>(d_pos[at]))
                   ? 0
                   : 1;
    }
  }
  full = taken == delegate_policy::beta && l.length(s) > delegate_policy::beta;
  return taken;
}

/// Per sub-range: its candidate count (delegates <= t), or, for a full sub-range, 0 and its id in
/// the full list (counted by delegate_full_count_kernel). The list's order is irrelevant: every
/// output position comes from the prefix sum over sub-ranges.
template <class T, class IndexT>
__global__ void delegate_classify_kernel(
    const T* d_val, const IndexT* d_pos, delegate_layout l, bool largest,
    const delegate_threshold<typename key_traits<T>::key_type>* t, std::int64_t* counts,
    std::int64_t* full_list, unsigned long long* full_count)
{
  const std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= l.m) {
    return;
  }
  bool full = false;
  const int taken = delegates_taken(d_val, d_pos, l, s, largest, *t, full);
  counts[s] = full ? 0 : taken;
  if (full) {
    full_list[atomicAdd(full_count, 1ull)] = s;
  }
}

/// Full sub-ranges are read again in pieces of at most delegate_policy::piece elements, a warp per
/// piece, so that a long sub-range is not one warp's serial scan.
__host__ __device__ inline std::int64_t delegate_piece(std::int64_t alpha)
{
  return alpha < delegate_policy::piece ? alpha : delegate_policy::piece;
}

/// The piece of a full sub-range that the calling warp owns (a warp per piece, pieces of a
/// sub-range consecutive): positions [first, last) of sub-range s, the i-th full one.
struct delegate_full_piece {
  std::int64_t w;       ///< the warp's global number
  std::int64_t pieces;  ///< pieces per sub-range
  std::int64_t i;       ///< index into full_list
  std::int64_t s;       ///< the sub-range
  std::int64_t first, last;
  bool valid;  ///< false: the warp has no piece (warp-uniform)
};

__device__ inline delegate_full_piece delegate_full_piece_of(const delegate_layout& l,
                                                             const std::int64_t* full_list,
                                                             const unsigned long long* full_count)
{
  delegate_full_piece f{};
  f.w = std::int64_t(blockIdx.x) * (delegate_policy::block_threads / warp::size) +
        threadIdx.x / warp::size;
  const std::int64_t piece = delegate_piece(l.alpha);
  f.pieces = l.alpha / piece;
  f.i = f.w / f.pieces;
  f.valid = f.i < static_cast<std::int64_t>(*full_count);
  if (!f.valid) {
    return f;
  }
  f.s = full_list[f.i];
  const std::int64_t end = f.s * l.alpha + l.length(f.s);
  f.first = f.s * l.alpha + (f.w % f.pieces) * piece;
  f.last = f.first + piece < end ? f.first + piece : end;
  return f;
}

/// A warp per piece of a full sub-range: its elements <= t, into piece_counts and (summed, an
/// integer atomic: order independent) into the sub-range's count.
template <class T>
__global__ void __launch_bounds__(delegate_policy::block_threads)
    delegate_full_count_kernel(const T* in, delegate_layout l, bool largest,
                               const delegate_threshold<typename key_traits<T>::key_type>* t,
                               const std::int64_t* full_list, const unsigned long long* full_count,
                               std::int64_t* counts, std::int64_t* piece_counts)
{
  constexpr int U = delegate_policy::unroll;
  const delegate_full_piece f = delegate_full_piece_of(l, full_list, full_count);
  if (!f.valid) {
    return;
  }  // warp-uniform
  const auto th = *t;
  const std::int64_t first = f.first;
  const std::int64_t last = f.last;
  const int lane = warp::lane_id();
  unsigned c = 0;
  for (std::int64_t base = first; base < last; base += std::int64_t(warp::size) * U) {
    T v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t e = base + u * warp::size + lane;
      v[u] = e < last ? in[e] : T{};
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t e = base + u * warp::size + lane;
      if (e < last && !ranks_before(th.key, th.pos, key_traits<T>::to_key(v[u], largest), e)) {
        ++c;
      }
    }
  }
  c = __reduce_add_sync(warp::full_mask, c);
  if (lane == 0) {
    piece_counts[f.w] = c;
    if (c != 0) {
      atomicAdd(reinterpret_cast<unsigned long long*>(counts + f.s),
                static_cast<unsigned long long>(c));
    }
  }
}

/// A thread per sub-range that is not full: its delegates <= t, at its offset (D is in position
/// order, so they are too). Here and in delegate_write_full_kernel, candidates at offsets past
/// `capacity` are not written: the caller sizes the candidate vector before the count is known
/// and redoes a row whose count exceeds it.
template <class T, class IndexT>
__global__ void delegate_write_delegates_kernel(
    const T* d_val, const IndexT* d_pos, delegate_layout l, bool largest,
    const delegate_threshold<typename key_traits<T>::key_type>* t, const std::int64_t* offsets,
    std::int64_t capacity, T* c_val, IndexT* c_pos)
{
  const std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= l.m) {
    return;
  }
  const auto th = *t;
  bool full = false;
  if (delegates_taken(d_val, d_pos, l, s, largest, th, full) == 0 || full) {
    return;
  }
  std::int64_t out = offsets[s];
  const int d = l.delegates(s);
  for (int j = 0; j < d; ++j) {
    const std::int64_t at = s * delegate_policy::beta + j;
    const T v = d_val[at];
    const IndexT p = d_pos[at];
    if (!ranks_before(th.key, th.pos, key_traits<T>::to_key(v, largest),
                      static_cast<std::int64_t>(p))) {
      if (out < capacity) {
        c_val[out] = v;
        c_pos[out] = p;
      }
      ++out;
    }
  }
}

/// A warp per piece of a full sub-range: its elements <= t in position order (ballot ranks), after
/// the sub-range's offset and the counts of its earlier pieces.
template <class T, class IndexT>
__global__ void __launch_bounds__(delegate_policy::block_threads)
    delegate_write_full_kernel(const T* in, delegate_layout l, bool largest,
                               const delegate_threshold<typename key_traits<T>::key_type>* t,
                               const std::int64_t* full_list, const unsigned long long* full_count,
                               const std::int64_t* offsets, const std::int64_t* piece_counts,
                               std::int64_t capacity, T* c_val, IndexT* c_pos)
{
  constexpr int U = delegate_policy::unroll;
  const delegate_full_piece f = delegate_full_piece_of(l, full_list, full_count);
  if (!f.valid) {
    return;
  }  // warp-uniform
  const auto th = *t;
  const std::int64_t first = f.first;
  const std::int64_t last = f.last;
  const int lane = warp::lane_id();
  std::int64_t before = 0;  // the counts of the sub-range's earlier pieces
  for (std::int64_t q = f.i * f.pieces + lane; q < f.w; q += warp::size) {
    before += piece_counts[q];
  }
  for (int d = warp::size / 2; d > 0; d /= 2) {
    before += __shfl_xor_sync(warp::full_mask, before, d);
  }
  std::int64_t out = offsets[f.s] + before;
  for (std::int64_t base = first; base < last; base += std::int64_t(warp::size) * U) {
    T v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t e = base + u * warp::size + lane;
      v[u] = e < last ? in[e] : T{};
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t e = base + u * warp::size + lane;
      const bool take =
          e < last && !ranks_before(th.key, th.pos, key_traits<T>::to_key(v[u], largest), e);
      const unsigned ballot = __ballot_sync(warp::full_mask, take);
      const std::int64_t at = out + __popc(ballot & warp::lanes_below());
      if (take && at < capacity) {
        c_val[at] = v[u];
        c_pos[at] = static_cast<IndexT>(e);
      }
      out += __popc(ballot);
    }
  }
}

}  // namespace spira::selection
