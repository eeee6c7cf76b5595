// select_k, CUDA backend: sizes the workspace, launches binary_search or radix on res.stream, and
// for sorted output reorders each row best first with a stable segmented sort on the keys (stable,
// and the unsorted output lists a row by increasing index, so equal keys stay in index order).
// Included by select_k_cuda.cu, which instantiates select_rows for every value and index type.
#pragma once

#include "selection/binary_search.cuh"
#include "selection/dispatch.hpp"
#include "selection/launch.hpp"
#include "selection/radix.cuh"
#include "selection/radix_cluster.cuh"
#include "selection/radix_vector.cuh"
#include "selection/workspace.hpp"

#include <spira/cuda/device.cuh>
#include <spira/cuda/error.cuh>

#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <limits>

namespace spira::selection {

using spira::detail::device_guard;

namespace {

// ---- binary_search
// -------------------------------------------------------------------------------

template <class T, class IndexT, int Items>
void launch_binary_search(const cuda_resources& res, row_source<T, IndexT> src,
                          row_sink<T, IndexT> dst, const problem& p)
{
  const std::int64_t blocks = blocks_for(src.rows, binary_search_policy::warps_per_block);
  check_grid(blocks, "binary_search");
  const auto grid = static_cast<unsigned>(blocks);
  constexpr int threads = binary_search_policy::warps_per_block * warp::size;
  if constexpr (Items >= binary_search_policy::lane_bound_min_items) {
    if (p.k <= warp::size && p.max_iter <= 0) {
      binary_search_kernel<T, IndexT, Items, true>
          <<<grid, threads, 0, stream_of(res)>>>(src, dst, p.k, p.largest, p.max_iter);
      SPIRA_CHECK_LAUNCH();
      return;
    }
  }
  binary_search_kernel<T, IndexT, Items, false>
      <<<grid, threads, 0, stream_of(res)>>>(src, dst, p.k, p.largest, p.max_iter);
  SPIRA_CHECK_LAUNCH();
}

template <class T, class IndexT>
void run_binary_search(const cuda_resources& res, row_source<T, IndexT> src,
                       row_sink<T, IndexT> dst, const problem& p)
{
  const std::int64_t items =
      std::max<std::int64_t>(1, (p.max_length + warp::size - 1) / warp::size);
  if (items <= 4) {
    launch_binary_search<T, IndexT, 4>(res, src, dst, p);
  } else if (items <= 8) {
    launch_binary_search<T, IndexT, 8>(res, src, dst, p);
  } else if (items <= 16) {
    launch_binary_search<T, IndexT, 16>(res, src, dst, p);
  } else if (items <= 24) {
    launch_binary_search<T, IndexT, 24>(res, src, dst, p);
  } else if (items <= 32) {
    launch_binary_search<T, IndexT, 32>(res, src, dst, p);
  } else {
    launch_binary_search<T, IndexT, 64>(res, src, dst, p);
  }
}

// ---- radix
// ---------------------------------------------------------------------------------------

/// Clusters of radix_cluster_policy::max_cluster blocks of radix_cluster_kernel<T, IndexT,
/// Threads> that can run at once on `device`, at the kernel's largest shared memory size; zero
/// where the kernel cannot run (a device or a binary older than sm_90). Asked once per device and
/// instantiation (the attribute it sets is per device).
template <class T, class IndexT, int Threads>
int radix_cluster_room(int device, cudaStream_t stream)
{
  constexpr int max_devices = 64;
  static std::atomic<int> known[max_devices];  // the room + 1; 0: not asked yet
  if (device < 0 || device >= max_devices) {
    return 0;
  }
  const int seen = known[device].load(std::memory_order_acquire);
  if (seen != 0) {
    return seen - 1;
  }
  const auto kernel = radix_cluster_kernel<T, IndexT, Threads>;
  int clusters = 0;
  int major = 0;
  SPIRA_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  cudaFuncAttributes attr{};
  SPIRA_CUDA_TRY(cudaFuncGetAttributes(&attr, kernel));
  // ptxVersion, not only binaryVersion: a binary with PTX for an older architecture only is
  // JIT-compiled to sm_90 code (binaryVersion 90) whose kernel body is the __trap() branch.
  if (major >= 9 && attr.binaryVersion >= 90 && attr.ptxVersion >= 90) {
    SPIRA_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        radix_cluster_policy::dynamic_smem));
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(radix_cluster_policy::max_cluster);
    cfg.blockDim = dim3(Threads);
    cfg.dynamicSmemBytes = radix_cluster_policy::dynamic_smem;
    cfg.stream = stream;
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = radix_cluster_policy::max_cluster;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    cfg.attrs = &cluster;
    cfg.numAttrs = 1;
    SPIRA_CUDA_TRY(cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg));
  }
  known[device].store(clusters + 1, std::memory_order_release);
  return clusters;
}

