// The user-defined distance of custom_distance.cpp, run on the GPU: the same struct, compiled by
// nvcc, instantiated through the documented header spira/cuda/pairwise.cuh. The program computes
// the distances with every CUDA strategy that applies, compares them with the host engine and
// exits non-zero on a mismatch (or 0 with a message when the machine has no GPU).
#include <spira/convert.hpp>
#include <spira/cuda/pairwise.cuh>
#include <spira/ops.hpp>
#include <spira/semiring.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "mean_huber.hpp"

int main()
{
  if (spira::cuda_device_count() == 0) {
    std::printf("custom_distance_cuda: no CUDA device on this machine; nothing to run\n");
    return 0;
  }
  const spira::host_resources host{};
  const spira::cuda_resources gpu{};  // device 0, default stream and memory pool

  const auto a = spira::make_csr<float, std::int32_t>(
      host, 3, 5, std::vector<spira::offset_t>{0, 2, 2, 5},
      std::vector<std::int32_t>{0, 3, 1, 2, 4}, std::vector<float>{0.5f, 3.0f, 1.0f, -2.0f, 0.25f},
      spira::csr_check::canonical);
  const auto b = spira::make_csr<float, std::int32_t>(
      host, 2, 5, std::vector<spira::offset_t>{0, 3, 4}, std::vector<std::int32_t>{0, 2, 3, 4},
      std::vector<float>{1.0f, 4.0f, 0.5f, 2.0f}, spira::csr_check::canonical);

  spira::dense_matrix<float> want(host, a.rows(), b.rows());
  spira::pairwise(host, a.view(), b.view(), want.view(), mean_huber{.delta = 1.5});

  // [usage]
  const auto da = spira::to_device(gpu, a.view());
  const auto db = spira::to_device(gpu, b.view());
  spira::dense_matrix<float> d(gpu, a.rows(), b.rows());
  int mismatches = 0;
  for (const auto s : {spira::pairwise_strategy::automatic, spira::pairwise_strategy::intersection,
                       spira::pairwise_strategy::hybrid}) {
    spira::pairwise(gpu, da.view(), db.view(), d.view(), mean_huber{.delta = 1.5}, s);
    std::vector<float> got(static_cast<std::size_t>(a.rows() * b.rows()));
    spira::copy(got.data(), spira::memory_space::host, d.data(), spira::memory_space::device,
                got.size(), gpu);  // waits for the kernels queued on gpu.stream
    // [usage]
    for (std::int64_t k = 0; k < a.rows() * b.rows(); ++k) {
      const double g = got[std::size_t(k)], w = want.data()[k];
      const bool ok = std::abs(g - w) <= 1e-5 * (1 + std::abs(w));
      mismatches += ok ? 0 : 1;
      std::printf("%-12s d[%lld] = %.6f  (host %.6f)%s\n", spira::to_string(s),
                  static_cast<long long>(k), g, w, ok ? "" : "  MISMATCH");
    }
  }
  if (mismatches != 0) {
    std::fprintf(stderr, "custom_distance_cuda: %d mismatches against the host engine\n",
                 mismatches);
    return 1;
  }
  std::printf("custom_distance_cuda: every strategy matches the host engine\n");
  return 0;
}
