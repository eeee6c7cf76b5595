// spira selection: the digit histogram of the radix algorithm, per task: from the row, from the
// row while copying the elements still in play to the row's candidate buffer, or from that buffer
// (selection/radix.cuh describes the algorithm).
#pragma once

#include "selection/keys.hpp"
#include "selection/radix_passes.cuh"
#include "selection/radix_policy.cuh"
#include "selection/warp.cuh"

#include <cstdint>

namespace spira::selection {

/// Shared memory of a histogram task.
struct radix_hist_shared {
  unsigned warp_hist[radix_policy::warps][radix_policy::bins];
  unsigned warp_total[2][radix_policy::warps];  ///< the copy pass's per-warp counts, by tile parity
  unsigned long long base;
};

/// The copy pass of a row (RadiK's write buffer): counts the digits of the elements matching the
/// prefix like any pass, and appends them as (key, position) to the row's candidate buffer. Each
/// block collects its candidates over a tile of radix_policy::loads_in_flight strides (ranked in
/// each warp with ballots), reserves their slots with one global atomic per tile that has any, and
/// writes them contiguously; a tile without candidates costs one barrier. Candidate order in the
/// buffer depends on scheduling, and nothing downstream depends on it (counts are integers and
/// the output is written from the row). Elements ranked before the prefix are selected whatever
/// the later digits: the task stores their count as its chunk count, to which the count phase
/// adds the chunk's selected candidates.
template <class T, class IndexT>
__device__ void radix_copy_task(const radix_args<T, IndexT>& a, std::int64_t t,
                                const radix_task& task, const radix_pass<T>& pass,
                                const radix_row_state<typename key_traits<T>::key_type>& s,
                                radix_hist_shared& sh)
{
  using traits = key_traits<T>;
  using key_type = typename traits::key_type;
  constexpr int u_max = radix_policy::loads_in_flight;
  const T* in = a.src.values + a.src.begin(task.row);
  key_type* out_key = a.buffer_key + task.row * a.capacity;
  std::uint64_t* out_pos = a.buffer_pos + task.row * a.capacity;
  const int w = threadIdx.x / warp::size;
  unsigned* mine = sh.warp_hist[w];
  const unsigned lanes_below = warp::lanes_below();
  const std::int64_t stride = blockDim.x;
  int below = 0;
  int parity = 0;
  for (std::int64_t tile = task.begin; tile < task.end; tile += u_max * stride) {  // uniform
    T raw[u_max];
#pragma unroll
    for (int u = 0; u < u_max; ++u) {
      const std::int64_t i = tile + u * stride + threadIdx.x;
      raw[u] = i < task.end ? in[i] : T{};
    }
    unsigned taken = 0;
    unsigned warp_count = 0;
#pragma unroll
    for (int u = 0; u < u_max; ++u) {
      const std::int64_t i = tile + u * stride + threadIdx.x;
      const key_type key = traits::to_key(raw[u], a.largest);
      unsigned digit;
      if (i < task.end && pass.match(s, key, static_cast<std::uint64_t>(i), digit)) {
        atomicAdd(&mine[digit], 1u);
        taken |= 1u << u;
      } else if (i < task.end && pass.below(s, key, static_cast<std::uint64_t>(i))) {
        ++below;
      }
      warp_count += __popc(__ballot_sync(warp::full_mask, (taken >> u) & 1u));
    }
    if (warp::lane_id() == 0) {
      sh.warp_total[parity][w] = warp_count;
    }
    __syncthreads();
    unsigned before = 0;
    unsigned total = 0;
#pragma unroll
    for (int v = 0; v < radix_policy::warps; ++v) {
      const unsigned c = sh.warp_total[parity][v];
      before += v < w ? c : 0u;
      total += c;
    }
    if (total > 0) {  // uniform over the block
      if (threadIdx.x == 0) {
        sh.base = atomicAdd(&a.fill[task.row], static_cast<unsigned long long>(total));
      }
      __syncthreads();
      auto slot = static_cast<std::int64_t>(sh.base) + before;
#pragma unroll
      for (int u = 0; u < u_max; ++u) {
        const unsigned ballot = __ballot_sync(warp::full_mask, (taken >> u) & 1u);
        if ((taken >> u) & 1u) {
          const std::int64_t at = slot + __popc(ballot & lanes_below);
          out_key[at] = traits::to_key(raw[u], a.largest);
          out_pos[at] = static_cast<std::uint64_t>(tile + u * stride + threadIdx.x);
        }
        slot += __popc(ballot);
      }
    }
    // sh.warp_total alternates by tile, so the next tile's counts cannot overwrite these before
    // every warp has read them (it waits at the next barrier); sh.base is written after that one.
    parity ^= 1;
  }
  below = warp::inclusive_sum(below);  // the warp's total in its last lane
  __syncthreads();                     // the last tile's totals are read
  if (warp::lane_id() == warp::size - 1) {
    sh.warp_total[0][w] = static_cast<unsigned>(below);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    std::int64_t chunk_below = 0;
    for (int v = 0; v < radix_policy::warps; ++v) {
      chunk_below += sh.warp_total[0][v];
    }
    a.chunk_count[t] = chunk_below;
  }
}

/// Counts the digits of a task's chunk of the row into the warp's histogram `mine`, with one loop
/// per kind of pass, so the element loop tests only what the pass needs. The first pass also takes
/// the row's extremes (one global atomic per warp and bound).
template <class T, class IndexT, class State>
__device__ __forceinline__ void radix_row_digits(const radix_args<T, IndexT>& a,
                                                 const radix_task& task, const radix_pass<T>& pass,
                                                 const State& s, unsigned* mine)
{
  using traits = key_traits<T>;
  using key_type = typename traits::key_type;
  constexpr unsigned low = radix_policy::bins - 1;
  const T* in = a.src.values + a.src.begin(task.row);
  const int shift = pass.shift;
  if (pass.key_pass && pass.first_digit) {
    key_type lo = traits::worst;
    key_type hi = 0;
    strided_batched(in, task.begin, task.end, [&](std::int64_t, T v) {
      const key_type key = traits::to_key(v, a.largest);
      atomicAdd(&mine[static_cast<unsigned>(key >> shift) & low], 1u);
      lo = key < lo ? key : lo;
      hi = key > hi ? key : hi;
    });
    lo = warp::reduce_min(lo);
    hi = warp::reduce_max(hi);
    if (warp::lane_id() == 0) {
      atomicMin(&a.state[task.row].lo, static_cast<unsigned long long>(lo));
      atomicMax(&a.state[task.row].hi, static_cast<unsigned long long>(hi));
    }
  } else if (pass.key_pass) {
    const int top = pass.top;
    const key_type prefix = s.key >> top;
    strided_batched(in, task.begin, task.end, [&](std::int64_t, T v) {
      const key_type key = traits::to_key(v, a.largest);
      if ((key >> top) == prefix) {
        atomicAdd(&mine[static_cast<unsigned>(key >> shift) & low], 1u);
      }
    });
  } else {
    strided_batched(in, task.begin, task.end, [&](std::int64_t i, T v) {
      unsigned digit;
      if (pass.match(s, traits::to_key(v, a.largest), static_cast<std::uint64_t>(i), digit)) {
        atomicAdd(&mine[digit], 1u);
      }
    });
  }
}

/// Counts the digits of a task's slice of the row's candidate buffer into `mine`.
template <class T, class IndexT, class State>
__device__ __forceinline__ void radix_buffer_digits(const radix_args<T, IndexT>& a,
                                                    const radix_task& slice,
                                                    const radix_pass<T>& pass, const State& s,
                                                    unsigned* mine)
{
  using key_type = typename key_traits<T>::key_type;
  const key_type* keys = a.buffer_key + slice.row * a.capacity;
  const std::uint64_t* pos = a.buffer_pos + slice.row * a.capacity;
  strided_batched(keys, slice.begin, slice.end, [&](std::int64_t e, key_type key) {
    unsigned digit;
    // Positions are loaded only where a position digit is taken and the key matches.
    const bool need_pos = !pass.key_pass && key == s.key;
    if (pass.match(s, key, need_pos ? pos[e] : 0, digit)) {
      atomicAdd(&mine[digit], 1u);
    }
  });
}

/// Digit histogram of one task: warp-private shared histograms, merged per block, one global
/// atomic per non-empty bin. The task reads its chunk of the row, copies it (radix_copy_task), or
/// reads its slice of the row's candidate buffer. Without Buffers, every row is read from the row
/// (the multi-launch form, whose rows have no buffers), and the kernel goes without the registers
/// of the other two.
template <bool Buffers, class T, class IndexT>
__device__ void radix_histogram_task(const radix_args<T, IndexT>& a, std::int64_t t,
                                     radix_hist_shared& sh)
{
  using traits = key_traits<T>;
  using key_type = typename traits::key_type;
  radix_task task = radix_task_of(a, t);
  const radix_row_state<key_type> s = a.state[task.row];
  if (s.done) {
    return;
  }  // uniform over the block
  if (Buffers && s.source == radix_from_buffer) {
    task = radix_slice_of(a, task);
  }
  if (task.begin >= task.end) {
    if (Buffers && s.source == radix_copy && threadIdx.x == 0) {
      a.chunk_count[t] = 0;
    }
    return;
  }
  for (int b = threadIdx.x; b < radix_policy::warps * radix_policy::bins; b += blockDim.x) {
    (&sh.warp_hist[0][0])[b] = 0;
  }
  __syncthreads();
  unsigned* mine = sh.warp_hist[threadIdx.x / warp::size];
  const radix_pass<T> pass(a.layout, s);
  if (!Buffers || s.source == radix_from_row) {
    radix_row_digits(a, task, pass, s, mine);
  } else if constexpr (Buffers) {
    if (s.source == radix_from_buffer) {
      radix_buffer_digits(a, task, pass, s, mine);
    } else {
      radix_copy_task(a, t, task, pass, s, sh);
    }
  }
  __syncthreads();
  for (int b = threadIdx.x; b < radix_policy::bins; b += blockDim.x) {
    unsigned total = 0;
#pragma unroll
    for (int w = 0; w < radix_policy::warps; ++w) {
      total += sh.warp_hist[w][b];
    }
    if (total != 0) {
      atomicAdd(&a.hist[task.row * radix_policy::bins + b], total);
    }
  }
  __syncthreads();  // the shared memory is reused by the block's next task
}

}  // namespace spira::selection
