// spira selection: the radix algorithm (MSD radix select in the style of RadiK), any k, any row
// length, dense or ragged rows in one batch.
//
// Order: elements are ranked by (key, position), a total order (selection/keys.hpp), so a row's
// selection is exactly the set {(key, pos) <= (K, P)} for the k-th pair (K, P). The algorithm finds
// (K, P) one 8-bit digit at a time, most significant first: first the digits of the key, then, only
// for rows whose k-th key is duplicated beyond what is needed, the digits of the position. This is
// how the tie rule (smaller index first) holds exactly without sorting.
//
// Adaptive digit positions (RadiK's adaptive scaling, section 4.3, in a form that keeps the order
// exact): the first pass takes the key's top 8 bits and the row's extreme keys; every later key
// digit starts at the highest bit in which the keys still in question can differ, those of the
// chosen bin within the row's extremes (radix_narrow, selection/keys.hpp, shared with the cluster
// form). Values clustered near the k-th, which share most of their bits, take no pass for them,
// and a row whose chosen bin holds one key value goes straight to the ties.
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
// In the persistent form, a row whose elements still in play fit its candidate buffer (RadiK's
// write buffer) is copied there by its next pass, and later passes and the count read only the
// buffer, the row's tasks sharing out its candidates (radix_copy_task, radix_slice_of).
// Then each task counts its selected elements, and writes them at the prefix offset of its chunk
// with a block scan, so the output lists each row's selection by increasing position, independent
// of scheduling and atomics (determinism).
//
// Histogram counts are integers, so their atomic accumulation is order independent.
#pragma once

#include "selection/keys.hpp"
#include "selection/warp.cuh"

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

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

/// The digit a row's next pass fixes and the prefix it is taken under (from the row's state):
/// bits [shift, top) of the key, or of the position once the key is fixed.
template <class T>
struct radix_pass {
  using key_type = typename key_traits<T>::key_type;
  bool key_pass;
  bool first_digit;  ///< no higher digit of the key (or, for positions, of the position) is fixed
  int top;
  int shift;

  __device__ __forceinline__ radix_pass(const radix_layout& l, const radix_row_state<key_type>& s)
      : key_pass(s.key_fixed == 0),
        first_digit(s.top >=
                    (key_pass ? key_traits<T>::bits : radix_policy::digit_bits * l.pos_digits)),
        top(s.top),
        shift(s.top > radix_policy::digit_bits ? s.top - radix_policy::digit_bits : 0)
  {
  }
  /// Whether (key, pos) matches the row's prefix, and then its digit. Where fewer than 8 bits
  /// remain, the digit's upper bits are prefix bits, the same for every match.
  __device__ __forceinline__ bool match(const radix_row_state<key_type>& s, key_type key,
                                        std::uint64_t pos, unsigned& digit) const
  {
    if (key_pass) {
      digit = static_cast<unsigned>(key >> shift) & (radix_policy::bins - 1);
      return first_digit || (key >> top) == (s.key >> top);
    }
    digit = static_cast<unsigned>(pos >> shift) & (radix_policy::bins - 1);
    return key == s.key && (first_digit || (pos >> top) == (s.pos >> top));
  }
  /// Whether (key, pos) ranks before every element matching the row's prefix (it is selected).
  __device__ __forceinline__ bool below(const radix_row_state<key_type>& s, key_type key,
                                        std::uint64_t pos) const
  {
    if (key_pass) {
      return !first_digit && (key >> top) < (s.key >> top);
    }
    return key < s.key || (key == s.key && !first_digit && (pos >> top) < (s.pos >> top));
  }
};

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
    s.lo = ~0ull;  // the first pass takes the extremes
    s.hi = 0;
    s.top = key_traits<T>::bits;
    s.key_fixed = 0;
    s.done = n <= a.k ? 1 : 0;
    s.source = radix_from_row;
    if (s.done) {
      s.key = key_traits<T>::worst;
      s.pos = ~std::uint64_t{0};
    } else {
      atomicAdd(a.pending, 1ull);
    }
    a.state[row] = s;
  }
}

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

