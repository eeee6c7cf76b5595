// spira selection: the radix algorithm (MSD radix select in the style of RadiK), any k, any row
// length, dense or ragged rows in one batch.
//
// Order: elements are ranked by (key, position), a total order (selection/keys.hpp), so a row's
// selection is exactly the set {(key, pos) <= (K, P)} for the k-th pair (K, P). The algorithm finds
// (K, P) one 8-bit digit at a time, most significant first: first the digits of the key, then, only
// for rows whose k-th key is duplicated beyond what is needed, the digits of the position. This is
// how the tie rule (smaller index first) holds exactly without sorting.
//
// Adaptive digit positions (RadiK's adaptive scaling, section 4.3, in a form that keeps the order
// exact): the first pass takes the key's top 8 bits and the row's extreme keys; every later key
// digit starts at the highest bit in which the keys still in question can differ, those of the
// chosen bin within the row's extremes (radix_narrow, selection/keys.hpp, shared with the cluster
// form). Values clustered near the k-th, which share most of their bits, take no pass for them,
// and a row whose chosen bin holds one key value goes straight to the ties.
//
// When all tasks fit in one co-resident wave, everything runs in one cooperative launch
// (radix_select_kernel): a persistent grid walks the phases with grid-wide barriers in between and
// leaves the digit loop early; larger batches launch one kernel per phase and digit, one block per
// task (the same phase functions). A task is one chunk of one row (ragged
// rows are mapped onto equal chunks, so a long row is spread over many blocks and a short row
// costs one task). Per digit pass, for all rows at once:
//  * histogram: elements whose higher digits match the row's prefix are counted into warp-private
//    shared histograms (warp level), merged per block (block level) and added to the row's global
//    histogram with one atomic per non-empty bin (grid level): hierarchical atomics;
//  * pick: one warp per row scans the 256 bins, fixes the digit containing the k-th element, and
//    marks the row done as soon as the chosen bin holds exactly the elements still needed; the
//    digit loop ends for the whole grid once every row is done (early exit).
// In the persistent form, a row whose elements still in play fit its candidate buffer (RadiK's
// write buffer) is copied there by its next pass, and later passes and the count read only the
// buffer, the row's tasks sharing out its candidates (radix_copy_task, radix_slice_of).
// Then each task counts its selected elements, and writes them at the prefix offset of its chunk
// with a block scan, so the output lists each row's selection by increasing position, independent
// of scheduling and atomics (determinism).
//
// Histogram counts are integers, so their atomic accumulation is order independent.
//
// Files: the policy, row states, arguments and tasks (radix_policy.cuh); the digit passes' row
// states and picks (radix_passes.cuh); the histogram (radix_histogram.cuh); the count and write of
// the selection (radix_filter.cuh); the kernels of both forms here.
#pragma once

#include "selection/keys.hpp"
#include "selection/radix_filter.cuh"
#include "selection/radix_histogram.cuh"
#include "selection/radix_passes.cuh"
#include "selection/radix_policy.cuh"
#include "selection/warp.cuh"

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <cstdint>

namespace spira::selection {

// ---- multi-launch form: one kernel per phase and digit, for batches with more tasks than one
// co-resident wave (there, one block per task and no grid barriers is faster). -----------------

template <class T, class IndexT>
__global__ void radix_init_kernel(radix_args<T, IndexT> a)
{
  radix_init(a);
}

template <class T, class IndexT>
__global__ void __launch_bounds__(radix_policy::block_threads, radix_policy::streaming_blocks)
    radix_histogram_kernel(radix_args<T, IndexT> a)
{
  __shared__ radix_hist_shared shared;
  radix_histogram_task<false>(a, blockIdx.x, shared);
}

template <class T, class IndexT>
__global__ void radix_pick_kernel(radix_args<T, IndexT> a, int pass)
{
  const std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / warp::size;
  if (row < a.src.rows) {
    radix_pick_row(a, row, pass);
  }
}

template <class T, class IndexT>
__global__ void __launch_bounds__(radix_policy::block_threads)
    radix_count_kernel(radix_args<T, IndexT> a)
{
  using reduce = cub::BlockReduce<std::int64_t, radix_policy::block_threads>;
  __shared__ typename reduce::TempStorage tmp;
  radix_count_task<false, T, IndexT, reduce>(a, blockIdx.x, tmp);
}

template <class T, class IndexT>
__global__ void __launch_bounds__(radix_policy::block_threads)
    radix_write_kernel(radix_args<T, IndexT> a)
{
  using reduce = cub::BlockReduce<std::int64_t, radix_policy::block_threads>;
  using scan = cub::BlockScan<int, radix_policy::block_threads>;
  __shared__ typename reduce::TempStorage reduce_tmp;
  __shared__ typename scan::TempStorage scan_tmp;
  __shared__ std::int64_t offset;
  radix_write_task<T, IndexT, reduce, scan>(a, blockIdx.x, reduce_tmp, scan_tmp, offset);
}

// ---- persistent form ------------------------------------------------------------------------

/// The whole radix select in one cooperative launch: a persistent grid walks the tasks of each
/// phase (grid-stride), with grid-wide barriers between phases, and leaves the digit loop as soon
/// as every row is done. One launch instead of two per digit keeps small batches (a few long
/// rows) from being dominated by launch latency.
template <class T, class IndexT>
__global__ void __launch_bounds__(radix_policy::block_threads, radix_policy::persistent_blocks)
    radix_select_kernel(radix_args<T, IndexT> a)
{
  using reduce = cub::BlockReduce<std::int64_t, radix_policy::block_threads>;
  using scan = cub::BlockScan<int, radix_policy::block_threads>;
  __shared__ union {
    radix_hist_shared hist;
    typename reduce::TempStorage reduce;
    struct {
      typename reduce::TempStorage reduce;
      typename scan::TempStorage scan;
    } write;
  } shared;
  __shared__ std::int64_t offset;
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const std::int64_t tasks = a.src.rows * a.layout.chunks;

  radix_init(a);
  grid.sync();
  const std::int64_t warps_in_grid = std::int64_t(gridDim.x) * radix_policy::warps;
  const std::int64_t my_warp =
      std::int64_t(blockIdx.x) * radix_policy::warps + threadIdx.x / warp::size;
  for (int pass = 0; pass < a.layout.key_digits + a.layout.pos_digits; ++pass) {
    if (*static_cast<volatile unsigned long long*>(a.pending) == 0) {
      break;
    }  // same for all
    for (std::int64_t t = blockIdx.x; t < tasks; t += gridDim.x) {
      radix_histogram_task<true>(a, t, shared.hist);
    }
    grid.sync();
    for (std::int64_t row = my_warp; row < a.src.rows; row += warps_in_grid) {
      radix_pick_row(a, row, pass);
    }
    grid.sync();
  }
  for (std::int64_t t = blockIdx.x; t < tasks; t += gridDim.x) {
    radix_count_task<true, T, IndexT, reduce>(a, t, shared.reduce);
  }
  grid.sync();
  for (std::int64_t t = blockIdx.x; t < tasks; t += gridDim.x) {
    radix_write_task<T, IndexT, reduce, scan>(a, t, shared.write.reduce, shared.write.scan, offset);
  }
}

}  // namespace spira::selection
