// k-NN graphs for user-defined semirings on the host (spira/knn_semiring.hpp): a sum NAMM, a max
// NAMM and a similarity, with small tiles so that the running merge runs many times, queries and
// exclude_self, against the float64 brute force.
#include "knn_semiring_common.hpp"

#include <spira/knn_semiring.hpp>

#include <gtest/gtest.h>

namespace spira::test {
namespace {

template <class D>
void check(const D& d, int which, select_order order)
{
  random_options o;
  o.rows = 300;
  o.cols = 50;
  o.seed = 11 + std::uint32_t(which);
  const auto index = random_csr<double, std::int32_t>(o);
  const auto dx = densify(index);
  for (bool self : {false, true}) {
    for (std::int64_t k : {1, 15, 120}) {
      SCOPED_TRACE(testing::Message() << "semiring " << which << " k " << k << " self " << self);
      knn_params p{.k = k, .exclude_self = self};
      p.query_tile = 37;  // several query and index tiles: the merge runs many times
      p.index_tile = 41;
      const std::optional<csr_view<double, std::int32_t>> none;
      const auto g = knn_graph(host_resources{}, index.view(), none, d, order, p);
      expect_knn_matches(g, exact_distances(which, dx, dx), order == select_order::largest, self,
                         2e-5, "host user semiring");
      // The same result without tiles (one tile: no merge).
      knn_params whole{.k = k, .exclude_self = self};
      const auto h = knn_graph(host_resources{}, index.view(), std::nullopt, d, order, whole);
      for (std::int64_t r = 0; r < index.rows(); ++r) {
        for (std::int64_t c = 0; c < k; ++c) {
          ASSERT_EQ(g.indices.view()(r, c), h.indices.view()(r, c)) << r << ", " << c;
          ASSERT_EQ(g.distances.view()(r, c), h.distances.view()(r, c)) << r << ", " << c;
        }
      }
    }
  }
}

TEST(KnnSemiring, HostSumNamm)
{
  check(half_squared{}, 0, select_order::smallest);
}
TEST(KnnSemiring, HostMaxNamm)
{
  check(max_abs_difference{}, 1, select_order::smallest);
}
TEST(KnnSemiring, HostSimilarity)
{
  check(dot_similarity{}, 2, select_order::largest);
}

TEST(KnnSemiring, HostRejectsFused)
{
  random_options o;
  const auto index = random_csr<double, std::int32_t>(o);
  knn_params p{.k = 3};
  p.algo = knn_algo::fused;
  const std::optional<csr_view<double, std::int32_t>> none;
  EXPECT_THROW((void)knn_graph(host_resources{}, index.view(), none, half_squared{},
                               select_order::smallest, p),
               invalid_argument);
}

}  // namespace
}  // namespace spira::test
