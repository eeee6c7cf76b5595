// spira internals: the fused k-NN kernel of spira/cuda/knn.cuh - the block-wide selection (list,
// candidate buffer, bitonic sort) and the kernel itself. The pairs the accuracy guard did not
// trust are resolved in knn_deferred.cuh. See knn.cuh for the design.
#pragma once

#include <spira/cuda/detail/launch_progress.cuh>
#include <spira/cuda/pairwise.cuh>
#include <spira/detail/knn_policy.hpp>
#include <spira/knn.hpp>
#include <spira/selection/keys.hpp>

#include <bit>
#include <cstdint>

namespace spira {

/// Largest k the fused kernel serves (its sort buffer holds k + 2 x threads pairs, at most 2,048).
inline constexpr std::int64_t knn_fused_max_k = 1024;

namespace detail {

/// Pairs the fused kernel sorts at once for a given k: list + a buffer of at least two chunks.
constexpr int knn_fused_sort_size(std::int64_t k)
{
  return int(std::bit_ceil(std::uint64_t(k) + 2 * cuda_pairwise_policy::intersection_threads));
}

/// A pair (query row i, index row j) whose fast value the accuracy guard did not trust.
struct knn_deferred_pair {
  std::int64_t i, j;
};

/// The pairs of one launch of knn_fused_kernel that the accuracy guard did not trust (guarded
/// distances only; nullptr pointers otherwise). The kernel leaves them out of its lists and queues
/// them (the first `capacity` in arrival order; *count counts them all) with a count per query
/// row, and marks the rows that lost a pair to a full queue; knn_deferred_queue::resolve then
/// evaluates them directly and merges them into the rows' lists. The direct evaluation stays out
/// of the fused kernel, whose registers it would raise by half.
struct knn_deferred {
  unsigned long long* count = nullptr;
  std::int64_t capacity = 0;
  knn_deferred_pair* pairs = nullptr;
  offset_t* row_count = nullptr;  ///< per query row of the launch (i - row_begin), plus one slot
  unsigned char* lost = nullptr;  ///< per query row of the launch: 1 when a pair did not fit
};

struct knn_fused_select {
  int k;
  int sort_size;      ///< pairs in the shared sort buffer (a power of two)
  bool largest;       ///< similarities keep the largest values
  bool exclude_self;  ///< skip index row i for query row i
  void* self_values;  ///< with exclude_self: ValueT[rows_a], receives d(i, i) (nullptr: not wanted)
  unsigned char* self_untrusted;  ///< with self_values: 1 where d(i, i) must be evaluated directly
  std::size_t acc_bytes;          ///< bytes of the accumulator tile (a multiple of 16)
  std::int64_t row_begin, row_end;  ///< the query rows of this launch
  const unsigned char* only;        ///< per row of the launch: 0 = skip it (nullptr: run all)
  void* out_values;                 ///< rows_a x k, ValueT
  std::int64_t* out_indices;
  knn_deferred deferred;
  launch_progress_state* watch;  ///< rows counted and a stop flag read (nullptr: neither)
};

#if defined(__CUDACC__)

/// Sorts the pairs (vals[t], idx[t]), t < n (a power of two), by (key(value), index) with the
/// whole block; ends synchronised.
template <class ValueT>
__device__ void knn_bitonic_sort(ValueT* vals, std::int64_t* idx, int n, bool largest)
{
  using keys = selection::key_traits<ValueT>;
  for (int size = 2; size <= n; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = threadIdx.x; t < n / 2; t += blockDim.x) {
        const int lo = 2 * t - (t & (stride - 1));
        const int hi = lo + stride;
        const auto klo = keys::to_key(vals[lo], largest);
        const auto khi = keys::to_key(vals[hi], largest);
        const bool hi_first = khi < klo || (khi == klo && idx[hi] < idx[lo]);
        if (hi_first == ((lo & size) == 0)) {
          const ValueT v = vals[lo];
          vals[lo] = vals[hi];
          vals[hi] = v;
          const std::int64_t j = idx[lo];
          idx[lo] = idx[hi];
          idx[hi] = j;
        }
      }
      __syncthreads();
    }
  }
}

/// A pair that sorts after every real one: a NaN value (the worst key) with the largest index.
template <class ValueT>
__device__ inline ValueT knn_sentinel_value()
{
  if constexpr (sizeof(ValueT) == 4) {
    return __int_as_float(0x7fc00000);
  } else {
    return __longlong_as_double(0x7ff8000000000000ll);
  }
}

