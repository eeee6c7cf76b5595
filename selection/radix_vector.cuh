// spira selection: the radix select of one long dense row (a vector) in a few passes over the whole
// device, for rows too long for one cluster (selection/radix_cluster.cuh).
//
// The batched radix select (selection/radix.cuh) spreads a row over blocks with 8-bit digits and a
// grid barrier or launch per phase; for one row of 2^18 elements or more its fixed costs (digit
// passes, count and write phases, each re-reading the row) dominate. Here, per row:
//  1. histogram of the keys' top 12 bits (one read of the row); the last block to finish (a
//     "last block done" counter, no grid barrier) picks the bin holding the k-th key;
//  2. one more read of the row counts the next digit of the keys in that bin and, when the
//     elements at or below it (those surely selected and the candidates) fit the candidate buffer,
//     copies them there in position order (an ordered compaction: each block keeps its chunk's
//     copies in shared memory and learns their place from the chunks before it by a decoupled
//     look-back, learned from Merrill and Garland, "Single-pass Parallel Prefix Scan with
//     Decoupled Look-back", 2016);
//  3. the remaining digits are counted on the buffer (or the row, when it did not fit) until the
//     k-th key K is known, with R: how many keys equal to K are taken (the first R by position);
//  4. one ordered pass writes every key < K and the first R keys == K, in position order, from the
//     buffer (or the row) to the output.
// Every pass is one launch of a grid sized to the device; a pass that has nothing left to do
// returns at once. The output is the unique selection by (key, position), listed by increasing
// position: deterministic. Histogram counts are integers (order independent); the look-back sums
// integers. The pick takes the bin holding the remaining-th key, as the batched form does, over
// 12-bit digits as AIR top-k (Zhang et al., "Parallel Top-K Algorithms on GPU: A Comprehensive
// Study and New Methods", SC'23) and CUB's DeviceTopK count them.
#pragma once

#include "selection/keys.hpp"
#include "selection/warp.cuh"

#include <spira/cuda/detail/look_back.cuh>

#include <cub/block/block_scan.cuh>

#include <cstdint>

