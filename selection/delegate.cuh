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
//    and the second top-k selects the k best of them. When there are exactly k candidates they are
//    the answer and the second top-k is skipped.
//
// Delegate construction reads the row once, coalesced, in one of two forms (section 5.3):
//  * small sub-ranges (alpha <= delegate_policy::strided_max_subrange): a warp owns 32
//    consecutive sub-ranges, loads them tile by tile into shared memory (each row of a tile is 32
//    consecutive elements of one sub-range: one coalesced load; rows padded to 33 words against
//    bank conflicts) and every lane then scans the whole of one sub-range (strided compute): no
//    shuffles, and every lane has work;
//  * larger sub-ranges: a warp per sub-range, lanes reading consecutive 16-byte vectors (when the
//    row is 16-byte aligned; single elements otherwise), unrolled for memory-level parallelism,
//    then a butterfly merge of the lanes' best lists with shuffles.
// The scan is bound by instruction issue as much as by memory: a lane keeps its best list in
// registers and rejects almost every element with one key comparison (best_list::offer).
#pragma once

#include "selection/dispatch.hpp"
#include "selection/keys.hpp"
#include "selection/warp.cuh"

#include <cub/block/block_reduce.cuh>

#include <cstdint>
#include <type_traits>

namespace spira::selection {

/// Tuning of the delegate algorithm.
struct delegate_policy {
  /// Delegates per sub-range (Dr. Top-k's beta).
  static constexpr int beta = delegate_beta;
  /// Threads of the warp-per-sub-range kernels.
  static constexpr int block_threads = 256;
  /// Threads of the lane-per-sub-range (strided compute) kernel: 4 warps x 32 x 33 shared words
  /// of up to 8 bytes stay below the 48 KiB of static shared memory.
  static constexpr int strided_block_threads = 128;
  /// Sub-ranges up to this length are handled a lane each (shared-memory tiles).
  static constexpr std::int64_t strided_max_subrange = 256;
  /// Loads in flight per lane in the warp-per-sub-range kernels: scalar, and 16-byte vectors.
  static constexpr int unroll = 8;
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
    if (k <= key[B - 1]) { insert(k, p, v); }
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

/// Small sub-ranges: a warp loads 32 sub-ranges into shared memory tile by tile (coalesced), each
/// lane scans one sub-range (strided compute). alpha must be a multiple of 32.
template <class T, class IndexT>
__global__ void __launch_bounds__(delegate_policy::strided_block_threads)
  delegate_strided_kernel(const T* in, delegate_layout l, bool largest, T* d_val, IndexT* d_pos)
{
  using traits = key_traits<T>;
  constexpr int warps = delegate_policy::strided_block_threads / warp::size;
  __shared__ T tile[warps][warp::size][warp::size + 1];
  const int w = static_cast<int>(threadIdx.x) / warp::size;
  const int lane = warp::lane_id();
  const std::int64_t s0 = (std::int64_t(blockIdx.x) * warps + w) * warp::size;
  if (s0 >= l.m) { return; }  // warp-uniform; the kernel synchronises warps only
  const std::int64_t mine = s0 + lane;
  best_list<T, delegate_policy::beta> best;
  best.clear();
  for (std::int64_t j = 0; j < l.alpha; j += warp::size) {
#pragma unroll 8
    for (int r = 0; r < warp::size; ++r) {
      const std::int64_t e = (s0 + r) * l.alpha + j + lane;
      if (e < l.n) { tile[w][r][lane] = in[e]; }
    }
    __syncwarp();
    const std::int64_t first = mine * l.alpha + j;
#pragma unroll 8
    for (int c = 0; c < warp::size; ++c) {
      if (first + c < l.n) {
        const T v = tile[w][lane][c];
        best.offer(traits::to_key(v, largest), first + c, v);
      }
    }
    __syncwarp();
  }
  if (mine < l.m) {
    best.write_by_position(l.delegates(mine), d_val + mine * delegate_policy::beta,
                           d_pos + mine * delegate_policy::beta);
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
  if (s >= l.m) { return; }  // warp-uniform
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
    // Software pipelined: the next U vectors are in flight while the current ones are scanned.
    uint4 cur[U];
    uint4 nxt[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t j = u * warp::size + lane;
      if (j < vectors) { cur[u] = vin[j]; }
    }
    for (std::int64_t b = 0; b < vectors; b += stride) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t j = b + stride + u * warp::size + lane;
        if (j < vectors) { nxt[u] = vin[j]; }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t j = b + u * warp::size + lane;
        if (j < vectors) {
          const T* x = reinterpret_cast<const T*>(&cur[u]);
#pragma unroll
          for (int c = 0; c < V; ++c) {
            best.offer(traits::to_key(x[c], largest), first + j * V + c, x[c]);
          }
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) { cur[u] = nxt[u]; }
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
      if (e < last) { best.offer(traits::to_key(v[u], largest), e, v[u]); }
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
    for (int j = 0; j < B; ++j) { best.insert(ok[j], op[j], ov[j]); }
  }
  if (lane == 0) {
    best.write_by_position(l.delegates(s), d_val + s * B, d_pos + s * B);
  }
}

// ---- threshold ----------------------------------------------------------------------------------

template <class Key>
struct worse_of {
  __device__ __forceinline__ delegate_threshold<Key> operator()(const delegate_threshold<Key>& a,
                                                                const delegate_threshold<Key>& b) const
  {
    return ranks_before(a.key, a.pos, b.key, b.pos) ? b : a;
  }
};

/// t = the worst of the k delegates selected by the first top-k (one block).
template <class T, class IndexT, int Threads>
__global__ void __launch_bounds__(Threads)
  delegate_threshold_kernel(const T* sel_val, const IndexT* sel_pos, std::int64_t k, bool largest,
                            delegate_threshold<typename key_traits<T>::key_type>* t)
{
  using key_type = typename key_traits<T>::key_type;
  using reduce = cub::BlockReduce<delegate_threshold<key_type>, Threads>;
  __shared__ typename reduce::TempStorage tmp;
  delegate_threshold<key_type> mine{0, -1};  // ranks before every element
  for (std::int64_t i = threadIdx.x; i < k; i += Threads) {
    const delegate_threshold<key_type> x{key_traits<T>::to_key(sel_val[i], largest),
                                         static_cast<std::int64_t>(sel_pos[i])};
    mine = worse_of<key_type>{}(mine, x);
  }
  const auto worst = reduce(tmp).Reduce(mine, worse_of<key_type>{});
  if (threadIdx.x == 0) { *t = worst; }
}

// ---- candidates (Rules 2 and 3) -----------------------------------------------------------------

/// Delegates of sub-range s that are <= t, and whether s is full (all beta delegates <= t and more
/// elements than delegates: the rest of it may hold elements <= t).
template <class T, class IndexT>
__device__ __forceinline__ int delegates_taken(const T* d_val, const IndexT* d_pos,
                                               const delegate_layout& l, std::int64_t s,
                                               bool largest,
                                               delegate_threshold<typename key_traits<T>::key_type> t,
                                               bool& full)
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
__global__ void delegate_classify_kernel(const T* d_val, const IndexT* d_pos, delegate_layout l,
                                         bool largest,
                                         const delegate_threshold<typename key_traits<T>::key_type>* t,
                                         std::int64_t* counts, std::int64_t* full_list,
                                         unsigned long long* full_count)
{
  const std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= l.m) { return; }
  bool full = false;
  const int taken = delegates_taken(d_val, d_pos, l, s, largest, *t, full);
  counts[s] = full ? 0 : taken;
  if (full) { full_list[atomicAdd(full_count, 1ull)] = s; }
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
  bool valid;           ///< false: the warp has no piece (warp-uniform)
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
  if (!f.valid) { return f; }
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
  if (!f.valid) { return; }  // warp-uniform
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
/// order, so they are too).
template <class T, class IndexT>
__global__ void delegate_write_delegates_kernel(
  const T* d_val, const IndexT* d_pos, delegate_layout l, bool largest,
  const delegate_threshold<typename key_traits<T>::key_type>* t, const std::int64_t* offsets,
  T* c_val, IndexT* c_pos)
{
  const std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= l.m) { return; }
  const auto th = *t;
  bool full = false;
  if (delegates_taken(d_val, d_pos, l, s, largest, th, full) == 0 || full) { return; }
  std::int64_t out = offsets[s];
  const int d = l.delegates(s);
  for (int j = 0; j < d; ++j) {
    const std::int64_t at = s * delegate_policy::beta + j;
    const T v = d_val[at];
    const IndexT p = d_pos[at];
    if (!ranks_before(th.key, th.pos, key_traits<T>::to_key(v, largest),
                      static_cast<std::int64_t>(p))) {
      c_val[out] = v;
      c_pos[out] = p;
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
                             T* c_val, IndexT* c_pos)
{
  constexpr int U = delegate_policy::unroll;
  const delegate_full_piece f = delegate_full_piece_of(l, full_list, full_count);
  if (!f.valid) { return; }  // warp-uniform
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
      if (take) {
        const std::int64_t at = out + __popc(ballot & warp::lanes_below());
        c_val[at] = v[u];
        c_pos[at] = static_cast<IndexT>(e);
      }
      out += __popc(ballot);
    }
  }
}

}  // namespace spira::selection