/// Launches radix_cluster_kernel<T, IndexT, Threads> with clusters of `csize` blocks.
template <class T, class IndexT, int Threads>
void launch_radix_cluster(const cuda_resources& res, row_source<T, IndexT> src,
                          row_sink<T, IndexT> dst, const problem& p, int csize)
{
  using key_type = typename key_traits<T>::key_type;
  // Shared memory for the longest chunk only (chunks are whole quads, and so is every thread's
  // share of a block's chunk).
  constexpr int vec = radix_cluster_policy::vec;
  const std::int64_t chunk = ((p.max_length + csize - 1) / csize + vec - 1) / vec * vec;
  const int chunk_capacity =
      static_cast<int>(std::max<std::int64_t>(1, (chunk + vec * Threads - 1) / (vec * Threads))) *
      vec * Threads;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(src.rows * csize));
  cfg.blockDim = dim3(Threads);
  cfg.dynamicSmemBytes = static_cast<std::size_t>(chunk_capacity) * sizeof(key_type);
  cfg.stream = stream_of(res);
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = static_cast<unsigned>(csize);
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  cfg.attrs = &cluster;
  cfg.numAttrs = 1;
  SPIRA_CUDA_TRY(cudaLaunchKernelEx(&cfg, radix_cluster_kernel<T, IndexT, Threads>, src, dst, p.k,
                                    p.largest, chunk_capacity));
  SPIRA_CHECK_LAUNCH();
}

/// The cluster form (selection/radix_cluster.cuh) for rows that fit a cluster's shared memory:
/// one launch, no workspace. Returns false (nothing launched) where it does not apply.
template <class T, class IndexT>
bool run_radix_cluster(const cuda_resources& res, row_source<T, IndexT> src,
                       row_sink<T, IndexT> dst, const problem& p)
{
  using key_type = typename key_traits<T>::key_type;
  using policy = radix_cluster_policy;
  constexpr std::int64_t cap = policy::capacity<key_type>;
  if (p.max_length > radix_cluster_max_length<T>() || src.rows == 0) {
    return false;
  }
  const int csize = static_cast<int>(std::max<std::int64_t>(1, (p.max_length + cap - 1) / cap));
  if (src.rows > std::numeric_limits<int>::max() / csize) {
    return false;
  }
  int sms = 0;
  SPIRA_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, res.device));
  if (src.rows * csize > std::int64_t(sms) * policy::max_waves) {
    return false;
  }
  const cudaStream_t stream = stream_of(res);
  constexpr int wide = policy::wide_threads;
  constexpr int narrow = policy::narrow_threads;
  const int wide_room = radix_cluster_room<T, IndexT, wide>(res.device, stream);
  if (wide_room == 0) {
    return false;
  }
  // Wide blocks while the whole batch fits at once in them (clusters of max_cluster blocks hold
  // max_cluster / csize rows' worth of blocks each).
  if (src.rows * csize <= std::int64_t(wide_room) * policy::max_cluster) {
    launch_radix_cluster<T, IndexT, wide>(res, src, dst, p, csize);
  } else {
    if (radix_cluster_room<T, IndexT, narrow>(res.device, stream) == 0) {
      return false;
    }
    launch_radix_cluster<T, IndexT, narrow>(res, src, dst, p, csize);
  }
  return true;
}

