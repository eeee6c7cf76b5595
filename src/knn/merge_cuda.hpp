// merge_knn's kernels on the GPU (src/knn/merge_ops_cuda.cu) behind a plain C++ interface, for the
// CUDA entry (merge_cuda.cpp). Pointers are device pointers; the work is queued on res.stream and
// nothing here synchronises.
#pragma once

#include <spira/config.hpp>
#include <spira/resources.hpp>

#include "../cuda/primitives.cuh"

#include <cstdint>

namespace spira::detail {

struct merge_knn_policy {
  /// Entries (index, row) the duplicate check sorts at a time: the rows are checked in chunks of
  /// at most this many entries (at least one row). 2^24 entries take 512 MiB of sort buffers (an
  /// 8-byte key and an 8-byte value, twice for the radix sort's ping-pong). A bound on the
  /// memory, not a tuned value: the radix sort runs at full throughput well below it.
  static constexpr std::int64_t duplicate_check_entries = std::int64_t(1) << 24;
};

/// One part as the kernels read it: row r of its indices at indices + r * indices_ld, cols
/// entries; first_col is the number of columns of the parts before it (its entries' place in a
/// row of all parts side by side).
struct merge_part_device {
  const std::int64_t* indices = nullptr;
  const float* distances = nullptr;
  std::int64_t indices_ld = 0;
  std::int64_t distances_ld = 0;
  std::int64_t cols = 0;
  std::int64_t first_col = 0;
};

/// Every row r < n_q of the num_parts parts (descriptors in device memory): the checks of
/// merge_knn_row_error except the one for an index listed twice (indices >= -1, padding after the
/// real entries, each part's row sorted best first by knn_better), then the merge of merge_knn_host
/// - the parts with real entries folded in order into a running list by knn_merge_sorted - into
/// out (n_q x k, padded with index -1 and selection's padding distance of the order). scratch
/// holds n_q x k entries. A row that fails a check lowers *first_bad to r (atomicMin).
void merge_knn_rows_cuda(const cuda_resources& res, const merge_part_device* parts,
                         std::int64_t num_parts, std::int64_t n_q, std::int64_t k, bool largest,
                         std::int64_t* out_indices, float* out_distances,
                         std::int64_t* scratch_indices, float* scratch_distances,
                         std::int64_t* first_bad);

/// The check for an index listed twice in a row (by one part or by two), over rows [r0, r1):
/// sorts the (row, index) pairs of their real entries (width = the parts' columns together) and
/// lowers *first_bad to the first row with two equal pairs. keys and rows: ping-pong buffers of
/// (r1 - r0) x width entries each.
void merge_knn_duplicates_cuda(const cuda_resources& res, const merge_part_device* parts,
                               std::int64_t num_parts, std::int64_t width, std::int64_t r0,
                               std::int64_t r1, ping_pong<std::uint64_t> keys,
                               ping_pong<offset_t> rows, std::int64_t* first_bad);

}  // namespace spira::detail