/// Merges the `count` candidates [k, k + count) into the sorted list [0, have): afterwards the list
/// holds the best min(k, have + count) pairs, sorted (returned), and the buffer is empty
/// (*buffer_count = 0). Only the smallest power of two that holds list and candidates is sorted
/// (a row's last few candidates cost a sort of 32 pairs, not of the whole buffer). Whole block;
/// synchronised on entry (the caller) and on exit.
template <class ValueT>
__device__ int knn_flush(ValueT* vals, std::int64_t* idx, const knn_fused_select& s, int have,
                         int count, int* buffer_count)
{
  int n = 32;
  while (n < s.k + count) {
    n <<= 1;
  }
  n = n < s.sort_size ? n : s.sort_size;
  for (int t = threadIdx.x; t < n; t += blockDim.x) {
    if ((t >= have && t < s.k) || t >= s.k + count) {
      vals[t] = knn_sentinel_value<ValueT>();
      idx[t] = INT64_MAX;
    }
  }
  if (threadIdx.x == 0) {
    *buffer_count = 0;
  }
  __syncthreads();
  knn_bitonic_sort(vals, idx, n, s.largest);
  return have + count < s.k ? have + count : s.k;
}

/// Queues pair (i, j) for knn_resolve_deferred (see knn_deferred).
__device__ inline void knn_defer(const knn_fused_select& s, std::int64_t i, std::int64_t j)
{
  atomicAdd(reinterpret_cast<unsigned long long*>(&s.deferred.row_count[i - s.row_begin]), 1ull);
  const unsigned long long slot = atomicAdd(s.deferred.count, 1ull);
  if (slot < (unsigned long long)s.deferred.capacity) {
    s.deferred.pairs[slot] = {i, j};
  } else {
    s.deferred.lost[i - s.row_begin] = 1;
  }
}

/// Appends the candidate (v, j) to the buffer behind the list (slot counter `slots`).
template <class ValueT>
__device__ inline void knn_append(ValueT* vals, std::int64_t* idx, const knn_fused_select& s,
                                  int* slots, ValueT v, std::int64_t j)
{
  const int pos = atomicAdd(slots, 1);
  vals[s.k + pos] = v;
  idx[s.k + pos] = j;
}

/// Ends a round of at most one candidate per thread (`appended`: this thread's was): the barrier
/// counts them into `count` (identical in every thread), and the buffer is merged into the list
/// (knn_flush) when another round could overflow it, and when it could fill a list not yet full
/// (until then there is no bar). Whole block.
template <class ValueT>
__device__ inline void knn_end_round(ValueT* vals, std::int64_t* idx, const knn_fused_select& s,
                                     int& have, int& count, int* slots, bool appended)
{
  count += __syncthreads_count(appended);
  if (count > s.sort_size - s.k - int(blockDim.x) || (have < s.k && have + count >= s.k)) {
    have = knn_flush(vals, idx, s, have, count, slots);
    count = 0;
  }
}

/// Writes query row i's list, `have` real pairs padded to k (index -1 and the padding value), to
/// the output. Whole block.
template <class ValueT>
__device__ void knn_write_row(const ValueT* vals, const std::int64_t* idx,
                              const knn_fused_select& s, std::int64_t i, int have)
{
  using keys = selection::key_traits<ValueT>;
  ValueT* out_v = static_cast<ValueT*>(s.out_values);
  for (int r = threadIdx.x; r < s.k; r += blockDim.x) {
    const bool real = r < have;
    out_v[i * s.k + r] = real ? vals[r] : keys::padding(s.largest);
    s.out_indices[i * s.k + r] = real ? idx[r] : -1;
  }
}

/// Ends query row i: merges the candidates still buffered, writes the list to the output. Whole
/// block; ends synchronised.
template <class ValueT>
__device__ inline void knn_finish_row(ValueT* vals, std::int64_t* idx, const knn_fused_select& s,
                                      std::int64_t i, int have, int count, int* slots)
{
  if (count > 0) {
    have = knn_flush(vals, idx, s, have, count, slots);
  }
  knn_write_row(vals, idx, s, i, have);
  __syncthreads();
}

/// Merges `count` candidates at (vals, idx)[k, k + count) into the sorted list (vals, idx)[0, have)
/// and returns the new length: the best k of both in the order of knn_bitonic_sort, as knn_flush
/// gives them, without the sort. Each thread places one pair by its rank (how many pairs precede
/// it). Needs have + count <= blockDim.x; whole block, ends synchronised.
template <class ValueT>
__device__ int knn_merge_by_rank(ValueT* vals, std::int64_t* idx, const knn_fused_select& s,
                                 int have, int count)
{
  using keys = selection::key_traits<ValueT>;
  const int t = int(threadIdx.x);
  int rank = s.k;
  ValueT v{};
  std::int64_t j = -1;
  if (t < have + count) {
    const int at = t < have ? t : s.k + (t - have);
    v = vals[at];
    j = idx[at];
    const auto key = keys::to_key(v, s.largest);
    const auto precedes = [&](int u) {
      const auto ku = keys::to_key(vals[u], s.largest);
      return ku < key || (ku == key && idx[u] < j);
    };
    rank = 0;
    if (t < have) {
      rank = t;  // the list is sorted
    } else {
      for (int u = 0; u < have; ++u) {
        rank += precedes(u) ? 1 : 0;
      }
    }
    for (int c = 0; c < count && rank < s.k; ++c) {  // past k the pair is not kept
      rank += precedes(s.k + c) ? 1 : 0;
    }
  }
  __syncthreads();
  if (rank < s.k) {
    vals[rank] = v;
    idx[rank] = j;
  }
  __syncthreads();
  return have + count < s.k ? have + count : s.k;
}

