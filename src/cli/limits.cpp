#include "limits.hpp"

#include <spira/memory.hpp>

#include <sys/statvfs.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace spira::cli {

namespace {

/// The unit of the estimate is the cost of one distance cell. The fixed cost of one tile pair
/// (starting the threads, allocating the tile, the selection's setup) in that unit...
constexpr double tile_overhead_steps = 2.0e4;
/// ...and of one element of the pass over the index tile (its column form, built per call: random
/// access, about twice a cell). Calibrated with `spira distance` on the host (2 cores, Release):
/// 300 x 80,000 rows (200 columns, 800k nnz) and 300 x 40,000 rows (20,000 columns, 800k nnz) at
/// --memory-budget-mb 1, 2, 4, 8 against one tile: measured 3.8x-18.5x, this model 3.1x-19.4x.
constexpr double pass_weight = 2.0;

double cost(const tiled_job& j, double query_tiles, double index_tiles)
{
  const double pairs = query_tiles * index_tiles;
  const double pass = double(j.index_nnz) + double(j.index_rows) + index_tiles * double(j.cols);
  const double cells = double(j.query_rows) * double(j.index_rows);
  const double products =
      j.cols > 0 ? double(j.query_nnz) * double(j.index_nnz) / double(j.cols) : 0.0;
  return pairs * tile_overhead_steps + query_tiles * pass_weight * pass + cells + products;
}

double tiles(std::int64_t rows, std::int64_t per_tile)
{
  return rows <= 0 ? 1.0
                   : double((rows + std::max<std::int64_t>(per_tile, 1) - 1) /
                            std::max<std::int64_t>(per_tile, 1));
}

}  // namespace

void check_strategy(metric m, pairwise_strategy s)
{
  if (!supports_strategy(m, s)) {
    throw usage_error(detail::concat("option '--strategy': strategy ", to_string(s),
                                     " cannot evaluate metric ", to_string(m),
                                     " (see docs/cuda-engine.md)"));
  }
}

void check_free_space(const std::string& path, std::uint64_t bytes)
{
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec)) {
    return;
  }
  const fs::path parent = fs::path(path).parent_path();
  struct statvfs st {};
  if (statvfs(parent.empty() ? "." : parent.c_str(), &st) != 0) {
    return;
  }
  const std::uint64_t free_bytes = std::uint64_t(st.f_bavail) * std::uint64_t(st.f_frsize);
  if (free_bytes < bytes) {
    throw io_error(detail::concat(path, ": not enough space for the output: it takes ", bytes,
                                  " bytes, the file system has ", free_bytes, " bytes free"));
  }
}

std::size_t memory_budget(const arguments& args)
{
  const auto mb = args.integer("memory-budget-mb", 1, std::int64_t{1} << 30);
  return mb ? static_cast<std::size_t>(*mb) << 20 : default_host_memory_budget();
}

double tiling_slowdown(const tiled_job& j)
{
  const double tiled =
      cost(j, tiles(j.query_rows, j.query_tile), tiles(j.index_rows, j.index_tile));
  return tiled / cost(j, 1.0, 1.0);
}

void warn_if_budget_slows(const char* command, const tiled_job& job, std::size_t budget)
{
  const double slowdown = tiling_slowdown(job);
  if (slowdown < slow_budget_factor) {
    return;
  }
  std::fprintf(stderr,
               "spira %s: warning: a memory budget of %.1f MiB cuts the work into tiles of %lld x "
               "%lld rows; estimated %.0fx slower than in one tile (raise --memory-budget-mb)\n",
               command, double(budget) / double(1 << 20), (long long)job.query_tile,
               (long long)job.index_tile, slowdown);
}

}  // namespace spira::cli
