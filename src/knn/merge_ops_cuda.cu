// merge_knn's kernels (src/knn/merge_cuda.hpp): the row checks and the merge, one thread per row as
// in the k-NN driver's running merge (each row's merge is sequential and k is small next to what
// produced the parts), and the duplicate check by two stable radix sorts of (row, index) pairs.
// The order and the merge are those of the host (knn_better, knn_merge_sorted), so the result is
// the host's bit for bit.
#include <spira/cuda/device.cuh>
#include <spira/cuda/error.cuh>
#include <spira/detail/knn_driver.hpp>
#include <spira/selection/keys.hpp>

#include "../cuda/launch.cuh"
#include "merge_cuda.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

namespace spira::detail {

namespace {

/// The key of an entry in the duplicate check: its index, or the largest key for padding (and
/// for an invalid index, which the row checks report), which no index reaches.
constexpr std::uint64_t no_index_key = ~std::uint64_t{0};

__device__ inline void lower_first_bad(std::int64_t* first_bad, std::int64_t r)
{
  atomicMin(reinterpret_cast<long long*>(first_bad), static_cast<long long>(r));
}

/// The real entries of row r of a part: the leading indices >= 0 (a well-formed row has only
/// padding, index -1, after them). Sets `bad` when the row breaks a rule of merge_knn_row_error
/// other than the duplicate one.
__device__ inline std::int64_t check_part_row(const merge_part_device& part, std::int64_t r,
                                              bool largest, bool& bad)
{
  const std::int64_t* ix = part.indices + r * part.indices_ld;
  const float* d = part.distances + r * part.distances_ld;
  std::int64_t real = 0;
  bool leading = true;
  for (std::int64_t j = 0; j < part.cols; ++j) {
    const std::int64_t v = ix[j];
    if (v < -1) {
      bad = true;
    }
    if (v < 0) {
      leading = false;
    } else if (!leading) {
      bad = true;  // a real entry after padding
    } else {
      ++real;
    }
  }
  for (std::int64_t j = 1; j < real; ++j) {
    if (!knn_better(d[j - 1], ix[j - 1], d[j], ix[j], largest)) {
      bad = true;
    }
  }
  return real;
}

__global__ void merge_rows_kernel(const merge_part_device* parts, std::int64_t num_parts,
                                  std::int64_t n_q, std::int64_t k, bool largest,
                                  std::int64_t* out_indices, float* out_distances,
                                  std::int64_t* scratch_indices, float* scratch_distances,
                                  std::int64_t* first_bad)
{
  const float padding = selection::key_traits<float>::padding(largest);
  for (std::int64_t r = grid_thread_index(); r < n_q; r += grid_stride()) {
    std::int64_t* const oi = out_indices + r * k;
    float* const od = out_distances + r * k;
    // The running list (`have` entries) and the list the next merge writes, swapped after each.
    std::int64_t* run_i = oi;
    float* run_d = od;
    std::int64_t* next_i = scratch_indices + r * k;
    float* next_d = scratch_distances + r * k;
    std::int64_t have = 0;
    bool bad = false;
    for (std::int64_t p = 0; p < num_parts; ++p) {
      const merge_part_device part = parts[p];
      const std::int64_t real = check_part_row(part, r, largest, bad);
      if (real == 0) {
        continue;
      }
      have = knn_merge_sorted<float>(
          {run_d, run_i, have},
          {part.distances + r * part.distances_ld, part.indices + r * part.indices_ld, real}, k,
          largest, std::int64_t{-1}, next_d, next_i);
      std::swap(run_i, next_i);
      std::swap(run_d, next_d);
    }
    if (run_i != oi) {
      for (std::int64_t j = 0; j < have; ++j) {
        oi[j] = run_i[j];
        od[j] = run_d[j];
      }
    }
    for (std::int64_t j = have; j < k; ++j) {
      oi[j] = -1;
      od[j] = padding;
    }
    if (bad) {
      lower_first_bad(first_bad, r);
    }
  }
}

/// Entry e of rows [r0, r0 + rows), the parts side by side (width columns): key = its index (or
/// no_index_key), row = its row less r0.
__global__ void gather_indices_kernel(const merge_part_device* parts, std::int64_t num_parts,
                                      std::int64_t width, std::int64_t r0, std::int64_t rows,
                                      std::uint64_t* keys, offset_t* row_of)
{
  const std::int64_t n = rows * width;
  for (std::int64_t e = grid_thread_index(); e < n; e += grid_stride()) {
    const std::int64_t r = e / width;
    const std::int64_t c = e % width;
    // The part holding column c: the last one that starts at or before it.
    const std::int64_t p =
        partition_point(0, num_parts, [&](std::int64_t q) { return parts[q].first_col <= c; }) - 1;
    const merge_part_device& part = parts[p];
    const std::int64_t v = part.indices[(r0 + r) * part.indices_ld + (c - part.first_col)];
    keys[e] = v >= 0 ? std::uint64_t(v) : no_index_key;
    row_of[e] = r;
  }
}

/// (index, row) -> (row, index) in place, for the second, stable sort by row.
__global__ void swap_pairs_kernel(std::int64_t n, std::uint64_t* keys, offset_t* values)
{
  for (std::int64_t e = grid_thread_index(); e < n; e += grid_stride()) {
    const std::uint64_t index = keys[e];
    keys[e] = std::uint64_t(values[e]);
    values[e] = offset_t(index);
  }
}

/// Pairs sorted by (row, index): two equal neighbours with a real index are a duplicate.
__global__ void find_duplicates_kernel(std::int64_t n, const std::uint64_t* rows,
                                       const offset_t* indices, std::int64_t r0,
                                       std::int64_t* first_bad)
{
  for (std::int64_t e = grid_thread_index() + 1; e < n; e += grid_stride()) {
    const offset_t index = indices[e];
    if (index != offset_t(no_index_key) && index == indices[e - 1] && rows[e] == rows[e - 1]) {
      lower_first_bad(first_bad, r0 + std::int64_t(rows[e]));
    }
  }
}

}  // namespace

void merge_knn_rows_cuda(const cuda_resources& res, const merge_part_device* parts,
                         std::int64_t num_parts, std::int64_t n_q, std::int64_t k, bool largest,
                         std::int64_t* out_indices, float* out_distances,
                         std::int64_t* scratch_indices, float* scratch_distances,
                         std::int64_t* first_bad)
{
  if (n_q == 0) {
    return;
  }
  device_guard guard(res.device);
  launch_elementwise(res, n_q, merge_rows_kernel, parts, num_parts, n_q, k, largest, out_indices,
                     out_distances, scratch_indices, scratch_distances, first_bad);
}

void merge_knn_duplicates_cuda(const cuda_resources& res, const merge_part_device* parts,
                               std::int64_t num_parts, std::int64_t width, std::int64_t r0,
                               std::int64_t r1, ping_pong<std::uint64_t> keys,
                               ping_pong<offset_t> rows, std::int64_t* first_bad)
{
  const std::int64_t n = (r1 - r0) * width;
  if (n <= 1) {
    return;
  }
  device_guard guard(res.device);
  launch_elementwise(res, n, gather_indices_kernel, parts, num_parts, width, r0, r1 - r0,
                     keys.current, rows.current);
  // By index, then stably by row: sorted by (row, index).
  stable_sort_pairs(res, keys, rows, n, 64);
  launch_elementwise(res, n, swap_pairs_kernel, n, keys.current, rows.current);
  stable_sort_pairs(res, keys, rows, n, bits_for_extent(r1 - r0));
  launch_elementwise(res, n, find_duplicates_kernel, n, keys.current, rows.current, r0, first_bad);
}

}  // namespace spira::detail
