// k-NN graphs on both backends against the float64 dense oracle (knn_oracle_check.hpp), where
// the call's limits are tested: a memory budget smaller than the whole distance matrix, a declared
// dimension of 2^31 or 2^62 of which a few columns are used, progress reports, slices of the shared
// datasets, and the errors of bad arguments and bad values (at the user's row).
#include "knn/knn_oracle_check.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace spira::test {
namespace {

template <class Resources>
class knn : public ::testing::Test {};
TYPED_TEST_SUITE(knn, backends, backend_names);

/// A memory budget far below the whole distance matrix: the planner tiles, the result is exact,
/// and progress reports the query rows in order up to all of them; a budget too small for the top-k
/// lists fails clearly.
TYPED_TEST(knn, memory_budget_smaller_than_the_distance_matrix)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const auto index = random_matrix(500, 60, 9, 81);
  const std::size_t whole = 500 * 500 * sizeof(float);
  for (const std::int64_t k : {15, 100}) {
    for (const metric m : {metric::cosine, metric::manhattan, metric::inner_product}) {
      knn_params params{.k = k, .metric = m, .memory_budget = whole / 16};
      check_knn(res, index, nullptr, params, "random 500 x 60, budget 1/16 of the matrix");
      std::vector<std::int64_t> done;
      params.progress = [&](std::int64_t finished, std::int64_t total) {
        EXPECT_EQ(total, 500);
        done.push_back(finished);
      };
      (void)knn_self(res, index.view(), params);
      ASSERT_FALSE(done.empty());
      EXPECT_TRUE(std::is_sorted(done.begin(), done.end()));
      EXPECT_EQ(done.back(), 500);
    }
  }
  // 4 KiB cannot hold the running, tile and merged top-400 lists of even one query.
  EXPECT_THROW((void)(knn_self(res, index.view(),
                               {.k = 400, .metric = metric::cosine, .memory_budget = 4096})),
               out_of_memory);
}

/// An index and queries that declare 2^31 columns (float, int32 indices) or 2^62 (double, int64)
/// and use 12 of them, spread over the whole range: the graph is the padded oracle's (narrow rows
/// plus zero coordinates, which hamming and correlation count) for the index against itself with
/// exclude_self and against separate queries, in the default tiles and in small ones (and on CUDA
/// also with the tiled algorithm); on the host the peak resident memory grows by less than 64 MiB.
TYPED_TEST(knn, declared_columns_far_beyond_the_used_ones)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const auto run = [&]<class V, class I>(std::int64_t dim) {
    const std::vector<std::int64_t> used{0,       3,           77,      1 << 16, dim / 7, dim / 3,
                                         dim / 2, dim / 2 + 1, dim - 9, dim - 3, dim - 2, dim - 1};
    const std::int64_t u = std::int64_t(used.size());
    const auto narrow_index = random_matrix<V, I>(60, u, 4, 131);
    const auto narrow_queries = random_matrix<V, I>(17, u, 4, 132);
    const auto index = widen(narrow_index, used, dim);
    const auto queries = widen(narrow_queries, used, dim);
    const auto dx = densify(narrow_index), dq = densify(narrow_queries);
    const peak_memory_probe probe;
    for (const metric m : {metric::euclidean, metric::cosine, metric::correlation, metric::hamming,
                           metric::chebyshev, metric::manhattan}) {
      std::vector<knn_params> variants{{.k = 5, .metric = m},
                                       {.k = 5, .metric = m, .query_tile = 4, .index_tile = 7}};
      if constexpr (std::is_same_v<TypeParam, cuda_resources>) {
        variants.push_back({.k = 5, .metric = m, .algo = knn_algo::tiled});
      }
      for (knn_params params : variants) {
        const std::string what = "dim = " + std::to_string(dim) + " " + to_string(m) +
                                 (params.query_tile > 0 ? " small tiles" : "");
        const auto self_exact = oracle::pairwise_padded(m, dx, dx, dim);
        const auto query_exact = oracle::pairwise_padded(m, dq, dx, dim);
        const bool largest = is_similarity(m);
        params.exclude_self = true;
        const knn_result self = knn_self(res, index.view(), params);
        expect_knn_matches(self, self_exact, largest, true, 1e-4, (what + " self").c_str());
        params.exclude_self = false;
        const knn_result g = knn_graph(res, index.view(), queries.view(), params);
        expect_knn_matches(g, query_exact, largest, false, 1e-4, (what + " queries").c_str());
      }
    }
    if constexpr (std::is_same_v<TypeParam, host_resources>) {
      EXPECT_LT(probe.growth(), std::int64_t(64) << 20)
          << "dim = " << dim << ": peak resident memory grew by " << probe.growth() << " bytes";
    }
  };
  run.template operator()<float, std::int32_t>(std::int64_t(1) << 31);
  run.template operator()<double, std::int64_t>(std::int64_t(1) << 62);
}