/// The one-row form (selection/radix_vector.cuh) for one long dense row. Returns false (nothing
/// launched) where it does not apply.
template <class T, class IndexT>
bool run_radix_vector(const cuda_resources& res, row_source<T, IndexT> src, row_sink<T, IndexT> dst,
                      const problem& p)
{
  using policy = radix_vector_policy;
  using key_type = typename key_traits<T>::key_type;
  const std::int64_t n = src.cols;
  if (src.rows != 1 || src.row_ptr != nullptr || n < policy::min_length ||
      n > std::numeric_limits<std::int32_t>::max() || n <= p.k) {
    return false;
  }
  const cudaStream_t stream = stream_of(res);
  int sms = 0;
  SPIRA_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, res.device));
  constexpr std::int64_t tile = policy::tile<T>;
  const std::int64_t tiles = (n + tile - 1) / tile;
  const auto grid = static_cast<unsigned>(
      std::min<std::int64_t>(tiles, std::int64_t(sms) * policy::blocks_per_sm));
  const std::int64_t capacity =
      std::min(n, std::max(2 * p.k + policy::min_buffer, n / policy::buffer_share));
  // Look-back words: one per block of the copy (a chunk of the row each) and one per tile of the
  // row or the buffer (the write; the buffer is never longer than the row).

  workspace ws;
  const auto state = ws.reserve<radix_vector_state<key_type>>(1, "the row state");
  const auto hist = ws.reserve<unsigned>(policy::max_passes * policy::bins, "the histograms");
  const auto finished = ws.reserve<unsigned>(policy::max_passes, "the pass counters");
  const auto tickets = ws.reserve<unsigned>(2, "the tile tickets");
  const auto compact_status = ws.reserve<unsigned long long>(grid, "the copy's look-back");
  const auto write_status = ws.reserve<unsigned long long>(tiles, "the write's look-back");
  const auto buffer_values = ws.reserve<T>(capacity, "the candidate values");
  const auto buffer_pos = ws.reserve<unsigned>(capacity, "the candidate positions");
  ws.allocate(res, "select_k radix workspace");
  const auto* zero_begin = reinterpret_cast<const unsigned char*>(ws[state]);
  const auto* zero_end = reinterpret_cast<const unsigned char*>(ws[write_status] + tiles);
  detail::fill_zero_bytes(ws[state], memory_space::device,
                          static_cast<std::size_t>(zero_end - zero_begin), res);
  const radix_vector_args<T, IndexT> a{src.values,
                                       n,
                                       dst,
                                       static_cast<unsigned>(p.k),
                                       p.largest,
                                       ws[state],
                                       ws[hist],
                                       ws[finished],
                                       ws[tickets],
                                       ws[compact_status],
                                       ws[write_status],
                                       ws[buffer_values],
                                       ws[buffer_pos],
                                       static_cast<unsigned>(capacity)};
  // Digits of policy::digit_bits from the top: the first counted over the row, the second by the
  // copy pass, the rest over the buffer (or the row): four launches for 32-bit keys, three for
  // binary16, seven for 64-bit keys.
  constexpr int bits = key_traits<T>::bits;
  constexpr int d = policy::digit_bits;
  int shift = bits - d;
  radix_vector_histogram_kernel<<<grid, policy::threads, 0, stream>>>(a, 0, bits, shift);
  SPIRA_CHECK_LAUNCH();
  int top = shift;
  shift = std::max(0, top - d);
  radix_vector_compact_kernel<<<grid, policy::threads, 0, stream>>>(a, 1, top, shift);
  SPIRA_CHECK_LAUNCH();
  for (int pass = 2; shift > 0; ++pass) {
    top = shift;
    shift = std::max(0, top - d);
    radix_vector_histogram_kernel<<<grid, policy::threads, 0, stream>>>(a, pass, top, shift);
    SPIRA_CHECK_LAUNCH();
  }
  radix_vector_write_kernel<<<grid, policy::threads, 0, stream>>>(a);
  SPIRA_CHECK_LAUNCH();
  return true;
}

