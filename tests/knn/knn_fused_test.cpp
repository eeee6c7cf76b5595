// The fused CUDA k-NN (top-k kept by the distance kernel, spira/cuda/knn.cuh) through
// spira::knn_graph: against the float64 dense oracle, against the tiled algorithm, on inputs that
// make every distance a candidate (many buffer flushes), with ties, duplicates and exclude_self,
// and its argument errors. The CUDA tests skip with their reason without a GPU.
#include <spira/spira.hpp>

#include "support/backend.hpp"
#include "support/knn_check.hpp"
#include "support/oracle.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace spira {
namespace {

#define SPIRA_SKIP_WITHOUT_GPU() SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources)

template <class V, class I>
void check_metric(metric m, std::int64_t k, bool self, const char* label)
{
  test::random_options o;
  o.rows = 4000;  // more index rows than one accumulator tile (3,072 double sums)
  o.cols = 300;
  o.mean_degree = 10;
  o.seed = 7 + std::uint32_t(m);
  const csr_matrix<V, I> index = test::random_csr<V, I>(o);
  test::random_options oq = o;
  oq.rows = 48;
  oq.seed = 99;
  const csr_matrix<V, I> queries = test::random_csr<V, I>(oq);
  knn_params p{.k = k, .metric = m, .exclude_self = self};
  p.algo = knn_algo::fused;
  p.strategy = pairwise_strategy::intersection;
  const knn_result g = self ? knn_graph<V, I>(cuda_resources{}, index.view(), std::nullopt, p)
                            : knn_graph<V, I>(cuda_resources{}, index.view(), queries.view(), p);
  const auto di = test::densify(index);
  auto dq = self ? di : test::densify(queries);
  if (self) {  // the first 64 query rows are checked against the oracle
    dq.rows = 64;
    dq.value.resize(64);
    dq.stored.resize(64);
  }
  const auto exact = test::oracle::pairwise(m, dq, di);
  knn_result head{dense_matrix<std::int64_t>(host_resources{}, std::int64_t(exact.size()), k),
                  dense_matrix<float>(host_resources{}, std::int64_t(exact.size()), k)};
  for (std::int64_t r = 0; r < std::int64_t(exact.size()); ++r) {
    std::copy_n(g.indices.view().row(r), k, head.indices.view().row(r));
    std::copy_n(g.distances.view().row(r), k, head.distances.view().row(r));
  }
  // The distances come back as float32 whatever V is.
  test::expect_knn_matches(head, exact, is_similarity(m), self, 2e-5, label);
}

TEST(KnnFused, EveryIntersectionMetricMatchesOracle)
{
  SPIRA_SKIP_WITHOUT_GPU();
  const metric metrics[] = {
      metric::cosine,      metric::euclidean,     metric::sqeuclidean, metric::manhattan,
      metric::chebyshev,   metric::minkowski,     metric::canberra,    metric::braycurtis,
      metric::hamming,     metric::jaccard,       metric::dice,        metric::russellrao,
      metric::correlation, metric::jensenshannon, metric::hellinger,   metric::inner_product};
  for (metric m : metrics) {
    SCOPED_TRACE(to_string(m));
    check_metric<float, std::int32_t>(m, 15, false, "queries, k = 15");
  }
}

TEST(KnnFused, SelfGraphWithExcludeSelfAndLargeK)
{
  SPIRA_SKIP_WITHOUT_GPU();
  for (std::int64_t k : {1, 100, 1024}) {
    SCOPED_TRACE(k);
    check_metric<float, std::int32_t>(metric::cosine, k, true, "self, cosine");
    check_metric<float, std::int32_t>(metric::manhattan, k, true, "self, manhattan");
  }
  check_metric<float, std::int32_t>(metric::inner_product, 100, true, "self, inner_product");
}

TEST(KnnFused, DoubleAndInt64)
{
  SPIRA_SKIP_WITHOUT_GPU();
  check_metric<double, std::int64_t>(metric::euclidean, 15, false, "double/int64 euclidean");
  check_metric<double, std::int64_t>(metric::chebyshev, 15, true, "double/int64 chebyshev");
  check_metric<double, std::int32_t>(metric::jensenshannon, 31, false, "double/int32 js");
  check_metric<float, std::int64_t>(metric::cosine, 33, true, "float/int64 cosine");
}

TEST(KnnFused, EqualsTiledIntersection)
{
  SPIRA_SKIP_WITHOUT_GPU();
  test::random_options o;
  o.rows = 5000;
  o.cols = 2000;
  o.mean_degree = 20;
  const auto index = test::random_csr<float, std::int32_t>(o);
  for (metric m : {metric::cosine, metric::manhattan, metric::chebyshev, metric::inner_product}) {
    for (std::int64_t k : {15, 1000}) {
      SCOPED_TRACE(std::string(to_string(m)) + " k = " + std::to_string(k));
      knn_params p{.k = k, .metric = m, .exclude_self = true};
      p.strategy = pairwise_strategy::intersection;
      p.algo = knn_algo::fused;
      const auto fused = knn_graph(cuda_resources{}, index.view(), std::nullopt, p);
      p.algo = knn_algo::tiled;
      p.query_tile = 700;  // several query tiles
      const auto tiled =
          knn_graph<float, std::int32_t>(cuda_resources{}, index.view(), std::nullopt, p);
      // Both compute every distance with the same code; float atomic sums may round the last
      // bit differently, so near-ties (within 1e-6) may come in either order.
      const float tol = 1e-6f;
      for (std::int64_t r = 0; r < o.rows; ++r) {
        const float* fd = fused.distances.view().row(r);
        const float* td = tiled.distances.view().row(r);
        for (std::int64_t c = 0; c < k; ++c) {
          ASSERT_NEAR(fd[c], td[c], tol * std::max(1.0f, std::abs(td[c])))
              << "row " << r << " pos " << c;
          if (fused.indices.view()(r, c) == tiled.indices.view()(r, c)) {
            continue;
          }
          const bool near_tie = (c > 0 && std::abs(td[c - 1] - td[c]) <= tol) ||
                                (c + 1 < k && std::abs(td[c + 1] - td[c]) <= tol);
          ASSERT_TRUE(near_tie) << "row " << r << " pos " << c << ": " << fused.indices.view()(r, c)
                                << " vs " << tiled.indices.view()(r, c) << " at " << td[c];
        }
      }
    }
  }
}

/// One query and n index rows whose distances improve with the index: every distance is a
/// candidate when it is computed, so the kernel's buffer fills and flushes all the time.
TEST(KnnFused, EveryDistanceACandidate)
{
  SPIRA_SKIP_WITHOUT_GPU();
  const std::int64_t n = 10000;
  std::vector<offset_t> ptr(n + 1);
  std::vector<std::int32_t> col(n, 0);
  std::vector<float> val(n);
  for (std::int64_t j = 0; j < n; ++j) {
    ptr[j + 1] = j + 1;
    val[j] = float(j + 1);
  }
  const auto index =
      make_csr<float, std::int32_t>(host_resources{}, n, 4, ptr, col, val, csr_check::canonical);
  const std::vector<offset_t> qptr{0, 1};
  const auto query =
      make_csr<float, std::int32_t>(host_resources{}, 1, 4, qptr, std::vector<std::int32_t>{0},
                                    std::vector<float>{1.0f}, csr_check::canonical);
  knn_params p{.k = 1000, .metric = metric::inner_product};
  p.algo = knn_algo::fused;
  p.strategy = pairwise_strategy::intersection;
  const auto g = knn_graph<float, std::int32_t>(cuda_resources{}, index.view(), query.view(), p);
  for (std::int64_t c = 0; c < p.k; ++c) {
    ASSERT_EQ(g.indices.view()(0, c), n - 1 - c) << c;
    ASSERT_EQ(g.distances.view()(0, c), float(n - c)) << c;
  }
  // Equal distances everywhere (manhattan from an empty query to rows of equal sums): the
  // smaller index wins, so the first k rows come in order.
  std::fill(val.begin(), val.end(), 2.0f);
  const auto flat =
      make_csr<float, std::int32_t>(host_resources{}, n, 4, ptr, col, val, csr_check::canonical);
  const std::vector<offset_t> eptr{0, 0};
  const auto empty =
      make_csr<float, std::int32_t>(host_resources{}, 1, 4, eptr, std::vector<std::int32_t>{},
                                    std::vector<float>{}, csr_check::canonical);
  p.metric = metric::manhattan;
  const auto t = knn_graph<float, std::int32_t>(cuda_resources{}, flat.view(), empty.view(), p);
  for (std::int64_t c = 0; c < p.k; ++c) {
    ASSERT_EQ(t.indices.view()(0, c), c);
    ASSERT_EQ(t.distances.view()(0, c), 2.0f);
  }
}

TEST(KnnFused, ExcludeSelfKeepsDuplicates)
{
  SPIRA_SKIP_WITHOUT_GPU();
  // Rows 2i and 2i + 1 are equal: each is the other's nearest neighbour at distance 0.
  test::random_options o;
  o.rows = 500;
  o.cols = 80;
  o.empty_row_fraction = 0;
  const auto base = test::random_csr<float, std::int32_t>(o);
  std::vector<std::int64_t> rows;
  for (std::int64_t i = 0; i < base.rows(); ++i) {
    rows.insert(rows.end(), {i, i});
  }
  const auto index = test::copied_rows(base, rows);
  knn_params p{.k = 3, .metric = metric::euclidean, .exclude_self = true};
  p.algo = knn_algo::fused;
  p.strategy = pairwise_strategy::intersection;
  const auto g = knn_graph<float, std::int32_t>(cuda_resources{}, index.view(), std::nullopt, p);
  for (std::int64_t r = 0; r < index.rows(); ++r) {
    ASSERT_EQ(g.indices.view()(r, 0), r ^ 1) << "row " << r;
    ASSERT_NEAR(g.distances.view()(r, 0), 0.0f, 1e-5f) << "row " << r;
  }
}

/// Sparse rows over many columns: most pairs share no column, so for cosine (distance 1) and
/// inner_product (0) the fused kernel ranks the first k such pairs of a row and skips the rest
/// (spira/accuracy.hpp, disjoint_distance). Three accumulator tiles of index rows, k from below to
/// far above the pairs a row shares, all-zero rows (accepted in the index: the direct form gives 1
/// against a nonzero row; refused as queries for skipping, and ranked with cosine's declared
/// zero_rows_distance: 0 with each other, 1 with the others), and an index with
/// one row of tiny values that cosine refuses (nothing skipped in that call); equal and
/// near-duplicate rows, whose pairs the accuracy guard queues. Most rows go by their products (few
/// against the index's rows), the long ones walk the index. Against the tiled
/// algorithm, which evaluates every pair: the same graph up to the rounding of the atomic sums, and
/// exactly the same indices where the distance is the disjoint one (ties broken by index).
TEST(KnnFused, DisjointPairsSkipped)
{
  SPIRA_SKIP_WITHOUT_GPU();
  test::random_options o;
  o.rows = 15000;
  o.cols = 60000;
  o.mean_degree = 3;
  o.empty_row_fraction = 0.01;
  const auto base = test::random_csr<float, std::int32_t>(o);
  std::vector<std::int64_t> rows(std::size_t(base.rows()));
  std::iota(rows.begin(), rows.end(), std::int64_t{0});
  // Equal rows (pairs the accuracy guard queues) and near-duplicates.
  rows.insert(rows.end(), {10, 10, 10, 20, 20});
  std::vector<float> scales(rows.size(), 1.0f);
  scales.back() = 1.0f + 0x1p-20f;
  const auto index = test::copied_rows(base, rows, scales);
  scales[5] = 1e-30f;  // |y|^4 underflows: cosine's disjoint_index refuses the row
  const auto tiny = test::copied_rows(base, rows, scales);
  o.signed_values = true;
  const auto signed_index = test::random_csr<float, std::int32_t>(o);
  struct run {
    metric m;
    const csr_matrix<float, std::int32_t>* x;
    float disjoint;
    const char* label;
  };
  for (const run& c : {run{metric::cosine, &index, 1.0f, "cosine"},
                       run{metric::cosine, &tiny, 1.0f, "cosine, a tiny row"},
                       run{metric::inner_product, &signed_index, 0.0f, "inner_product"}}) {
    for (const std::int64_t k : {5, 15, 200, 1000}) {
      SCOPED_TRACE(std::string(c.label) + ", k = " + std::to_string(k));
      knn_params p{.k = k, .metric = c.m, .exclude_self = true};
      p.strategy = pairwise_strategy::intersection;
      p.algo = knn_algo::fused;
      const auto fused = knn_graph(cuda_resources{}, c.x->view(), std::nullopt, p);
      p.algo = knn_algo::tiled;
      const auto tiled = knn_graph(cuda_resources{}, c.x->view(), std::nullopt, p);
      test::expect_same_graph_up_to_rounding(fused, tiled);
      std::int64_t at_disjoint = 0;
      for (std::int64_t r = 0; r < c.x->rows(); ++r) {
        for (std::int64_t q = 0; q < k; ++q) {
          if (tiled.distances.view()(r, q) == c.disjoint) {
            ++at_disjoint;
            ASSERT_EQ(fused.distances.view()(r, q), c.disjoint) << "row " << r << " pos " << q;
            ASSERT_EQ(fused.indices.view()(r, q), tiled.indices.view()(r, q))
                << "row " << r << " pos " << q;
          }
        }
      }
      EXPECT_GT(at_disjoint, c.x->rows() * k / 5);  // much of the graph: ties with skipped pairs
    }
  }
}

/// A random base of 400 rows (150 columns, about 12 entries each), the list of its rows in order
/// (to which the tests append copies) and its first `n` rows with at least 4 entries.
struct rows_to_copy {
  csr_matrix<float, std::int32_t> base;
  std::vector<std::int64_t> rows;
  std::vector<std::int64_t> copied;
};

rows_to_copy random_rows_to_copy(std::uint32_t seed, std::size_t n)
{
  test::random_options o;
  o.rows = 400;
  o.cols = 150;
  o.mean_degree = 12;
  o.seed = seed;
  rows_to_copy r{test::random_csr<float, std::int32_t>(o), {}, {}};
  r.rows.resize(std::size_t(r.base.rows()));
  std::iota(r.rows.begin(), r.rows.end(), std::int64_t{0});
  for (std::int64_t i = 0; r.copied.size() < n; ++i) {
    if (r.base.row_ptr()[i + 1] - r.base.row_ptr()[i] >= 4) {
      r.copied.push_back(i);
    }
  }
  return r;
}

/// Near-duplicate rows (a row with one value scaled by 1 + c 2^-20): their cosine and correlation
/// distances are differences of nearly equal numbers, which the accuracy guard does not trust, so
/// the fused kernel queues those pairs and merges their direct values afterwards. A group of 6
/// copies leaves a few queued pairs per row (merged by ranks), a group of 300 more than fit beside
/// the list in the block's threads (merged by sorting).
TEST(KnnFused, NearDuplicatesQueuedByTheAccuracyGuard)
{
  SPIRA_SKIP_WITHOUT_GPU();
  auto [base, rows, copied] = random_rows_to_copy(21, 2);
  std::vector<float> scales(rows.size(), 1.0f);
  for (int c = 1; c <= 5; ++c) {
    rows.push_back(copied[0]);
    scales.push_back(1.0f + float(c) * 0x1p-20f);
  }
  for (int c = 1; c <= 299; ++c) {
    rows.push_back(copied[1]);
    scales.push_back(1.0f + float(c) * 0x1p-21f);
  }
  const auto index = test::copied_rows(base, rows, scales);
  const auto dense = test::densify(index);
  for (const metric m : {metric::cosine, metric::correlation}) {
    for (const std::int64_t k : {std::int64_t(15), std::int64_t(100), std::int64_t(200)}) {
      SCOPED_TRACE(std::string(to_string(m)) + ", k = " + std::to_string(k));
      knn_params p{.k = k, .metric = m};
      p.algo = knn_algo::fused;
      p.strategy = pairwise_strategy::intersection;
      const knn_result g = knn_graph(cuda_resources{}, index.view(), std::nullopt, p);
      test::expect_knn_matches(g, test::oracle::pairwise(m, dense, dense), false, false, 2e-5,
                               "near-duplicates");
      p.algo = knn_algo::tiled;
      test::expect_same_graph_up_to_rounding(
          g, knn_graph(cuda_resources{}, index.view(), std::nullopt, p));
    }
  }
}

/// Two groups of 250 equal rows: every pair inside a group has the same value, which the accuracy
/// guard does not trust (cosine and the expanded euclidean cancel), so one launch queues about
/// 125,000 pairs, more than its queue holds: the rows that lost pairs run again with a larger
/// queue, the others are resolved from the first launch. Each row's neighbours are the first k
/// members of its group (equal values: the smaller index first; the point itself first when it
/// is not excluded).
TEST(KnnFused, EqualRowsOverflowTheDeferredQueue)
{
  SPIRA_SKIP_WITHOUT_GPU();
  auto [base, rows, copied] = random_rows_to_copy(23, 2);
  std::vector<std::vector<std::int64_t>> groups{{copied[0]}, {copied[1]}};
  for (auto& group : groups) {
    while (group.size() < 250) {
      group.push_back(std::int64_t(rows.size()));
      rows.push_back(group.front());
    }
  }
  const auto index = test::copied_rows(base, rows, std::vector<float>(rows.size(), 1.0f));
  ASSERT_GT(2 * 250 * 249, detail::knn_deferred_capacity(index.rows()));
  const auto dense = test::densify(index);
  constexpr std::int64_t k = 15;
  for (const metric m : {metric::cosine, metric::euclidean}) {
    for (const bool self : {false, true}) {
      SCOPED_TRACE(std::string(to_string(m)) + (self ? ", exclude_self" : ""));
      knn_params p{.k = k, .metric = m, .exclude_self = self};
      p.algo = knn_algo::fused;
      p.strategy = pairwise_strategy::intersection;
      const knn_result g = knn_graph(cuda_resources{}, index.view(), std::nullopt, p);
      test::expect_knn_matches(g, test::oracle::pairwise(m, dense, dense), false, self, 2e-5,
                               "equal rows");
      for (const auto& group : groups) {
        for (const std::int64_t r : group) {
          // Without exclude_self the point comes first (docs/knn.md), then the others.
          std::vector<std::int64_t> expected;
          if (!self) {
            expected.push_back(r);
          }
          for (const std::int64_t j : group) {  // in increasing order
            if (j != r && std::int64_t(expected.size()) < k) {
              expected.push_back(j);
            }
          }
          for (std::int64_t c = 0; c < k; ++c) {
            ASSERT_EQ(g.indices.view()(r, c), expected[std::size_t(c)]) << "row " << r;
            ASSERT_EQ(g.distances.view()(r, c), g.distances.view()(r, 0)) << "row " << r;
          }
        }
      }
    }
  }
}

/// With a progress callback the one launch reports while it runs, in order, up to every row; the
/// result is the same.
TEST(KnnFused, ProgressGivesTheSameGraph)
{
  SPIRA_SKIP_WITHOUT_GPU();
  test::random_options o;
  o.rows = 40000;
  o.cols = 500;
  o.mean_degree = 6;
  const auto index = test::random_csr<float, std::int32_t>(o);
  knn_params p{.k = 10, .metric = metric::cosine, .exclude_self = true};
  p.algo = knn_algo::fused;
  p.strategy = pairwise_strategy::intersection;
  const auto whole = knn_graph(cuda_resources{}, index.view(), std::nullopt, p);
  std::vector<std::int64_t> done;
  p.progress = [&](std::int64_t finished, std::int64_t total) {
    EXPECT_EQ(total, o.rows);
    done.push_back(finished);
  };
  const auto chunked = knn_graph(cuda_resources{}, index.view(), std::nullopt, p);
  ASSERT_GE(done.size(), 1u);
  EXPECT_LE(done.size(), std::size_t(detail::knn_policy::progress_steps) + 1);
  EXPECT_EQ(std::adjacent_find(done.begin(), done.end(), std::greater_equal<>{}), done.end())
      << "progress must increase strictly";
  EXPECT_EQ(done.back(), o.rows);
  test::expect_same_graph_up_to_rounding(whole, chunked);

  // A few query rows.
  test::random_options qo = o;
  qo.rows = 37;
  qo.seed = o.seed + 1;
  const auto queries = test::random_csr<float, std::int32_t>(qo);
  p.exclude_self = false;
  done.clear();
  p.progress = [&](std::int64_t finished, std::int64_t total) {
    EXPECT_EQ(total, qo.rows);
    done.push_back(finished);
  };
  const auto few = knn_graph(cuda_resources{}, index.view(), queries.view(), p);
  // How many reports come before the end depends on the kernel's speed (one on an idle GPU, more
  // under compute-sanitizer); they increase and end with the whole.
  ASSERT_GE(done.size(), 1u);
  EXPECT_LE(done.size(), std::size_t(detail::knn_policy::progress_steps) + 1);
  EXPECT_EQ(std::adjacent_find(done.begin(), done.end(), std::greater_equal<>{}), done.end());
  EXPECT_EQ(done.back(), qo.rows);
  p.progress = nullptr;
  const auto few_whole = knn_graph(cuda_resources{}, index.view(), queries.view(), p);
  test::expect_same_graph_up_to_rounding(few, few_whole);
}

/// A progress callback that throws ends the call with its exception (the launch is stopped or has
/// ended, nothing is left queued), and the next call gives the whole graph.
TEST(KnnFused, ProgressThatThrowsEndsTheCall)
{
  SPIRA_SKIP_WITHOUT_GPU();
  test::random_options o;
  o.rows = 60000;
  o.cols = 400;
  o.mean_degree = 12;
  const auto index = test::random_csr<float, std::int32_t>(o);
  knn_params p{.k = 10, .metric = metric::cosine};
  p.algo = knn_algo::fused;
  p.strategy = pairwise_strategy::intersection;
  struct stop_now : std::runtime_error {
    stop_now() : std::runtime_error("stop") {}
  };
  int calls = 0;
  p.progress = [&](std::int64_t, std::int64_t) {
    ++calls;
    throw stop_now{};
  };
  EXPECT_THROW((void)knn_graph(cuda_resources{}, index.view(), std::nullopt, p), stop_now);
  EXPECT_EQ(calls, 1);
  p.progress = nullptr;
  const auto whole = knn_graph(cuda_resources{}, index.view(), std::nullopt, p);
  synchronize(cuda_resources{});
  const auto again = knn_graph(cuda_resources{}, index.view(), std::nullopt, p);
  test::expect_same_graph_up_to_rounding(whole, again);
}

TEST(KnnFused, ArgumentErrors)
{
  const auto on_gpu = [](csr_view<float, std::int32_t> m, const knn_params& p) {
    return knn_graph<float, std::int32_t>(cuda_resources{}, m, std::nullopt, p);
  };
  test::random_options o;
  const auto index = test::random_csr<float, std::int32_t>(o);
  knn_params p{.k = 5, .metric = metric::cosine};
  p.algo = knn_algo::fused;
  const auto on_host = [](csr_view<float, std::int32_t> m, const knn_params& p) {
    return knn_graph<float, std::int32_t>(host_resources{}, m, std::nullopt, p);
  };
  EXPECT_THROW((void)on_host(index.view(), p), invalid_argument);
  SPIRA_SKIP_WITHOUT_GPU();
  p.strategy = pairwise_strategy::hybrid;
  EXPECT_THROW((void)on_gpu(index.view(), p), invalid_argument);
  test::random_options big = o;
  big.rows = 2000;
  const auto large = test::random_csr<float, std::int32_t>(big);
  knn_params q{.k = 1025, .metric = metric::cosine};
  q.algo = knn_algo::fused;
  EXPECT_THROW((void)on_gpu(large.view(), q), invalid_argument);
  q.algo = knn_algo::automatic;  // falls back to tiles for k > 1,024
  const auto g = knn_graph<float, std::int32_t>(cuda_resources{}, large.view(), std::nullopt, q);
  EXPECT_EQ(g.indices.cols(), 1025);
}

}  // namespace
}  // namespace spira
