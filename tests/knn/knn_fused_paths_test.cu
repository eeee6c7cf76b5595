// The ways the fused k-NN kernel takes a row (spira/cuda/detail/knn_fused_kernel.cuh) for the
// distances whose pairs without a shared column take one value (cosine, inner_product): by its
// products, by a walk that skips those pairs, by a walk that ranks every pair. Each way, forced
// through detail::knn_fused_gates, gives the graph of the plain walk on the same operands (up to
// the order in which products are summed), and the counters say which way each row went - also
// with the policy's gates, on a shape that takes each way.
#include "support/backend.hpp"
#include "support/knn_check.hpp"

#include <semirings/distances_expansion.hpp>
#include <spira/cuda/knn.cuh>
#include <spira/memory.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "support/oracle.hpp"

namespace spira::test {
namespace {

#define SPIRA_SKIP_WITHOUT_GPU() SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources)

struct graph {
  knn_result g;
  detail::knn_fused_paths paths{};
};

/// The self graph of x (exclude_self) through detail::knn_fused_run with the given gates.
template <class D>
graph run(const csr_matrix<float, std::int32_t>& x, const D& d, bool largest, std::int64_t k,
          detail::knn_fused_gates gates)
{
  cuda_resources res;
  const auto dev = to_device(res, x.view());
  dense_matrix<float> values(res, x.rows(), k);
  dense_matrix<std::int64_t> indices(res, x.rows(), k);
  buffer<detail::knn_fused_paths> paths(res, 1, "path counters");
  detail::fill_zero_bytes(paths.data(), memory_space::device, sizeof(detail::knn_fused_paths), res);
  gates.paths = paths.data();
  detail::knn_fused_run(res, dev.view(), dev.view(), d, k, largest, true,
                        static_cast<float*>(nullptr), values.view(), indices.view(), {}, gates);
  graph out{{dense_matrix<std::int64_t>(host_resources{}, x.rows(), k),
             dense_matrix<float>(host_resources{}, x.rows(), k)}};
  const auto n = std::size_t(x.rows() * k);
  copy(out.g.distances.view().data, memory_space::host, values.view().data, memory_space::device, n,
       res);
  copy(out.g.indices.view().data, memory_space::host, indices.view().data, memory_space::device, n,
       res);
  copy(&out.paths, memory_space::host, paths.data(), memory_space::device, 1, res);
  return out;
}

constexpr std::int64_t never = -1;  // a closed gate
constexpr std::int64_t always = 0;  // an open gate

/// Rows of x with more entries than a block has threads (they cannot go by their products), and
/// rows D refuses as queries for skipping (cosine: all-zero rows, which walk).
struct row_kinds {
  std::uint64_t long_rows = 0;
  std::uint64_t refused = 0;
};

row_kinds kinds_of(const csr_matrix<float, std::int32_t>& x, bool cosine)
{
  row_kinds r;
  for (std::int64_t i = 0; i < x.rows(); ++i) {
    const offset_t nnz = x.row_ptr()[i + 1] - x.row_ptr()[i];
    r.long_rows += nnz > cuda_pairwise_policy::intersection_threads ? 1 : 0;
    r.refused += cosine && nnz == 0 ? 1 : 0;
  }
  return r;
}

template <class D>
void check_every_way(const csr_matrix<float, std::int32_t>& x, const D& d, bool largest,
                     row_kinds kinds, const char* label)
{
  const std::uint64_t rows = std::uint64_t(x.rows());
  const std::uint64_t refused = kinds.refused;
  for (const std::int64_t k : {15, 200}) {
    SCOPED_TRACE(std::string(label) + ", k = " + std::to_string(k));
    // (rows that lost queued pairs to a full queue run again and count again: at least)
    const graph walk = run(x, d, largest, k, {never, never});
    EXPECT_GE(walk.paths.walk, rows);
    EXPECT_EQ(walk.paths.walk_skipping + walk.paths.by_products, 0u);
    const graph skipping = run(x, d, largest, k, {never, always});
    EXPECT_GE(skipping.paths.walk_skipping, rows - refused);
    EXPECT_GE(skipping.paths.walk, refused);
    EXPECT_EQ(skipping.paths.by_products, 0u);
    expect_same_graph_up_to_rounding(skipping.g, walk.g);
    const graph by_products = run(x, d, largest, k, {always, always});
    // (every row that may fits the tile)
    EXPECT_GE(by_products.paths.by_products, rows - refused - kinds.long_rows);
    EXPECT_GE(by_products.paths.walk_skipping, kinds.long_rows);
    EXPECT_GE(by_products.paths.walk, refused);
    expect_same_graph_up_to_rounding(by_products.g, walk.g);
    const graph policy = run(x, d, largest, k, {});
    EXPECT_GT(policy.paths.by_products, rows / 2) << "the policy's gates should take these rows "
                                                     "by their products";
    expect_same_graph_up_to_rounding(policy.g, walk.g);
  }
}

/// Sparse rows over many columns (few products: the policy takes them by their products), with
/// all-zero rows, equal rows (pairs the accuracy guard queues) and, with signed values, pairs
/// whose products cancel.
csr_matrix<float, std::int32_t> sparse_rows(std::int64_t n, bool signed_values)
{
  random_options o;
  o.rows = n;
  o.cols = 10 * n;
  o.mean_degree = 3;
  o.empty_row_fraction = 0.01;
  o.signed_values = signed_values;
  const auto base = random_csr<float, std::int32_t>(o);
  std::vector<std::int64_t> rows(std::size_t(base.rows()));
  std::iota(rows.begin(), rows.end(), std::int64_t{0});
  rows.insert(rows.end(), {10, 10, 20});
  std::vector<float> scales(rows.size(), 1.0f);
  return copied_rows(base, rows, scales);
}

void check_every_way(std::int64_t n)
{
  const auto unsigned_rows = sparse_rows(n, false);
  check_every_way(unsigned_rows, distances::cosine{}, false, kinds_of(unsigned_rows, true),
                  "cosine");
  const auto signed_rows = sparse_rows(n, true);
  check_every_way(signed_rows, distances::inner_product{}, true, kinds_of(signed_rows, false),
                  "inner_product");
}

/// Two accumulator tiles of index rows.
TEST(KnnFusedPaths, EveryWayGivesTheGraphOfThePlainWalk)
{
  SPIRA_SKIP_WITHOUT_GPU();
  check_every_way(8000);
}

/// One tile: small enough for compute-sanitizer's racecheck.
TEST(KnnFusedPaths, EveryWayOnASmallIndex)
{
  SPIRA_SKIP_WITHOUT_GPU();
  check_every_way(1500);
}

/// Rows sharing columns with much of a small index: the policy's gates, row by row. A row whose
/// products exceed the index's rows walks ranking every pair; the others skip (by their products
/// or by the walk).
TEST(KnnFusedPaths, PolicyGatesFollowTheProducts)
{
  SPIRA_SKIP_WITHOUT_GPU();
  random_options o;
  o.rows = 400;
  o.cols = 40;
  o.mean_degree = 12;
  const auto x = random_csr<float, std::int32_t>(o);
  std::vector<std::int64_t> df(std::size_t(x.cols()), 0);
  for (offset_t e = 0; e < x.nnz(); ++e) {
    ++df[std::size_t(x.col_idx()[e])];
  }
  std::uint64_t walking = 0;
  for (std::int64_t i = 0; i < x.rows(); ++i) {
    std::int64_t products = 0;
    for (offset_t e = x.row_ptr()[i]; e < x.row_ptr()[i + 1]; ++e) {
      products += df[std::size_t(x.col_idx()[e])];
    }
    const bool refused = products == 0;  // an all-zero query row (cosine)
    walking += refused || !detail::knn_fused_gates::passes(
                              cuda_pairwise_policy::knn_skip_per_product, products, x.rows())
                   ? 1
                   : 0;
  }
  ASSERT_GT(walking, 0u);
  ASSERT_LT(walking, std::uint64_t(x.rows()));  // the shape takes both ways
  const graph policy = run(x, distances::cosine{}, false, 15, {});
  EXPECT_EQ(policy.paths.walk, walking);
  EXPECT_EQ(policy.paths.walk_skipping + policy.paths.by_products, x.rows() - walking);
  expect_same_graph_up_to_rounding(policy.g,
                                   run(x, distances::cosine{}, false, 15, {never, never}).g);
}

}  // namespace
}  // namespace spira::test
