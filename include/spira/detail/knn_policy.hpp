// spira internals: the k-NN graph's tuning in one place - memory budgets, tile shapes, progress
// steps and the fused CUDA algorithm's byte model. Plain C++; used by the one k-NN driver
// (spira/detail/knn_driver.hpp) on both backends.
#pragma once

#include <spira/error.hpp>
#include <spira/knn.hpp>
#include <spira/memory.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace spira::detail {

struct knn_policy {
  /// knn_params::memory_budget = 0 on CUDA: the free device memory divided by this (the index
  /// tiles and the workspaces of the distance engine and of select_k live beside the tiles). On
  /// the host the default is the library's one host budget (default_host_memory_budget()).
  static constexpr std::size_t device_budget_divisor = 2;
  /// CUDA tiled algorithm: the whole index stays on the device (copied once) when it takes at
  /// most 1 / resident_index_divisor of the budget; otherwise one index tile at a time is held and
  /// the distance tiles get 1 / resident_index_divisor of the budget.
  static constexpr std::size_t resident_index_divisor = 2;
  /// Tiled algorithm with several query tiles (host, and CUDA with the index on the device): each
  /// index tile is prepared once for the distance engine (its norms, prepared values and, for the
  /// intersection strategy or the host's selection engine, its CSC with the NAMM terms:
  /// pairwise_prepared on CUDA, host_pairwise_prepared on the host) and kept for every query tile,
  /// while the tiles kept take at most 1 / prepared_index_divisor of the budget (beside it, as the
  /// engine's other workspaces); past that a tile is not kept and each of its distance tiles
  /// computes what it needs, as with one query tile. Kept whole, an index takes about its own
  /// bytes again (the CSC), twice for a distance with a sum NAMM (its one-sided terms too).
  static constexpr std::size_t prepared_index_divisor = 2;
  /// Square tiles of a host self query (knn_host_ops::square_tiles) hold the running lists of every
  /// row at once; they are taken while those lists fit 1 / square_lists_divisor of the budget, and
  /// the distance tile gets what the lists and the tiles' candidates (twice the lists at most)
  /// leave.
  static constexpr std::size_t square_lists_divisor = 4;
  /// Columns of a square tile one thread ranks at a time (their lists stay in the L1 cache, and
  /// each row of the tile is read in runs of this many values).
  static constexpr std::int64_t square_column_block = 64;
  /// Sorted lists of k entries held per query row of a tile: the running list, the tile's top-k
  /// and the merge's output.
  static constexpr std::size_t lists_per_query = 3;
  /// Fewer query rows per tile than this (or all of them, if fewer) with whole index rows: the
  /// index is split into tiles instead, keeping at least half the budget for distance tiles.
  static constexpr std::int64_t min_query_tile = 256;
  /// Host distance tiles of at most this many bytes (one buffer reused from tile to tile): a
  /// larger tile is no faster, and costs the first touch of its pages (the kernel zeroes each)
  /// and the cache.
  static constexpr std::size_t host_tile_bytes = std::size_t{256} << 20;
  /// With a progress callback, about this many reports per call...
  static constexpr std::int64_t progress_steps = 20;
  /// ...but never host tiles of fewer query rows than this...
  static constexpr std::int64_t progress_min_rows = 256;
  /// ...nor CUDA query tiles (and the Python binding's blocks of pairwise rows) of fewer than
  /// this: each is followed by a stream synchronisation, so each waits for its slowest row and
  /// drains the GPU. The fused k-NN is not split at all: its one launch reports while it runs
  /// (spira/cuda/detail/launch_progress.cuh), as launches of this size still took a tenth more
  /// time than one.
  static constexpr std::int64_t cuda_progress_min_rows = 8192;
  /// Fused CUDA k-NN: when a launch's deferred pairs overflow their queue (knn_deferred_capacity),
  /// the queue grows to hold the pairs of every row that lost one, within this share of the free
  /// device memory, and those rows run again (rows with many equal distances, such as duplicates).
  static constexpr double deferred_memory_fraction = 0.25;
  /// Host k-NN by rows (spira/detail/knn_host_disjoint.hpp): taken when the products of the
  /// queries with the index are at most this multiple of the pairs.
  static constexpr double host_rows_max_products = 2.0;

  /// Rows per step of a call of `rows` rows with a progress callback: about 1 / progress_steps
  /// of them, at least `min_rows` (progress_min_rows on the host, cuda_progress_min_rows on CUDA).
  static constexpr std::int64_t progress_rows(std::int64_t rows, std::int64_t min_rows)
  {
    return std::max((rows + progress_steps - 1) / progress_steps, min_rows);
  }
};

/// The part of the host budget its tiles are planned with: at most knn_policy::host_tile_bytes
/// for the distance tile and its queries' lists, but never less than min_query_tile whole index
/// rows of them need (the budget decides beyond that).
inline std::size_t host_tile_budget(std::size_t budget, std::int64_t n_i, std::int64_t k,
                                    std::size_t value_bytes)
{
  const std::size_t row = std::size_t(n_i) * value_bytes +
                          knn_policy::lists_per_query * std::size_t(k) * (value_bytes + 8);
  return std::min(
      budget, std::max(knn_policy::host_tile_bytes, std::size_t(knn_policy::min_query_tile) * row));
}

/// knn_params::memory_budget, or the backend's default.
inline std::size_t knn_host_budget(const knn_params& params)
{
  return params.memory_budget > 0 ? params.memory_budget : default_host_memory_budget();
}

