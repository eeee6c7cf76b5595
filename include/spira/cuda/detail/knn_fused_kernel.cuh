// spira internals: the fused k-NN kernel of spira/cuda/knn.cuh - the block-wide selection (list,
// candidate buffer, bitonic sort), the kernel itself, and the queue of pairs the accuracy guard
// did not trust with its resolution (direct values, merge into the rows' lists). See knn.cuh for
// the design.
#pragma once

#include <spira/cuda/detail/launch_progress.cuh>
#include <spira/cuda/pairwise.cuh>
#include <spira/detail/knn_policy.hpp>
#include <spira/knn.hpp>
#include <spira/selection/keys.hpp>

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

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
/// row; knn_resolve_deferred then evaluates them directly and merges them into the rows' lists.
/// The direct evaluation stays out of the fused kernel, whose registers it would raise by half.
struct knn_deferred {
  unsigned long long* count = nullptr;
  std::int64_t capacity = 0;
  knn_deferred_pair* pairs = nullptr;
  offset_t* row_count = nullptr;  ///< per query row of the launch (i - row_begin), plus one slot
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
  const int capacity = s.sort_size - s.k;
  if (threadIdx.x == 0) {
    slots = 0;
  }

  for (std::int64_t i = s.row_begin + blockIdx.x; i < s.row_end; i += gridDim.x) {
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
            const int pos = atomicAdd(&slots, 1);
            vals[s.k + pos] = v;
            idx[s.k + pos] = j;
          }
        }
        count += __syncthreads_count(candidate);
        // A full buffer is merged; so is a list not yet full once the buffer could fill it: until
        // the list holds k pairs there is no bar and every pair is a candidate.
        if (count > capacity - int(blockDim.x) || (have < s.k && have + count >= s.k)) {
          have = knn_flush(vals, idx, s, have, count, &slots);
          count = 0;
        }
      }
    }
    if (count > 0) {
      have = knn_flush(vals, idx, s, have, count, &slots);
    }
    knn_write_row(vals, idx, s, i, have);
    __syncthreads();
    if (threadIdx.x == 0) {
      launch_progress_row_done(s.watch);
    }
  }
}

/// Groups the queued pairs by query row and evaluates them: pair e goes to slot
/// offset[i - row_begin] + (its rank among its row's pairs, in arrival order of the atomics) with
/// its direct value, rounded to the float the graph returns. `fill` (zeroed) counts per row.
template <class D, class ValueT, class IndexT>
__global__ void knn_deferred_values_kernel(intersection_args<D, ValueT, IndexT> p,
                                           knn_fused_select s, std::int64_t n,
                                           const offset_t* offset, unsigned long long* fill,
                                           ValueT* values, std::int64_t* columns)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    const knn_deferred_pair q = s.deferred.pairs[e];
    const std::int64_t r = q.i - s.row_begin;
    const std::int64_t slot = offset[r] + std::int64_t(atomicAdd(&fill[r], 1ull));
    values[slot] = ValueT(float(intersection_direct_value(p, q.i, q.j)));
    columns[slot] = q.j;
  }
}

/// d(i, i) for the rows whose fast value the accuracy guard did not trust. A distance that declares
/// zero_self_distance (spira/accuracy.hpp) gets a warp per row: where row i of the queries equals
/// row i of the index and its values are all finite, d(i, i) is 0 (the direct value, without one
/// thread's serial pass over the row: the longest row of a set would set the kernel's time);
/// otherwise, and for the other distances, one thread evaluates it directly.
template <class D, class ValueT, class IndexT>
__global__ void knn_self_direct_kernel(intersection_args<D, ValueT, IndexT> p, std::int64_t rows,
                                       const unsigned char* untrusted, ValueT* self_values)
{
  if constexpr (accuracy_traits<D, double>::zero_self) {
    constexpr unsigned full_warp = 0xffffffffu;
    const int lane = int(threadIdx.x) & 31;
    const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
    for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows;
         i += warps) {
      if (!untrusted[i]) {
        continue;  // uniform across the warp
      }
      const offset_t a0 = p.a_ptr[i], n = p.a_ptr[i + 1] - a0;
      const offset_t b0 = p.b_ptr[i];
      bool zero = p.b_ptr[i + 1] - b0 == n;
      for (offset_t e = lane; zero && e < n; e += 32) {
        const ValueT x = p.a_val[a0 + e];
        zero = p.a_col[a0 + e] == p.b_col[b0 + e] && x == p.b_val[b0 + e] && isfinite(x);
      }
      zero = __all_sync(full_warp, zero);
      if (lane == 0) {
        self_values[i] = zero ? ValueT(0) : ValueT(float(intersection_direct_value(p, i, i)));
      }
    }
  } else {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
         i += stride) {
      if (untrusted[i]) {
        self_values[i] = ValueT(float(intersection_direct_value(p, i, i)));
      }
    }
  }
}

