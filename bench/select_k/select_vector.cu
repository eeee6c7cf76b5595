// Top-k of one long vector: times spira::select_k (delegate, radix, auto) and a full CUB radix sort
// (cub::DeviceRadixSort::SortPairsDescending of the values with int32 positions) on the CUDA
// backend for the cases given on stdin, and prints one JSON object per line.
// bench/select_k/select_vector.py and bench/select_k/select_vector_tune.py drive it (torch.topk
// runs there, in the same session).
//
// stdin, one case per line:
//   select <n> <k> <algo: auto|delegate|radix> <dist> [subrange] [flags]
//       dist: uniform | normal | adversarial (Dr. Top-k's "customized" distribution, see fill);
//       subrange > 0 forces the delegate sub-range length (Rule 4's tuning sweep);
//       flags: "resident" (one input that is not rotated, so that an input that fits in L2 stays
//       there, as the CUB harness times it), "int32" (int32 indices instead of int64) and
//       "pool" (the device's default memory pool keeps its memory between calls, as the CUB
//       harness allocates its temporary storage once, outside the timing)
//   sort <n> <dist>      full CUB radix sort of (value, position) pairs, descending
//   copy                 device-to-device copy bandwidth
#include "common/cuda_timing.cuh"

#include "selection/dispatch.hpp"

#include <spira/cuda/error.cuh>
#include <spira/select_k.hpp>

#include <cub/device/device_radix_sort.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

__device__ std::uint64_t mix(std::uint64_t x)
{
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

/// dist 0 uniform [0, 1); 1 normal (Box-Muller); 2 adversarial: Dr. Top-k's "customized"
/// distribution for an 8-bit radix over float keys: all but 1/4096 of the values lie in
/// [1, 1 + 2^-8) on 2^15 distinct values (they share the top 16 bits, so the k-th element's bucket
/// holds the majority in the first passes, and every value repeats ~n / 2^15 times, so ties are
/// resolved by position), the rest are uniform in [0, 1) and keep the other buckets non-empty.
__global__ void fill_kernel(float* out, std::int64_t n, std::uint64_t seed, int dist)
{
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) {
    return;
  }
  const std::uint64_t x = mix((static_cast<std::uint64_t>(i) + 1) * 0x9e3779b97f4a7c15ull ^ seed);
  const float u = static_cast<float>(x >> 40) * (1.0f / 16777216.0f);  // [0, 1)
  if (dist == 1) {
    const float v = static_cast<float>((x >> 8) & 0xffffff) * (1.0f / 16777216.0f) + 1e-7f;
    out[i] = sqrtf(-2.0f * logf(v)) * cospif(2.0f * u);
  } else if (dist == 2) {
    out[i] = (x & 0xfff) == 0
                 ? u
                 : __uint_as_float(0x3f800000u + static_cast<unsigned>((x >> 12) & 0x7fff));
  } else {
    out[i] = u;
  }
}

__global__ void iota_kernel(int* out, std::int64_t n)
{
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = static_cast<int>(i);
  }
}

unsigned blocks_of(std::int64_t n)
{
  return static_cast<unsigned>((n + 255) / 256);
}

using spira::bench::median_ms;
using spira::bench::print_copy_bandwidth;

int parse_dist(const std::string& s)
{
  return s == "normal" ? 1 : s == "adversarial" ? 2 : 0;
}

/// The inputs of the current (n, dist): enough copies that a rotation over them misses L2.
struct inputs {
  std::int64_t n = 0;
  int dist = -1;
  std::int64_t copies = 0;
  spira::buffer<float> data;

