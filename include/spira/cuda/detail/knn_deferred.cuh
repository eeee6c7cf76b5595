// spira internals: the pairs of the fused k-NN (spira/cuda/knn.cuh) whose fast value the accuracy
// guard did not trust - their queue, their direct evaluation and their merge into the rows' lists -
// and the direct evaluation of untrusted self distances d(i, i).
#pragma once

#include <spira/cuda/detail/knn_equal_rows.cuh>
#include <spira/cuda/detail/knn_fused_select.cuh>

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace spira {
namespace detail {

#if defined(__CUDACC__)

/// Groups the queued pairs by query row and evaluates them: pair e goes to slot
/// offset[i - row_begin] + (its rank among its row's pairs, in arrival order of the atomics) with
/// its direct value, rounded to the float the graph returns. `fill` (zeroed) counts per row. The
/// pairs of rows marked in `skip` (nullptr: none) are left out.
template <class D, class ValueT, class IndexT>
__global__ void knn_deferred_values_kernel(intersection_args<D, ValueT, IndexT> p,
                                           knn_fused_select s, std::int64_t n,
                                           const offset_t* offset, const unsigned char* skip,
                                           unsigned long long* fill, ValueT* values,
                                           std::int64_t* columns)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    const knn_deferred_pair q = s.deferred.pairs[e];
    const std::int64_t r = q.i - s.row_begin;
    if (skip != nullptr && skip[r]) {
      continue;
    }
    const std::int64_t slot = offset[r] + std::int64_t(atomicAdd(&fill[r], 1ull));
    values[slot] = ValueT(float(intersection_direct_value(p, q.i, q.j)));
    columns[slot] = q.j;
  }
}

