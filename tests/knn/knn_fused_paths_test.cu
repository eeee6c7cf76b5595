// The ways the fused k-NN kernel takes a row (spira/cuda/detail/knn_fused_kernel.cuh) for the
// distances whose pairs without a shared column take one value (cosine, inner_product): by its
// products, by a walk that skips those pairs, by a walk that ranks every pair. Each way, forced
// through detail::knn_fused_gates, gives the graph of the plain walk on the same operands (up to
// the order in which products are summed), and the counters say which way each row went - also
// with the policy's gates, on a shape that takes each way.
#include "support/backend.hpp"
#include "support/knn_check.hpp"

#include <semirings/distances_elementwise.hpp>
#include <semirings/distances_expansion.hpp>
#include <semirings/distances_probability.hpp>
#include <spira/cuda/knn.cuh>
#include <spira/memory.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
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

/// The graph of `queries` (none: x itself, a self query with exclude_self) against the index x
/// through detail::knn_fused_run with the given gates.
template <class D>
graph run(const csr_matrix<float, std::int32_t>& x, const D& d, bool largest, std::int64_t k,
          detail::knn_fused_gates gates,
          std::optional<csr_view<float, std::int32_t>> queries = std::nullopt)
{
  cuda_resources res;
  const auto dev = to_device(res, x.view());
  std::optional<csr_matrix<float, std::int32_t>> dev_q;
  if (queries) {
    dev_q.emplace(to_device(res, *queries));
  }
  const auto q = dev_q ? dev_q->view() : dev.view();
  dense_matrix<float> values(res, q.rows, k);
  dense_matrix<std::int64_t> indices(res, q.rows, k);
  buffer<detail::knn_fused_paths> paths(res, 1, "path counters");
  detail::fill_zero_bytes(paths.data(), memory_space::device, sizeof(detail::knn_fused_paths), res);
  gates.paths = paths.data();
  detail::knn_fused_run(res, q, dev.view(), d, k, largest, !queries, static_cast<float*>(nullptr),
                        values.view(), indices.view(), {}, gates);
  graph out{{dense_matrix<std::int64_t>(host_resources{}, q.rows, k),
             dense_matrix<float>(host_resources{}, q.rows, k)}};
  const auto n = std::size_t(q.rows * k);
  copy(out.g.distances.view().data, memory_space::host, values.view().data, memory_space::device, n,
       res);
  copy(out.g.indices.view().data, memory_space::host, indices.view().data, memory_space::device, n,
       res);
  copy(&out.paths, memory_space::host, paths.data(), memory_space::device, 1, res);
  return out;
}

constexpr std::int64_t never = -1;  // a closed gate
constexpr std::int64_t always = 0;  // an open gate

/// Every row by the plain walk, all-zero query rows too.
detail::knn_fused_gates plain_walk()
{
  detail::knn_fused_gates g{never, never};
  g.zero_rows = false;
  return g;
}

