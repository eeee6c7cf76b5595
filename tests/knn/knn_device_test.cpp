// knn_graph on the GPU with operands in device memory: the graph comes back in device memory and
// is the graph of the same operands in host memory (against the float64 dense oracle), with both
// algorithms (fused, and tiles small enough that the running merge on the device runs many times),
// for a self query with each point first, with exclude_self, with separate queries and with k = n;
// and the errors of device operands (mixed spaces, non-canonical rows, negative values); index
// tiles prepared once for every query tile give the graph of tiles prepared per distance tile, bit
// for bit. The tests skip with their reason without a GPU.
#include <spira/spira.hpp>

#include "support/backend.hpp"
#include "support/knn_check.hpp"
#include "support/oracle.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace spira {
namespace {

#define SPIRA_SKIP_WITHOUT_GPU() SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources)

/// A host copy of a device graph.
knn_result to_host(const knn_result& g)
{
  const host_resources host{};
  knn_result out{dense_matrix<std::int64_t>(host, g.indices.rows(), g.indices.cols()),
                 dense_matrix<float>(host, g.distances.rows(), g.distances.cols())};
  const std::size_t n = std::size_t(g.indices.rows() * g.indices.cols());
  copy(out.indices.data(), memory_space::host, g.indices.data(), g.indices.space(), n,
       cuda_resources{});
  copy(out.distances.data(), memory_space::host, g.distances.data(), g.distances.space(), n,
       cuda_resources{});
  return out;
}

/// The first `rows` rows of a graph.
knn_result head(const knn_result& g, std::int64_t rows)
{
  const std::int64_t k = g.indices.cols();
  knn_result out{dense_matrix<std::int64_t>(host_resources{}, rows, k),
                 dense_matrix<float>(host_resources{}, rows, k)};
  std::copy_n(g.indices.data(), rows * k, out.indices.data());
  std::copy_n(g.distances.data(), rows * k, out.distances.data());
  return out;
}

enum class mode { self_first, exclude_self, separate_queries };

const char* name(mode m)
{
  return m == mode::self_first     ? "self first"
         : m == mode::exclude_self ? "exclude_self"
                                   : "queries";
}

TEST(KnnDevice, DeviceOperandsGiveTheGraphInDeviceMemory)
{
  SPIRA_SKIP_WITHOUT_GPU();
  const cuda_resources res{};
  test::random_options o;
  o.rows = 1500;
  o.cols = 400;
  o.mean_degree = 12;
  o.small_integers = true;  // equal values, so that ties occur
  const auto index = test::random_csr<float, std::int32_t>(o);
  test::random_options oq = o;
  oq.rows = 64;
  oq.seed = 5;
  const auto queries = test::random_csr<float, std::int32_t>(oq);
  const auto index_dev = to_device(res, index.view());
  const auto queries_dev = to_device(res, queries.view());
  const auto di = test::densify(index);
  auto head_rows = test::densify(index);
  head_rows.rows = 64;
  head_rows.value.resize(64);
  head_rows.stored.resize(64);
  const auto dq = test::densify(queries);
  for (metric m : {metric::euclidean, metric::cosine, metric::jensenshannon, metric::inner_product,
                   metric::manhattan, metric::correlation}) {
    for (const bool tiled : {false, true}) {
      for (const mode md : {mode::self_first, mode::exclude_self, mode::separate_queries}) {
        const std::string label =
            std::string(to_string(m)) + (tiled ? " tiled " : " automatic ") + name(md);
        SCOPED_TRACE(label);
        knn_params p{.k = 15, .metric = m, .exclude_self = md == mode::exclude_self};
        if (tiled) {
          p.query_tile = 200;
          p.index_tile = 300;
        }
        const bool separate = md == mode::separate_queries;
        const knn_result g_dev =
            separate ? knn_graph<float, std::int32_t>(res, index_dev.view(), queries_dev.view(), p)
                     : knn_graph<float, std::int32_t>(res, index_dev.view(), std::nullopt, p);
        ASSERT_EQ(g_dev.indices.space(), memory_space::device);
        ASSERT_EQ(g_dev.distances.space(), memory_space::device);
        const knn_result g = to_host(g_dev);
        const auto exact = test::oracle::pairwise(m, separate ? dq : head_rows, di);
        if (separate) {
          test::expect_knn_matches(g, exact, is_similarity(m), false, 2e-5, label.c_str());
        } else {
          test::expect_knn_matches(head(g, 64), exact, is_similarity(m), md == mode::exclude_self,
                                   2e-5, label.c_str());
        }
        // The same operands in host memory: the same graph, in host memory.
        const knn_result g_host =
            separate ? knn_graph<float, std::int32_t>(res, index.view(), queries.view(), p)
                     : knn_graph<float, std::int32_t>(res, index.view(), std::nullopt, p);
        ASSERT_EQ(g_host.indices.space(), memory_space::host);
        for (std::int64_t e = 0; e < g.indices.rows() * g.indices.cols(); ++e) {
          ASSERT_NEAR(g.distances.data()[e], g_host.distances.data()[e],
                      1e-6 * std::max(1.0f, std::abs(g_host.distances.data()[e])))
              << "entry " << e;
        }
      }
    }
  }
}

/// Exact copies of each row: without exclude_self each point comes first among its copies (they
/// tie at its distance), on device operands, with both algorithms; k = n lists every row.
TEST(KnnDevice, EachPointFirstAmongItsCopiesAndKEqualToN)
{
  SPIRA_SKIP_WITHOUT_GPU();
  const cuda_resources res{};
  test::random_options o;
  o.rows = 60;
  o.cols = 50;
  o.mean_degree = 8;
  o.empty_row_fraction = 0;
  const auto base = test::random_csr<double, std::int64_t>(o);
  // Rows 0..59 and their copies 60..119.
  std::vector<std::int64_t> rows;
  for (int copy_no = 0; copy_no < 2; ++copy_no) {
    for (std::int64_t i = 0; i < base.rows(); ++i) {
      rows.push_back(i);
    }
  }
  const auto twice = test::copied_rows(base, rows);
  const auto dev = to_device(res, twice.view());
  const std::int64_t n = twice.rows();
  for (metric m : {metric::euclidean, metric::cosine, metric::manhattan}) {
    for (const bool tiled : {false, true}) {
      for (const std::int64_t k : {std::int64_t{2}, n}) {
        SCOPED_TRACE(std::string(to_string(m)) + (tiled ? " tiled" : " automatic") +
                     " k = " + std::to_string(k));
        knn_params p{.k = k, .metric = m};
        if (tiled) {
          p.query_tile = 25;
          p.index_tile = 35;
        }
        const knn_result g =
            to_host(knn_graph<double, std::int64_t>(res, dev.view(), std::nullopt, p));
        for (std::int64_t i = 0; i < n; ++i) {
          const std::int64_t copy_of = i < n / 2 ? i + n / 2 : i - n / 2;
          // Empty-row cosine distances are not 0 to themselves; every row here has entries.
          ASSERT_EQ(g.indices.view()(i, 0), i) << "row " << i;
          ASSERT_EQ(g.indices.view()(i, 1), copy_of) << "row " << i;
          if (k == n) {
            std::vector<std::int64_t> all(g.indices.view().row(i), g.indices.view().row(i) + n);
            std::sort(all.begin(), all.end());
            for (std::int64_t j = 0; j < n; ++j) {
              ASSERT_EQ(all[j], j) << "row " << i;
            }
          }
        }
      }
    }
  }
}

TEST(KnnDevice, ErrorsOfDeviceOperands)
{
  SPIRA_SKIP_WITHOUT_GPU();
  const cuda_resources res{};
  test::random_options o;
  o.rows = 30;
  o.cols = 20;
  o.signed_values = true;
  const auto index = test::random_csr<float, std::int32_t>(o);
  const auto dev = to_device(res, index.view());
  const knn_params p{.k = 3, .metric = metric::jensenshannon};
  const auto message_of = [](const auto& call) -> std::string {
    try {
      call();
    } catch (const invalid_argument& e) {
      return e.what();
    }
    return "(no invalid_argument thrown)";
  };
  // Both operands in one space.
  const std::string mixed = message_of(
      [&] { (void)knn_graph<float, std::int32_t>(res, dev.view(), index.view(), {.k = 3}); });
  EXPECT_NE(mixed.find("same space"), std::string::npos) << mixed;
  // A negative value is reported at the user's row, as on the host.
  const std::string negative =
      message_of([&] { (void)knn_graph<float, std::int32_t>(res, dev.view(), std::nullopt, p); });
  EXPECT_NE(negative.find("the index has -"), std::string::npos) << negative;
  EXPECT_NE(negative.find("at row "), std::string::npos) << negative;
  // Device operands on the host backend are refused.
  const std::string host = message_of([&] {
    (void)knn_graph<float, std::int32_t>(host_resources{}, dev.view(), std::nullopt, {.k = 3});
  });
  EXPECT_NE(host.find("host memory for the host backend"), std::string::npos) << host;
}

/// The tiled algorithm keeps each device index tile prepared for the distance engine (norms, CSC)
/// across the query tiles, within half the memory budget. A budget of 1 byte leaves no room, so
/// the tiles are prepared per distance tile as with one query tile: the graphs are the same bits,
/// for every strategy, on the declared columns and with columns renumbered (declared columns far
/// beyond the stored ones). Small integer values make every sum exact, so that the order of the
/// atomic updates cannot change a bit.
TEST(KnnDevice, IndexTilesPreparedOnceGiveTheSameGraph)
{
  SPIRA_SKIP_WITHOUT_GPU();
  const cuda_resources res{};
  test::random_options o;
  o.rows = 1200;
  o.cols = 400;
  o.mean_degree = 10;
  o.small_integers = true;
  const auto narrow = test::random_csr<float, std::int32_t>(o);
  // The same rows with column c moved to 5000 c: 2,000,000 declared columns.
  std::vector<offset_t> ptr(narrow.row_ptr(), narrow.row_ptr() + narrow.rows() + 1);
  std::vector<std::int32_t> cols(narrow.col_idx(), narrow.col_idx() + narrow.nnz());
  for (std::int32_t& c : cols) {
    c *= 5000;
  }
  std::vector<float> vals(narrow.values(), narrow.values() + narrow.nnz());
  const auto wide = make_csr<float, std::int32_t>(host_resources{}, narrow.rows(), 400 * 5000, ptr,
                                                  cols, vals, csr_check::canonical);
  for (const auto* m : {&narrow, &wide}) {
    const auto index = to_device(res, m->view());
    for (const metric mt : {metric::euclidean, metric::cosine, metric::inner_product,
                            metric::manhattan, metric::chebyshev}) {
      for (const pairwise_strategy s :
           {pairwise_strategy::automatic, pairwise_strategy::intersection,
            pairwise_strategy::hybrid, pairwise_strategy::dense}) {
        if (!supports_strategy(mt, s)) {
          continue;
        }
        const std::string label = std::string(to_string(mt)) + ", " + to_string(s) +
                                  (m == &wide ? ", renumbered columns" : "");
        SCOPED_TRACE(label);
        knn_params p{.k = 12, .metric = mt, .query_tile = 100, .index_tile = 300};
        p.strategy = s;
        const knn_result kept =
            to_host(knn_graph<float, std::int32_t>(res, index.view(), std::nullopt, p));
        p.memory_budget = 1;  // no room to keep a prepared index tile
        const knn_result per_pair =
            to_host(knn_graph<float, std::int32_t>(res, index.view(), std::nullopt, p));
        test::expect_identical_graphs(kept, per_pair);
      }
    }
  }
}

}  // namespace
}  // namespace spira
