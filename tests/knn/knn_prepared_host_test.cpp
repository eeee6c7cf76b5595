// The tiled host k-NN graph keeps each index tile prepared for the distance engine
// (host_pairwise_prepared: norms, prepared values, CSC...) across the query tiles while the tiles
// kept fit their share of the budget. The graph is the same bit for bit as with a budget that keeps
// none, for the built-in metrics (distances with norms, sum and selection NAMMs, a prepare step, a
// boolean and a similarity), on declared columns and with columns renumbered, for a self graph and
// separate queries, and for a user semiring (spira/knn_semiring.hpp); each index tile is prepared
// once, and not at all past the budget.
#include "knn_semiring_common.hpp"
#include "support/knn_check.hpp"
#include "support/oracle.hpp"

#include <semirings/distances.hpp>
#include <spira/detail/knn_host_ops.hpp>
#include <spira/knn.hpp>
#include <spira/knn_semiring.hpp>
#include <spira/ops.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace spira::test {
namespace {

using V = float;
using I = std::int32_t;

/// The same rows as `narrow` with column c moved to 5000 c: 2,000,000 declared columns, so that
/// every (query tile, index tile) pair renumbers its columns.
csr_matrix<V, I> wide_copy(const csr_matrix<V, I>& narrow)
{
  std::vector<offset_t> ptr(narrow.row_ptr(), narrow.row_ptr() + narrow.rows() + 1);
  std::vector<I> cols(narrow.col_idx(), narrow.col_idx() + narrow.nnz());
  for (I& c : cols) {
    c *= 5000;
  }
  std::vector<V> vals(narrow.values(), narrow.values() + narrow.nnz());
  return make_csr<V, I>(host_resources{}, narrow.rows(), narrow.cols() * 5000, ptr, cols, vals,
                        csr_check::canonical);
}

TEST(KnnHost, IndexTilesPreparedOnceGiveTheSameGraph)
{
  const host_resources res{};
  const auto narrow = random_csr<V, I>({.rows = 700, .cols = 300, .mean_degree = 10, .seed = 7});
  const auto queries = random_csr<V, I>({.rows = 230, .cols = 300, .mean_degree = 8, .seed = 8});
  const auto wide = wide_copy(narrow);
  const auto wide_queries = wide_copy(queries);
  for (const bool renumbered : {false, true}) {
    const csr_matrix<V, I>& index = renumbered ? wide : narrow;
    const csr_matrix<V, I>& q = renumbered ? wide_queries : queries;
    for (const metric mt :
         {metric::euclidean, metric::cosine, metric::inner_product, metric::manhattan,
          metric::chebyshev, metric::jensenshannon, metric::jaccard}) {
      for (const bool self : {true, false}) {
        SCOPED_TRACE(std::string(to_string(mt)) + (renumbered ? ", renumbered columns" : "") +
                     (self ? ", self" : ", queries"));
        knn_params p{.k = 12, .metric = mt, .query_tile = 100, .index_tile = 300};
        const std::optional<csr_view<V, I>> qv =
            self ? std::nullopt : std::optional<csr_view<V, I>>(q.view());
        const knn_result kept = knn_graph<V, I>(res, index.view(), qv, p);
        p.memory_budget = 1;  // no room to keep a prepared index tile
        const knn_result per_pair = knn_graph<V, I>(res, index.view(), qv, p);
        test::expect_identical_graphs(kept, per_pair);
      }
    }
  }
}

TEST(KnnHost, UserSemiringIndexTilesPreparedOnceGiveTheSameGraph)
{
  const host_resources res{};
  const auto index = random_csr<V, I>({.rows = 500, .cols = 80, .seed = 9});
  const std::optional<csr_view<V, I>> none;
  knn_params p{.k = 9, .query_tile = 64, .index_tile = 150};
  const auto run = [&](const auto& d, select_order order) {
    p.memory_budget = 0;
    const knn_result kept = knn_graph(res, index.view(), none, d, order, p);
    p.memory_budget = 1;
    const knn_result per_pair = knn_graph(res, index.view(), none, d, order, p);
    test::expect_identical_graphs(kept, per_pair);
  };
  run(half_squared{}, select_order::smallest);
  run(max_abs_difference{}, select_order::smallest);
  run(dot_similarity{}, select_order::largest);
}

/// Each index tile is prepared by the first query tile only (5 query tiles, 3 index tiles); with a
/// budget too small to keep one, the first tile prepared is released and no other is prepared.
TEST(KnnHost, EachIndexTileIsPreparedOnceWithinTheBudget)
{
  const host_resources res{};
  const auto index = random_csr<V, I>({.rows = 500, .cols = 80, .seed = 4});
  using D = distances::euclidean;
  for (const std::size_t budget : {std::size_t{0}, std::size_t{1}}) {
    SCOPED_TRACE(budget == 0 ? "default budget" : "budget of 1 byte");
    int prepared = 0;
    knn_params p{.k = 5, .memory_budget = budget, .query_tile = 100, .index_tile = 200};
    const std::optional<csr_view<V, I>> none;
    (void)detail::knn_host(
        res, index.view(), none, p, false,
        [&](csr_view<V, I> qv, csr_view<V, I> iv, dense_view<V> out,
            detail::host_pairwise_prepared<D, V, I>* pb) {
          detail::pairwise_host(res, qv, iv, out, D{}, pb);
        },
        [&](csr_view<V, I> iv) {
          ++prepared;
          return std::make_unique<detail::host_pairwise_prepared<D, V, I>>(res, D{}, iv);
        });
    EXPECT_EQ(prepared, budget == 0 ? 3 : 1);
  }
}

}  // namespace
}  // namespace spira::test