/// One block per query row (grid-stride): for each tile of tile_cols index rows, the accumulation
/// of the intersection strategy (spira/cuda/detail/pairwise_intersection.cuh), then every
/// finalized distance that beats the current k-th best is appended to the candidate buffer; full
/// buffers and the end of the row are merged by knn_flush.
template <class D, class ValueT, class IndexT>
__global__ void __launch_bounds__(cuda_pairwise_policy::intersection_threads)
    knn_fused_kernel(intersection_args<D, ValueT, IndexT> p, knn_fused_select s)
{
  using add = typename D::add_monoid;
  using A = intersection_accumulator_t<D, ValueT>;
  using keys = selection::key_traits<ValueT>;
  constexpr int N = intersection_args<D, ValueT, IndexT>::N;
  extern __shared__ unsigned char smem_raw[];
  A* acc = reinterpret_cast<A*>(smem_raw);
  ValueT* vals = reinterpret_cast<ValueT*>(smem_raw + s.acc_bytes);
  std::int64_t* idx = reinterpret_cast<std::int64_t*>(
      smem_raw + s.acc_bytes + ((std::size_t(s.sort_size) * sizeof(ValueT) + 15) / 16) * 16);
  // The slot counter of the candidate buffer. The list length (have) and the number of buffered
  // candidates (count) are kept in registers, identical in every thread: each chunk's candidates
  // are counted by the barrier that ends it (__syncthreads_count), so every flush decision is
  // uniform across the block.
  __shared__ int slots;
  if (threadIdx.x == 0) {
    slots = 0;
  }

  for (std::int64_t i = s.row_begin + blockIdx.x; i < s.row_end; i += gridDim.x) {
    if (s.only != nullptr && !s.only[i - s.row_begin]) {
      continue;  // uniform across the block
    }
    if (!launch_progress_row_begins(s.watch)) {
      return;
    }
    int have = 0;
    int count = 0;
    for (std::int64_t j0 = 0; j0 < p.rows_b; j0 += p.tile_cols) {
      const std::int64_t width = p.tile_cols < p.rows_b - j0 ? p.tile_cols : p.rows_b - j0;
      for (std::int64_t e = threadIdx.x; e < width * N; e += blockDim.x) {
        acc[e] = add::template identity<A>();
      }
      __syncthreads();
      intersection_accumulate(p, i, j0, width, acc);
      __syncthreads();
      for (std::int64_t base = 0; base < width; base += blockDim.x) {
        // The bar to beat: the k-th best so far (every candidate of this tile has a larger index).
        const bool full = have == s.k;
        const auto bar = full ? keys::to_key(vals[s.k - 1], s.largest) : keys::worst;
        const std::int64_t jj = base + threadIdx.x;
        const std::int64_t j = j0 + jj;
        bool candidate = false;
        // The pair (i, i) of a self query is not a candidate; its value may be wanted.
        const bool self = s.exclude_self && j == i;
        if (jj < width && (!self || s.self_values != nullptr)) {
          terms<A, N> a;
#pragma unroll
          for (int t = 0; t < N; ++t) {
            a[t] = acc[jj * N + t];
          }
          // Ranked as the float the graph returns (the tie rule holds on what the user sees).
          bool trusted;
          const ValueT v = ValueT(float(intersection_fast_value(p, i, j, a, trusted)));
          if (self) {
            // Untrusted: marked, and evaluated directly after the kernel (knn_self_direct_kernel).
            static_cast<ValueT*>(s.self_values)[i] = v;
            if (!trusted) {
              s.self_untrusted[i] = 1;
            }
          } else if (!trusted) {
            knn_defer(s, i, j);
          }
          candidate = !self && trusted && (!full || keys::to_key(v, s.largest) < bar);
          if (candidate) {
            knn_append(vals, idx, s, &slots, v, j);
          }
        }
        knn_end_round(vals, idx, s, have, count, &slots, candidate);
      }
    }
    knn_finish_row(vals, idx, s, i, have, count, &slots);
    if (threadIdx.x == 0) {
      launch_progress_row_done(s.watch);
    }
  }
}

#endif  // __CUDACC__

}  // namespace detail

}  // namespace spira
