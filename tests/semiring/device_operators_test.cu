// The operator structs of spira/semiring.hpp, semirings/graphblas.hpp and semirings/distances.hpp
// taken by value by a CUDA kernel and called on the device: every catalogue distance is evaluated
// on pairs of small dense rows in a kernel and compared with the host engine
// (spira::pairwise_distance) on the same rows. Skips with a reason when there is no device.
#include "support/backend.hpp"

#include <semirings/distances.hpp>
#include <semirings/graphblas.hpp>
#include <spira/cuda/error.cuh>
#include <spira/distance.hpp>
#include <spira/semiring.hpp>

#include <cuda_runtime.h>

#include <cmath>
#include <vector>

namespace spira::test {
namespace {

constexpr int dim = 6;

/// One distance between two dense rows of length dim (0 = not stored), evaluated on the device
/// with the engine's semantics: intersection for annihilating D, union for NAMMs.
template <class D, class T>
__device__ T dense_pair(const D& d, const T* x, const T* y)
{
  using traits = distance_traits<D, T>;
  using add = typename traits::add_monoid;
  using norms = typename traits::norms;
  T px[dim], py[dim];
  for (int c = 0; c < dim; ++c) {
    px[c] = x[c];
    py[c] = y[c];
  }
  if constexpr (traits::has_prepare) {
    using pnorm = norm_list<typename D::prepare_norm>;
    auto sx = pnorm::template identity<T>(), sy = pnorm::template identity<T>();
    for (int c = 0; c < dim; ++c) {
      if (x[c] != T(0)) {
        pnorm::accumulate(sx, x[c]);
      }
      if (y[c] != T(0)) {
        pnorm::accumulate(sy, y[c]);
      }
    }
    for (int c = 0; c < dim; ++c) {
      px[c] = d.template prepare<T>(x[c], sx[0]);
      py[c] = d.template prepare<T>(y[c], sy[0]);
    }
  }
  auto nx = norms::template identity<T>(), ny = norms::template identity<T>();
  typename traits::accumulator acc;
  for (int t = 0; t < traits::num_terms; ++t) {
    acc[t] = add::template identity<T>();
  }
  for (int c = 0; c < dim; ++c) {
    const bool sx = x[c] != T(0), sy = y[c] != T(0);
    if (sx) {
      norms::accumulate(nx, x[c]);
    }
    if (sy) {
      norms::accumulate(ny, y[c]);
    }
    const bool visit = traits::annihilating ? (sx && sy) : (sx || sy);
    if (!visit) {
      continue;
    }
    const auto p = as_terms(d.template multiply<T>(px[c], py[c]));
    for (int t = 0; t < traits::num_terms; ++t) {
      acc[t] = add{}(acc[t], p[t]);
    }
  }
  if constexpr (traits::has_finalize) {
    return d.template finalize<T>(from_terms(acc), nx, ny, dim);
  } else {
    return acc[0];
  }
}

template <class D>
__global__ void eval_pairs(D d, const double* a, int na, const double* b, int nb, double* out)
{
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= na * nb) {
    return;
  }
  const int i = t / nb, j = t % nb;
  out[t] = dense_pair<D, double>(d, a + i * dim, b + j * dim);
}

template <class D>
std::vector<double> on_device(const D& d, const std::vector<double>& a,
                              const std::vector<double>& b)
{
  const int na = int(a.size()) / dim, nb = int(b.size()) / dim;
  double *da = nullptr, *db = nullptr, *dout = nullptr;
  SPIRA_CUDA_TRY(cudaMalloc(&da, a.size() * sizeof(double)));
  SPIRA_CUDA_TRY(cudaMalloc(&db, b.size() * sizeof(double)));
  SPIRA_CUDA_TRY(cudaMalloc(&dout, std::size_t(na) * nb * sizeof(double)));
  SPIRA_CUDA_TRY(cudaMemcpy(da, a.data(), a.size() * sizeof(double), cudaMemcpyHostToDevice));
  SPIRA_CUDA_TRY(cudaMemcpy(db, b.data(), b.size() * sizeof(double), cudaMemcpyHostToDevice));
  eval_pairs<<<(na * nb + 127) / 128, 128>>>(d, da, na, db, nb, dout);
  SPIRA_CHECK_LAUNCH();
  std::vector<double> out(std::size_t(na) * nb);
  SPIRA_CUDA_TRY(cudaMemcpy(out.data(), dout, out.size() * sizeof(double), cudaMemcpyDeviceToHost));
  SPIRA_CUDA_TRY(cudaFree(da));
  SPIRA_CUDA_TRY(cudaFree(db));
  SPIRA_CUDA_TRY(cudaFree(dout));
  return out;
}

std::vector<double> on_host(metric m, const std::vector<double>& a, const std::vector<double>& b,
                            double p)
{
  auto csr = [](const std::vector<double>& d) {
    std::vector<offset_t> rp{0};
    std::vector<std::int32_t> ci;
    std::vector<double> va;
    for (std::size_t r = 0; r < d.size() / dim; ++r) {
      for (int c = 0; c < dim; ++c) {
        if (d[r * dim + c] != 0) {
          ci.push_back(c);
          va.push_back(d[r * dim + c]);
        }
      }
      rp.push_back(offset_t(ci.size()));
    }
    return make_csr<double, std::int32_t>(host_resources{}, std::int64_t(d.size() / dim), dim, rp,
                                          ci, va, csr_check::canonical);
  };
  const auto ma = csr(a), mb = csr(b);
  dense_matrix<double> out(host_resources{}, ma.rows(), mb.rows());
  pairwise_distance(host_resources{}, ma.view(), mb.view(), out.view(), {.metric = m, .p = p});
  return {out.data(), out.data() + ma.rows() * mb.rows()};
}

TEST(device_operators, catalogue_on_the_device_matches_the_host_engine)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  // Non-negative rows (valid for every metric), one of them empty, one constant.
  const std::vector<double> a{0, 2, 0, 3, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1};
  const std::vector<double> b{0, 1, 0, 3, 0.5, 0, 2, 0, 0, 0.5, 0, 0,
                              1, 1, 0, 0, 2,   2, 0, 0, 0, 0,   0, 0};
  namespace d = spira::distances;
  auto check = [&](metric m, const auto& dist, double p = 2.0) {
    const auto dev = on_device(dist, a, b);
    const auto host = on_host(m, a, b, p);
    ASSERT_EQ(dev.size(), host.size());
    for (std::size_t k = 0; k < dev.size(); ++k) {
      EXPECT_NEAR(dev[k], host[k], 1e-12 * (1 + std::abs(host[k]))) << to_string(m) << " " << k;
    }
  };
  check(metric::cosine, d::cosine{});
  check(metric::euclidean, d::euclidean{});
  check(metric::sqeuclidean, d::sqeuclidean{});
  check(metric::manhattan, d::manhattan{});
  check(metric::chebyshev, d::chebyshev{});
  check(metric::minkowski, d::minkowski{3.0}, 3.0);
  check(metric::canberra, d::canberra{});
  check(metric::braycurtis, d::braycurtis{});
  check(metric::hamming, d::hamming{});
  check(metric::jaccard, d::jaccard{});
  check(metric::dice, d::dice{});
  check(metric::russellrao, d::russellrao{});
  check(metric::correlation, d::correlation{});
  check(metric::jensenshannon, d::jensenshannon{});
  check(metric::hellinger, d::hellinger{});
  check(metric::kl_divergence, d::kl_divergence{});
  check(metric::inner_product, d::inner_product{});
}

TEST(device_operators, graphblas_semirings_are_device_callable)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  // Rows sharing columns 1 and 3: plus_times = 2*1 + 3*3 = 11.
  const std::vector<double> a{0, 2, 0, 3, 0, 0};
  const std::vector<double> b{0, 1, 0, 3, 0.5, 0};
  EXPECT_EQ(on_device(semirings::plus_times{}, a, b)[0], 11.0);
  EXPECT_EQ(on_device(semirings::min_plus{}, a, b)[0], 3.0);
  EXPECT_EQ(on_device(semirings::max_plus{}, a, b)[0], 6.0);
  EXPECT_EQ(on_device(semirings::max_min{}, a, b)[0], 3.0);
  EXPECT_EQ(on_device(semirings::lor_land{}, a, b)[0], 1.0);
  EXPECT_EQ(on_device(semirings::plus_pair{}, a, b)[0], 2.0);
  EXPECT_EQ(on_device(semirings::any_pair{}, a, b)[0], 1.0);
}

}  // namespace
}  // namespace spira::test
