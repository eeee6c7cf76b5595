// spira selection: delegate construction for sub-ranges longer than
// delegate_policy::tile_max_subrange, a warp streaming each sub-range (delegate_warp_kernel;
// selection/delegate.cuh describes the algorithm).
#pragma once

#include "selection/delegate_policy.cuh"
#include "selection/keys.hpp"
#include "selection/warp.cuh"

#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace spira::selection {

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
      ov[j] = warp::shfl_xor_value(best.val[j], d);
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

}  // namespace spira::selection
