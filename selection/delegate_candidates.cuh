// spira selection: the candidates of the delegate algorithm (Rules 2 and 3): per sub-range counts,
// the full sub-ranges read again in pieces, and the candidates written in position order
// (selection/delegate.cuh describes the algorithm).
#pragma once

#include "selection/delegate_policy.cuh"
#include "selection/keys.hpp"
#include "selection/warp.cuh"

#include <cstdint>

namespace spira::selection {

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
