// spira selection: a row of the binary_search algorithm (selection/binary_search.cuh) in a warp's
// registers - the slots each lane holds (four consecutive slots per group of 128, one 16-byte load
// of float), where they come from (on-demand offset padding for rows that do not start on a vector
// boundary), their loads, and the copy of a whole row (at most k elements) to the output.
#pragma once

#include "selection/keys.hpp"
#include "selection/warp.cuh"

#include <cstdint>

namespace spira::selection::binary_search_detail {

/// Consecutive slots a lane holds in one group, and slots per group.
inline constexpr int vec = 4;
inline constexpr int span = vec * warp::size;

/// The vec elements a lane loads at once: one 16-byte load of float, two of double, one 8-byte
/// load of half.
template <class T>
struct alignas(sizeof(T) * vec < 16 ? sizeof(T) * vec : 16) vec_of {
  T v[vec];
};

/// The vec elements at slots q .. q + vec - 1 of a lane (p points at slot q): one vector load when
/// `vectors` (the slots start on a vector boundary) and every slot holds a row element (slots
/// [off, end)), else element by element, T{} for the slots outside the row.
template <class T>
__device__ __forceinline__ vec_of<T> load_slots(const T* p, int q, int off, int end, bool vectors)
{
  if (vectors && q + vec <= end) {
    return *reinterpret_cast<const vec_of<T>*>(p);
  }
  vec_of<T> c;
#pragma unroll
  for (int e = 0; e < vec; ++e) {
    c.v[e] = q + e >= off && q + e < end ? p[e] : T{};
  }
  return c;
}

/// Where a row's slots come from (on-demand offset padding): slot q holds position q - off. A row
/// off elements past a vector boundary is read from that boundary when the boundary lies inside
/// the value array and the padded row fits the warp; otherwise off = 0 and the loads are scalar.
template <class T>
struct row_slots {
  const T* lane_in = nullptr;  // slot g * span + vec * lane + e: lane_in[g * span + e]
  std::int64_t first = 0;      // the row's first element in the value array
  int n = 0;                   // row length
  int off = 0;                 // leading padding slots
  int end = 0;                 // slots [off, end) hold the row
  bool vectors = false;        // vector loads
};

template <int Items, class T, class IndexT>
__device__ __forceinline__ row_slots<T> locate_row(const row_source<T, IndexT>& src,
                                                   std::int64_t row, int lane)
{
  row_slots<T> r;
  r.first = src.begin(row);
  r.n = static_cast<int>(src.length(row));
  const int misaligned = static_cast<int>(reinterpret_cast<std::uintptr_t>(src.values + r.first) %
                                          alignof(vec_of<T>) / sizeof(T));
  r.vectors = misaligned == 0 || (r.first >= misaligned && r.n + misaligned <= Items * warp::size);
  r.off = r.vectors ? misaligned : 0;
  r.end = r.off + r.n;
  r.lane_in = src.values + (r.first - r.off) + vec * lane;
  return r;
}

/// Issues every load of the lane's slots of a row (T{} outside the row).
template <int Items, class T>
__device__ __forceinline__ void load_row(const row_slots<T>& r, int lane, T (&raw)[Items])
{
#pragma unroll
  for (int g = 0; g < Items / vec; ++g) {
    const vec_of<T> c =
        load_slots(r.lane_in + g * span, g * span + vec * lane, r.off, r.end, r.vectors);
#pragma unroll
    for (int e = 0; e < vec; ++e) {
      raw[g * vec + e] = c.v[e];
    }
  }
}

/// Copies a whole row (n <= k) to the output in position order: slot q's value to out_v[q - off]
/// and its index (its column for CSR rows, where col is the row's columns from slot 0, else
/// q - off) to out_i[q - off]; 16-byte loads and stores where the slots and the outputs line up.
/// It reads the row itself, so that no register of the search is live across it.
template <int Items, class T, class IndexT>
__device__ __forceinline__ void copy_whole_row(const row_slots<T>& r, const IndexT* col, T* out_v,
                                               IndexT* out_i, int lane)
{
  constexpr int per_quad = 16 / static_cast<int>(sizeof(IndexT));  // indices in 16 bytes
  struct alignas(16) index_quad {
    IndexT i[per_quad];
  };
  const bool aligned = r.off == 0 && col == nullptr && r.vectors &&
                       reinterpret_cast<std::uintptr_t>(out_v) % alignof(vec_of<T>) == 0 &&
                       reinterpret_cast<std::uintptr_t>(out_i) % 16 == 0;
#pragma unroll
  for (int g = 0; g < Items / vec; ++g) {
    const int q0 = g * span + vec * lane;
    if (q0 >= r.end) {
      break;
    }
    const vec_of<T> v = load_slots(r.lane_in + g * span, q0, r.off, r.end, r.vectors);
    if (aligned && q0 + vec <= r.end) {
      *reinterpret_cast<vec_of<T>*>(out_v + q0) = v;
#pragma unroll
      for (int w = 0; w < vec / per_quad; ++w) {
        index_quad quad;
#pragma unroll
        for (int e = 0; e < per_quad; ++e) {
          quad.i[e] = static_cast<IndexT>(q0 + w * per_quad + e);
        }
        reinterpret_cast<index_quad*>(out_i + q0)[w] = quad;
      }
    } else {
#pragma unroll
      for (int e = 0; e < vec; ++e) {
        const int q = q0 + e;
        if (q >= r.off && q < r.end) {
          out_v[q - r.off] = v.v[e];
          out_i[q - r.off] =
              col != nullptr ? col[q] : static_cast<IndexT>(static_cast<unsigned>(q - r.off));
        }
      }
    }
  }
}

}  // namespace spira::selection::binary_search_detail