namespace spira::selection {

/// Tuning of the one-row radix select.
struct radix_vector_policy {
  static constexpr int threads = 256;
  static constexpr int warps = threads / warp::size;
  /// 16-byte loads per lane and tile.
  static constexpr int loads = 4;
  template <class T>
  static constexpr int vec = 16 / static_cast<int>(sizeof(T));
  /// Elements of one warp's part of a tile, and of a tile.
  template <class T>
  static constexpr int warp_span = warp::size * loads * vec<T>;
  template <class T>
  static constexpr int tile = warps * warp_span<T>;
  static constexpr int digit_bits = 12;
  static constexpr int bins = 1 << digit_bits;
  /// Copies a block of the copy pass keeps in shared memory until it learns where they go.
  static constexpr int stage = 2048;
  /// Resident blocks per multiprocessor the grid is sized for.
  static constexpr int blocks_per_sm = 4;
  /// Histogram passes at most (64-bit keys: 12 + 12 + 12 + 12 + 12 + 4 bits).
  static constexpr int max_passes = 6;
  /// The candidate buffer holds max(2k + min_buffer, n / buffer_share) elements (at most n).
  static constexpr std::int64_t buffer_share = 16;
  static constexpr std::int64_t min_buffer = std::int64_t(1) << 16;
  /// Rows at least this long take the one-row form.
  static constexpr std::int64_t min_length = std::int64_t(1) << 18;
};

/// The row's search state (zeroed before the first pass).
template <class Key>
struct radix_vector_state {
  Key prefix;           ///< the digits of the k-th key fixed so far
  Key K;                ///< once done: the threshold key
  unsigned remaining;   ///< keys matching `prefix` still to take
  unsigned count;       ///< keys matching `prefix`
  unsigned R;           ///< once done and not whole: keys == K taken (the first R by position)
  unsigned buffer_len;  ///< elements in the candidate buffer, once `buffered`
  int done;             ///< K is known
  int whole;            ///< every key <= K is selected (else every key < K and R keys == K)
  int buffered;         ///< later passes read the buffer instead of the row
  int written;          ///< the output is written
};

/// Everything the passes share. `state` to `write_status` are one zeroed range.
template <class T, class IndexT>
struct radix_vector_args {
  using key_type = typename key_traits<T>::key_type;
  const T* in;
  std::int64_t n;
  row_sink<T, IndexT> dst;
  unsigned k;
  bool largest;
  radix_vector_state<key_type>* state;
  unsigned* hist;                      ///< max_passes x bins
  unsigned* finished;                  ///< blocks done, per launch
  unsigned* tickets;                   ///< tiles taken: [0] the compaction, [1] the write
  unsigned long long* compact_status;  ///< look-back words of the copy's chunks (one a block)
  unsigned long long* write_status;    ///< look-back words of the row's or the buffer's tiles
  T* buffer_values;
  unsigned* buffer_pos;
  unsigned capacity;
};

namespace detail_vector {

using policy = radix_vector_policy;

/// Look-back values: two counts of 31 bits (the launcher takes rows shorter than 2^31 only).
__device__ __forceinline__ unsigned long long pack(unsigned less, unsigned eq)
{
  return (static_cast<unsigned long long>(less) << 31) | eq;
}

/// Whether this block is the last of the launch to finish (all its writes are visible to it).
__device__ __forceinline__ bool last_block(unsigned* finished)
{
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    last = atomicAdd(finished, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last) {
    __threadfence();
  }
  return last;
}

/// The elements of one warp's part of a tile of `src` (length `len`): v[j][e] is position
/// begin + (j * 32 + lane) * vec + e; past the end, T{} (callers test the position).
template <class T>
__device__ __forceinline__ void load_span(const T* src, std::int64_t begin, std::int64_t len,
                                          bool aligned, T (&v)[policy::loads][policy::vec<T>])
{
  constexpr int vec = policy::vec<T>;
  struct alignas(16) quad {
    T v[vec];
  };
  const int lane = warp::lane_id();
#pragma unroll
  for (int j = 0; j < policy::loads; ++j) {
    const std::int64_t at = begin + std::int64_t(j * warp::size + lane) * vec;
    if (aligned && at + vec <= len) {
      const quad q = *reinterpret_cast<const quad*>(src + at);
#pragma unroll
      for (int e = 0; e < vec; ++e) {
        v[j][e] = q.v[e];
      }
    } else {
#pragma unroll
      for (int e = 0; e < vec; ++e) {
        v[j][e] = at + e < len ? src[at + e] : T{};
      }
    }
  }
}

/// visit(key, valid) for every element of tile `tile` of the source (valid: inside it).
template <class T, class Visit>
__device__ __forceinline__ void visit_tile(const T* src, std::int64_t len, bool aligned,
                                           std::int64_t tile, bool largest, Visit&& visit)
{
  using traits = key_traits<T>;
  constexpr int vec = policy::vec<T>;
  const int lane = warp::lane_id();
  const int w = static_cast<int>(threadIdx.x) / warp::size;
  const std::int64_t begin = tile * policy::tile<T> + std::int64_t(w) * policy::warp_span<T>;
  T v[policy::loads][vec];
  load_span(src, begin, len, aligned, v);
#pragma unroll
  for (int j = 0; j < policy::loads; ++j) {
#pragma unroll
    for (int e = 0; e < vec; ++e) {
      visit(traits::to_key(v[j][e], largest),
            begin + std::int64_t(j * warp::size + lane) * vec + e < len);
    }
  }
}

/// An element's part in an ordered pass: taken for sure (less) or a tie with the threshold (eq).
struct vector_flags {
  bool less;
  bool eq;
};

/// The one pass kind that lists elements in position order: for the tile `tile` of the source,
/// `flags(key)` gives each element's vector_flags; every element with `less`, or with `eq` among
/// the first `R` of the whole source, is passed to emit(rank, value, at) with its rank among those.
/// visit(key, valid) sees every element of the tile once (valid: inside the source). base(less,
/// eq), called by every thread with the tile's own counts, returns pack(less, eq) of the elements
/// before the tile (a look-back, or a block's running count). The whole block calls it.
template <class T, class Flags, class Base, class Emit, class Visit>
__device__ __forceinline__ void ordered_tile(const T* src, std::int64_t len, bool aligned,
                                             std::int64_t tile, bool largest, unsigned R,
                                             Flags&& flags, Base&& base, Emit&& emit, Visit&& visit)
{
  using traits = key_traits<T>;
  constexpr int vec = policy::vec<T>;
  constexpr int loads = policy::loads;
  __shared__ unsigned warp_total[policy::warps];
  const int lane = warp::lane_id();
  const int w = static_cast<int>(threadIdx.x) / warp::size;
  const std::int64_t begin = tile * policy::tile<T> + std::int64_t(w) * policy::warp_span<T>;
  T v[loads][vec];
  load_span(src, begin, len, aligned, v);
  // Counts packed as (eq << 16) | less: a tile (so every warp's span and every sum of spans
  // before a warp) has fewer than 2^16 elements.
  static_assert(policy::tile<T> < (1 << 16));
  unsigned mine[loads];
  unsigned lane_any = 0;
#pragma unroll
  for (int j = 0; j < loads; ++j) {
    mine[j] = 0;
#pragma unroll
    for (int e = 0; e < vec; ++e) {
      const bool valid = begin + std::int64_t(j * warp::size + lane) * vec + e < len;
      const auto key = traits::to_key(v[j][e], largest);
      visit(key, valid);
      if (valid) {
        const vector_flags f = flags(key);
        mine[j] += (unsigned(f.eq) << 16) | unsigned(f.less);
      }
    }
    lane_any |= mine[j];
  }
  const bool any = __any_sync(warp::full_mask, lane_any != 0);
  unsigned lane_before[loads];
  unsigned total = 0;
  if (any) {
#pragma unroll
    for (int j = 0; j < loads; ++j) {
      const unsigned inclusive = warp::inclusive_sum(mine[j]);
      lane_before[j] = total + inclusive - mine[j];
      total += __shfl_sync(warp::full_mask, inclusive, warp::size - 1);
    }
  }
  if (lane == 0) {
    warp_total[w] = total;
  }
  __syncthreads();
  unsigned less = 0;
  unsigned eq = 0;
#pragma unroll
  for (int u = 0; u < policy::warps; ++u) {
    less += warp_total[u] & 0xffffu;
    eq += warp_total[u] >> 16;
  }
  const unsigned long long b = base(less, eq);
  if (any) {
    unsigned warp_before = 0;
    for (int u = 0; u < w; ++u) {
      warp_before += warp_total[u];
    }
    const unsigned less_run = static_cast<unsigned>(b >> 31) + (warp_before & 0xffffu);
    const unsigned eq_run = static_cast<unsigned>(b & 0x7fffffffu) + (warp_before >> 16);
#pragma unroll
    for (int j = 0; j < loads; ++j) {
      if (mine[j] == 0) {
        continue;
      }
      unsigned less_before = less_run + (lane_before[j] & 0xffffu);
      unsigned eq_before = eq_run + (lane_before[j] >> 16);
#pragma unroll
      for (int e = 0; e < vec; ++e) {
        const std::int64_t at = begin + std::int64_t(j * warp::size + lane) * vec + e;
        if (at < len) {
          const vector_flags f = flags(traits::to_key(v[j][e], largest));
          if (f.less || (f.eq && eq_before < R)) {
            emit(less_before + (eq_before < R ? eq_before : R), v[j][e], at);
          }
          less_before += f.less;
          eq_before += f.eq;
        }
      }
    }
  }
  __syncthreads();  // warp_total is rewritten by the block's next tile
}

/// Adds the block's counts to the launch's histogram; the launch's last block then picks the bin
/// holding the `remaining`-th key (digit of `bins` values at `shift`) and updates the state.
template <class Key>
__device__ __forceinline__ bool pick_digit(radix_vector_state<Key>* state, const unsigned* h,
                                           unsigned* global_hist, unsigned* finished, int bins,
                                           int shift, unsigned remaining)
{
  using scan = cub::BlockScan<unsigned, policy::threads>;
  __shared__ typename scan::TempStorage tmp;
  __syncthreads();
  for (int b = threadIdx.x; b < bins; b += policy::threads) {
    if (h[b] != 0) {
      atomicAdd(&global_hist[b], h[b]);
    }
  }
  if (!last_block(finished)) {
    return false;
  }
  // Thread t holds bins [t * per, (t + 1) * per) in registers: one round of loads, then the
  // thread whose range holds the remaining-th key walks them without another memory access.
  constexpr int max_per = policy::bins / policy::threads;
  const int per = bins > policy::threads ? bins / policy::threads : 1;
  const int first = static_cast<int>(threadIdx.x) * per;
  unsigned c[max_per];
  unsigned sum = 0;
#pragma unroll
  for (int j = 0; j < max_per; ++j) {
    c[j] = j < per && first + j < bins ? __ldcg(&global_hist[first + j]) : 0u;
    sum += c[j];
  }
  unsigned before = 0;
  scan(tmp).ExclusiveSum(sum, before);
  if (before < remaining && before + sum >= remaining) {
    int j = 0;
#pragma unroll
    for (int u = 0; u < max_per; ++u) {
      if (u == j && before + c[u] < remaining) {
        before += c[u];
        ++j;
      }
    }
    unsigned count = 0;
#pragma unroll
    for (int u = 0; u < max_per; ++u) {
      count = u == j ? c[u] : count;
    }
    const int d = first + j;
    const Key prefix = state->prefix | (Key(d) << shift);
    const unsigned left = remaining - before;
    state->prefix = prefix;
    state->remaining = left;
    state->count = count;
    if (count == left) {  // the bin is taken whole
      state->K = prefix | (shift > 0 ? Key((Key(1) << shift) - 1) : Key(0));
      state->whole = 1;
      state->done = 1;
    } else if (shift == 0) {  // every key in the bin equals K: the first `left` of them
      state->K = prefix;
      state->R = left;
      state->done = 1;
    }
  }
  return true;
}

}  // namespace detail_vector

/// A histogram pass (launch index `pass`): the digit [shift, top) of the keys that match the
/// state's prefix above `top`, over the buffer once the row was copied there, else the row.
template <class T, class IndexT>
__global__ void __launch_bounds__(radix_vector_policy::threads)
    radix_vector_histogram_kernel(radix_vector_args<T, IndexT> a, int pass, int top, int shift)
{
  using traits = key_traits<T>;
  using key_type = typename traits::key_type;
  using policy = radix_vector_policy;
  __shared__ unsigned h[policy::bins];
  const radix_vector_state<key_type> st = *a.state;
  if (st.done) {
    return;  // the same for every block: the state was set by an earlier launch
  }
  const int bins = 1 << (top - shift);
  for (int b = threadIdx.x; b < bins; b += policy::threads) {
    h[b] = 0;
  }
  __syncthreads();
  const T* src = st.buffered ? a.buffer_values : a.in;
  const std::int64_t len = st.buffered ? std::int64_t(st.buffer_len) : a.n;
  const bool aligned = reinterpret_cast<std::uintptr_t>(src) % 16 == 0;
  const bool all = top >= traits::bits;
  const key_type want = all ? key_type(0) : key_type(st.prefix >> top);
  const unsigned mask = unsigned(bins - 1);
  const std::int64_t tiles = (len + policy::tile<T> - 1) / policy::tile<T>;
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    detail_vector::visit_tile(src, len, aligned, t, a.largest, [&](key_type key, bool valid) {
      warp::count_in_bin(h, static_cast<unsigned>(key >> shift) & mask,
                         valid && (all || (key >> top) == want));
    });
  }
  detail_vector::pick_digit(a.state, h, a.hist + pass * policy::bins, a.finished + pass, bins,
                            shift, pass == 0 ? a.k : st.remaining);
}

