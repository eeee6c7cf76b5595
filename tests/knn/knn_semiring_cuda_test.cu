// k-NN graphs for user-defined semirings on the GPU (spira/cuda/knn.cuh, instantiated here by
// nvcc): fused and tiled, a sum NAMM, a max NAMM and a similarity, against the float64 brute force,
// and a user monoid the fused kernel cannot serve.
#include "knn_semiring_common.hpp"
#include "support/backend.hpp"

#include <spira/cuda/knn.cuh>

#include <gtest/gtest.h>

namespace spira::test {
namespace {

/// ⊕ keeps the value of larger magnitude: a custom monoid (compare-and-swap atomics). Not served
/// by the intersection strategy, so k-NN with it always tiles (hybrid distances).
struct larger_magnitude_monoid {
  static constexpr monoid_kind kind = monoid_kind::custom;
  template <class T>
  SPIRA_HD static constexpr T identity()
  {
    return T(0);
  }
  template <class T>
  SPIRA_HD T operator()(T a, T b) const
  {
    const T ma = a < T(0) ? -a : a, mb = b < T(0) ? -b : b;
    return ma > mb || (ma == mb && a > b) ? a : b;
  }
};
struct largest_difference {
  using add_monoid = larger_magnitude_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD T multiply(T a, T b) const
  {
    return a > b ? a - b : b - a;
  }
};

template <class D>
void check(const D& d, int which, select_order order)
{
  random_options o;
  o.rows = 4000;  // more index rows than one accumulator tile of the fused kernel
  o.cols = 300;
  o.mean_degree = 10;
  o.seed = 21 + std::uint32_t(which);
  const auto index = random_csr<float, std::int32_t>(o);
  random_options oq = o;
  oq.rows = 40;
  oq.seed = 5;
  const auto queries = random_csr<float, std::int32_t>(oq);
  const auto exact = exact_distances(which, densify(queries), densify(index));
  const std::optional<csr_view<float, std::int32_t>> qv = queries.view();
  for (knn_algo algo : {knn_algo::fused, knn_algo::tiled}) {
    for (std::int64_t k : {1, 15, 300}) {
      SCOPED_TRACE(testing::Message()
                   << "semiring " << which << " k " << k << " algo " << int(algo));
      knn_params p{.k = k};
      p.algo = algo;
      p.strategy =
          algo == knn_algo::fused ? pairwise_strategy::intersection : pairwise_strategy::automatic;
      const auto g = knn_graph(cuda_resources{}, index.view(), qv, d, order, p);
      expect_knn_matches(g, exact, order == select_order::largest, false, 2e-5, "cuda user");
    }
  }
}

TEST(KnnSemiringCuda, SumNamm)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  check(half_squared{}, 0, select_order::smallest);
}
TEST(KnnSemiringCuda, MaxNamm)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  check(max_abs_difference{}, 1, select_order::smallest);
}
TEST(KnnSemiringCuda, Similarity)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  check(dot_similarity{}, 2, select_order::largest);
}

TEST(KnnSemiringCuda, CustomMonoidTilesAndRejectsFused)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  random_options o;
  o.rows = 200;
  o.cols = 40;
  o.empty_row_fraction = 0;  // e⊕ is 0 here, not the max NAMM's -inf
  const auto index = random_csr<float, std::int32_t>(o);
  const std::optional<csr_view<float, std::int32_t>> none;
  knn_params p{.k = 10, .exclude_self = true};
  const auto g = knn_graph(cuda_resources{}, index.view(), none, largest_difference{},
                           select_order::smallest, p);
  // On nonnegative data the larger-magnitude difference over the union is the max |x - y| over
  // all columns when a column is stored: the max NAMM's exact distances.
  const auto dx = densify(index);
  expect_knn_matches(g, exact_distances(1, dx, dx), false, true, 2e-5, "custom monoid");
  p.algo = knn_algo::fused;
  EXPECT_THROW((void)knn_graph(cuda_resources{}, index.view(), none, largest_difference{},
                               select_order::smallest, p),
               invalid_argument);
}

}  // namespace
}  // namespace spira::test
