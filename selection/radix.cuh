// spira selection: the radix algorithm (MSD radix select in the style of RadiK), any k, any row
// length, dense or ragged rows in one batch.
//
// Order: elements are ranked by (key, position), a total order (selection/keys.hpp), so a row's
// selection is exactly the set {(key, pos) <= (K, P)} for the k-th pair (K, P). The algorithm finds
// (K, P) one 8-bit digit at a time, most significant first: first the digits of the key, then, only
// for rows whose k-th key is duplicated beyond what is needed, the digits of the position. This is
// how the tie rule (smaller index first) holds exactly without sorting.
//
// Per digit pass, for all rows at once:
//  * radix_histogram_kernel: every block owns one chunk of one row (a "task"; ragged rows are
//    mapped onto equal chunks, so a long row is spread over many blocks and short rows cost one
//    block each). Elements whose higher digits match the row's prefix are counted into warp-private
//    shared histograms (warp level), merged per block (block level) and added to the row's global
//    histogram with one atomic per non-empty bin (grid level): hierarchical atomics.
//  * radix_pick_kernel: one warp per row scans the 256 bins, fixes the digit containing the k-th
//    element, and marks the row done as soon as the chosen bin holds exactly the elements still
//    needed (early exit: later passes skip the row).
// Then radix_count_kernel counts each chunk's selected elements and radix_write_kernel writes them
// at the chunk's prefix offset with a block scan, so the output lists each row's selection by
// increasing position, independent of scheduling and atomics (determinism).
//
// Histogram counts are integers, so their atomic accumulation is order independent.
#pragma once

#include "selection/keys.hpp"
#include "selection/warp.cuh"

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
  static constexpr int pick_warps_per_block = 4;
};

/// A row's search state: the (key, position) prefix fixed so far and how many elements matching
/// that prefix still have to be taken. Once `done`, (key, pos) is the row's threshold (K, P).
template <class Key>
struct radix_row_state {
  Key key;
  std::uint64_t pos;
  std::int64_t remaining;
  int done;
};

/// How rows are cut into chunks: block b works on chunk b % chunks of row b / chunks.
struct radix_layout {
  std::int64_t chunk = 0;
  std::int64_t chunks = 0;
  int key_digits = 0;  ///< digit passes over the key
  int pos_digits = 0;  ///< digit passes over the position (tie breaking)
};

template <class Key>
__device__ __forceinline__ bool radix_selected(const radix_row_state<Key>& s, Key key,
                                               std::uint64_t pos)
{
  return key < s.key || (key == s.key && pos <= s.pos);
}

template <class T, class IndexT>
__global__ void radix_init_kernel(row_source<T, IndexT> src, std::int64_t k,
                                  radix_row_state<typename key_traits<T>::key_type>* state)
{
  const std::int64_t row = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= src.rows) { return; }
  const std::int64_t n = src.length(row);
  radix_row_state<typename key_traits<T>::key_type> s;
  s.key = 0;
  s.pos = 0;
  s.remaining = n < k ? n : k;
  s.done = n <= k ? 1 : 0;
  if (s.done) {  // every element is selected
    s.key = key_traits<T>::worst;
    s.pos = ~std::uint64_t{0};
  }
  state[row] = s;
}

template <class T, class IndexT>
__global__ void __launch_bounds__(radix_policy::block_threads)
  radix_histogram_kernel(row_source<T, IndexT> src, radix_layout layout, int pass, bool largest,
                         const radix_row_state<typename key_traits<T>::key_type>* state,
                         unsigned long long* hist)
{
  using traits = key_traits<T>;
  using key_type = typename traits::key_type;
  __shared__ unsigned warp_hist[radix_policy::warps][radix_policy::bins];

  const std::int64_t row = std::int64_t(blockIdx.x) / layout.chunks;
  const std::int64_t chunk = std::int64_t(blockIdx.x) % layout.chunks;
  const radix_row_state<key_type> s = state[row];
  const std::int64_t n = src.length(row);
  const std::int64_t begin = chunk * layout.chunk;
  if (s.done || begin >= n) { return; }  // uniform over the block
  const std::int64_t end = begin + layout.chunk < n ? begin + layout.chunk : n;
  const T* in = src.values + src.begin(row);

  for (int b = threadIdx.x; b < radix_policy::warps * radix_policy::bins; b += blockDim.x) {
    (&warp_hist[0][0])[b] = 0;
  }
  __syncthreads();
  unsigned* mine = warp_hist[threadIdx.x / warp::size];

  const bool key_pass = pass < layout.key_digits;
  const int shift = key_pass
                      ? traits::bits - radix_policy::digit_bits * (pass + 1)
                      : radix_policy::digit_bits * (layout.key_digits + layout.pos_digits - pass - 1);
  const bool first_digit = pass == 0 || pass == layout.key_digits;
  for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const key_type key = traits::to_key(in[i], largest);
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
  }
  __syncthreads();
  for (int b = threadIdx.x; b < radix_policy::bins; b += blockDim.x) {
    unsigned total = 0;
#pragma unroll
    for (int w = 0; w < radix_policy::warps; ++w) { total += warp_hist[w][b]; }
    if (total != 0) { atomicAdd(&hist[row * radix_policy::bins + b], total); }
  }
}