/// The pass after the first digit (launch index `pass`): counts the digit [shift, top) of the
/// first digit's candidates and copies every element at or below that digit's bin (those surely
/// selected and the candidates) to the buffer in position order when they fit. When the first
/// digit decided the selection alone, that copy is the output.
///
/// The copy reads the row once without waiting: each block takes one chunk of consecutive tiles
/// (by ticket, so the chunks before it are held by running blocks), keeps its chunk's copies in
/// shared memory in position order, and only then learns where they go from the chunks before it
/// (one look-back per block). A chunk with more copies than policy::stage reads its tiles again
/// once it knows its place.
template <class T, class IndexT>
__global__ void __launch_bounds__(radix_vector_policy::threads)
    radix_vector_compact_kernel(radix_vector_args<T, IndexT> a, int pass, int top, int shift)
{
  using key_type = typename key_traits<T>::key_type;
  using policy = radix_vector_policy;
  using detail_vector::pack;
  using detail_vector::vector_flags;
  __shared__ unsigned h[policy::bins];
  __shared__ T stage_values[policy::stage];
  __shared__ unsigned stage_pos[policy::stage];
  __shared__ spira::detail::look_back_storage<policy::warps> walk;
  __shared__ unsigned ticket;
  const radix_vector_state<key_type> st = *a.state;
  const int bins = 1 << (top - shift);
  for (int b = threadIdx.x; b < bins; b += policy::threads) {
    h[b] = 0;
  }
  const key_type last = st.prefix | key_type((key_type(1) << top) - 1);
  const key_type want = key_type(st.prefix >> top);
  const unsigned total = a.k - st.remaining + st.count;
  const bool to_output = st.done != 0;
  const bool copy = to_output || total <= a.capacity;
  const bool aligned = reinterpret_cast<std::uintptr_t>(a.in) % 16 == 0;
  const unsigned mask = unsigned(bins - 1);
  const auto tiles = static_cast<unsigned>((a.n + policy::tile<T> - 1) / policy::tile<T>);
  const auto count = [&](key_type key, bool valid) {
    warp::count_in_bin(h, static_cast<unsigned>(key >> shift) & mask,
                       !to_output && valid && (key >> top) == want);
  };
  __syncthreads();
  if (!copy) {  // too many to copy: the next digit's counts only
    for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
      detail_vector::visit_tile(a.in, a.n, aligned, t, a.largest, count);
    }
  } else {
    const unsigned chunk = spira::detail::take_ticket(&a.tickets[0], ticket);
    const auto first = unsigned(std::uint64_t(chunk) * tiles / gridDim.x);
    const auto end = unsigned(std::uint64_t(chunk + 1) * tiles / gridDim.x);
    const auto flags = [&](key_type key) { return vector_flags{key <= last, false}; };
    const auto put = [&](unsigned rank, T value, std::int64_t at) {
      if (to_output) {
        a.dst.values[rank] = value;
        a.dst.indices[rank] = static_cast<IndexT>(at);
      } else {
        a.buffer_values[rank] = value;
        a.buffer_pos[rank] = static_cast<unsigned>(at);
      }
    };
    // Every thread keeps the same running count (from the tiles' block-wide counts). The first
    // round keeps the copies in shared memory; a chunk with more than that holds takes a second
    // round, writing them in place (one loop for both: the kernel's registers stay few).
    unsigned run = 0;
    bool direct = false;
    for (;;) {
      for (unsigned t = first; t < end; ++t) {
        detail_vector::ordered_tile(
            a.in, a.n, aligned, t, a.largest, 0u, flags,
            [&](unsigned less, unsigned) {
              const unsigned before = run;
              run += less;
              return pack(before, 0u);
            },
            [&](unsigned rank, T value, std::int64_t at) {
              if (direct) {
                put(rank, value, at);
              } else if (rank < policy::stage) {
                stage_values[rank] = value;
                stage_pos[rank] = static_cast<unsigned>(at);
              }
            },
            [&](key_type key, bool valid) { count(key, valid && !direct); });
      }
      if (direct) {
        break;
      }
      const unsigned mine = run;
      const auto place = static_cast<unsigned>(
          spira::detail::look_back(walk, a.compact_status, chunk, pack(mine, 0u)) >> 31);
      if (mine <= policy::stage) {
        for (unsigned i = threadIdx.x; i < mine; i += policy::threads) {
          put(place + i, stage_values[i], stage_pos[i]);
        }
        break;
      }
      run = place;
      direct = true;
    }
  }
  if (to_output) {
    if (detail_vector::last_block(a.finished + pass) && threadIdx.x == 0) {
      a.state->written = 1;
    }
    return;
  }
  if (detail_vector::pick_digit(a.state, h, a.hist + pass * policy::bins, a.finished + pass, bins,
                                shift, st.remaining) &&
      threadIdx.x == 0 && copy) {
    a.state->buffered = 1;
    a.state->buffer_len = total;
  }
}

