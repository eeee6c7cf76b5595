// spira selection: the radix algorithm (MSD radix select in the style of RadiK), any k, any row
// length, dense or ragged rows in one batch.
//
// Order: elements are ranked by (key, position), a total order (selection/keys.hpp), so a row's
// selection is exactly the set {(key, pos) <= (K, P)} for the k-th pair (K, P). The algorithm finds
// (K, P) one 8-bit digit at a time, most significant first: first the digits of the key, then, only
// for rows whose k-th key is duplicated beyond what is needed, the digits of the position. This is
// how the tie rule (smaller index first) holds exactly without sorting.
//
// When all tasks fit in one co-resident wave, everything runs in one cooperative launch
// (radix_select_kernel): a persistent grid walks the phases with grid-wide barriers in between and
// leaves the digit loop early; larger batches launch one kernel per phase and digit, one block per
// task (the same phase functions). A task is one chunk of one row (ragged
// rows are mapped onto equal chunks, so a long row is spread over many blocks and a short row
// costs one task). Per digit pass, for all rows at once:
//  * histogram: elements whose higher digits match the row's prefix are counted into warp-private
//    shared histograms (warp level), merged per block (block level) and added to the row's global
//    histogram with one atomic per non-empty bin (grid level): hierarchical atomics;
//  * pick: one warp per row scans the 256 bins, fixes the digit containing the k-th element, and
//    marks the row done as soon as the chosen bin holds exactly the elements still needed; the
//    digit loop ends for the whole grid once every row is done (early exit).
// Then each task counts its selected elements, and writes them at the prefix offset of its chunk
// with a block scan, so the output lists each row's selection by increasing position, independent
// of scheduling and atomics (determinism).
//
// Histogram counts are integers, so their atomic accumulation is order independent.
#pragma once

#include "selection/keys.hpp"
#include "selection/warp.cuh"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cooperative_groups.h>

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
    for (int u = 0; u < u_max; ++u) { raw[u] = in[i + u * stride]; }
#pragma unroll
    for (int u = 0; u < u_max; ++u) { f(i + u * stride, raw[u]); }
  }
  for (; i < end; i += stride) { f(i, in[i]); }
}

/// A row's search state: the (key, position) prefix fixed so far and how many elements matching
/// that prefix still have to be taken. Once `done`, (key, pos) is the row's threshold (K, P).
template <class Key>
struct radix_row_state {
  Key key;
  std::uint64_t pos;
  std::int64_t remaining;
  int done;
};

/// How rows are cut into chunks: task t is chunk t % chunks of row t / chunks.
struct radix_layout {
  std::int64_t chunk = 0;
  std::int64_t chunks = 0;
  int key_digits = 0;  ///< digit passes over the key
  int pos_digits = 0;  ///< digit passes over the position (tie breaking)
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
  unsigned long long* hist;    ///< rows x bins, zero on entry
  std::int64_t* chunk_count;   ///< rows x chunks
  unsigned long long* pending; ///< rows not done yet, zero on entry
};

/// Rows of the task range: one task = one chunk of one row.
struct radix_task {
  std::int64_t row, begin, end;  ///< positions [begin, end) of the row; empty when begin >= end
};

template <class T, class IndexT>
__device__ __forceinline__ radix_task radix_task_of(const radix_args<T, IndexT>& a, std::int64_t t)
{
  radix_task task;
  task.row = t / a.layout.chunks;
  const std::int64_t n = a.src.length(task.row);
  task.begin = (t % a.layout.chunks) * a.layout.chunk;
  task.end = task.begin + a.layout.chunk < n ? task.begin + a.layout.chunk : n;
  return task;
}

/// Phase 0: row states (a row with at most k elements is done at once: all of it is selected).
template <class T, class IndexT>
__device__ void radix_init(const radix_args<T, IndexT>& a)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t row = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; row < a.src.rows;
       row += stride) {
    const std::int64_t n = a.src.length(row);
    radix_row_state<typename key_traits<T>::key_type> s;
    s.key = 0;
    s.pos = 0;
    s.remaining = n < a.k ? n : a.k;
    s.done = n <= a.k ? 1 : 0;
    if (s.done) {
      s.key = key_traits<T>::worst;
      s.pos = ~std::uint64_t{0};
    } else {
      atomicAdd(a.pending, 1ull);
    }
    a.state[row] = s;
  }
}

