// spira CLI: what the commands check before the work (values the metric cannot take, the memory
// budget) and the warning for a budget that would make a job much slower.
#pragma once

#include "args.hpp"

#include <spira/distance.hpp>
#include <spira/matrix.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace spira::cli {

/// The metrics of distributions need non-negative values: checks the whole matrix read from
/// `path` and names the file, the row and the column (counted from 0, as in the outputs).
template <class ValueT, class IndexT>
void check_values_for_metric(const csr_matrix<ValueT, IndexT>& m, const std::string& path,
                             metric mt)
{
  if (!requires_nonnegative(mt)) {
    return;
  }
  for (std::int64_t i = 0; i < m.rows(); ++i) {
    for (offset_t e = m.row_ptr()[i]; e < m.row_ptr()[i + 1]; ++e) {
      if (m.values()[e] < ValueT(0)) {
        throw invalid_argument(detail::concat(
            path, ": metric ", to_string(mt), " needs non-negative values, but row ", i,
            ", column ", m.col_idx()[e], " holds ", m.values()[e], " (rows and columns from 0)"));
      }
    }
  }
}

/// --strategy S for --metric M: a usage_error when the CUDA strategy cannot evaluate the metric.
void check_strategy(metric m, pairwise_strategy s);

/// The --memory-budget-mb option in bytes, or the library's default (spira/memory.hpp:
/// default_host_memory_budget) when it is absent.
std::size_t memory_budget(const arguments& args);

/// Fails (io_error naming the output and both sizes) when the file system of `path` has less free
/// space than the `bytes` the output will take, before the work; devices and pipes are not checked.
void check_free_space(const std::string& path, std::uint64_t bytes);

/// The shape of a tiled job, for the slowdown rule.
struct tiled_job {
  std::int64_t query_rows;  ///< rows of A (distance) or of the queries (knn)
  std::int64_t index_rows;  ///< rows of B or of the index
  std::int64_t cols;        ///< columns of both
  std::int64_t query_nnz;
  std::int64_t index_nnz;
  std::int64_t query_tile;  ///< query rows per tile under the budget
  std::int64_t index_tile;  ///< index rows per tile under the budget
};

/// How many times longer the job is estimated to take in these tiles than in one tile: every
/// pair of a query tile and an index tile pays a fixed cost (tile_overhead_steps) and a pass over
/// the index tile (the column form of its nnz, cols and rows, which the engine builds per call),
/// while the distance cells (query rows x index rows) and the products (nnz(Q) x nnz(index) /
/// cols) are the same in any tiling. See docs/cli.md.
double tiling_slowdown(const tiled_job& job);

/// The estimated slowdown at or above which the CLI warns on stderr.
inline constexpr double slow_budget_factor = 30.0;

/// Prints a one-line warning on stderr when tiling_slowdown(job) >= slow_budget_factor.
void warn_if_budget_slows(const char* command, const tiled_job& job, std::size_t budget);

}  // namespace spira::cli
