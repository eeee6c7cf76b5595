// The host k-NN graph by rows (spira/detail/knn_host_disjoint.hpp) for the metrics with a disjoint
// value (cosine, inner_product): the same graph, bit for bit, as the tiled algorithm, which
// evaluates every pair - sparse rows over many columns (most pairs share no column: ties at the
// disjoint value broken by index), all-zero rows (accepted in the index, computed in full as
// queries), equal and near-duplicate rows (pairs the accuracy guard evaluates directly), columns
// declared far beyond the used ones, a self graph with and without exclude_self and separate
// queries, float and double values; against the float64 oracle on a small set; and the fallback
// to tiles where an index row is refused (tiny values for cosine).
#include "support/knn_check.hpp"
#include "support/oracle.hpp"

#include <semirings/distances.hpp>
#include <spira/detail/knn_host_disjoint.hpp>
#include <spira/knn.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace spira::test {
namespace {

using I = std::int32_t;

/// Sparse rows (mean degree 3 over 20,000 columns, 1% empty), then equal and near-duplicate copies.
template <class V>
csr_matrix<V, I> sparse_rows(bool signed_values, std::int64_t column_scale)
{
  random_options o;
  o.rows = 3000;
  o.cols = 20000;
  o.mean_degree = 3;
  o.empty_row_fraction = 0.01;
  o.signed_values = signed_values;
  o.seed = 11;
  const auto base = random_csr<V, I>(o);
  std::vector<std::int64_t> rows(std::size_t(base.rows()));
  std::iota(rows.begin(), rows.end(), std::int64_t{0});
  rows.insert(rows.end(), {10, 10, 10, 20, 20});
  std::vector<V> scales(rows.size(), V(1));
  scales.back() = V(1) + V(0x1p-20);
  auto m = copied_rows(base, rows, scales);
  if (column_scale == 1) {
    return m;
  }
  std::vector<offset_t> ptr(m.row_ptr(), m.row_ptr() + m.rows() + 1);
  std::vector<I> cols(m.col_idx(), m.col_idx() + m.nnz());
  for (I& c : cols) {
    c = I(c * column_scale);
  }
  std::vector<V> vals(m.values(), m.values() + m.nnz());
  return make_csr<V, I>(host_resources{}, m.rows(), m.cols() * column_scale, ptr, cols, vals);
}

template <class V>
void same_graph_as_tiles(metric m, bool signed_values, std::int64_t column_scale)
{
  const auto index = sparse_rows<V>(signed_values, column_scale);
  const csr_matrix<V, I> queries = copied_rows(index, {0, 5, 10, 11, 2999, 3004});
  const host_resources res{.threads = 2};
  for (const std::int64_t k : {1, 15, 200}) {
    for (const int mode : {0, 1, 2}) {  // self excluding itself, self with itself first, queries
      const std::string label = std::string(to_string(m)) + " k " + std::to_string(k) + " mode " +
                                std::to_string(mode) + " columns x" + std::to_string(column_scale);
      knn_params p{.k = k, .metric = m, .exclude_self = mode == 0};
      const std::optional<csr_view<V, I>> q =
          mode == 2 ? std::optional<csr_view<V, I>>(queries.view()) : std::nullopt;
      const knn_result rows = knn_graph<V, I>(res, index.view(), q, p);
      p.algo = knn_algo::tiled;
      const knn_result tiles = knn_graph<V, I>(res, index.view(), q, p);
      expect_identical_graphs(rows, tiles, label);
    }
  }
}

TEST(knn_host_rows, the_same_graph_as_the_tiled_algorithm)
{
  for (const std::int64_t scale : {1, 100000}) {
    same_graph_as_tiles<float>(metric::cosine, false, scale);
    same_graph_as_tiles<double>(metric::cosine, false, scale);
    same_graph_as_tiles<float>(metric::inner_product, true, scale);
    same_graph_as_tiles<double>(metric::inner_product, true, scale);
  }
}

/// The path runs (returns true) on these rows, and its graph matches the float64 oracle on a set
/// small enough to densify.
TEST(knn_host_rows, runs_and_matches_the_oracle)
{
  random_options o;
  o.rows = 400;
  o.cols = 900;
  o.mean_degree = 3;
  o.seed = 5;
  const auto index = random_csr<float, I>(o);
  const host_resources res{.threads = 2};
  const std::int64_t k = 20;
  knn_result g{dense_matrix<std::int64_t>(res, index.rows(), k),
               dense_matrix<float>(res, index.rows(), k)};
  const knn_params p{.k = k, .metric = metric::cosine, .exclude_self = true};
  ASSERT_TRUE(detail::knn_host_disjoint(res, index.view(), index.view(), distances::cosine{}, p,
                                        false, k, true, static_cast<float*>(nullptr), g,
                                        std::size_t(1) << 30));
  const auto dense = densify(index);
  expect_knn_matches(g, oracle::pairwise(metric::cosine, dense, dense), false, true, 2e-6,
                     "by rows");
  knn_params tiled = p;
  tiled.algo = knn_algo::tiled;
  expect_identical_graphs(g, knn_graph<float, I>(res, index.view(), std::nullopt, tiled),
                          "by rows against tiles");
}

/// An index row cosine's disjoint_index refuses (double values of 1e-250: |y|^4 underflows): the
/// path declines and the graph comes from tiles.
TEST(knn_host_rows, declines_an_index_it_cannot_serve)
{
  const auto index = sparse_rows<double>(false, 1);
  std::int64_t row = 7;
  while (index.row_ptr()[row + 1] == index.row_ptr()[row]) {
    ++row;
  }
  std::vector<double> vals(index.values(), index.values() + index.nnz());
  for (offset_t e = index.row_ptr()[row]; e < index.row_ptr()[row + 1]; ++e) {
    vals[std::size_t(e)] = 1e-250;
  }
  const host_resources res{.threads = 2};
  const auto refused = make_csr<double, I>(
      res, index.rows(), index.cols(),
      std::vector<offset_t>(index.row_ptr(), index.row_ptr() + index.rows() + 1),
      std::vector<I>(index.col_idx(), index.col_idx() + index.nnz()), vals);
  const std::int64_t k = 15;
  knn_result g{dense_matrix<std::int64_t>(res, refused.rows(), k),
               dense_matrix<float>(res, refused.rows(), k)};
  const knn_params p{.k = k, .metric = metric::cosine, .exclude_self = true};
  EXPECT_FALSE(detail::knn_host_disjoint(res, refused.view(), refused.view(), distances::cosine{},
                                         p, false, k, true, static_cast<double*>(nullptr), g,
                                         std::size_t(1) << 30));
  knn_params tiled = p;
  tiled.algo = knn_algo::tiled;
  expect_identical_graphs(knn_graph<double, I>(res, refused.view(), std::nullopt, p),
                          knn_graph<double, I>(res, refused.view(), std::nullopt, tiled),
                          "refused index");
}

}  // namespace
}  // namespace spira::test
