// spira selection: delegate construction for sub-ranges of at most
// delegate_policy::tile_max_subrange elements, a tile of whole sub-ranges per block
// (delegate_tile_kernel; selection/delegate.cuh describes the algorithm).
#pragma once

#include "selection/delegate_policy.cuh"
#include "selection/keys.hpp"
#include "selection/warp.cuh"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace spira::selection {

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

}  // namespace spira::selection