/// Digit histogram of one task: warp-private shared histograms, merged per block, one global
/// atomic per non-empty bin.
template <class T, class IndexT>
__device__ void radix_histogram_task(const radix_args<T, IndexT>& a, const radix_task& task,
                                     int pass, unsigned (*warp_hist)[radix_policy::bins])
{
  using traits = key_traits<T>;
  using key_type = typename traits::key_type;
  const radix_row_state<key_type> s = a.state[task.row];
  if (s.done || task.begin >= task.end) { return; }  // uniform over the block
  const T* in = a.src.values + a.src.begin(task.row);
  for (int b = threadIdx.x; b < radix_policy::warps * radix_policy::bins; b += blockDim.x) {
    (&warp_hist[0][0])[b] = 0;
  }
  __syncthreads();
  unsigned* mine = warp_hist[threadIdx.x / warp::size];
  const radix_layout& l = a.layout;
  const bool key_pass = pass < l.key_digits;
  const int shift = key_pass ? traits::bits - radix_policy::digit_bits * (pass + 1)
                             : radix_policy::digit_bits * (l.key_digits + l.pos_digits - pass - 1);
  const bool first_digit = pass == 0 || pass == l.key_digits;
  strided_batched(in, task.begin, task.end, [&](std::int64_t i, T v) {
    const key_type key = traits::to_key(v, a.largest);
    bool match;
    unsigned digit;
    if (key_pass) {
      match = first_digit || (key >> (shift + radix_policy::digit_bits)) ==
                               (s.key >> (shift + radix_policy::digit_bits));
      digit = static_cast<unsigned>(key >> shift) & (radix_policy::bins - 1);
    } else {
      const auto pos = static_cast<std::uint64_t>(i);
      match = key == s.key && (first_digit || (pos >> (shift + radix_policy::digit_bits)) ==
                                                (s.pos >> (shift + radix_policy::digit_bits)));
      digit = static_cast<unsigned>(pos >> shift) & (radix_policy::bins - 1);
    }
    if (match) { atomicAdd(&mine[digit], 1u); }
  });
  __syncthreads();
  for (int b = threadIdx.x; b < radix_policy::bins; b += blockDim.x) {
    unsigned total = 0;
#pragma unroll
    for (int w = 0; w < radix_policy::warps; ++w) { total += warp_hist[w][b]; }
    if (total != 0) { atomicAdd(&a.hist[task.row * radix_policy::bins + b], total); }
  }
  __syncthreads();  // warp_hist is reused by the block's next task
}

/// One warp fixes the next digit of one row from its histogram (and clears the histogram).
template <class T, class IndexT>
__device__ void radix_pick_row(const radix_args<T, IndexT>& a, std::int64_t row, int pass)
{
  using key_type = typename key_traits<T>::key_type;
  constexpr int per_lane = radix_policy::bins / warp::size;
  radix_row_state<key_type> s = a.state[row];
  if (s.done) { return; }  // uniform over the warp
  const int lane = warp::lane_id();
  unsigned long long* h = a.hist + row * radix_policy::bins;
  unsigned long long c[per_lane];
  unsigned long long lane_total = 0;
#pragma unroll
  for (int j = 0; j < per_lane; ++j) {
    c[j] = h[lane * per_lane + j];
    h[lane * per_lane + j] = 0;  // ready for the next pass
    lane_total += c[j];
  }
  const unsigned long long before_lane = warp::inclusive_sum(lane_total) - lane_total;
  const auto remaining = static_cast<unsigned long long>(s.remaining);
  // The bin where the running count first reaches `remaining`: exactly one lane owns it.
  int digit = -1;
  unsigned long long below = before_lane;
  unsigned long long count = 0;
#pragma unroll
  for (int j = 0; j < per_lane; ++j) {
    if (digit < 0 && below + c[j] >= remaining) {
      digit = lane * per_lane + j;
      count = c[j];
    } else if (digit < 0) {
      below += c[j];
    }
  }
  const unsigned owner = __ballot_sync(warp::full_mask, digit >= 0 && below < remaining);
  const int src_lane = __ffs(owner) - 1;
  digit = __shfl_sync(warp::full_mask, digit, src_lane);
  below = __shfl_sync(warp::full_mask, below, src_lane);
  count = __shfl_sync(warp::full_mask, count, src_lane);
  if (lane != 0) { return; }

  const radix_layout& l = a.layout;
  s.remaining -= static_cast<std::int64_t>(below);
  const bool complete = count == static_cast<unsigned long long>(s.remaining);
  if (pass < l.key_digits) {
    const int shift = key_traits<T>::bits - radix_policy::digit_bits * (pass + 1);
    s.key |= key_type(digit) << shift;
    if (complete) {
      s.key |= shift > 0 ? (key_type(1) << shift) - 1 : key_type(0);
      s.pos = ~std::uint64_t{0};
      s.done = 1;
    }
  } else {
    const int shift = radix_policy::digit_bits * (l.key_digits + l.pos_digits - pass - 1);
    s.pos |= std::uint64_t(digit) << shift;
    if (complete) {
      s.pos |= shift > 0 ? (std::uint64_t{1} << shift) - 1 : 0;
      s.done = 1;
    }
  }
  if (s.done) { atomicAdd(a.pending, ~0ull); }  // minus one
  a.state[row] = s;
}

template <class Key>
__device__ __forceinline__ bool radix_selected(const radix_row_state<Key>& s, Key key,
                                               std::uint64_t pos)
{
  return key < s.key || (key == s.key && pos <= s.pos);
}

