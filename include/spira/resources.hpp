// spira: resources handles. The first argument of every operation; its type chooses the backend.
//
//   spira::host_resources  -> the host (CPU) backend, up to `threads` worker threads (0 = all
//                             cores; an operation with little work runs on fewer)
//   spira::cuda_resources  -> the CUDA backend on `device`, ordered on `stream`, allocating from
//                             `memory_pool` (stream-ordered; nullptr = the device's default pool)
//
// The handles are plain values: there is no global state. This header does not include the CUDA
// runtime; the stream and pool members are the runtime's own handle types (cudaStream_t and
// cudaMemPool_t are pointers to these incomplete structs), so they convert without casts.
#pragma once

#include <cstddef>

struct CUstream_st;
struct CUmemPoolHandle_st;

namespace spira {

struct host_resources {
  /// Worker threads; 0 means OpenMP's default: OMP_NUM_THREADS when it is set, else one per
  /// hardware thread.
  int threads = 0;

  /// The effective thread count (resolves 0 to omp_get_max_threads(), at least 1).
  [[nodiscard]] int num_threads() const noexcept;
};

struct cuda_resources {
  int device = 0;
  CUstream_st* stream = nullptr;  ///< cudaStream_t; nullptr is the legacy default stream
  CUmemPoolHandle_st* memory_pool =
      nullptr;  ///< cudaMemPool_t; nullptr is the device's default pool
};

/// True when this build contains the CUDA backend.
[[nodiscard]] bool cuda_compiled() noexcept;

/// Number of usable CUDA devices (0 in a host-only build or on a machine without a GPU).
[[nodiscard]] int cuda_device_count() noexcept;

/// Blocks until all work queued on `res.stream` has finished; rethrows asynchronous errors.
void synchronize(const cuda_resources& res);

/// Bytes of device memory free on res.device (as the driver reports them).
[[nodiscard]] std::size_t cuda_free_memory(const cuda_resources& res);

}  // namespace spira
