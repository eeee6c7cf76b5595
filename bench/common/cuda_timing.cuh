// Event timing shared by the CUDA benchmark programs.
#pragma once

#include <spira/cuda/error.cuh>
#include <spira/memory.hpp>
#include <spira/resources.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace spira::bench {

/// A pair of CUDA events, destroyed with the object.
struct event_timer {
  cudaEvent_t a, b;
  event_timer()
  {
    SPIRA_CUDA_TRY(cudaEventCreate(&a));
    SPIRA_CUDA_TRY(cudaEventCreate(&b));
  }
  ~event_timer()
  {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  event_timer(const event_timer&) = delete;
  event_timer& operator=(const event_timer&) = delete;
};

/// Median milliseconds of `reps` runs of f(rep) on the legacy default stream, each timed with
/// events, after three warm-up runs.
template <class F>
double median_ms(F&& f, int reps)
{
  event_timer t;
  for (int i = 0; i < 3; ++i) {
    f(i);
  }
  SPIRA_CUDA_TRY(cudaDeviceSynchronize());
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    SPIRA_CUDA_TRY(cudaEventRecord(t.a));
    f(i);
    SPIRA_CUDA_TRY(cudaEventRecord(t.b));
    SPIRA_CUDA_TRY(cudaEventSynchronize(t.b));
    float x = 0;
    SPIRA_CUDA_TRY(cudaEventElapsedTime(&x, t.a, t.b));
    ms.push_back(x);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// Measures the device-to-device copy bandwidth (1 GiB, median of 20) and prints it as one JSON
/// line {"kind": "copy", "bytes", "ms", "gbps"} (bytes read + written per second): the memory
/// floor of the benchmarks' tables divides by it.
inline void print_copy_bandwidth()
{
  const std::size_t bytes = std::size_t(1) << 30;
  spira::cuda_resources res{};
  spira::buffer<char> a(res, bytes), b(res, bytes);
  SPIRA_CUDA_TRY(cudaMemset(a.data(), 1, bytes));
  const double ms = median_ms(
      [&](int) {
        SPIRA_CUDA_TRY(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice));
      },
      20);
  std::printf("{\"kind\": \"copy\", \"bytes\": %zu, \"ms\": %.6f, \"gbps\": %.2f}\n", bytes, ms,
              2.0 * double(bytes) / (ms * 1e6));
}

}  // namespace spira::bench