/// Rows of x with more entries than a block has threads (they cannot go by their products), and
/// rows D refuses as queries for skipping (cosine: all-zero rows, which go by the index's all-zero
/// flags instead, or walk where that way is closed).
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
    const graph walk = run(x, d, largest, k, plain_walk());
    EXPECT_GE(walk.paths.walk, rows);
    EXPECT_EQ(walk.paths.walk_skipping + walk.paths.by_products + walk.paths.zero_rows, 0u);
    const graph skipping = run(x, d, largest, k, {never, always});
    EXPECT_GE(skipping.paths.walk_skipping, rows - refused);
    EXPECT_GE(skipping.paths.zero_rows, refused);
    EXPECT_EQ(skipping.paths.by_products, 0u);
    expect_same_graph_up_to_rounding(skipping.g, walk.g);
    const graph by_products = run(x, d, largest, k, {always, always});
    // (every row that may fits the tile)
    EXPECT_GE(by_products.paths.by_products, rows - refused - kinds.long_rows);
    EXPECT_GE(by_products.paths.walk_skipping, kinds.long_rows);
    EXPECT_GE(by_products.paths.zero_rows, refused);
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
  std::uint64_t walking = 0, zero = 0;
  for (std::int64_t i = 0; i < x.rows(); ++i) {
    std::int64_t products = 0;
    for (offset_t e = x.row_ptr()[i]; e < x.row_ptr()[i + 1]; ++e) {
      products += df[std::size_t(x.col_idx()[e])];
    }
    if (products == 0) {
      ++zero;  // an all-zero query row (cosine): by the index's all-zero flags
    } else if (!detail::knn_fused_gates::passes(cuda_pairwise_policy::knn_skip_per_product,
                                                products, x.rows())) {
      ++walking;
    }
  }
  ASSERT_GT(walking, 0u);
  ASSERT_LT(walking, std::uint64_t(x.rows()));  // the shape takes both ways
  const graph policy = run(x, distances::cosine{}, false, 15, {});
  EXPECT_EQ(policy.paths.walk, walking);
  EXPECT_EQ(policy.paths.zero_rows, zero);
  EXPECT_EQ(policy.paths.walk_skipping + policy.paths.by_products, x.rows() - walking - zero);
  expect_same_graph_up_to_rounding(policy.g,
                                   run(x, distances::cosine{}, false, 15, plain_walk()).g);
}

/// Cosine over dense float64 rows: 0 between two all-zero rows, 1 with one.
double cosine_oracle(const std::vector<double>& a, const std::vector<double>& b)
{
  double dot = 0, na = 0, nb = 0;
  for (std::size_t c = 0; c < a.size(); ++c) {
    dot += a[c] * b[c];
    na += a[c] * a[c];
    nb += b[c] * b[c];
  }
  if (na == 0 || nb == 0) {
    return na == nb ? 0.0 : 1.0;
  }
  return 1.0 - dot / std::sqrt(na * nb);
}

