// spira selection: Rule 2's threshold t of the delegate algorithm, the worst of the k delegates
// the first top-k selected, as a reduction over the grid (selection/delegate.cuh describes the
// algorithm).
#pragma once

#include "selection/delegate_policy.cuh"
#include "selection/keys.hpp"

#include <cub/block/block_reduce.cuh>

#include <cstdint>

namespace spira::selection {

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

}  // namespace spira::selection