  const float* get(const spira::cuda_resources& res, std::int64_t want_n, int want_dist)
  {
    if (want_n != n || want_dist != dist) {
      data = spira::buffer<float>();
      const std::int64_t bytes = want_n * std::int64_t(sizeof(float));
      copies = std::max<std::int64_t>(
          1, std::min<std::int64_t>(16, (2ll * 60 * 1024 * 1024 + bytes - 1) / bytes));
      data = spira::buffer<float>(res, want_n * copies, "bench input");
      fill_kernel<<<blocks_of(want_n * copies), 256>>>(data.data(), want_n * copies,
                                                       12345 + want_dist, want_dist);
      SPIRA_CHECK_LAUNCH();
      n = want_n;
      dist = want_dist;
    }
    return data.data();
  }
  const float* copy(int rep) const { return data.data() + (rep % copies) * n; }
};

inputs g_in;

const char* name_of(spira::select_algo a)
{
  switch (a) {
    case spira::select_algo::binary_search:
      return "binary_search";
    case spira::select_algo::delegate:
      return "delegate";
    case spira::select_algo::radix:
      return "radix";
    default:
      return "auto";
  }
}

template <class IndexT>
void run_select(std::int64_t n, std::int64_t k, const std::string& algo_name,
                const std::string& dist_name, std::int64_t subrange, bool resident, bool pool)
{
  // The default pool releases its memory at every synchronisation unless told to keep it.
  cudaMemPool_t default_pool = nullptr;
  SPIRA_CUDA_TRY(cudaDeviceGetDefaultMemPool(&default_pool, 0));
  std::uint64_t keep = pool ? ~std::uint64_t{0} : 0;
  SPIRA_CUDA_TRY(cudaMemPoolSetAttribute(default_pool, cudaMemPoolAttrReleaseThreshold, &keep));
  spira::cuda_resources res{};
  g_in.get(res, n, parse_dist(dist_name));
  spira::buffer<float> vals(res, k, "bench values");
  spira::buffer<IndexT> idx(res, k, "bench indices");
  spira::select_params params;
  params.algo = algo_name == "delegate" ? spira::select_algo::delegate
                : algo_name == "radix"  ? spira::select_algo::radix
                                        : spira::select_algo::automatic;
  const auto resolved = params.algo == spira::select_algo::automatic
                            ? spira::choose_select_algo(1, n, k, spira::select_dtype::f32)
                            : params.algo;
  const auto dev = spira::memory_space::device;
  auto call = [&](int rep) {
    const float* src = g_in.copy(resident ? 0 : rep);
    if (subrange > 0) {
      spira::selection::problem p;
      p.k = k;
      p.largest = true;
      p.max_length = n;
      p.algo = spira::select_algo::delegate;
      p.delegate_subrange = subrange;
      spira::selection::select_vector(
          res, spira::selection::row_source<float, IndexT>{src, 1, n, n, nullptr, nullptr},
          spira::selection::row_sink<float, IndexT>{vals.data(), idx.data(), k, k}, p);
    } else {
      spira::select_k<float, IndexT>(res, spira::dense_view<const float>{1, n, n, src, dev}, k,
                                     spira::select_order::largest,
                                     spira::dense_view<float>{1, k, k, vals.data(), dev},
                                     spira::dense_view<IndexT>{1, k, k, idx.data(), dev}, params);
    }
  };
  const int reps = n >= (1ll << 28) ? 10 : 30;
  const double ms = median_ms(call, reps);
  // Where the time of one call goes: the host's own time in the call (launches, allocation), and
  // the device time per call when calls are issued back to back (the host's time hidden).
  std::vector<double> host_us;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    call(i);
    host_us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    SPIRA_CUDA_TRY(cudaDeviceSynchronize());
  }
  std::sort(host_us.begin(), host_us.end());
  const double pipelined_ms = median_ms(
                                  [&](int rep) {
                                    for (int i = 0; i < 10; ++i) {
                                      call(rep * 10 + i);
                                    }
                                  },
                                  std::max(3, reps / 3)) /
                              10;
  const std::int64_t used = subrange > 0 ? subrange
                            : resolved == spira::select_algo::delegate
                                ? spira::selection::delegate_subrange_for(n, k)
                                : 0;
  std::printf(
      "{\"kind\": \"select\", \"n\": %lld, \"k\": %lld, \"algo\": \"%s\", "
      "\"resolved_algo\": \"%s\", \"dist\": \"%s\", \"subrange\": %lld, \"ms\": %.6f, "
      "\"bytes\": %lld, \"resident\": %s, \"index\": \"%s\", \"pool\": %s, "
      "\"host_us\": %.2f, \"pipelined_ms\": %.6f}\n",
      (long long)n, (long long)k, algo_name.c_str(), name_of(resolved), dist_name.c_str(),
      (long long)used, ms, (long long)(n * 4), resident ? "true" : "false",
      sizeof(IndexT) == 4 ? "int32" : "int64", pool ? "true" : "false", host_us[host_us.size() / 2],
      pipelined_ms);
  std::fflush(stdout);
  keep = 0;
  SPIRA_CUDA_TRY(cudaMemPoolSetAttribute(default_pool, cudaMemPoolAttrReleaseThreshold, &keep));
}