/// All-zero rows - empty, explicit zeros, -0.0 - as queries and in the index, with cosine over
/// float and double values: their pairs take the values cosine declares (0 between two such rows,
/// 1 with any other; spira/accuracy.hpp, zero_rows_distance) and none is queued for the direct
/// evaluation. The other rows share a column with their neighbours only (no near-duplicates, so
/// nothing else is queued either). Against the float64 oracle with the tie rule, and the indices of
/// the ties: the smallest. An all-zero query row goes by the index's all-zero flags (counted) or,
/// that way closed, walks; with k below and above the all-zero rows' count (the flags' way then
/// stops early, or reads the whole index), as a self query (d(i, i) stored) and not.
template <class V>
void all_zero_rows_are_not_queued()
{
  constexpr std::int64_t plain = 400;
  std::vector<offset_t> ptr{0};
  std::vector<std::int32_t> col;
  std::vector<V> val;
  std::vector<bool> zero;
  const auto add_row = [&](std::vector<std::int32_t> c, std::vector<V> v, bool is_zero) {
    col.insert(col.end(), c.begin(), c.end());
    val.insert(val.end(), v.begin(), v.end());
    ptr.push_back(offset_t(col.size()));
    zero.push_back(is_zero);
  };
  for (std::int64_t r = 0; r < plain; ++r) {
    if (r == 0 || r == 200) {
      add_row({}, {}, true);  // empty
    }
    if (r == 100) {
      add_row({3, 70}, {V(0), V(0)}, true);  // explicit zeros
    }
    if (r == 300) {
      add_row({5}, {V(-0.0)}, true);  // a negative zero
    }
    add_row({std::int32_t(r), std::int32_t(r + 1)}, {V(1 + r % 7), V(2 + r % 5)}, false);
  }
  add_row({}, {}, true);
  const std::int64_t n = std::int64_t(zero.size());
  const std::uint64_t zeros = std::uint64_t(std::count(zero.begin(), zero.end(), true));
  const auto x = make_csr<V, std::int32_t>(host_resources{}, n, plain + 1, ptr, col, val,
                                           csr_check::canonical);

  // The oracle: cosine over dense float64 copies, 0 between two all-zero rows, 1 with one.
  std::vector<std::vector<double>> dense(std::size_t(n), std::vector<double>(plain + 1, 0.0));
  for (std::int64_t r = 0; r < n; ++r) {
    for (offset_t e = ptr[std::size_t(r)]; e < ptr[std::size_t(r) + 1]; ++e) {
      dense[std::size_t(r)][std::size_t(col[std::size_t(e)])] = double(val[std::size_t(e)]);
    }
  }
  const auto exact = brute_force_distances(dense, dense, cosine_oracle);

  cuda_resources res;
  const auto dev = to_device(res, x.view());
  for (const std::int64_t k : {15, 3}) {
    for (const bool self : {true, false}) {
      for (const bool flags : {true, false}) {
        SCOPED_TRACE("k = " + std::to_string(k) + (self ? ", self query" : ", other query") +
                     (flags ? ", by the flags" : ", walking"));
        dense_matrix<V> values(res, n, k);
        dense_matrix<std::int64_t> indices(res, n, k);
        buffer<V> self_values(res, std::size_t(n), "self values");
        buffer<detail::knn_fused_paths> paths(res, 1, "path counters");
        detail::fill_zero_bytes(paths.data(), memory_space::device, sizeof(detail::knn_fused_paths),
                                res);
        detail::knn_fused_gates gates;
        gates.paths = paths.data();
        gates.zero_rows = flags;
        detail::knn_fused_run(res, dev.view(), dev.view(), distances::cosine{}, k, false, self,
                              self ? self_values.data() : static_cast<V*>(nullptr), values.view(),
                              indices.view(), {}, gates);
        std::vector<V> got_v(std::size_t(n * k));
        std::vector<V> got_self(static_cast<std::size_t>(n));
        knn_result g{dense_matrix<std::int64_t>(host_resources{}, n, k),
                     dense_matrix<float>(host_resources{}, n, k)};
        detail::knn_fused_paths counted{};
        copy(got_v.data(), memory_space::host, values.view().data, memory_space::device,
             got_v.size(), res);
        copy(g.indices.view().data, memory_space::host, indices.view().data, memory_space::device,
             got_v.size(), res);
        copy(&counted, memory_space::host, paths.data(), memory_space::device, 1, res);
        if (self) {
          copy(got_self.data(), memory_space::host, self_values.data(), memory_space::device,
               got_self.size(), res);
        }
        for (std::size_t e = 0; e < got_v.size(); ++e) {
          g.distances.view().data[e] = float(got_v[e]);
        }
        EXPECT_EQ(counted.deferred, 0u) << "pairs of all-zero rows were queued";
        EXPECT_EQ(counted.zero_rows, flags ? zeros : 0u);
        expect_knn_matches(g, exact, false, self, 1e-6, "all-zero rows");
        // An all-zero query row: the all-zero rows first (0), then the first rows by index (1).
        for (std::int64_t r = 0; r < n; ++r) {
          if (!zero[std::size_t(r)]) {
            continue;
          }
          std::vector<std::int64_t> want;
          for (const bool zeros_first : {true, false}) {
            for (std::int64_t j = 0; j < n && std::int64_t(want.size()) < k; ++j) {
              if ((!self || j != r) && zero[std::size_t(j)] == zeros_first) {
                want.push_back(j);
              }
            }
          }
          for (std::int64_t c = 0; c < k; ++c) {
            EXPECT_EQ(g.indices.view()(r, c), want[std::size_t(c)])
                << "row " << r << " position " << c;
          }
          if (self) {
            EXPECT_EQ(got_self[std::size_t(r)], V(0)) << "d(i, i) of all-zero row " << r;
          }
        }
      }
    }
  }
}

TEST(KnnFusedPaths, AllZeroRowsAreNotQueuedFloat)
{
  SPIRA_SKIP_WITHOUT_GPU();
  all_zero_rows_are_not_queued<float>();
}