template <class Key>
__global__ void radix_pick_kernel(std::int64_t rows, radix_layout layout, int pass, int key_bits,
                                  radix_row_state<Key>* state, unsigned long long* hist)
{
  constexpr int per_lane = radix_policy::bins / warp::size;
  const std::int64_t row = std::int64_t(blockIdx.x) * radix_policy::pick_warps_per_block +
                           threadIdx.x / warp::size;
  if (row >= rows) { return; }
  radix_row_state<Key> s = state[row];
  if (s.done) { return; }
  const int lane = warp::lane_id();
  unsigned long long* h = hist + row * radix_policy::bins;
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

  s.remaining -= static_cast<std::int64_t>(below);
  const bool complete = count == static_cast<unsigned long long>(s.remaining);
  if (pass < layout.key_digits) {
    const int shift = key_bits - radix_policy::digit_bits * (pass + 1);
    s.key |= Key(digit) << shift;
    if (complete) {
      s.key |= shift > 0 ? (Key(1) << shift) - 1 : Key(0);
      s.pos = ~std::uint64_t{0};
      s.done = 1;
    }
  } else {
    const int shift = radix_policy::digit_bits * (layout.key_digits + layout.pos_digits - pass - 1);
    s.pos |= std::uint64_t(digit) << shift;
    if (complete) {
      s.pos |= shift > 0 ? (std::uint64_t{1} << shift) - 1 : 0;
      s.done = 1;
    }
  }
  state[row] = s;
}

template <class T, class IndexT>
__global__ void __launch_bounds__(radix_policy::block_threads)
  radix_count_kernel(row_source<T, IndexT> src, radix_layout layout, bool largest,
                     const radix_row_state<typename key_traits<T>::key_type>* state,
                     std::int64_t* chunk_count)
{
  using traits = key_traits<T>;
  using reduce = cub::BlockReduce<std::int64_t, radix_policy::block_threads>;
  __shared__ typename reduce::TempStorage tmp;
  const std::int64_t row = std::int64_t(blockIdx.x) / layout.chunks;
  const std::int64_t chunk = std::int64_t(blockIdx.x) % layout.chunks;
  const auto s = state[row];
  const std::int64_t n = src.length(row);
  const std::int64_t begin = chunk * layout.chunk;
  const std::int64_t end = begin + layout.chunk < n ? begin + layout.chunk : n;
  const T* in = src.values + src.begin(row);
  std::int64_t c = 0;
  for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    c += radix_selected(s, traits::to_key(in[i], largest), static_cast<std::uint64_t>(i)) ? 1 : 0;
  }
  c = reduce(tmp).Sum(c);
  if (threadIdx.x == 0) { chunk_count[blockIdx.x] = c; }
}

template <class T, class IndexT>
__global__ void __launch_bounds__(radix_policy::block_threads)
  radix_write_kernel(row_source<T, IndexT> src, row_sink<T, IndexT> dst, std::int64_t k,
                     radix_layout layout, bool largest,
                     const radix_row_state<typename key_traits<T>::key_type>* state,
                     const std::int64_t* chunk_count)
{
  using traits = key_traits<T>;
  using reduce = cub::BlockReduce<std::int64_t, radix_policy::block_threads>;
  using scan = cub::BlockScan<int, radix_policy::block_threads>;
  __shared__ union {
    typename reduce::TempStorage reduce;
    typename scan::TempStorage scan;
  } tmp;
  __shared__ std::int64_t offset;
  const std::int64_t row = std::int64_t(blockIdx.x) / layout.chunks;
  const std::int64_t chunk = std::int64_t(blockIdx.x) % layout.chunks;
  const auto s = state[row];
  const std::int64_t n = src.length(row);
  const std::int64_t first = src.begin(row);
  const T* in = src.values + first;
  T* out_v = dst.values + row * dst.ld_values;
  IndexT* out_i = dst.indices + row * dst.ld_indices;

  // This chunk's offset: the selected elements of the row's earlier chunks.
  std::int64_t before = 0;
  for (std::int64_t c = threadIdx.x; c < chunk; c += blockDim.x) {
    before += chunk_count[row * layout.chunks + c];
  }
  before = reduce(tmp.reduce).Sum(before);
  if (threadIdx.x == 0) { offset = before; }
  __syncthreads();

  const std::int64_t begin = chunk * layout.chunk;
  const std::int64_t end = begin + layout.chunk < n ? begin + layout.chunk : n;
  std::int64_t written = offset;
  for (std::int64_t tile = begin; tile < end; tile += blockDim.x) {
    const std::int64_t i = tile + threadIdx.x;
    const bool take =
      i < end && radix_selected(s, traits::to_key(in[i], largest), static_cast<std::uint64_t>(i));
    int rank = 0;
    int tile_total = 0;
    scan(tmp.scan).ExclusiveSum(take ? 1 : 0, rank, tile_total);
    if (take) {
      out_v[written + rank] = in[i];
      out_i[written + rank] = src.index_at(first, i);
    }
    written += tile_total;
    __syncthreads();  // tmp.scan is reused by the next tile
  }
  // Padding of rows shorter than k, by the row's first block.
  if (chunk == 0) {
    const T pad = traits::padding(largest);
    for (std::int64_t pos = (n < k ? n : k) + threadIdx.x; pos < k; pos += blockDim.x) {
      out_v[pos] = pad;
      out_i[pos] = IndexT{-1};
    }
  }
}

}  // namespace spira::selection