/// Merges each query row's evaluated pairs [offset[r], offset[r + 1]) into its sorted list in the
/// output, as the fused kernel merges its candidates (knn_flush): one block per row that has any.
/// A row whose pairs fit beside the list in the block's threads (the usual few) is merged by ranks
/// (knn_merge_by_rank) instead of by sorting the whole buffer.
template <class ValueT>
__global__ void knn_deferred_merge_kernel(knn_fused_select s, const offset_t* offset,
                                          const ValueT* values, const std::int64_t* columns)
{
  extern __shared__ unsigned char smem_raw[];
  ValueT* vals = reinterpret_cast<ValueT*>(smem_raw);
  std::int64_t* idx = reinterpret_cast<std::int64_t*>(
      smem_raw + ((std::size_t(s.sort_size) * sizeof(ValueT) + 15) / 16) * 16);
  __shared__ int slots;
  ValueT* out_v = static_cast<ValueT*>(s.out_values);
  const int capacity = s.sort_size - s.k;
  for (std::int64_t i = s.row_begin + blockIdx.x; i < s.row_end; i += gridDim.x) {
    const offset_t begin = offset[i - s.row_begin], end = offset[i - s.row_begin + 1];
    if (begin == end) {
      continue;
    }
    // The list as the fused kernel left it: `have` real pairs, then padding (index -1).
    int have = 0;
    for (int r0 = 0; r0 < s.k; r0 += blockDim.x) {
      const int r = r0 + int(threadIdx.x);
      const bool real = r < s.k && s.out_indices[i * s.k + r] >= 0;
      if (r < s.k) {
        vals[r] = out_v[i * s.k + r];
        idx[r] = s.out_indices[i * s.k + r];
      }
      have += __syncthreads_count(real);
    }
    // A row's few pairs are placed by ranks; more than fit beside the list in the block's threads
    // are merged by sorting the buffer, a chunk at a time (ranks cost count^2 comparisons).
    const int by_rank = capacity < int(blockDim.x) - s.k ? capacity : int(blockDim.x) - s.k;
    if (end - begin <= offset_t(by_rank)) {
      const int count = int(end - begin);
      for (int t = threadIdx.x; t < count; t += blockDim.x) {
        vals[s.k + t] = values[begin + t];
        idx[s.k + t] = columns[begin + t];
      }
      __syncthreads();
      have = knn_merge_by_rank(vals, idx, s, have, count);
      knn_write_row(vals, idx, s, i, have);
      __syncthreads();
      continue;
    }
    for (offset_t c0 = begin; c0 < end; c0 += capacity) {
      const int count = int(end - c0 < capacity ? end - c0 : capacity);
      for (int t = threadIdx.x; t < count; t += blockDim.x) {
        vals[s.k + t] = values[c0 + t];
        idx[s.k + t] = columns[c0 + t];
      }
      __syncthreads();
      have = knn_flush(vals, idx, s, have, count, &slots);
    }
    knn_write_row(vals, idx, s, i, have);
    __syncthreads();
  }
}

/// The queue of deferred pairs of the fused k-NN (knn_deferred) for launches of up to `rows` query
/// rows, and its resolution. Distances without an accuracy guard queue nothing and hold no memory.
template <class D, class ValueT, class IndexT>
class knn_deferred_queue {
 public:
  static constexpr bool used = accuracy_traits<D, double>::guarded;

  knn_deferred_queue(const cuda_resources& res, std::int64_t rows) : res_(res)
  {
    if constexpr (used) {
      count_ = buffer<unsigned long long>(res, 1, "deferred pair count");
      row_count_ = buffer<offset_t>(res, std::size_t(rows) + 1, "deferred pairs per row");
      fill_ = buffer<unsigned long long>(res, std::size_t(rows), "deferred pairs per row");
      reserve(knn_deferred_capacity(rows));
    }
  }

  /// The queue, emptied, for a launch of `rows` query rows.
  knn_deferred reset(std::int64_t rows)
  {
    if constexpr (!used) {
      return {};
    } else {
      SPIRA_CUDA_TRY(cudaMemsetAsync(count_.data(), 0, sizeof(unsigned long long), res_.stream));
      SPIRA_CUDA_TRY(cudaMemsetAsync(row_count_.data(), 0, std::size_t(rows + 1) * sizeof(offset_t),
                                     res_.stream));
      return {count_.data(), capacity_, pairs_.data(), row_count_.data()};
    }
  }