TEST(KnnFusedPaths, AllZeroRowsAreNotQueuedDouble)
{
  SPIRA_SKIP_WITHOUT_GPU();
  all_zero_rows_are_not_queued<double>();
}

/// Pairs (query row i, index row j) of equal rows with finite values, j != i in a self query;
/// pairs of empty rows only where `empty`.
std::uint64_t equal_pairs(const csr_matrix<float, std::int32_t>& q,
                          const csr_matrix<float, std::int32_t>& x, bool self, bool empty)
{
  std::uint64_t n = 0;
  for (std::int64_t i = 0; i < q.rows(); ++i) {
    const offset_t a0 = q.row_ptr()[i], na = q.row_ptr()[i + 1] - a0;
    for (std::int64_t j = 0; j < x.rows(); ++j) {
      const offset_t b0 = x.row_ptr()[j];
      bool equal = (!self || i != j) && x.row_ptr()[j + 1] - b0 == na && (empty || na > 0);
      for (offset_t e = 0; equal && e < na; ++e) {
        const float v = q.values()[a0 + e];
        equal = q.col_idx()[a0 + e] == x.col_idx()[b0 + e] && v == x.values()[b0 + e] &&
                std::isfinite(v);
      }
      n += equal ? 1 : 0;
    }
  }
  return n;
}

/// Pairs of equal rows (spira/cuda/detail/knn_equal_rows.cuh): a group of 200 copies of one row,
/// smaller groups, all-zero rows, with cosine and manhattan. They take 0 without the queue: the
/// graph is that of the queue's direct evaluation (the gate closed; up to the rounding of the
/// trusted pairs' sums, whose order varies between runs, docs/knn.md), the pairs queued
/// are the closed gate's less exactly the pairs of equal rows (of empty rows too where the distance
/// declares no value for them: `empty_pairs_queued`), and the graph matches the float64 oracle.
/// Then rows the classes must not join - copies scaled by 2 (cosine: near duplicates, queued) and
/// copies holding an infinity (not finite: queued, NaN) - and queries that are not the index: the
/// same graph either way, fewer pairs queued.
template <class D>
void check_equal_rows(const D& d,
                      double (*exact)(const std::vector<double>&, const std::vector<double>&),
                      bool empty_pairs_queued)
{
  constexpr std::int64_t k = 15;
  random_options o;
  o.rows = 600;
  o.cols = 6000;
  o.mean_degree = 4;
  o.empty_row_fraction = 0.01;
  const auto base = random_csr<float, std::int32_t>(o);
  std::vector<std::int64_t> rows(std::size_t(base.rows()));
  std::iota(rows.begin(), rows.end(), std::int64_t{0});
  std::int64_t group_row = 0;
  while (base.row_ptr()[group_row + 1] - base.row_ptr()[group_row] < 2) {
    ++group_row;  // a row with two entries at least
  }
  rows.insert(rows.end(), 200, group_row);
  rows.insert(rows.end(), 20, group_row + 1);
  rows.insert(rows.end(), 5, group_row + 2);
  const auto x = copied_rows(base, rows);

  const graph closed = run(x, d, false, k, {.equal_rows = false});
  const graph open = run(x, d, false, k, {});
  // (a row that lost pairs to a full queue runs again and counts them twice)
  ASSERT_LT(closed.paths.deferred, std::uint64_t(detail::knn_deferred_capacity(x.rows())));
  expect_same_graph_up_to_rounding(open.g, closed.g);
  EXPECT_GT(closed.paths.deferred, 201u * 200u);
  EXPECT_EQ(closed.paths.deferred - open.paths.deferred,
            equal_pairs(x, x, true, empty_pairs_queued));
  const auto dense = densify(x).value;
  expect_knn_matches(open.g, brute_force_distances(dense, dense, exact), false, true, 1e-5,
                     "equal rows");

  // Rows the classes must not join: scaled copies of the group's row, and copies holding inf.
  std::vector<std::int64_t> more(rows);
  std::vector<float> scales(rows.size(), 1.0f);
  more.insert(more.end(), 10, group_row);
  scales.insert(scales.end(), 10, 2.0f);
  more.insert(more.end(), 6, group_row + 1);
  scales.insert(scales.end(), 6, std::numeric_limits<float>::infinity());
  const auto y = copied_rows(base, more, scales);
  const graph y_closed = run(y, d, false, k, {.equal_rows = false});
  const graph y_open = run(y, d, false, k, {});
  ASSERT_LT(y_closed.paths.deferred, std::uint64_t(detail::knn_deferred_capacity(y.rows())));
  expect_same_graph_up_to_rounding(y_open.g, y_closed.g);
  // (an index row with inf refuses cosine's disjoint value: the pairs of empty rows are queued)
  EXPECT_EQ(y_closed.paths.deferred - y_open.paths.deferred, equal_pairs(y, y, true, true));

  // Queries that are not the index: rows of the index and further copies of the group's row.
  std::vector<std::int64_t> some(rows.begin(), rows.begin() + 100);
  some.insert(some.end(), 30, group_row);
  const auto q = copied_rows(base, some);
  const graph q_closed = run(x, d, false, k, {.equal_rows = false}, q.view());
  const graph q_open = run(x, d, false, k, {}, q.view());
  ASSERT_LT(q_closed.paths.deferred, std::uint64_t(detail::knn_deferred_capacity(q.rows())));
  expect_same_graph_up_to_rounding(q_open.g, q_closed.g);
  EXPECT_GT(q_closed.paths.deferred, 30u * 201u);
  EXPECT_EQ(q_closed.paths.deferred - q_open.paths.deferred,
            equal_pairs(q, x, false, empty_pairs_queued));
}

