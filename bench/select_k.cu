// select_k benchmark: times spira::select_k on the CUDA backend for the cases given on stdin and
// prints one JSON object per line. bench/select_k.py drives it, runs torch.topk on the same shapes
// in the same session, and writes the results file.
//
// stdin, one case per line:   <rows> <length> <k> <algo: auto|binary_search|radix> [dist]
//   dist: uniform (default), normal, narrow (RadiK's adversarial: all keys share their top digits)
// special lines:              copy            -> device-to-device copy bandwidth
//                             hitrate <rows> <length> <k> <max_iter>
//                                             -> time and hit rate of the approximate max_iter mode
#include "cuda_timing.cuh"

#include <spira/select_k.hpp>
#include <spira/cuda/error.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

__global__ void fill_kernel(float* out, std::int64_t n, std::uint64_t seed, int dist)
{
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) { return; }
  std::uint64_t x = (static_cast<std::uint64_t>(i) + 1) * 0x9e3779b97f4a7c15ull ^ seed;
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  const float u = static_cast<float>(x >> 40) * (1.0f / 16777216.0f);  // [0, 1)
  if (dist == 1) {
    const float v = static_cast<float>((x >> 8) & 0xffffff) * (1.0f / 16777216.0f) + 1e-7f;
    out[i] = sqrtf(-2.0f * logf(v)) * cospif(2.0f * u);
  } else if (dist == 2) {
    out[i] = 128.0f + u / 64.0f;
  } else {
    out[i] = u;
  }
}

using spira::bench::median_ms;

spira::select_algo parse_algo(const std::string& s)
{
  if (s == "binary_search") { return spira::select_algo::binary_search; }
  if (s == "radix") { return spira::select_algo::radix; }
  return spira::select_algo::automatic;
}

int parse_dist(const std::string& s) { return s == "normal" ? 1 : s == "narrow" ? 2 : 0; }

/// Enough input copies that a rotation over them does not fit in L2.
std::int64_t copies_for(std::int64_t bytes)
{
  const std::int64_t l2_twice = 2ll * 60 * 1024 * 1024;
  return std::max<std::int64_t>(1, std::min<std::int64_t>(16, (l2_twice + bytes - 1) / bytes));
}

const char* resolved_name(spira::select_algo algo, std::int64_t rows, std::int64_t len,
                          std::int64_t k, int max_iter)
{
  if (algo == spira::select_algo::automatic) {
    algo = max_iter > 0 ? spira::select_algo::binary_search
                        : spira::choose_select_algo(rows, len, k, spira::select_dtype::f32);
  }
  return algo == spira::select_algo::binary_search ? "binary_search" : "radix";
}

void run_copy()
{
  const std::size_t bytes = std::size_t(1) << 30;
  spira::cuda_resources res{};
  spira::buffer<char> a(res, bytes), b(res, bytes);
  SPIRA_CUDA_TRY(cudaMemset(a.data(), 1, bytes));
  const double ms = median_ms(
    [&](int) { SPIRA_CUDA_TRY(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice)); },
    20);
  std::printf("{\"kind\": \"copy\", \"bytes\": %zu, \"ms\": %.6f, \"gbps\": %.2f}\n", bytes, ms,
              2.0 * double(bytes) / (ms * 1e6));
}

void run_case(std::int64_t rows, std::int64_t len, std::int64_t k, const std::string& algo_name,
              const std::string& dist_name, int max_iter)
{
  spira::cuda_resources res{};
  const std::int64_t n = rows * len;
  const std::int64_t copies = copies_for(n * std::int64_t(sizeof(float)));
  spira::buffer<float> in(res, n * copies, "bench input");
  const std::int64_t blocks = (n * copies + 255) / 256;
  fill_kernel<<<static_cast<unsigned>(blocks), 256>>>(in.data(), n * copies, 12345 + len,
                                                      parse_dist(dist_name));
  SPIRA_CHECK_LAUNCH();
  spira::buffer<float> vals(res, rows * k, "bench values");
  spira::buffer<std::int64_t> idx(res, rows * k, "bench indices");
  spira::select_params params;
  params.algo = parse_algo(algo_name);
  if (max_iter > 0) { params.max_iter = max_iter; }
  const auto dev = spira::memory_space::device;
  auto call = [&](int rep) {
    const float* src = in.data() + (rep % copies) * n;
    spira::select_k<float, std::int64_t>(res, spira::dense_view<const float>{rows, len, len, src, dev},
                                         k, spira::select_order::largest,
                                         spira::dense_view<float>{rows, k, k, vals.data(), dev},
                                         spira::dense_view<std::int64_t>{rows, k, k, idx.data(), dev},
                                         params);
  };
  const int reps = n >= (1ll << 26) ? 10 : 50;
  const double ms = median_ms(call, reps);
  double hit = -1;
  if (max_iter > 0) {  // fraction of the approximate selection that is in the exact top-k
    call(0);
    std::vector<std::int64_t> approx = spira::to_host_vector(idx);
    params.max_iter.reset();
    call(0);
    std::vector<std::int64_t> exact = spira::to_host_vector(idx);
    std::int64_t hits = 0;
    for (std::int64_t r = 0; r < rows; ++r) {  // both lists are sorted by index
      auto a = approx.begin() + r * k;
      auto e = exact.begin() + r * k;
      std::vector<std::int64_t> common;
      std::set_intersection(a, a + k, e, e + k, std::back_inserter(common));
      hits += std::int64_t(common.size());
    }
    hit = double(hits) / double(rows * k);
  }
  const double bytes = double(n) * 4 + double(rows * k) * (4 + 8);
  std::printf("{\"kind\": \"select_k\", \"rows\": %lld, \"length\": %lld, \"k\": %lld, "
              "\"algo\": \"%s\", \"dist\": \"%s\", \"max_iter\": %d, \"ms\": %.6f, "
              "\"bytes\": %.0f, \"hit_rate\": %.6f, \"resolved_algo\": \"%s\"}\n",
              (long long)rows, (long long)len, (long long)k, algo_name.c_str(), dist_name.c_str(),
              max_iter, ms, bytes, hit,
              resolved_name(params.algo, rows, len, k, max_iter));
  std::fflush(stdout);
}

}  // namespace

int main()
{
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream is(line);
    std::string first;
    if (!(is >> first)) { continue; }
    try {
      if (first == "copy") {
        run_copy();
      } else if (first == "hitrate") {
        long long rows, len, k;
        int it;
        is >> rows >> len >> k >> it;
        run_case(rows, len, k, "binary_search", "uniform", it);
      } else {
        long long len, k;
        std::string algo = "auto", dist = "uniform";
        is >> len >> k >> algo >> dist;
        run_case(std::stoll(first), len, k, algo, dist, 0);
      }
    } catch (const std::exception& e) {
      std::printf("{\"kind\": \"error\", \"case\": \"%s\", \"what\": \"%s\"}\n", line.c_str(),
                  e.what());
      std::fflush(stdout);
    }
  }
  return 0;
}