/// With the default budget (one query tile would hold every query), a progress callback still gets
/// reports along the way: query tiles are cut to about a twentieth of the queries (at least 256
/// rows on the host, knn_policy::cuda_progress_min_rows on CUDA).
TYPED_TEST(knn, progress_reports_along_the_way)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  constexpr bool cuda = std::is_same_v<TypeParam, cuda_resources>;
  const std::int64_t n = cuda ? 3 * detail::knn_policy::cuda_progress_min_rows : 3000;
  const auto index = random_matrix(n, 60, 9, 83);
  knn_params params{.k = 10, .metric = metric::cosine};
  params.algo = knn_algo::tiled;
  const auto quiet = knn_self(res, index.view(), params);
  std::vector<std::int64_t> done;
  params.progress = [&](std::int64_t finished, std::int64_t total) {
    EXPECT_EQ(total, n);
    done.push_back(finished);
  };
  const auto reported = knn_self(res, index.view(), params);
  EXPECT_GE(done.size(), cuda ? 3u : 10u);
  EXPECT_EQ(std::adjacent_find(done.begin(), done.end(), std::greater_equal<>{}), done.end())
      << "progress must increase strictly";
  EXPECT_EQ(done.back(), n);
  for (std::int64_t r = 0; r < n; ++r) {
    for (std::int64_t c = 0; c < params.k; ++c) {
      ASSERT_EQ(quiet.indices.view()(r, c), reported.indices.view()(r, c)) << r << "," << c;
    }
  }
}

/// Rows [begin, end) of m as a canonical CSR of its own.
template <class V, class I>
csr_matrix<V, I> rows_of(const csr_matrix<V, I>& m, std::int64_t begin, std::int64_t end)
{
  std::vector<offset_t> ptr;
  const auto v = row_slice(m.view(), begin, end, ptr);
  return make_csr<V, I>(host_resources{}, v.rows, v.cols,
                        std::span<const offset_t>(v.row_ptr, std::size_t(v.rows) + 1),
                        std::span<const I>(v.col_idx, std::size_t(v.nnz)),
                        std::span<const V>(v.values, std::size_t(v.nnz)), csr_check::canonical);
}

/// Slices of real data: word counts (uci-bow-kos) and l2-normalised character 3-gram tf-idf with
/// empty rows (sec-edgar-names). Every metric on separate queries; cosine and manhattan on the
/// slice against itself with exclude_self and k = 100.
template <class R>
void check_real(const R& res, const std::string& file, std::int64_t index_begin,
                std::int64_t query_begin)
{
  const std::filesystem::path path = std::filesystem::path(SPIRA_SHARED_DATA_DIR) / file;
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << "data file absent: " << path;
  }
  const auto m = io::read_matrix<float, std::int32_t>(path);
  const auto index = rows_of(m, index_begin, index_begin + 150);
  const auto queries = rows_of(m, query_begin, query_begin + 12);
  for (const metric mt : all_metrics()) {
    check_knn(res, index, &queries,
              {.k = 15, .metric = mt, .p = exponent_of(mt), .query_tile = 5, .index_tile = 37},
              file + " rows " + std::to_string(index_begin) + "+150");
  }
  for (const metric mt : {metric::cosine, metric::manhattan}) {
    check_knn(res, index, nullptr,
              {.k = 100, .metric = mt, .exclude_self = true, .query_tile = 64, .index_tile = 45},
              file + " rows " + std::to_string(index_begin) + "+150, self");
  }
}