/// The last pass: every key < K and the first R keys == K (every key <= K when whole), in
/// position order, from the buffer once the row was copied there, else from the row.
template <class T, class IndexT>
__global__ void __launch_bounds__(radix_vector_policy::threads)
    radix_vector_write_kernel(radix_vector_args<T, IndexT> a)
{
  using key_type = typename key_traits<T>::key_type;
  using policy = radix_vector_policy;
  using detail_vector::vector_flags;
  __shared__ spira::detail::look_back_storage<policy::warps> walk;
  __shared__ unsigned ticket;
  const radix_vector_state<key_type> st = *a.state;
  if (st.written) {
    return;
  }
  const bool buffered = st.buffered != 0;
  const T* src = buffered ? a.buffer_values : a.in;
  const std::int64_t len = buffered ? std::int64_t(st.buffer_len) : a.n;
  const bool aligned = reinterpret_cast<std::uintptr_t>(src) % 16 == 0;
  const auto tiles = static_cast<unsigned>((len + policy::tile<T> - 1) / policy::tile<T>);
  const key_type K = st.K;
  const bool whole = st.whole != 0;
  for (;;) {
    const unsigned tile = spira::detail::take_ticket(&a.tickets[1], ticket);
    if (tile >= tiles) {
      break;
    }
    detail_vector::ordered_tile(
        src, len, aligned, tile, a.largest, st.R,
        [&](key_type key) {
          return whole ? vector_flags{key <= K, false} : vector_flags{key < K, key == K};
        },
        [&](unsigned less, unsigned eq) {
          return spira::detail::look_back(walk, a.write_status, tile,
                                          detail_vector::pack(less, eq));
        },
        [&](unsigned rank, T value, std::int64_t at) {
          a.dst.values[rank] = value;
          a.dst.indices[rank] = static_cast<IndexT>(buffered ? std::int64_t(a.buffer_pos[at]) : at);
        },
        [](key_type, bool) {});
  }
}

}  // namespace spira::selection