template <class T, class IndexT, class Reduce>
__device__ void radix_count_task(const radix_args<T, IndexT>& a, std::int64_t t,
                                 typename Reduce::TempStorage& tmp)
{
  using traits = key_traits<T>;
  const radix_task task = radix_task_of(a, t);
  const auto s = a.state[task.row];
  const T* in = a.src.values + a.src.begin(task.row);
  std::int64_t c = 0;
  strided_batched(in, task.begin, task.end, [&](std::int64_t i, T v) {
    c += radix_selected(s, traits::to_key(v, a.largest), static_cast<std::uint64_t>(i)) ? 1 : 0;
  });
  c = Reduce(tmp).Sum(c);
  if (threadIdx.x == 0) { a.chunk_count[t] = c; }
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
  if (threadIdx.x == 0) { offset = before; }
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
    for (int u = 0; u < u_max; ++u) { raw[u] = in[tile + u * stride + threadIdx.x]; }
#pragma unroll
    for (int u = 0; u < u_max; ++u) { write_stride(tile + u * stride + threadIdx.x, raw[u], true); }
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

// ---- multi-launch form: one kernel per phase and digit, for batches with more tasks than one
// co-resident wave (there, one block per task and no grid barriers is faster). -----------------

template <class T, class IndexT>
__global__ void radix_init_kernel(radix_args<T, IndexT> a)
{
  radix_init(a);
}

template <class T, class IndexT>
__global__ void __launch_bounds__(radix_policy::block_threads)
  radix_histogram_kernel(radix_args<T, IndexT> a, int pass)
{
  __shared__ unsigned warp_hist[radix_policy::warps][radix_policy::bins];
  radix_histogram_task(a, radix_task_of(a, blockIdx.x), pass, warp_hist);
}

template <class T, class IndexT>
__global__ void radix_pick_kernel(radix_args<T, IndexT> a, int pass)
{
  const std::int64_t row =
    (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / warp::size;
  if (row < a.src.rows) { radix_pick_row(a, row, pass); }
}

template <class T, class IndexT>
__global__ void __launch_bounds__(radix_policy::block_threads) radix_count_kernel(radix_args<T, IndexT> a)
{
  using reduce = cub::BlockReduce<std::int64_t, radix_policy::block_threads>;
  __shared__ typename reduce::TempStorage tmp;
  radix_count_task<T, IndexT, reduce>(a, blockIdx.x, tmp);
}

template <class T, class IndexT>
__global__ void __launch_bounds__(radix_policy::block_threads) radix_write_kernel(radix_args<T, IndexT> a)
{
  using reduce = cub::BlockReduce<std::int64_t, radix_policy::block_threads>;
  using scan = cub::BlockScan<int, radix_policy::block_threads>;
  __shared__ typename reduce::TempStorage reduce_tmp;
  __shared__ typename scan::TempStorage scan_tmp;
  __shared__ std::int64_t offset;
  radix_write_task<T, IndexT, reduce, scan>(a, blockIdx.x, reduce_tmp, scan_tmp, offset);
}

// ---- persistent form ------------------------------------------------------------------------

/// The whole radix select in one cooperative launch: a persistent grid walks the tasks of each
/// phase (grid-stride), with grid-wide barriers between phases, and leaves the digit loop as soon
/// as every row is done. One launch instead of two per digit keeps small batches (a few long
/// rows) from being dominated by launch latency.
template <class T, class IndexT>
__global__ void __launch_bounds__(radix_policy::block_threads)
  radix_select_kernel(radix_args<T, IndexT> a)
{
  using reduce = cub::BlockReduce<std::int64_t, radix_policy::block_threads>;
  using scan = cub::BlockScan<int, radix_policy::block_threads>;
  __shared__ union {
    unsigned warp_hist[radix_policy::warps][radix_policy::bins];
    typename reduce::TempStorage reduce;
    struct {
      typename reduce::TempStorage reduce;
      typename scan::TempStorage scan;
    } write;
  } shared;
  __shared__ std::int64_t offset;
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const std::int64_t tasks = a.src.rows * a.layout.chunks;

  radix_init(a);
  grid.sync();
  const std::int64_t warps_in_grid = std::int64_t(gridDim.x) * radix_policy::warps;
  const std::int64_t my_warp = std::int64_t(blockIdx.x) * radix_policy::warps + threadIdx.x / warp::size;
  for (int pass = 0; pass < a.layout.key_digits + a.layout.pos_digits; ++pass) {
    if (*static_cast<volatile unsigned long long*>(a.pending) == 0) { break; }  // same for all
    for (std::int64_t t = blockIdx.x; t < tasks; t += gridDim.x) {
      radix_histogram_task(a, radix_task_of(a, t), pass, shared.warp_hist);
    }
    grid.sync();
    for (std::int64_t row = my_warp; row < a.src.rows; row += warps_in_grid) {
      radix_pick_row(a, row, pass);
    }
    grid.sync();
  }
  for (std::int64_t t = blockIdx.x; t < tasks; t += gridDim.x) {
    radix_count_task<T, IndexT, reduce>(a, t, shared.reduce);
  }
  grid.sync();
  for (std::int64_t t = blockIdx.x; t < tasks; t += gridDim.x) {
    radix_write_task<T, IndexT, reduce, scan>(a, t, shared.write.reduce, shared.write.scan, offset);
  }
}

}  // namespace spira::selection
