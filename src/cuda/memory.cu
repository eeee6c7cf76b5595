// CUDA backend: device memory (stream-ordered pools), copies, device queries.
#include <spira/cuda/device.cuh>

#include <spira/cuda/error.cuh>
#include <spira/memory.hpp>
#include <spira/resources.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>

namespace spira {

bool cuda_compiled() noexcept
{
  return true;
}

int cuda_device_count() noexcept
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

void synchronize(const cuda_resources& res)
{
  detail::device_guard g(res.device);
  SPIRA_CUDA_TRY(cudaStreamSynchronize(res.stream));
}

std::size_t cuda_free_memory(const cuda_resources& res)
{
  detail::device_guard g(res.device);
  std::size_t free_b = 0;
  std::size_t total_b = 0;
  SPIRA_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
  return free_b;
}

namespace detail {

void* device_allocate(std::size_t bytes, const cuda_resources& res, const char* what)
{
  device_guard g(res.device);
  void* p = nullptr;
  const cudaError_t st = res.memory_pool != nullptr
                             ? cudaMallocFromPoolAsync(&p, bytes, res.memory_pool, res.stream)
                             : cudaMallocAsync(&p, bytes, res.stream);
  if (st == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free_b = 0;
    std::size_t total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
      cudaGetLastError();
    }
    throw out_of_memory(concat("out of device memory allocating ", what, ": ", bytes, " bytes (",
                               bytes >> 20, " MiB) requested on device ", res.device, ", ",
                               free_b >> 20, " MiB free of ", total_b >> 20, " MiB"));
  }
  if (st != cudaSuccess) {
    throw_cuda_error(st, "cudaMallocAsync", __FILE__, __LINE__);
  }
  return p;
}

void device_deallocate(void* p, const cuda_resources& res) noexcept
{
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess) {
    return;
  }
  if (previous != res.device) {
    cudaSetDevice(res.device);
  }
  SPIRA_CUDA_TRY_NO_THROW(cudaFreeAsync(p, res.stream));
  if (previous != res.device) {
    cudaSetDevice(previous);
  }
}

void copy_bytes(void* dst, memory_space dst_space, const void* src, memory_space src_space,
                std::size_t bytes, const cuda_resources& res)
{
  if (bytes == 0) {
    return;
  }
  if (dst_space == memory_space::host && src_space == memory_space::host) {
    std::memmove(dst, src, bytes);
    return;
  }
  device_guard g(res.device);
  SPIRA_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, res.stream));
  if (dst_space == memory_space::host || src_space == memory_space::host) {
    SPIRA_CUDA_TRY(cudaStreamSynchronize(res.stream));
  }
}

namespace {
__global__ void round_to_float_kernel(double* data, std::int64_t rows, std::int64_t cols,
                                      std::int64_t ld)
{
  const std::int64_t n = rows * cols;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    double& x = data[(e / cols) * ld + e % cols];
    x = double(float(x));
  }
}
}  // namespace

void round_to_float_in_place(double* data, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                             const cuda_resources& res)
{
  if (rows == 0 || cols == 0) {
    return;
  }
  device_guard g(res.device);
  constexpr int threads = 256;
  const std::int64_t blocks = std::min<std::int64_t>((rows * cols + threads - 1) / threads, 4096);
  round_to_float_kernel<<<unsigned(blocks), threads, 0, res.stream>>>(data, rows, cols, ld);
  SPIRA_CUDA_TRY(cudaGetLastError());
}

void fill_zero_bytes(void* dst, memory_space space, std::size_t bytes, const cuda_resources& res)
{
  if (bytes == 0) {
    return;
  }
  if (space == memory_space::host) {
    std::memset(dst, 0, bytes);
    return;
  }
  device_guard g(res.device);
  SPIRA_CUDA_TRY(cudaMemsetAsync(dst, 0, bytes, res.stream));
}

}  // namespace detail
}  // namespace spira
