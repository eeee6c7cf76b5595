// What one small GPU call costs before its kernels do any work: the CUDA runtime's calls that a
// spira operation returning an exact-size result makes (allocations, memsets, a launch, the read
// of an entry count and its synchronisation), each timed alone, and the sequences of a spira mxv
// and of a cuSPARSE SpMV call as bench_graphblas_gpu times them (empty kernels: no work). The
// floor of a synchronous call is a launch and a synchronisation; everything else is the API's.
// Then what a result of 1 MiB costs to bring to the host (a k-NN graph of 8,335 rows is 1.5 MB):
// into a new pageable allocation (as a new result array is), into one already touched, into
// pinned memory, and through pinned memory into a touched pageable buffer; and 1 MiB the other way.
// Prints one JSON line per measurement: {"case": ..., "us": mean microseconds per call}.
//
// usage: bench_call_floor [--calls N]   (the mean of N calls after N / 10 warm-up calls)
#include <spira/memory.hpp>
#include <spira/resources.hpp>

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

__global__ void empty_kernel(unsigned long long* word)
{
  if (word != nullptr && threadIdx.x == 0 && blockIdx.x == 0) {
    word[3] = 7;
  }
}

void check(cudaError_t e, const char* what)
{
  if (e != cudaSuccess) {
    std::fprintf(stderr, "bench_call_floor: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

int calls = 3000;

template <class F>
void measure(const char* name, F f, int n = calls)
{
  for (int i = 0; i < n / 10; ++i) f();
  check(cudaDeviceSynchronize(), name);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) f();
  check(cudaDeviceSynchronize(), name);
  const auto t1 = std::chrono::steady_clock::now();
  std::printf("{\"case\": \"%s\", \"us\": %.3f, \"calls\": %d}\n", name,
              std::chrono::duration<double, std::micro>(t1 - t0).count() / n, n);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv)
{
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--calls") calls = std::atoi(argv[i + 1]);
  }
  if (calls < 10) {
    std::fprintf(stderr, "usage: bench_call_floor [--calls N >= 10]\n");
    return 2;
  }
  const spira::cuda_resources res{};  // the legacy default stream, as the benchmarks use
  cudaStream_t s = res.stream;
  unsigned long long* d = nullptr;
  unsigned long long* pinned = nullptr;
  check(cudaMalloc(&d, 1 << 20), "cudaMalloc");
  check(cudaMallocHost(&pinned, 64), "cudaMallocHost");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("{\"machine\": \"%s\", \"command\": \"bench_call_floor --calls %d\"}\n", prop.name,
              calls);

  measure("launch + stream synchronize", [&] {
    empty_kernel<<<1, 32, 0, s>>>(d);
    cudaStreamSynchronize(s);
  });
  measure(
      "launch, no synchronize (back to back)", [&] { empty_kernel<<<1, 32, 0, s>>>(d); },
      10 * calls);
  measure("memset 64 bytes, no synchronize", [&] { cudaMemsetAsync(d, 0xFF, 64, s); }, 10 * calls);
  measure(
      "cudaMallocAsync + cudaFreeAsync (300 KB)",
      [&] {
        void* p = nullptr;
        cudaMallocAsync(&p, 300000, s);
        cudaFreeAsync(p, s);
      },
      10 * calls);
  measure("launch + read 32 bytes into pageable memory (synchronous)", [&] {
    unsigned long long w[4];
    empty_kernel<<<1, 32, 0, s>>>(d);
    cudaMemcpyAsync(w, d, 32, cudaMemcpyDefault, s);
    cudaStreamSynchronize(s);
  });
  measure("launch + read 32 bytes into pinned memory (synchronous)", [&] {
    empty_kernel<<<1, 32, 0, s>>>(d);
    cudaMemcpyAsync(pinned, d, 32, cudaMemcpyDefault, s);
    cudaStreamSynchronize(s);
  });
  measure("launch + spira::copy of 32 bytes to the host", [&] {
    unsigned long long w[4];
    empty_kernel<<<1, 32, 0, s>>>(d);
    spira::copy(w, spira::memory_space::host, d, spira::memory_space::device, 4, res);
  });
  // spira::mxv into a new vector: its allocations (indices, values, scratch), the scratch's
  // memset, the kernel (one wave of empty blocks), the count read, then the three frees.
  measure("spira mxv's calls (3 allocations, memset, launch, count read, 3 frees)", [&] {
    void *a = nullptr, *b = nullptr, *c = nullptr;
    cudaMallocAsync(&a, 150000, s);
    cudaMallocAsync(&b, 150000, s);
    cudaMallocAsync(&c, 8000, s);
    cudaMemsetAsync(c, 0xFF, 8000, s);
    empty_kernel<<<574, 128, 0, s>>>(static_cast<unsigned long long*>(c));
    unsigned long long w[4];
    spira::copy(w, spira::memory_space::host, static_cast<unsigned long long*>(c),
                spira::memory_space::device, 4, res);
    cudaFreeAsync(a, s);
    cudaFreeAsync(b, s);
    cudaFreeAsync(c, s);
  });
  // cusparseSpMV's (CSR, default algorithm): a partition kernel and the product, then the
  // benchmark's device synchronisation.
  measure("cuSPARSE SpMV's calls (2 launches + device synchronize)", [&] {
    empty_kernel<<<1, 32, 0, s>>>(d);
    empty_kernel<<<90, 128, 0, s>>>(d);
    cudaDeviceSynchronize();
  });
  // 1 MiB between the device and the host.
  constexpr std::size_t mib = std::size_t(1) << 20;
  void* big = nullptr;
  void* big_pinned = nullptr;
  check(cudaMalloc(&big, mib), "cudaMalloc 1 MiB");
  check(cudaMallocHost(&big_pinned, mib), "cudaMallocHost 1 MiB");
  std::vector<unsigned char> touched(mib, 1);
  const int big_calls = calls / 10 > 10 ? calls / 10 : 10;
  measure(
      "1 MiB to a new pageable allocation (malloc, copy, free)",
      [&] {
        void* h = std::malloc(mib);
        cudaMemcpyAsync(h, big, mib, cudaMemcpyDefault, s);
        cudaStreamSynchronize(s);
        std::free(h);
      },
      big_calls);
  measure(
      "1 MiB to a new pageable allocation touched first (malloc, memset, copy, free)",
      [&] {
        void* h = std::malloc(mib);
        std::memset(h, 0, mib);
        cudaMemcpyAsync(h, big, mib, cudaMemcpyDefault, s);
        cudaStreamSynchronize(s);
        std::free(h);
      },
      big_calls);
  const auto measure_copy = [&](const char* name, void* dst, const void* src) {
    measure(
        name,
        [&] {
          cudaMemcpyAsync(dst, src, mib, cudaMemcpyDefault, s);
          cudaStreamSynchronize(s);
        },
        big_calls);
  };
  measure_copy("1 MiB to a pageable buffer already touched", touched.data(), big);
  measure_copy("1 MiB to pinned memory", big_pinned, big);
  measure(
      "1 MiB to pinned memory, then memcpy to a pageable buffer already touched",
      [&] {
        cudaMemcpyAsync(big_pinned, big, mib, cudaMemcpyDefault, s);
        cudaStreamSynchronize(s);
        std::memcpy(touched.data(), big_pinned, mib);
      },
      big_calls);
  measure_copy("1 MiB from a pageable buffer to the device", big, touched.data());
  measure_copy("1 MiB from pinned memory to the device", big, big_pinned);
  cudaFreeHost(big_pinned);
  cudaFree(big);
  cudaFreeHost(pinned);
  cudaFree(d);
  return 0;
}