/// One warp fixes the next digit of one row from its histogram (and clears the histogram).
template <class T, class IndexT>
__device__ void radix_pick_row(const radix_args<T, IndexT>& a, std::int64_t row, int pass)
{
  using key_type = typename key_traits<T>::key_type;
  constexpr int per_lane = radix_policy::bins / warp::size;
  radix_row_state<key_type> s = a.state[row];
  if (s.done) {
    return;
  }  // uniform over the warp
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
  if (lane != 0) {
    return;
  }

  const radix_layout& l = a.layout;
  s.remaining -= static_cast<std::int64_t>(below);
  const bool complete = count == static_cast<unsigned long long>(s.remaining);
  const int shift = s.top > radix_policy::digit_bits ? s.top - radix_policy::digit_bits : 0;
  if (!s.key_fixed) {
    s.key |= key_type(digit) << shift;
    if (complete) {  // the bin is taken whole: every key up to its last
      s.key |= shift > 0 ? key_type((key_type(1) << shift) - 1) : key_type(0);
      s.pos = ~std::uint64_t{0};
      s.done = 1;
    } else {
      s.top = radix_narrow(s.key, shift, static_cast<key_type>(s.lo), static_cast<key_type>(s.hi));
      if (s.top == 0) {  // the k-th key is found: its ties are taken by position
        s.key_fixed = 1;
        s.top = radix_policy::digit_bits * l.pos_digits;
      }
    }
  } else {
    s.pos |= std::uint64_t(digit) << shift;
    if (complete) {
      s.pos |= shift > 0 ? (std::uint64_t{1} << shift) - 1 : 0;
      s.done = 1;
    }
    s.top = shift;
  }
  if (s.done) {
    atomicAdd(a.pending, ~0ull);
  }  // minus one
  // The write buffer: after a copy pass, read the buffer; once the elements still in play fit it,
  // copy them in the next pass.
  if (s.source == radix_copy) {
    s.source = radix_from_buffer;
  } else if (s.source == radix_from_row && !s.done && pass + 1 < l.key_digits + l.pos_digits &&
             count <= static_cast<unsigned long long>(a.capacity)) {
    s.source = radix_copy;
  }
  a.state[row] = s;
}

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

// ---- multi-launch form: one kernel per phase and digit, for batches with more tasks than one
// co-resident wave (there, one block per task and no grid barriers is faster). -----------------

template <class T, class IndexT>
__global__ void radix_init_kernel(radix_args<T, IndexT> a)
{
  radix_init(a);
}

template <class T, class IndexT>
__global__ void __launch_bounds__(radix_policy::block_threads, radix_policy::streaming_blocks)
    radix_histogram_kernel(radix_args<T, IndexT> a)
{
  __shared__ radix_hist_shared shared;
  radix_histogram_task<false>(a, blockIdx.x, shared);
}

template <class T, class IndexT>
__global__ void radix_pick_kernel(radix_args<T, IndexT> a, int pass)
{
  const std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / warp::size;
  if (row < a.src.rows) {
    radix_pick_row(a, row, pass);
  }
}

template <class T, class IndexT>
__global__ void __launch_bounds__(radix_policy::block_threads)
    radix_count_kernel(radix_args<T, IndexT> a)
{
  using reduce = cub::BlockReduce<std::int64_t, radix_policy::block_threads>;
  __shared__ typename reduce::TempStorage tmp;
  radix_count_task<false, T, IndexT, reduce>(a, blockIdx.x, tmp);
}

template <class T, class IndexT>
__global__ void __launch_bounds__(radix_policy::block_threads)
    radix_write_kernel(radix_args<T, IndexT> a)
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
__global__ void __launch_bounds__(radix_policy::block_threads, radix_policy::persistent_blocks)
    radix_select_kernel(radix_args<T, IndexT> a)
{
  using reduce = cub::BlockReduce<std::int64_t, radix_policy::block_threads>;
  using scan = cub::BlockScan<int, radix_policy::block_threads>;
  __shared__ union {
    radix_hist_shared hist;
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
  const std::int64_t my_warp =
      std::int64_t(blockIdx.x) * radix_policy::warps + threadIdx.x / warp::size;
  for (int pass = 0; pass < a.layout.key_digits + a.layout.pos_digits; ++pass) {
    if (*static_cast<volatile unsigned long long*>(a.pending) == 0) {
      break;
    }  // same for all
    for (std::int64_t t = blockIdx.x; t < tasks; t += gridDim.x) {
      radix_histogram_task<true>(a, t, shared.hist);
    }
    grid.sync();
    for (std::int64_t row = my_warp; row < a.src.rows; row += warps_in_grid) {
      radix_pick_row(a, row, pass);
    }
    grid.sync();
  }
  for (std::int64_t t = blockIdx.x; t < tasks; t += gridDim.x) {
    radix_count_task<true, T, IndexT, reduce>(a, t, shared.reduce);
  }
  grid.sync();
  for (std::int64_t t = blockIdx.x; t < tasks; t += gridDim.x) {
    radix_write_task<T, IndexT, reduce, scan>(a, t, shared.write.reduce, shared.write.scan, offset);
  }
}

}  // namespace spira::selection