/// d(i, i) for the rows whose fast value the accuracy guard did not trust. A distance that declares
/// zero_self_distance (spira/accuracy.hpp) gets a warp per row: where row i of the queries equals
/// row i of the index with finite values and norms (knn_equal_rows.cuh), d(i, i) is 0 (the direct
/// value, without one thread's serial pass over the row: the longest row of a set would set the
/// kernel's time); otherwise, and for the other distances, one thread evaluates it directly.
template <class D, class ValueT, class IndexT>
__global__ void knn_self_direct_kernel(intersection_args<D, ValueT, IndexT> p, std::int64_t rows,
                                       const unsigned char* untrusted, ValueT* self_values)
{
  if constexpr (accuracy_traits<D, double>::zero_self) {
    const int lane = int(threadIdx.x) & 31;
    const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
    for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows;
         i += warps) {
      if (!untrusted[i]) {
        continue;  // uniform across the warp
      }
      const offset_t a0 = p.a_ptr[i], b0 = p.b_ptr[i];
      const bool zero = warp_rows_equal_finite(p.a_col + a0, p.a_val + a0, p.a_ptr[i + 1] - a0,
                                               p.b_col + b0, p.b_val + b0, p.b_ptr[i + 1] - b0) &&
                        knn_norms_equal_finite(p.norms_a, i, p.norms_b, i);
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
/// output, as the fused kernel merges its candidates: one block per row that has any. A row whose
/// pairs fit beside the list in the block's threads (the usual few) is merged by ranks
/// (knn_merge_by_rank); more are streamed a round of threads at a time through the candidate
/// buffer (knn_append, knn_end_round), each pair kept only when it beats the list's k-th under the
/// total order (value, then index), so that a group of many equal pairs (duplicate rows) costs a
/// comparison each instead of a sort of every chunk.
template <class ValueT>
__global__ void knn_deferred_merge_kernel(knn_fused_select s, const offset_t* offset,
                                          const ValueT* values, const std::int64_t* columns)
{
  using keys = selection::key_traits<ValueT>;
  extern __shared__ unsigned char smem_raw[];
  ValueT* vals = reinterpret_cast<ValueT*>(smem_raw);
  std::int64_t* idx = reinterpret_cast<std::int64_t*>(
      smem_raw + ((std::size_t(s.sort_size) * sizeof(ValueT) + 15) / 16) * 16);
  __shared__ int slots;
  if (threadIdx.x == 0) {
    slots = 0;
  }
  ValueT* out_v = static_cast<ValueT*>(s.out_values);
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
    if (end - begin <= offset_t(int(blockDim.x) - s.k)) {
      const int count = int(end - begin);
      for (int t = threadIdx.x; t < count; t += blockDim.x) {
        vals[s.k + t] = values[begin + t];
        idx[s.k + t] = columns[begin + t];
      }
      __syncthreads();
      have = knn_merge_by_rank(vals, idx, s, have, count);
      knn_finish_row(vals, idx, s, i, have, 0, &slots);
      continue;
    }
    int count = 0;
    for (offset_t c0 = begin; c0 < end; c0 += blockDim.x) {
      const offset_t e = c0 + offset_t(threadIdx.x);
      bool offer = false;
      if (e < end) {
        const ValueT v = values[e];
        const std::int64_t j = columns[e];
        offer = have < s.k;
        if (!offer) {
          const auto key = keys::to_key(v, s.largest);
          const auto bar = keys::to_key(vals[s.k - 1], s.largest);
          offer = key < bar || (key == bar && j < idx[s.k - 1]);
        }
        if (offer) {
          knn_append(vals, idx, s, &slots, v, j);
        }
      }
      knn_end_round(vals, idx, s, have, count, &slots, offer);
    }
    knn_finish_row(vals, idx, s, i, have, count, &slots);
  }
}

/// Query rows to launch the fused kernel again for, after their deferred pairs overflowed the
/// queue: ranges of rows, and a flag per row of the launch that overflowed (knn_fused_select::only;
/// a range [g0, g1) reads it from g0 - row_begin).
struct knn_rerun {
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  buffer<unsigned char> rows;
  std::int64_t row_begin = 0;
};

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
      lost_ = buffer<unsigned char>(res, std::size_t(std::max<std::int64_t>(rows, 1)),
                                    "rows that lost deferred pairs");
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
      SPIRA_CUDA_TRY(cudaMemsetAsync(lost_.data(), 0, std::size_t(rows), res_.stream));
      return {count_.data(), capacity_, pairs_.data(), row_count_.data(), lost_.data()};
    }
  }

  /// After a launch for the rows [s.row_begin, s.row_end): evaluates the queued pairs and merges
  /// them into the rows' lists. When more pairs were found than the queue holds, the rows that
  /// lost none are resolved the same way; the others are returned, for the fused kernel to run
  /// them again (each launch resolved here), with the queue grown to hold all their pairs (within a
  /// share of the free device memory; then in ranges that each fit, and at least the largest
  /// row's). Synchronises the stream when the kernel queued anything.
  knn_rerun resolve(const intersection_args<D, ValueT, IndexT>& p, knn_fused_select s, int sms)
  {
    knn_rerun rerun{};
    if constexpr (used) {
      const std::int64_t rows = s.row_end - s.row_begin;
      unsigned long long n = 0;
      copy(&n, memory_space::host, count_.data(), memory_space::device, 1, res_);
      if (n == 0) {
        return rerun;
      }
      const bool overflowed = n > (unsigned long long)capacity_;
      std::vector<offset_t> per_row;
      std::vector<unsigned char> lost;
      if (overflowed) {
        // The rows that lost a pair are left out here (their count zeroed) and run again.
        per_row.assign(std::size_t(rows), 0);
        lost.assign(std::size_t(rows), 0);
        copy(per_row.data(), memory_space::host, row_count_.data(), memory_space::device,
             per_row.size(), res_);
        copy(lost.data(), memory_space::host, lost_.data(), memory_space::device, lost.size(),
             res_);
        std::vector<offset_t> kept(per_row);
        for (std::size_t r = 0; r < kept.size(); ++r) {
          kept[r] = lost[r] ? 0 : kept[r];
        }
        copy(row_count_.data(), memory_space::device, kept.data(), memory_space::host, kept.size(),
             res_);
        rerun.rows = buffer<unsigned char>(res_, lost.size(), "rows to run again");
        copy(rerun.rows.data(), memory_space::device, lost.data(), memory_space::host, lost.size(),
             res_);
        rerun.row_begin = s.row_begin;
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
      const std::int64_t stored = std::min<std::int64_t>(std::int64_t(n), capacity_);
      knn_deferred_values_kernel<D, ValueT, IndexT>
          <<<elementwise_grid(stored, sms), cuda_pairwise_policy::row_threads, 0, res_.stream>>>(
              p, s, stored, row_count_.data(), overflowed ? lost_.data() : nullptr, fill_.data(),
              values_.data(), columns_.data());
      SPIRA_CHECK_LAUNCH();
      const std::size_t shared = ((std::size_t(s.sort_size) * sizeof(ValueT) + 15) / 16) * 16 +
                                 std::size_t(s.sort_size) * sizeof(std::int64_t);
      knn_deferred_merge_kernel<ValueT>
          <<<unsigned(std::min<std::int64_t>(rows, std::numeric_limits<int>::max())),
             cuda_pairwise_policy::intersection_threads, shared, res_.stream>>>(
              s, row_count_.data(), values_.data(), columns_.data());
      SPIRA_CHECK_LAUNCH();
      if (overflowed) {
        plan_rerun(per_row, lost, s.row_begin, rerun);
      }
    }
    return rerun;
  }

 private:
  static constexpr std::size_t pair_bytes =
      sizeof(knn_deferred_pair) + sizeof(ValueT) + sizeof(std::int64_t);

  /// Grows the queue for the rows that lost pairs and splits them into ranges that fit it.
  void plan_rerun(const std::vector<offset_t>& per_row, const std::vector<unsigned char>& lost,
                  std::int64_t row_begin, knn_rerun& rerun)
  {
    offset_t total = 0, largest = 0;
    for (std::size_t r = 0; r < per_row.size(); ++r) {
      if (lost[r]) {
        total += per_row[r];
        largest = std::max(largest, per_row[r]);
      }
    }
    const auto room = std::int64_t(double(cuda_free_memory(res_)) *
                                   knn_policy::deferred_memory_fraction / double(pair_bytes));
    reserve(std::max<std::int64_t>(largest, std::min<std::int64_t>(total, room)));
    std::int64_t g0 = -1, g1 = -1, sum = 0;
    for (std::size_t r = 0; r < per_row.size(); ++r) {
      if (!lost[r]) {
        continue;
      }
      if (g0 >= 0 && sum + per_row[r] > capacity_) {
        rerun.ranges.emplace_back(row_begin + g0, row_begin + g1);
        g0 = -1;
        sum = 0;
      }
      g0 = g0 < 0 ? std::int64_t(r) : g0;
      g1 = std::int64_t(r) + 1;
      sum += per_row[r];
    }
    if (g0 >= 0) {
      rerun.ranges.emplace_back(row_begin + g0, row_begin + g1);
    }
  }

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
  buffer<unsigned char> lost_;
  buffer<knn_deferred_pair> pairs_;
  buffer<ValueT> values_;
  buffer<std::int64_t> columns_;
};

#endif  // __CUDACC__

}  // namespace detail
}  // namespace spira
