// spira selection: the output of the radix algorithm once every row's threshold is known: each
// task counts its selected elements, then writes them at its chunk's offset in position order
// (selection/radix.cuh describes the algorithm).
#pragma once

#include "selection/keys.hpp"
#include "selection/radix_policy.cuh"

#include <cstdint>

namespace spira::selection {

template <class Key>
__device__ __forceinline__ bool radix_selected(const radix_row_state<Key>& s, Key key,
                                               std::uint64_t pos)
{
  return key < s.key || (key == s.key && pos <= s.pos);
}

template <bool Buffers, class T, class IndexT, class Reduce>
__device__ void radix_count_task(const radix_args<T, IndexT>& a, std::int64_t t,
                                 typename Reduce::TempStorage& tmp)
{
  using traits = key_traits<T>;
  const radix_task task = radix_task_of(a, t);
  const auto s = a.state[task.row];
  if (Buffers && s.source == radix_from_buffer) {
    // The copy pass stored the chunk counts of the elements ranked before the candidates; add
    // each selected candidate to its chunk's count.
    const radix_task slice = radix_slice_of(a, task);
    const auto* keys = a.buffer_key + task.row * a.capacity;
    const std::uint64_t* pos = a.buffer_pos + task.row * a.capacity;
    auto* counts =
        reinterpret_cast<unsigned long long*>(a.chunk_count + task.row * a.layout.chunks);
    for (std::int64_t e = slice.begin + threadIdx.x; e < slice.end; e += blockDim.x) {
      const auto key = keys[e];
      if (key <= s.key) {
        const std::uint64_t p = pos[e];
        if (radix_selected(s, key, p)) {
          atomicAdd(&counts[static_cast<std::int64_t>(p) / a.layout.chunk], 1ull);
        }
      }
    }
    return;  // uniform over the block; tmp was not used
  }
  const T* in = a.src.values + a.src.begin(task.row);
  std::int64_t c = 0;
  strided_batched(in, task.begin, task.end, [&](std::int64_t i, T v) {
    c += radix_selected(s, traits::to_key(v, a.largest), static_cast<std::uint64_t>(i)) ? 1 : 0;
  });
  c = Reduce(tmp).Sum(c);
  if (threadIdx.x == 0) {
    a.chunk_count[t] = c;
  }
  __syncthreads();  // tmp is reused by the block's next task
}

template <class T, class IndexT, class Reduce, class Scan>
__device__ void radix_write_task(const radix_args<T, IndexT>& a, std::int64_t t,
                                 typename Reduce::TempStorage& reduce_tmp,
                                 typename Scan::TempStorage& scan_tmp, std::int64_t& offset)
{
  using traits = key_traits<T>;
  const radix_task task = radix_task_of(a, t);
  const std::int64_t chunk = t % a.layout.chunks;
  const auto s = a.state[task.row];
  const std::int64_t n = a.src.length(task.row);
  const std::int64_t first = a.src.begin(task.row);
  const T* in = a.src.values + first;
  T* out_v = a.dst.values + task.row * a.dst.ld_values;
  IndexT* out_i = a.dst.indices + task.row * a.dst.ld_indices;

  // This chunk's offset: the selected elements of the row's earlier chunks.
  std::int64_t before = 0;
  for (std::int64_t c = threadIdx.x; c < chunk; c += blockDim.x) {
    before += a.chunk_count[task.row * a.layout.chunks + c];
  }
  before = Reduce(reduce_tmp).Sum(before);
  if (threadIdx.x == 0) {
    offset = before;
  }
  __syncthreads();
  // One block scan per stride of blockDim.x elements, in position order; the loads of
  // loads_in_flight strides are issued together while that many whole strides remain.
  constexpr int u_max = radix_policy::loads_in_flight;
  const std::int64_t stride = blockDim.x;
  std::int64_t written = offset;
  auto write_stride = [&](std::int64_t i, T v, bool valid) {
    const bool take =
        valid && radix_selected(s, traits::to_key(v, a.largest), static_cast<std::uint64_t>(i));
    int rank = 0;
    int stride_total = 0;
    Scan(scan_tmp).ExclusiveSum(take ? 1 : 0, rank, stride_total);
    if (take) {
      out_v[written + rank] = v;
      out_i[written + rank] = a.src.index_at(first, i);
    }
    written += stride_total;
    __syncthreads();  // scan_tmp is reused by the next scan
  };
  std::int64_t tile = task.begin;
  for (; tile + u_max * stride <= task.end; tile += u_max * stride) {  // uniform over the block
    T raw[u_max];
#pragma unroll
    for (int u = 0; u < u_max; ++u) {
      raw[u] = in[tile + u * stride + threadIdx.x];
    }
#pragma unroll
    for (int u = 0; u < u_max; ++u) {
      write_stride(tile + u * stride + threadIdx.x, raw[u], true);
    }
  }
  for (; tile < task.end; tile += stride) {
    const std::int64_t i = tile + threadIdx.x;
    write_stride(i, i < task.end ? in[i] : T{}, i < task.end);
  }
  // Padding of rows shorter than k, by the row's first chunk.
  if (chunk == 0) {
    const T pad = traits::padding(a.largest);
    for (std::int64_t pos = (n < a.k ? n : a.k) + threadIdx.x; pos < a.k; pos += blockDim.x) {
      out_v[pos] = pad;
      out_i[pos] = IndexT{-1};
    }
  }
  __syncthreads();  // offset and reduce_tmp are reused by the block's next task
}

}  // namespace spira::selection