struct knn_tiling {
  std::int64_t queries;  ///< query rows per tile
  std::int64_t index;    ///< index rows per tile
};

/// Tiles such that the distance tile (queries x index values of `value_bytes`), its top-k and the
/// running top-k lists fit `budget`. Prefers whole index rows per query tile; splits the index when
/// k or the index is too large for that. Overrides in params win. `caller_budget` (default:
/// `budget`) is the budget the caller gave, which the messages name when the tiles get a share of
/// it. With a progress callback, query tiles hold about 1 / progress_steps of the queries, but at
/// least `progress_min_rows` (the backend's: knn_policy::progress_min_rows on the host,
/// knn_policy::cuda_progress_min_rows on CUDA).
inline knn_tiling plan_knn_tiles(std::size_t budget, std::int64_t n_q, std::int64_t n_i,
                                 std::int64_t k, std::size_t value_bytes, const knn_params& params,
                                 std::size_t caller_budget = 0,
                                 std::int64_t progress_min_rows = knn_policy::progress_min_rows)
{
  const std::size_t named = caller_budget > 0 ? caller_budget : budget;
  using policy = knn_policy;
  const std::size_t pair = value_bytes + sizeof(std::int64_t);
  std::int64_t ti = params.index_tile > 0 ? std::min(params.index_tile, n_i) : n_i;
  ti = std::max<std::int64_t>(ti, 1);
  std::int64_t tq = params.query_tile;
  if (tq == 0) {
    const std::size_t lists_per_query = policy::lists_per_query * std::size_t(k) * pair;
    tq = static_cast<std::int64_t>(budget / (ti * value_bytes + lists_per_query));
    const std::int64_t enough = std::min<std::int64_t>(n_q, policy::min_query_tile);
    if (tq < enough && params.index_tile == 0) {
      // Whole index rows do not fit for enough queries: split the index instead. Keep at least
      // half the budget for distance tiles so that index tiles stay long.
      tq = enough;
      while (tq > 1 && tq * lists_per_query > budget / 2) {
        tq /= 2;
      }
      const std::size_t lists = tq * lists_per_query;
      expects<out_of_memory>(lists < budget, "knn_graph: memory budget of ", named,
                             " bytes cannot hold the top-", k, " lists of one query (", lists,
                             " bytes); raise knn_params::memory_budget");
      ti = std::clamp<std::int64_t>((budget - lists) / (tq * value_bytes), 1, n_i);
    }
    expects<out_of_memory>(tq >= 1, "knn_graph: memory budget of ", named,
                           " bytes is too small for one query against ", ti,
                           " index rows; raise knn_params::memory_budget");
    if (params.progress) {
      tq = std::min(tq, policy::progress_rows(n_q, progress_min_rows));
    }
  }
  return {std::min(tq, std::max<std::int64_t>(n_q, 1)), ti};
}

/// Pairs the fused CUDA algorithm queues for direct evaluation per launch of `rows` query rows
/// before it splits the launch (pairs the accuracy guard did not trust; see knn_deferred).
constexpr std::int64_t knn_deferred_capacity(std::int64_t rows)
{
  return std::max<std::int64_t>(std::int64_t(1) << 16, 2 * rows);
}

/// Device bytes of the queue of deferred pairs for one launch of `rows` query rows: the pairs
/// (16 bytes), their values and columns once grouped, and two counters per row.
template <class ValueT>
std::size_t knn_deferred_bytes(std::int64_t rows)
{
  return std::size_t(knn_deferred_capacity(rows)) * (16 + sizeof(ValueT) + 8) +
         std::size_t(rows + 1) * 16;
}

/// Slots of the hash table of the fused CUDA algorithm's equal rows (spira/cuda/detail/
/// knn_equal_rows.cuh) for an index of `rows` rows: a power of two, at least twice the rows.
inline std::uint64_t knn_equal_rows_slots(std::int64_t rows)
{
  return std::bit_ceil(std::uint64_t(std::max<std::int64_t>(2 * rows, 64)));
}

/// Device bytes of the equal rows' classes: the table, a hash and a class per index row, a class
/// per query row (a self query shares the index's; counted anyway).
inline std::size_t knn_equal_rows_bytes(std::int64_t queries, std::int64_t index)
{
  return std::size_t(knn_equal_rows_slots(index)) * 16 + std::size_t(index) * 16 +
         std::size_t(queries) * 8;
}

/// Device bytes the fused CUDA algorithm needs: the operands (when copied from the host), the CSC
/// of the index, per-row statistics, the classes of equal rows (`equal_rows`: for a distance that
/// declares zero_self_distance), the queue of deferred pairs and the n_q x k outputs.
template <class ValueT, class IndexT>
std::size_t knn_fused_bytes(csr_view<ValueT, IndexT> queries, csr_view<ValueT, IndexT> index,
                            std::int64_t k, bool equal_rows)
{
  const auto csr_bytes = [](csr_view<ValueT, IndexT> m) {
    return std::size_t(m.nnz) * (sizeof(ValueT) + sizeof(IndexT)) + std::size_t(m.rows + 1) * 8;
  };
  return 3 * csr_bytes(index) + 2 * csr_bytes(queries) +
         std::size_t(index.rows + queries.rows) * 64 + knn_deferred_bytes<ValueT>(queries.rows) +
         (equal_rows ? knn_equal_rows_bytes(queries.rows, index.rows) : 0) +
         std::size_t(queries.rows * k) * (sizeof(ValueT) + 8);
}

}  // namespace spira::detail
