// spira selection: the radix algorithm's tuning policy, and what its phases share: the loads of a
// task's elements, the row states, the kernel arguments and the mapping of tasks onto rows
// (selection/radix.cuh describes the algorithm).
#pragma once

#include "selection/keys.hpp"
#include "selection/warp.cuh"

#include <cstdint>

namespace spira::selection {

/// Tuning of the radix algorithm.
struct radix_policy {
  static constexpr int digit_bits = 8;
  static constexpr int bins = 1 << digit_bits;
  static constexpr int block_threads = 256;
  static constexpr int warps = block_threads / warp::size;
  /// A chunk (one block's share of a row) holds at least this many elements...
  static constexpr std::int64_t min_chunk = 2048;
  /// ...and rows are split until there are about this many blocks per multiprocessor.
  static constexpr int blocks_per_sm = 4;
  /// Loads a thread issues before using the first (strided_batched): with one load in flight per
  /// thread, 1,024 threads per multiprocessor keep only 4 KB in flight, far below what the
  /// memory system needs to stream.
  static constexpr int loads_in_flight = 8;
  /// Blocks per multiprocessor the kernels are built for (register bounds): the histogram kernel
  /// of the multi-launch form streams whole rows and wants every warp; the persistent kernel holds
  /// all phases.
  static constexpr int streaming_blocks = 8;
  static constexpr int persistent_blocks = 4;
  /// RadiK's write buffer: every row's candidate buffer holds 1/buffer_share of the longest row;
  /// once a row's elements still in play (those matching its prefix) fit, the next pass copies
  /// them there and later passes read only that (see radix_copy_task).
  static constexpr std::int64_t buffer_share = 16;
  /// All rows' candidate buffers together take at most this many bytes.
  static constexpr std::int64_t buffer_budget = std::int64_t(1) << 30;
  /// A buffer holds at least this many entries, or the rows go without one.
  static constexpr std::int64_t min_buffer = 64;
  /// A task of a buffer pass takes at least this many entries (batched task rescheduling: a
  /// row's tasks share out its candidates, so a few candidates do not wake every chunk).
  static constexpr std::int64_t min_slice = 1024;
};

/// Calls f(i, in[i]) for i = begin + threadIdx.x, then + blockDim.x, ... below end, in that
/// order. While radix_policy::loads_in_flight whole strides remain, their loads are all issued
/// before the first is used; the rest (and short tasks, where a batch would mostly re-read) go one
/// stride at a time.
template <class T, class F>
__device__ __forceinline__ void strided_batched(const T* in, std::int64_t begin, std::int64_t end,
                                                F&& f)
{
  constexpr int u_max = radix_policy::loads_in_flight;
  const std::int64_t stride = blockDim.x;
  std::int64_t i = begin + threadIdx.x;
  for (; i + (u_max - 1) * stride < end; i += u_max * stride) {
    T raw[u_max];
#pragma unroll
    for (int u = 0; u < u_max; ++u) {
      raw[u] = in[i + u * stride];
    }
#pragma unroll
    for (int u = 0; u < u_max; ++u) {
      f(i + u * stride, raw[u]);
    }
  }
  for (; i < end; i += stride) {
    f(i, in[i]);
  }
}

/// Where a digit pass reads a row's elements: from the row, from the row while copying those
/// still in play to the row's candidate buffer, or from that buffer.
enum radix_source : int { radix_from_row = 0, radix_copy = 1, radix_from_buffer = 2 };

/// A row's search state: the (key, position) prefix fixed so far and how many elements matching
/// that prefix still have to be taken. Once `done`, (key, pos) is the row's threshold (K, P).
/// The next pass takes the digit below bit `top` of the key, or of the position once `key_fixed`
/// (the k-th key is known and the ties are broken by position): bits [max(top - 8, 0), top).
/// Key digits start at the highest bit in which the keys still in question can differ, from the
/// row's extremes [lo, hi] that the first pass takes (radix_narrow, selection/keys.hpp).
/// `source` (a radix_source) says where the next pass reads the row's elements.
template <class Key>
struct radix_row_state {
  Key key;
  std::uint64_t pos;
  std::int64_t remaining;
  unsigned long long lo;
  unsigned long long hi;
  int top;
  int key_fixed;
  int done;
  int source;
};

/// How rows are cut into chunks: task t is chunk t % chunks of row t / chunks.
struct radix_layout {
  std::int64_t chunk = 0;
  std::int64_t chunks = 0;
  int key_digits = 0;  ///< digit passes over the key, at most
  int pos_digits = 0;  ///< digit passes over the position (tie breaking), at most
};

/// Per-launch arguments of the radix kernel.
template <class T, class IndexT>
struct radix_args {
  row_source<T, IndexT> src;
  row_sink<T, IndexT> dst;
  std::int64_t k;
  radix_layout layout;
  bool largest;
  radix_row_state<typename key_traits<T>::key_type>* state;
  unsigned long long* hist;     ///< rows x bins, zero on entry
  std::int64_t* chunk_count;    ///< rows x chunks
  unsigned long long* pending;  ///< rows not done yet, zero on entry
  /// Candidate buffers: row r's entries are (buffer_key, buffer_pos)[r * capacity + e] for e below
  /// fill[r] (zero on entry); capacity 0: no buffers.
  typename key_traits<T>::key_type* buffer_key;
  std::uint64_t* buffer_pos;
  unsigned long long* fill;
  std::int64_t capacity;
};

/// Rows of the task range: one task = one chunk of one row.
struct radix_task {
  std::int64_t row, chunk;
  std::int64_t begin, end;  ///< positions [begin, end) of the row; empty if begin >= end
};

template <class T, class IndexT>
__device__ __forceinline__ radix_task radix_task_of(const radix_args<T, IndexT>& a, std::int64_t t)
{
  radix_task task;
  task.row = t / a.layout.chunks;
  task.chunk = t % a.layout.chunks;
  const std::int64_t n = a.src.length(task.row);
  task.begin = task.chunk * a.layout.chunk;
  task.end = task.begin + a.layout.chunk < n ? task.begin + a.layout.chunk : n;
  return task;
}

/// The entries [begin, end) of the row's candidate buffer that the task takes in a buffer pass
/// (batched task rescheduling: the row's tasks share out its candidates, not its positions).
template <class T, class IndexT>
__device__ __forceinline__ radix_task radix_slice_of(const radix_args<T, IndexT>& a,
                                                     radix_task task)
{
  const auto fill = static_cast<std::int64_t>(a.fill[task.row]);
  std::int64_t per = (fill + a.layout.chunks - 1) / a.layout.chunks;
  per = per > radix_policy::min_slice ? per : radix_policy::min_slice;
  task.begin = task.chunk * per;
  task.end = task.begin + per < fill ? task.begin + per : fill;
  return task;
}

}  // namespace spira::selection