double manhattan_oracle(const std::vector<double>& a, const std::vector<double>& b)
{
  double s = 0;
  for (std::size_t c = 0; c < a.size(); ++c) {
    s += std::abs(a[c] - b[c]);
  }
  return s;
}

TEST(KnnFusedPaths, EqualRowsTakeZeroCosine)
{
  SPIRA_SKIP_WITHOUT_GPU();
  check_equal_rows(distances::cosine{}, cosine_oracle, false);
}

TEST(KnnFusedPaths, EqualRowsTakeZeroManhattan)
{
  SPIRA_SKIP_WITHOUT_GPU();
  check_equal_rows(distances::manhattan{}, manhattan_oracle, true);
}

/// Equal values are not enough: the direct form also reads the rows' norms, which jensenshannon
/// takes from the rows as given, before normalising them. A row holding NaN normalises to the
/// values of an explicit zero; its norm (NaN) keeps it out of that row's class, and the pairs of
/// the two explicit zeros (equal values, equal norms) still take 0. Against the closed gate.
TEST(KnnFusedPaths, EqualRowsNeedEqualNorms)
{
  SPIRA_SKIP_WITHOUT_GPU();
  random_options o;
  o.rows = 100;
  o.cols = 200;
  const auto base = random_csr<float, std::int32_t>(o);
  std::vector<offset_t> ptr(base.row_ptr(), base.row_ptr() + base.rows() + 1);
  std::vector<std::int32_t> col(base.col_idx(), base.col_idx() + base.nnz());
  std::vector<float> val(base.values(), base.values() + base.nnz());
  for (const float v : {std::numeric_limits<float>::quiet_NaN(), 0.0f, 0.0f,
                        std::numeric_limits<float>::quiet_NaN()}) {
    col.push_back(5);
    val.push_back(v);
    ptr.push_back(offset_t(col.size()));
  }
  const auto x = make_csr<float, std::int32_t>(host_resources{}, base.rows() + 4, base.cols(), ptr,
                                               col, val, csr_check::canonical);
  const graph closed = run(x, distances::jensenshannon{}, false, 15, {.equal_rows = false});
  const graph open = run(x, distances::jensenshannon{}, false, 15, {});
  expect_same_graph_up_to_rounding(open.g, closed.g);
  EXPECT_LT(open.paths.deferred, closed.paths.deferred);
}

}  // namespace
}  // namespace spira::test
