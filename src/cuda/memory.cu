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

namespace {

/// A pinned block of this thread's for small copies between host and device (the entry counts and
/// status words most operations read back): through it, a copy costs less than with the driver
/// staging a pageable buffer (bench_call_floor times both: bench/graphblas/call_floor.cu). Null
/// when pinned memory could not be had (the copy then goes direct).
class pinned_staging {
 public:
  static constexpr std::size_t bytes = 4096;
  pinned_staging()
  {
    if (cudaMallocHost(&data_, bytes) != cudaSuccess) {
      cudaGetLastError();
      data_ = nullptr;
    }
  }
  ~pinned_staging()
  {
    if (data_ != nullptr) {
      cudaFreeHost(data_);  // at exit the runtime may be gone already: nothing to report
    }
  }
  pinned_staging(const pinned_staging&) = delete;
  pinned_staging& operator=(const pinned_staging&) = delete;
  [[nodiscard]] void* data() const { return data_; }

 private:
  void* data_ = nullptr;
};

/// This thread's staging block for a copy of `bytes`, or null (too large, or none to be had).
void* staging_for(std::size_t bytes)
{
  if (bytes > pinned_staging::bytes) {
    return nullptr;
  }
  thread_local const pinned_staging staging;
  return staging.data();
}

}  // namespace

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
  const bool to_host = dst_space == memory_space::host;
  if (to_host != (src_space == memory_space::host)) {
    if (void* staged = staging_for(bytes)) {
      if (!to_host) {
        std::memcpy(staged, src, bytes);
      }
      SPIRA_CUDA_TRY(cudaMemcpyAsync(to_host ? staged : dst, to_host ? src : staged, bytes,
                                     cudaMemcpyDefault, res.stream));
      SPIRA_CUDA_TRY(cudaStreamSynchronize(res.stream));
      if (to_host) {
        std::memcpy(dst, staged, bytes);
      }
      return;
    }
  }
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