TYPED_TEST(knn, real_data_kos_word_counts)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  check_real(TypeParam{}, "uci-bow-kos/docword.kos.mtx.gz", 0, 2000);
}

TYPED_TEST(knn, real_data_sec_edgar_char3grams_with_empty_rows)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  // Rows 6260-6409 hold the empty row 6277 (a name shorter than 3 characters).
  check_real(TypeParam{}, "sec-edgar-names/char3gram_tfidf.mtx.gz", 6260, 100);
}

/// Bad arguments fail with an exception that names the problem, on both backends.
TYPED_TEST(knn, bad_arguments)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const auto index = random_matrix(20, 10, 3, 91);
  const auto other = random_matrix(5, 11, 3, 92);
  const auto view = index.view();
  EXPECT_THROW((void)knn_self(res, view, {.k = 0}), invalid_argument);
  EXPECT_THROW((void)knn_self(res, view, {.k = 21}), invalid_argument);
  EXPECT_THROW((void)(knn_self(res, view, {.k = 20, .exclude_self = true})), invalid_argument);
  EXPECT_NO_THROW((void)(knn_self(res, view, {.k = 19, .exclude_self = true})));
  EXPECT_THROW((void)knn_graph(res, view, std::optional{view}, {.k = 3, .exclude_self = true}),
               invalid_argument);
  EXPECT_THROW((void)knn_graph(res, view, std::optional{other.view()}, {.k = 3}),
               dimension_mismatch);
  EXPECT_THROW((void)(knn_self(res, view, {.k = 3, .query_tile = -1})), invalid_argument);
  try {
    (void)knn_self(res, view, {.k = 21});
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("k = 21"), std::string::npos) << e.what();
  }
}

/// A negative value is reported at its row of the caller's matrix, as the index or the queries,
/// however small the tiles (the check runs once on the whole input, not on each tile).
TYPED_TEST(knn, negative_value_reported_at_the_users_row)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  for (const bool in_queries : {false, true}) {
    auto index = random_matrix(2000, 12, 3, 93);
    auto queries = random_matrix(1600, 12, 3, 94);
    for (auto* m : {&index, &queries}) {
      for (std::int64_t e = 0; e < m->nnz(); ++e) {
        m->values()[e] = std::abs(m->values()[e]);
      }
    }
    auto& bad = in_queries ? queries : index;
    const std::int64_t row = 1500;
    ASSERT_GT(bad.row_ptr()[row + 1], bad.row_ptr()[row]);
    const offset_t e = bad.row_ptr()[row];
    bad.values()[e] = -7;
    const auto col = bad.col_idx()[e];
    const knn_params params{
        .k = 3, .metric = metric::hellinger, .query_tile = 64, .index_tile = 100};
    try {
      if (in_queries) {
        (void)knn_graph(res, index.view(), std::optional{queries.view()}, params);
      } else {
        (void)knn_self(res, index.view(), params);
      }
      FAIL() << "a negative value passed the hellinger check";
    } catch (const invalid_argument& err) {
      const std::string msg = err.what();
      EXPECT_NE(msg.find(in_queries ? "the query matrix has -7" : "the index has -7"),
                std::string::npos)
          << msg;
      EXPECT_NE(msg.find("at row 1500, column " + std::to_string(col)), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace spira::test
