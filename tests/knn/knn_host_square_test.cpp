// The host k-NN graph of a self query on square tiles (knn_host_ops::square_tiles), taken for the
// metrics whose distances are symmetric bit for bit when the pairs need more than one distance
// tile: the same graph, bit for bit, as tiles of whole index rows (algo tiled), for every metric
// (the others do not take square tiles and must not change), with and without exclude_self, float
// and double values, equal rows (ties broken by index across tiles), a block count that does not
// divide the rows; cosine and inner_product (largest first) where their rows path declines;
// progress reported at the blocks' ends; and against the float64 oracle.
#include "support/knn_check.hpp"
#include "support/oracle.hpp"

#include <spira/knn.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace spira::test {
namespace {

using I = std::int32_t;

/// 1,000 random rows over `columns` columns and three copies of rows 10 and 20 (1,003 rows; a block
/// count of 3 leaves a last block of 333); optionally the values of the first stored row from row 7
/// on set to `tiny`.
template <class V>
csr_matrix<V, I> rows_with_copies(bool signed_values, double tiny = 0, std::int64_t columns = 300)
{
  random_options o;
  o.rows = 1000;
  o.cols = columns;
  o.mean_degree = 8;
  o.empty_row_fraction = 0.01;
  o.signed_values = signed_values;
  o.seed = 17;
  const auto base = random_csr<V, I>(o);
  std::vector<std::int64_t> rows(std::size_t(base.rows()));
  std::iota(rows.begin(), rows.end(), std::int64_t{0});
  rows.insert(rows.end(), {10, 20, 10});
  auto m = copied_rows(base, rows);
  if (tiny == 0) {
    return m;
  }
  std::int64_t r = 7;  // the first stored row from 7 on
  while (m.row_ptr()[r + 1] == m.row_ptr()[r]) {
    ++r;
  }
  std::vector<V> vals(m.values(), m.values() + m.nnz());
  std::fill(vals.begin() + m.row_ptr()[r], vals.begin() + m.row_ptr()[r + 1], V(tiny));
  return make_csr<V, I>(host_resources{}, m.rows(), m.cols(),
                        std::vector<offset_t>(m.row_ptr(), m.row_ptr() + m.rows() + 1),
                        std::vector<I>(m.col_idx(), m.col_idx() + m.nnz()), vals);
}

/// A budget whose distance tiles hold 480 x 480 values: three blocks of 335 rows.
template <class V>
std::size_t three_blocks()
{
  return std::size_t(480) * 480 * sizeof(V);
}

template <class V>
void same_as_whole_index_rows(const csr_matrix<V, I>& x, metric m, const std::string& what)
{
  const host_resources res{.threads = 2};
  for (bool exclude : {false, true}) {
    for (std::int64_t k : {1, 7, 12}) {
      knn_params p{
          .k = k, .metric = m, .exclude_self = exclude, .memory_budget = three_blocks<V>()};
      knn_params tiled = p;
      tiled.algo = knn_algo::tiled;
      const std::string label = what + " " + std::string(to_string(m)) + " k=" + std::to_string(k) +
                                (exclude ? " exclude_self" : "");
      expect_identical_graphs(knn_graph<V, I>(res, x.view(), std::nullopt, p),
                              knn_graph<V, I>(res, x.view(), std::nullopt, tiled), label);
      if (::testing::Test::HasFatalFailure()) {
        return;
      }
    }
  }
}

TEST(knn_host_square, same_bytes_as_tiles_of_whole_index_rows)
{
  const auto f = rows_with_copies<float>(true);
  const auto d = rows_with_copies<double>(true);
  const auto nonneg = rows_with_copies<float>(false);
  for (metric m : all_metrics()) {
    const bool needs_nonneg = requires_nonnegative(m);
    same_as_whole_index_rows(needs_nonneg ? nonneg : f, m, "float");
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
  }
  for (metric m : {metric::euclidean, metric::sqeuclidean, metric::inner_product}) {
    same_as_whole_index_rows(d, m, "double");
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
  }
  // Cosine's rows path refuses an index row of values whose fourth power underflows: tiles.
  same_as_whole_index_rows(rows_with_copies<double>(true, 1e-250), metric::cosine, "refused rows");
  // Over 8 columns the products exceed twice the pairs, so the rows path declines and cosine and
  // inner_product (a similarity: the largest first) take square tiles too.
  const auto narrow = rows_with_copies<float>(true, 0, 8);
  for (metric m : {metric::inner_product, metric::cosine, metric::euclidean}) {
    same_as_whole_index_rows(narrow, m, "8 columns");
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
  }
}

TEST(knn_host_square, reports_progress_at_each_block_and_matches_the_oracle)
{
  const auto x = rows_with_copies<float>(true);
  const host_resources res{.threads = 2};
  std::vector<std::int64_t> done;
  knn_params p{.k = 9, .metric = metric::euclidean, .memory_budget = three_blocks<float>()};
  p.progress = [&](std::int64_t d, std::int64_t total) {
    EXPECT_EQ(total, x.rows());
    done.push_back(d);
  };
  const knn_result g = knn_graph<float, I>(res, x.view(), std::nullopt, p);
  EXPECT_EQ(done, (std::vector<std::int64_t>{256, 512, 768, 1003}));  // a progress step's rows
  const auto dense = densify(x);
  expect_knn_matches(g, oracle::pairwise(metric::euclidean, dense, dense), false, false, 2e-5,
                     "square tiles");
}

}  // namespace
}  // namespace spira::test
