// spira selection: the delegate algorithm's tuning policy, its threshold type and the shape of a
// row's sub-ranges and delegate vector (selection/delegate.cuh describes the algorithm).
#pragma once

#include "selection/dispatch.hpp"

#include <cstdint>

namespace spira::selection {

/// Tuning of the delegate algorithm.
struct delegate_policy {
  /// Delegates per sub-range (Dr. Top-k's beta).
  static constexpr int beta = delegate_beta;
  /// Threads of the warp-per-sub-range and warp-per-piece kernels.
  static constexpr int block_threads = 256;
  /// Loads in flight per lane in the warp-per-sub-range (scalar) and warp-per-piece kernels.
  static constexpr int unroll = 8;
  /// Threads of delegate_tile_kernel.
  static constexpr int tile_threads = 256;
  /// Consecutive elements a tile-kernel thread scans: a divisor of every sub-range length (>= 32),
  /// and a tile of at most 32 KiB.
  template <class T>
  static constexpr int run = sizeof(T) <= 4 ? 32 : 16;
  /// Elements of a construction tile.
  template <class T>
  static constexpr int tile = tile_threads * run<T>;
  /// Sub-ranges up to this length are built by delegate_tile_kernel (a tile of whole sub-ranges
  /// per block), longer ones by delegate_warp_kernel (a warp streaming each sub-range). Measured
  /// on the H200, n = 2^28 floats, construction alone (docs/selection.md, "delegate"): the tile
  /// kernel takes 0.53-0.58 ms for alpha = 32 to 512 where the previous lane- and warp-per-sub-
  /// range kernels took 0.76-0.90 ms; the warp kernel took 0.55, 0.39 and 0.28 ms for alpha =
  /// 2048, 8192 and 65536 where the tile kernel takes 0.59, 0.60 and 0.41 ms (0.27 ms at 8192
  /// since its warp-shared bound; end to end it is still 1.18-1.34x slower at 512, equal at 1024).
  /// The tile kernel's branch-free insertion came after these measurements and only made it
  /// faster (0.45 ms at alpha = 512); longer sub-ranges on the tile kernel were not measured.
  static constexpr std::int64_t tile_max_subrange = 1024;
  /// 16-byte vectors in flight per lane in delegate_warp_kernel.
  static constexpr int vector_unroll = 4;
  /// Full sub-ranges are read again in pieces of this many elements, a warp each.
  static constexpr std::int64_t piece = 1024;
};

/// The threshold t of Rule 2: an element of the row, as (key, position).
template <class Key>
struct delegate_threshold {
  Key key;
  std::int64_t pos;
};

/// The shape of one row's sub-ranges and delegate vector.
struct delegate_layout {
  std::int64_t n = 0;      ///< row length
  std::int64_t alpha = 0;  ///< sub-range length (a power of two >= 32)
  std::int64_t m = 0;      ///< sub-ranges: ceil(n / alpha)
  /// Delegates of sub-range s: min(beta, its length), at D[s * beta ...).
  __host__ __device__ std::int64_t length(std::int64_t s) const
  {
    const std::int64_t rest = n - s * alpha;
    return rest < alpha ? rest : alpha;
  }
  __host__ __device__ int delegates(std::int64_t s) const
  {
    const std::int64_t len = length(s);
    return len < delegate_policy::beta ? static_cast<int>(len) : delegate_policy::beta;
  }
  /// Entries of D: beta per sub-range, fewer only for a short last sub-range.
  __host__ __device__ std::int64_t delegate_count() const
  {
    return (m - 1) * delegate_policy::beta + delegates(m - 1);
  }
};

}  // namespace spira::selection
