// spira selection: small warp-level helpers shared by the selection kernels.
#pragma once

#include <spira/select_k.hpp>

#include <cstdint>
#include <type_traits>

namespace spira::selection::warp {

inline constexpr unsigned full_mask = 0xffffffffu;
inline constexpr int size = 32;

__device__ __forceinline__ int lane_id()
{
  return static_cast<int>(threadIdx.x) & (size - 1);
}

/// Bits of the lanes below this one.
__device__ __forceinline__ unsigned lanes_below()
{
  unsigned m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

template <class U>
__device__ __forceinline__ U reduce_min(U v)
{
  if constexpr (sizeof(U) == 4) {
    return __reduce_min_sync(full_mask, v);
  } else {
    for (int d = size / 2; d > 0; d /= 2) {
      const U o = __shfl_xor_sync(full_mask, v, d);
      v = o < v ? o : v;
    }
    return v;
  }
}

template <class U>
__device__ __forceinline__ U reduce_max(U v)
{
  if constexpr (sizeof(U) == 4) {
    return __reduce_max_sync(full_mask, v);
  } else {
    for (int d = size / 2; d > 0; d /= 2) {
      const U o = __shfl_xor_sync(full_mask, v, d);
      v = o > v ? o : v;
    }
    return v;
  }
}

/// A shuffle for any value type of select_k (binary16 travels as its bits).
template <class T>
__device__ __forceinline__ T shfl_xor_value(T v, int mask)
{
  if constexpr (std::is_same_v<T, half>) {
    const unsigned b = __shfl_xor_sync(full_mask, static_cast<unsigned>(v.bits), mask);
    return half::from_bits(static_cast<std::uint16_t>(b));
  } else {
    return __shfl_xor_sync(full_mask, v, mask);
  }
}

namespace detail {

/// One step of a 32-bit inclusive scan: adds the value d lanes below, where that lane exists
/// (shfl.up's predicate), in two instructions.
template <int D>
__device__ __forceinline__ unsigned scan_step(unsigned v)
{
  asm("{\n\t.reg .u32 r;\n\t.reg .pred p;\n\t"
      "shfl.sync.up.b32 r|p, %0, %1, 0, -1;\n\t"
      "@p add.u32 %0, r, %0;\n\t}"
      : "+r"(v)
      : "n"(D));
  return v;
}

}  // namespace detail

/// Inclusive prefix sum over the warp.
template <class U>
__device__ __forceinline__ U inclusive_sum(U v)
{
  if constexpr (sizeof(U) == 4) {
    unsigned x = static_cast<unsigned>(v);
    x = detail::scan_step<1>(x);
    x = detail::scan_step<2>(x);
    x = detail::scan_step<4>(x);
    x = detail::scan_step<8>(x);
    x = detail::scan_step<16>(x);
    return static_cast<U>(x);
  } else {
    const int lane = lane_id();
    for (int d = 1; d < size; d *= 2) {
      const U o = __shfl_up_sync(full_mask, v, d);
      if (lane >= d) {
        v += o;
      }
    }
    return v;
  }
}

/// Adds one to hist[bin] (shared memory) for every lane with `active` set: one plain atomic per
/// lane. On the H200 this is twice as fast as aggregating the lanes that agree on a bin (ballot,
/// shuffle and vote per key), on skewed and peaked inputs too, whose same-address atomics the
/// hardware combines; __match_any_sync aggregation was 4x slower
/// (measured with commit 5437801, its bench/results).
__device__ __forceinline__ void count_in_bin(unsigned* hist, unsigned bin, bool active)
{
  if (active) {
    atomicAdd(&hist[bin], 1u);
  }
}

}  // namespace spira::selection::warp
