// The cuSPARSE baselines' plumbing (bench/pairwise, bench/graphblas): checked cuSPARSE and CUDA
// calls that throw cusparse_failure naming the call, and device buffers from the stream-ordered
// allocator.
#pragma once

#include <cuda_runtime.h>
#include <cusparse.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace spira::bench {

/// A failed cuSPARSE or CUDA call of the baseline. resources(): the failure was a lack of memory
/// or resources (another plan may succeed); anything else is final.
class cusparse_failure : public std::runtime_error {
 public:
  cusparse_failure(const std::string& what, bool resources)
      : std::runtime_error(what), resources_(resources)
  {
  }
  [[nodiscard]] bool resources() const noexcept { return resources_; }

 private:
  bool resources_;
};

inline void cusparse_try(cusparseStatus_t status, const char* call)
{
  if (status != CUSPARSE_STATUS_SUCCESS) {
    throw cusparse_failure(
        std::string("cuSPARSE ") + call + " failed: " + cusparseGetErrorString(status) +
            " (status " + std::to_string(int(status)) + ")",
        status == CUSPARSE_STATUS_INSUFFICIENT_RESOURCES || status == CUSPARSE_STATUS_ALLOC_FAILED);
  }
}

inline void cuda_try(cudaError_t status, const char* call)
{
  if (status != cudaSuccess) {
    const bool memory = status == cudaErrorMemoryAllocation;
    if (memory) {
      cudaGetLastError();
    }  // not sticky: clear it so that the next plan can run
    throw cusparse_failure(std::string("CUDA ") + call + " failed: " + cudaGetErrorString(status),
                           memory);
  }
}

/// A device buffer from the stream-ordered allocator, freed stream-ordered.
class stream_buffer {
 public:
  stream_buffer() = default;
  stream_buffer(std::size_t bytes, cudaStream_t stream, const char* what) : stream_(stream)
  {
    if (bytes > 0) {
      cuda_try(cudaMallocAsync(&ptr_, bytes, stream), what);
    }
  }
  ~stream_buffer() { release(); }
  stream_buffer(const stream_buffer&) = delete;
  stream_buffer& operator=(const stream_buffer&) = delete;
  stream_buffer(stream_buffer&& o) noexcept : ptr_(o.ptr_), stream_(o.stream_) { o.ptr_ = nullptr; }
  stream_buffer& operator=(stream_buffer&& o) noexcept
  {
    if (this != &o) {
      release();
      ptr_ = o.ptr_;
      stream_ = o.stream_;
      o.ptr_ = nullptr;
    }
    return *this;
  }
  template <class T>
  T* as() const
  {
    return static_cast<T*>(ptr_);
  }

 private:
  void release() noexcept
  {
    if (ptr_ != nullptr) {
      cudaFreeAsync(ptr_, stream_);
    }
    ptr_ = nullptr;
  }
  void* ptr_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

}  // namespace spira::bench