  /// After a launch for the rows [s.row_begin, s.row_end): evaluates the queued pairs and merges
  /// them into the rows' lists. When more pairs were found than the queue holds, nothing is merged;
  /// the queue grows to the largest row's count if needed, and the groups of rows that each fit
  /// it are returned, to be launched again (each then resolved here). Synchronises the stream
  /// when the kernel queued anything.
  std::vector<std::pair<std::int64_t, std::int64_t>> resolve(
      const intersection_args<D, ValueT, IndexT>& p, knn_fused_select s, int sms)
  {
    std::vector<std::pair<std::int64_t, std::int64_t>> again;
    if constexpr (used) {
      const std::int64_t rows = s.row_end - s.row_begin;
      unsigned long long n = 0;
      copy(&n, memory_space::host, count_.data(), memory_space::device, 1, res_);
      if (n == 0) {
        return again;
      }
      if (n > (unsigned long long)capacity_) {
        std::vector<offset_t> per_row(std::size_t(rows), 0);
        copy(per_row.data(), memory_space::host, row_count_.data(), memory_space::device,
             per_row.size(), res_);
        reserve(*std::max_element(per_row.begin(), per_row.end()));
        std::int64_t g0 = 0, sum = 0;
        for (std::int64_t r = 0; r < rows; ++r) {
          if (sum + per_row[std::size_t(r)] > capacity_) {
            again.emplace_back(s.row_begin + g0, s.row_begin + r);
            g0 = r;
            sum = 0;
          }
          sum += per_row[std::size_t(r)];
        }
        again.emplace_back(s.row_begin + g0, s.row_end);
        return again;
      }
      // Offsets per row (an exclusive sum over rows + 1 counts, the last one 0), then the values.
      std::size_t scan_bytes = 0;
      SPIRA_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, row_count_.data(),
                                                   row_count_.data(), rows + 1, res_.stream));
      buffer<unsigned char> scan(res_, std::max<std::size_t>(scan_bytes, 1),
                                 "deferred pairs scan workspace");
      SPIRA_CUDA_TRY(cub::DeviceScan::ExclusiveSum(scan.data(), scan_bytes, row_count_.data(),
                                                   row_count_.data(), rows + 1, res_.stream));
      SPIRA_CUDA_TRY(cudaMemsetAsync(fill_.data(), 0,
                                     std::size_t(rows) * sizeof(unsigned long long), res_.stream));
      knn_deferred_values_kernel<D, ValueT, IndexT>
          <<<elementwise_grid(std::int64_t(n), sms), cuda_pairwise_policy::row_threads, 0,
             res_.stream>>>(p, s, std::int64_t(n), row_count_.data(), fill_.data(), values_.data(),
                            columns_.data());
      SPIRA_CHECK_LAUNCH();
      const std::size_t shared = ((std::size_t(s.sort_size) * sizeof(ValueT) + 15) / 16) * 16 +
                                 std::size_t(s.sort_size) * sizeof(std::int64_t);
      knn_deferred_merge_kernel<ValueT>
          <<<unsigned(std::min<std::int64_t>(rows, std::numeric_limits<int>::max())),
             cuda_pairwise_policy::intersection_threads, shared, res_.stream>>>(
              s, row_count_.data(), values_.data(), columns_.data());
      SPIRA_CHECK_LAUNCH();
    }
    return again;
  }

 private:
  void reserve(std::int64_t capacity)
  {
    if (capacity <= capacity_) {
      return;
    }
    capacity_ = capacity;
    pairs_ = buffer<knn_deferred_pair>(res_, std::size_t(capacity), "deferred pairs");
    values_ = buffer<ValueT>(res_, std::size_t(capacity), "values of the deferred pairs");
    columns_ = buffer<std::int64_t>(res_, std::size_t(capacity), "columns of the deferred pairs");
  }

  cuda_resources res_;
  std::int64_t capacity_ = 0;
  buffer<unsigned long long> count_;
  buffer<offset_t> row_count_;
  buffer<unsigned long long> fill_;
  buffer<knn_deferred_pair> pairs_;
  buffer<ValueT> values_;
  buffer<std::int64_t> columns_;
};

#endif  // __CUDACC__

}  // namespace detail

}  // namespace spira
