// CUDA backend: launching simple element-wise kernels, and the device-side helpers they share.
#pragma once

#include <spira/config.hpp>
#include <spira/cuda/error.cuh>
#include <spira/resources.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace spira::detail {

/// Launch shape of the memory-bound, grid-stride kernels of the format conversions. 256 threads
/// and 8 resident blocks per multiprocessor give 64 warps per SM on sm_80/sm_90, the occupancy
/// these kernels need to keep enough loads in flight; a grid-stride loop covers the rest.
struct elementwise_policy {
  static constexpr int block_threads = 256;
  static constexpr int blocks_per_sm = 8;
};

/// Blocks for n items: enough to give every thread one item, at most one full wave of the device.
inline unsigned grid_for(std::int64_t n, int device)
{
  int sms = 0;
  SPIRA_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::int64_t wave = std::int64_t(sms) * elementwise_policy::blocks_per_sm;
  const std::int64_t needed =
      (n + elementwise_policy::block_threads - 1) / elementwise_policy::block_threads;
  return static_cast<unsigned>(std::clamp<std::int64_t>(needed, 1, wave));
}

/// Launches kernel<<<grid_for(n), block_threads, 0, res.stream>>>(args...) and checks the launch.
/// The caller has made res.device current. Nothing is launched for n <= 0.
template <class... Params, class... Args>
void launch_elementwise(const cuda_resources& res, std::int64_t n, void (*kernel)(Params...),
                        Args&&... args)
{
  if (n <= 0) {
    return;
  }
  kernel<<<grid_for(n, res.device), elementwise_policy::block_threads, 0, res.stream>>>(
      std::forward<Args>(args)...);
  SPIRA_CHECK_LAUNCH();
}

#if defined(__CUDACC__)

/// The first index of this thread in a grid-stride loop, and the loop's stride.
__device__ inline std::int64_t grid_thread_index()
{
  return std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::int64_t grid_stride()
{
  return std::int64_t(gridDim.x) * blockDim.x;
}

/// The first index in [lo, hi) at which `pred` is false, for a pred that is true on a prefix.
template <class Pred>
__device__ std::int64_t partition_point(std::int64_t lo, std::int64_t hi, Pred pred)
{
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (pred(mid)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// The row of entry k of a CSR matrix with `rows` >= 1 rows: the i with row_ptr[i] <= k <
/// row_ptr[i + 1] (empty rows are skipped). Stays in bounds, clamped to [0, rows), whatever the
/// row pointers hold, so validation kernels may call it before the pointers are known to be valid.
__device__ inline std::int64_t row_of_entry(const offset_t* row_ptr, std::int64_t rows,
                                            std::int64_t k)
{
  const std::int64_t i =
      partition_point(0, rows, [&](std::int64_t r) { return row_ptr[r + 1] <= k; });
  return i < rows ? i : rows - 1;
}

#endif

}  // namespace spira::detail