template <class T, class IndexT>
void run_radix(const cuda_resources& res, row_source<T, IndexT> src, row_sink<T, IndexT> dst,
               const problem& p)
{
  // Rows that fit a cluster's shared memory: the one-launch cluster form; one long row: the
  // one-row form.
  if (run_radix_cluster(res, src, dst, p) || run_radix_vector(res, src, dst, p)) {
    return;
  }
  using key_type = typename key_traits<T>::key_type;
  const cudaStream_t stream = stream_of(res);
  int sms = 0;
  SPIRA_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, res.device));

  // Chunks: enough blocks to fill the device, never fewer than min_chunk elements per block.
  radix_layout layout;
  const std::int64_t longest = std::max<std::int64_t>(p.max_length, 1);
  const std::int64_t target_blocks = std::int64_t(sms) * radix_policy::blocks_per_sm;
  const std::int64_t splits = std::max<std::int64_t>(1, target_blocks / src.rows);
  layout.chunk = std::max(radix_policy::min_chunk, (longest + splits - 1) / splits);
  layout.chunk = (layout.chunk + radix_policy::block_threads - 1) / radix_policy::block_threads *
                 radix_policy::block_threads;
  layout.chunks = (longest + layout.chunk - 1) / layout.chunk;
  layout.key_digits = key_traits<T>::bits / radix_policy::digit_bits;
  const int pos_bits =
      std::max(1, static_cast<int>(std::bit_width(static_cast<std::uint64_t>(longest - 1))));
  layout.pos_digits = (pos_bits + radix_policy::digit_bits - 1) / radix_policy::digit_bits;
  detail::expects(src.rows <= std::numeric_limits<std::int64_t>::max() / layout.chunks,
                  "select_k(cuda_resources): too many rows");
  const std::int64_t tasks = src.rows * layout.chunks;
  // The copy pass counts a chunk's elements in int.
  detail::expects(layout.chunk <= std::numeric_limits<int>::max(),
                  "select_k(cuda_resources): rows too long for the radix chunking");
  // All tasks in one co-resident wave: the persistent form (one cooperative launch; grid
  // barriers need it), else one kernel per phase and digit.
  int resident = 0;
  SPIRA_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &resident, radix_select_kernel<T, IndexT>, radix_policy::block_threads, 0));
  const bool persistent = tasks <= std::int64_t(resident) * sms;
  // Candidate buffers, for the persistent form only: 1/buffer_share of the longest row each,
  // within the budget. In the multi-launch form (batches of short rows) the copy pass and its
  // kernels cost more than the re-reads they save (docs/selection.md).
  constexpr std::int64_t entry_bytes = sizeof(key_type) + sizeof(std::uint64_t);
  std::int64_t capacity = (longest + radix_policy::buffer_share - 1) / radix_policy::buffer_share;
  capacity = std::min(capacity, radix_policy::buffer_budget / entry_bytes / src.rows);
  if (!persistent || capacity < radix_policy::min_buffer) {
    capacity = 0;
  }

  workspace ws;
  const auto state = ws.reserve<radix_row_state<key_type>>(src.rows, "the radix row states");
  // Zeroed: the rows' histograms, the count of rows not yet done, the rows' buffer fills.
  const std::int64_t counter_count = src.rows * radix_policy::bins + 1 + src.rows;
  const auto counters = ws.reserve<unsigned long long>(counter_count, "the radix histograms");
  const auto chunk_count = ws.reserve<std::int64_t>(tasks, "the radix chunk counts");
  const auto buffer_key = ws.reserve<key_type>(src.rows * capacity, "the radix candidate keys");
  const auto buffer_pos =
      ws.reserve<std::uint64_t>(src.rows * capacity, "the radix candidate positions");
  ws.allocate(res, "select_k radix workspace");
  detail::fill_zero_bytes(ws[counters], memory_space::device,
                          counter_count * sizeof(unsigned long long), res);
  radix_args<T, IndexT> args{src,
                             dst,
                             p.k,
                             layout,
                             p.largest,
                             ws[state],
                             ws[counters],
                             ws[chunk_count],
                             ws[counters] + src.rows * radix_policy::bins,
                             ws[buffer_key],
                             ws[buffer_pos],
                             ws[counters] + src.rows * radix_policy::bins + 1,
                             capacity};
  if (persistent) {
    void* params[] = {&args};
    SPIRA_CUDA_TRY(cudaLaunchCooperativeKernel(
        reinterpret_cast<void*>(radix_select_kernel<T, IndexT>), dim3(static_cast<unsigned>(tasks)),
        dim3(radix_policy::block_threads), params, 0, stream));
    SPIRA_CHECK_LAUNCH();
    return;
  }
  check_grid(tasks, "radix");
  const auto task_blocks = static_cast<unsigned>(tasks);
  const auto row_blocks = static_cast<unsigned>(blocks_for(src.rows, 256));
  const auto pick_blocks = static_cast<unsigned>(blocks_for(src.rows * warp::size, 256));
  radix_init_kernel<<<row_blocks, 256, 0, stream>>>(args);
  SPIRA_CHECK_LAUNCH();
  for (int pass = 0; pass < layout.key_digits + layout.pos_digits; ++pass) {
    radix_histogram_kernel<<<task_blocks, radix_policy::block_threads, 0, stream>>>(args);
    SPIRA_CHECK_LAUNCH();
    radix_pick_kernel<<<pick_blocks, 256, 0, stream>>>(args, pass);
    SPIRA_CHECK_LAUNCH();
  }
  radix_count_kernel<<<task_blocks, radix_policy::block_threads, 0, stream>>>(args);
  SPIRA_CHECK_LAUNCH();
  radix_write_kernel<<<task_blocks, radix_policy::block_threads, 0, stream>>>(args);
  SPIRA_CHECK_LAUNCH();
}

// ---- sorted output
// -------------------------------------------------------------------------------

