// spira internals: progress reports and cancellation during one long kernel launch, without
// splitting it into several launches (each of which would wait for its slowest block).
//
//   launch_progress watch(res);                    // when a progress callback is given
//   args.watch = watch.device();                   // the kernel: launch_progress_row_begins /
//   kernel<<<..., res.stream>>>(args);             //             launch_progress_row_done
//   watch.follow(rows, progress);                  // until the launch ends; see follow()
//
// The kernel counts finished rows in device memory; the calling thread reads the count through a
// stream of its own (which runs beside the kernel) while it waits, and calls progress(done, rows)
// about knn_policy::progress_steps times. When progress throws, a stop flag is written the same
// way: every row not yet begun is skipped, the launch ends after the rows in flight, and the
// exception goes on to the caller (the outputs are then incomplete).
#pragma once

#include <spira/cuda/error.cuh>
#include <spira/detail/knn_policy.hpp>
#include <spira/memory.hpp>
#include <spira/resources.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>

namespace spira::detail {

/// What the kernel and the host share (device memory, zeroed).
struct launch_progress_state {
  unsigned long long rows_done;
  int stop;
};

#if defined(__CUDACC__)

/// At the start of a row, by the whole block: false when the host asked to stop (the block then
/// returns without touching the row). A null `watch` never stops.
__device__ inline bool launch_progress_row_begins(const launch_progress_state* watch)
{
  if (watch == nullptr) {
    return true;
  }
  int stop = 0;
  if (threadIdx.x == 0) {
    stop = *static_cast<const volatile int*>(&watch->stop);
  }
  return __syncthreads_or(stop) == 0;
}

/// At the end of a row, after its results are written (any thread; call once per row).
__device__ inline void launch_progress_row_done(launch_progress_state* watch)
{
  if (watch != nullptr) {
    atomicAdd(&watch->rows_done, 1ull);
  }
}

class launch_progress {
 public:
  /// Zeroes the shared state and waits for res.stream (the state is then read from another
  /// stream).
  explicit launch_progress(const cuda_resources& res)
      : res_(res), state_(res, 1, "the progress counter of a launch")
  {
    SPIRA_CUDA_TRY(cudaMemsetAsync(state_.data(), 0, sizeof(launch_progress_state), res_.stream));
    SPIRA_CUDA_TRY(cudaStreamSynchronize(res_.stream));
    SPIRA_CUDA_TRY(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
  }
  launch_progress(const launch_progress&) = delete;
  launch_progress& operator=(const launch_progress&) = delete;
  ~launch_progress() { SPIRA_CUDA_TRY_NO_THROW(cudaStreamDestroy(side_)); }

  [[nodiscard]] launch_progress_state* device() { return state_.data(); }

  /// Waits until the work queued on res.stream so far has ended, calling progress(done, rows)
  /// whenever another 1 / knn_policy::progress_steps of the rows is done (never with `rows`: the
  /// caller reports the end when its work is complete). The wait spins as a stream
  /// synchronisation does, so that the end is seen at once. When progress throws, the launch is
  /// stopped and waited for, and the exception rethrown.
  void follow(std::int64_t rows, const std::function<void(std::int64_t, std::int64_t)>& progress)
  {
    using clock = std::chrono::steady_clock;
    const std::int64_t step = std::max<std::int64_t>(1, rows / knn_policy::progress_steps);
    std::int64_t reported = 0;
    auto next_read = clock::now();
    for (;;) {
      const cudaError_t st = cudaStreamQuery(res_.stream);
      if (st == cudaSuccess) {
        return;
      }
      if (st != cudaErrorNotReady) {
        throw_cuda_error(st, "cudaStreamQuery", __FILE__, __LINE__);
      }
      if (clock::now() < next_read) {
        std::this_thread::yield();
        continue;
      }
      next_read = clock::now() + read_interval;
      unsigned long long done = 0;
      SPIRA_CUDA_TRY(cudaMemcpyAsync(&done, &state_.data()->rows_done, sizeof done,
                                     cudaMemcpyDeviceToHost, side_));
      SPIRA_CUDA_TRY(cudaStreamSynchronize(side_));
      const auto now_done = std::min<std::int64_t>(std::int64_t(done), rows - 1);
      if (now_done < reported + step) {
        continue;
      }
      reported = now_done;
      try {
        progress(reported, rows);
      } catch (...) {
        stop();
        throw;
      }
    }
  }

 private:
  static constexpr std::chrono::milliseconds read_interval{2};

  /// Sets the stop flag beside the running launch and waits for the launch to end.
  void stop() noexcept
  {
    static const int one = 1;
    SPIRA_CUDA_TRY_NO_THROW(
        cudaMemcpyAsync(&state_.data()->stop, &one, sizeof one, cudaMemcpyHostToDevice, side_));
    SPIRA_CUDA_TRY_NO_THROW(cudaStreamSynchronize(side_));
    SPIRA_CUDA_TRY_NO_THROW(cudaStreamSynchronize(res_.stream));
  }

  cuda_resources res_;
  buffer<launch_progress_state> state_;
  cudaStream_t side_ = nullptr;
};

#endif  // __CUDACC__

}  // namespace spira::detail