void run_sort(std::int64_t n, const std::string& dist_name)
{
  spira::cuda_resources res{};
  g_in.get(res, n, parse_dist(dist_name));
  spira::buffer<float> keys_out(res, n, "sorted keys");
  spira::buffer<int> pos(res, n, "positions");
  spira::buffer<int> pos_out(res, n, "sorted positions");
  iota_kernel<<<blocks_of(n), 256>>>(pos.data(), n);
  SPIRA_CHECK_LAUNCH();
  std::size_t temp_bytes = 0;
  SPIRA_CUDA_TRY(cub::DeviceRadixSort::SortPairsDescending(
      nullptr, temp_bytes, g_in.copy(0), keys_out.data(), pos.data(), pos_out.data(), n));
  spira::buffer<unsigned char> temp(res, std::max<std::size_t>(temp_bytes, 1), "sort workspace");
  const double ms = median_ms(
      [&](int rep) {
        SPIRA_CUDA_TRY(cub::DeviceRadixSort::SortPairsDescending(temp.data(), temp_bytes,
                                                                 g_in.copy(rep), keys_out.data(),
                                                                 pos.data(), pos_out.data(), n));
      },
      n >= (1ll << 28) ? 5 : 20);
  std::printf(
      "{\"kind\": \"sort\", \"n\": %lld, \"dist\": \"%s\", \"ms\": %.6f, \"bytes\": %lld}\n",
      (long long)n, dist_name.c_str(), ms, (long long)(n * 4));
  std::fflush(stdout);
}

}  // namespace

int main()
{
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream is(line);
    std::string first;
    if (!(is >> first)) {
      continue;
    }
    try {
      if (first == "copy") {
        print_copy_bandwidth();
      } else if (first == "sort") {
        long long n = 0;
        std::string dist = "uniform";
        is >> n >> dist;
        run_sort(n, dist);
      } else if (first == "select") {
        long long n = 0, k = 0, subrange = 0;
        std::string algo = "auto", dist = "uniform";
        is >> n >> k >> algo >> dist;
        bool resident = false, int32 = false, pool = false;
        for (std::string word; is >> word;) {
          if (word == "resident") {
            resident = true;
          } else if (word == "int32") {
            int32 = true;
          } else if (word == "pool") {
            pool = true;
          } else if (!word.empty() && std::isdigit(static_cast<unsigned char>(word[0]))) {
            subrange = std::stoll(word);
          } else {
            throw std::runtime_error("unknown flag '" + word + "' (resident, int32, pool)");
          }
        }
        if (int32) {
          run_select<std::int32_t>(n, k, algo, dist, subrange, resident, pool);
        } else {
          run_select<std::int64_t>(n, k, algo, dist, subrange, resident, pool);
        }
      } else {
        throw std::runtime_error("unknown case kind '" + first + "'");
      }
    } catch (const std::exception& e) {
      std::printf("{\"kind\": \"error\", \"case\": \"%s\", \"what\": \"%s\"}\n", line.c_str(),
                  e.what());
      std::fflush(stdout);
    }
  }
  return 0;
}