template <class T, class IndexT>
__global__ void sort_prepare_kernel(row_source<T, IndexT> src, const T* values, std::int64_t k,
                                    bool largest, typename key_traits<T>::key_type* keys,
                                    int* slots, std::int64_t* seg_begin, std::int64_t* seg_end)
{
  const std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= src.rows * k) {
    return;
  }
  const std::int64_t row = e / k;
  const std::int64_t j = e % k;
  keys[e] = key_traits<T>::to_key(values[e], largest);
  slots[e] = static_cast<int>(j);
  if (j == 0) {
    const std::int64_t n = src.length(row);
    seg_begin[row] = row * k;
    seg_end[row] = row * k + (n < k ? n : k);
  }
}

template <class T, class IndexT>
__global__ void sort_gather_kernel(std::int64_t rows, std::int64_t k, const T* values,
                                   const IndexT* indices, const int* slots, row_sink<T, IndexT> dst)
{
  const std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= rows * k) {
    return;
  }
  const std::int64_t row = e / k;
  const std::int64_t j = e % k;
  // Padding slots are outside the sorted segments and keep their place.
  const std::int64_t from = row * k + slots[e];
  dst.values[row * dst.ld_values + j] = values[from];
  dst.indices[row * dst.ld_indices + j] = indices[from];
}

template <class T, class IndexT>
void run_selection(const cuda_resources& res, row_source<T, IndexT> src, row_sink<T, IndexT> dst,
                   const problem& p)
{
  if (p.algo == select_algo::binary_search) {
    run_binary_search(res, src, dst, p);
  } else {
    run_radix(res, src, dst, p);
  }
}

}  // namespace

template <class T, class IndexT>
void select_rows(const cuda_resources& res, row_source<T, IndexT> src, row_sink<T, IndexT> dst,
                 const problem& p)
{
  device_guard guard(res.device);
  if (!p.sorted) {
    run_selection(res, src, dst, p);
    return;
  }
  using key_type = typename key_traits<T>::key_type;
  const cudaStream_t stream = stream_of(res);
  detail::expects(p.k <= std::numeric_limits<int>::max(),
                  "select_k(cuda_resources): sorted output needs k < 2^31, got ", p.k);
  const std::int64_t total = src.rows * p.k;
  std::size_t temp_bytes = 0;
  SPIRA_CUDA_TRY(cub::DeviceSegmentedSort::StableSortPairs(
      nullptr, temp_bytes, static_cast<const key_type*>(nullptr), static_cast<key_type*>(nullptr),
      static_cast<const int*>(nullptr), static_cast<int*>(nullptr), total, src.rows,
      static_cast<std::int64_t*>(nullptr), static_cast<std::int64_t*>(nullptr), stream));
  workspace ws;
  const auto values = ws.reserve<T>(total, "the unsorted values");
  const auto indices = ws.reserve<IndexT>(total, "the unsorted indices");
  const auto keys = ws.reserve<key_type>(total, "the sort keys");
  const auto keys_sorted = ws.reserve<key_type>(total, "the sorted keys");
  const auto slots = ws.reserve<int>(total, "the sort slots");
  const auto slots_sorted = ws.reserve<int>(total, "the sorted slots");
  const auto seg_begin = ws.reserve<std::int64_t>(src.rows, "the segment starts");
  const auto seg_end = ws.reserve<std::int64_t>(src.rows, "the segment ends");
  const auto temp =
      ws.reserve<unsigned char>(static_cast<std::int64_t>(temp_bytes), "the sort workspace");
  ws.allocate(res, "select_k sorting workspace");
  run_selection(res, src, row_sink<T, IndexT>{ws[values], ws[indices], p.k, p.k}, p);

  const std::int64_t blocks = blocks_for(total, 256);
  check_grid(blocks, "sorting");
  sort_prepare_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
      src, ws[values], p.k, p.largest, ws[keys], ws[slots], ws[seg_begin], ws[seg_end]);
  SPIRA_CHECK_LAUNCH();
  // Padding slots are not in any segment: pre-fill the sorted slots with the identity.
  SPIRA_CUDA_TRY(cudaMemcpyAsync(ws[slots_sorted], ws[slots], total * sizeof(int),
                                 cudaMemcpyDeviceToDevice, stream));
  SPIRA_CUDA_TRY(cub::DeviceSegmentedSort::StableSortPairs(
      ws[temp], temp_bytes, ws[keys], ws[keys_sorted], ws[slots], ws[slots_sorted], total, src.rows,
      ws[seg_begin], ws[seg_end], stream));
  sort_gather_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
      src.rows, p.k, ws[values], ws[indices], ws[slots_sorted], dst);
  SPIRA_CHECK_LAUNCH();
  // The temporaries are freed stream-ordered; the caller's next use of dst is ordered after us.
}

}  // namespace spira::selection
