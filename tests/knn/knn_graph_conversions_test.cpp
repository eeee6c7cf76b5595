// The k-NN graph's conversions on the host: to_csr_graph in scikit-learn's kneighbors_graph layout,
// symmetrize = max(G, G^T) and UMAP's fuzzy union, against dense reconstructions.
#include "knn/knn_oracle_check.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace spira::test {
namespace {

/// to_csr_graph in scikit-learn's kneighbors_graph layout, and symmetrize = max(G, G^T), against
/// dense reconstructions.
TEST(knn_graph_conversions, csr_graph_and_symmetrized_graph)
{
  const host_resources res{};
  const auto data = random_matrix(40, 25, 5, 101);
  const std::int64_t k = 4;
  const auto g = knn_self(res, data.view(), {.k = k, .metric = metric::manhattan});
  for (const auto mode : {knn_graph_mode::distance, knn_graph_mode::connectivity}) {
    for (const auto order : {knn_graph_order::nearest_first, knn_graph_order::by_column}) {
      const auto m = to_csr_graph(g, 40, mode, order);
      ASSERT_EQ(m.rows(), 40);
      ASSERT_EQ(m.cols(), 40);
      ASSERT_EQ(m.nnz(), 40 * k);
      for (std::int64_t i = 0; i < 40; ++i) {
        ASSERT_EQ(m.row_ptr()[i + 1] - m.row_ptr()[i], k) << "row " << i;
        std::vector<std::pair<std::int64_t, float>> want;
        for (std::int64_t j = 0; j < k; ++j) {
          want.emplace_back(g.indices.view()(i, j),
                            mode == knn_graph_mode::distance ? g.distances.view()(i, j) : 1.0f);
        }
        // scikit-learn's kneighbors_graph keeps the kneighbors order (nearest first).
        if (order == knn_graph_order::by_column) {
          std::sort(want.begin(), want.end());
        }
        std::vector<std::pair<std::int64_t, float>> got;
        for (offset_t e = m.row_ptr()[i]; e < m.row_ptr()[i + 1]; ++e) {
          got.emplace_back(m.col_idx()[e], m.values()[e]);
        }
        EXPECT_EQ(got, want) << "row " << i;
      }
    }
  }
  // symmetrize takes either order and gives the same canonical graph.
  const auto gd = to_csr_graph(g, 40, knn_graph_mode::distance, knn_graph_order::by_column);
  const auto sym = symmetrize(gd.view());
  {
    const auto near = to_csr_graph(g, 40, knn_graph_mode::distance);
    const auto sym2 = symmetrize(near.view());
    ASSERT_EQ(sym2.nnz(), sym.nnz());
    for (offset_t e = 0; e < sym.nnz(); ++e) {
      ASSERT_EQ(sym2.col_idx()[e], sym.col_idx()[e]);
      ASSERT_EQ(sym2.values()[e], sym.values()[e]);
    }
    for (std::int64_t i = 0; i < 40; ++i) {
      for (offset_t e = sym.row_ptr()[i] + 1; e < sym.row_ptr()[i + 1]; ++e) {
        ASSERT_LT(sym.col_idx()[e - 1], sym.col_idx()[e]) << "row " << i;
      }
    }
  }
  // dense: present[i][j] and value of G; S(i, j) = max over the present ones of G(i, j), G(j, i)
  std::vector<std::vector<double>> v(40, std::vector<double>(40, 0.0));
  std::vector<std::vector<bool>> present(40, std::vector<bool>(40, false));
  for (std::int64_t i = 0; i < 40; ++i) {
    for (offset_t e = gd.row_ptr()[i]; e < gd.row_ptr()[i + 1]; ++e) {
      v[i][gd.col_idx()[e]] = gd.values()[e];
      present[i][gd.col_idx()[e]] = true;
    }
  }
  std::int64_t expected_nnz = 0;
  for (std::int64_t i = 0; i < 40; ++i) {
    std::map<std::int64_t, float> want, got;
    for (std::int64_t j = 0; j < 40; ++j) {
      if (present[i][j] || present[j][i]) {
        const double a = present[i][j] ? v[i][j] : -1.0, b = present[j][i] ? v[j][i] : -1.0;
        want[j] = float(std::max(a, b));
      }
    }
    for (offset_t e = sym.row_ptr()[i]; e < sym.row_ptr()[i + 1]; ++e) {
      got[sym.col_idx()[e]] = sym.values()[e];
    }
    expected_nnz += std::int64_t(want.size());
    EXPECT_EQ(got, want) << "row " << i;
  }
  EXPECT_EQ(sym.nnz(), expected_nnz);
  // A neighbour outside the index, and a non-square graph, are refused.
  knn_result bad{dense_matrix<std::int64_t>(res, 1, 1), dense_matrix<float>(res, 1, 1)};
  bad.indices.view()(0, 0) = 7;
  bad.distances.view()(0, 0) = 0.5f;
  EXPECT_THROW((void)to_csr_graph(bad, 5, knn_graph_mode::distance), invalid_argument);
  const auto wide = to_csr_graph(g, 41, knn_graph_mode::distance);
  EXPECT_THROW((void)symmetrize(wide.view()), invalid_argument);
  // A column listed twice in a row is refused, naming the row.
  const std::vector<offset_t> ptr{0, 2, 3};
  const std::vector<std::int64_t> cols{1, 1, 0};
  const std::vector<float> vals{0.5f, 0.25f, 0.5f};
  const auto twice = make_csr<float, std::int64_t>(res, 2, 2, ptr, cols, vals, csr_check::valid);
  try {
    (void)symmetrize(twice.view());
    ADD_FAILURE() << "a repeated column was accepted";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("row 0 lists column 1 twice"), std::string::npos)
        << e.what();
  }
}

/// fuzzy_union = G + Gᵀ - G∘Gᵀ (UMAP's fuzzy set union) against a dense float64 reconstruction,
/// on membership strengths in (0, 1] with one-sided and two-sided edges, rows nearest first.
TEST(knn_graph_conversions, fuzzy_union_of_membership_strengths)
{
  const host_resources res{};
  const std::int64_t n = 30;
  const auto data = random_matrix(n, 20, 5, 107);
  const auto g = knn_self(res, data.view(), {.k = 5, .metric = metric::euclidean});
  auto gm = to_csr_graph(g, n, knn_graph_mode::distance);  // nearest first, not canonical
  for (offset_t e = 0; e < gm.nnz(); ++e) {
    gm.values()[e] = float(std::exp(-double(gm.values()[e])));  // strengths in (0, 1]
  }
  const auto u = fuzzy_union(gm.view());
  std::vector<std::vector<double>> v(n, std::vector<double>(n, 0.0));
  std::vector<std::vector<bool>> present(n, std::vector<bool>(n, false));
  for (std::int64_t i = 0; i < n; ++i) {
    for (offset_t e = gm.row_ptr()[i]; e < gm.row_ptr()[i + 1]; ++e) {
      v[i][gm.col_idx()[e]] = gm.values()[e];
      present[i][gm.col_idx()[e]] = true;
    }
  }
  std::int64_t both = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<std::pair<std::int64_t, float>> want, got;
    for (std::int64_t j = 0; j < n; ++j) {
      if (present[i][j] || present[j][i]) {
        const double a = v[i][j], b = v[j][i];  // 0 where absent
        want.emplace_back(j, float(a + b - a * b));
        both += present[i][j] && present[j][i] ? 1 : 0;
      }
    }
    for (offset_t e = u.row_ptr()[i]; e < u.row_ptr()[i + 1]; ++e) {
      got.emplace_back(u.col_idx()[e], u.values()[e]);
    }
    EXPECT_EQ(got, want) << "row " << i;
  }
  EXPECT_GT(both, 0);  // two-sided edges, where a + b - ab differs from max
  const auto wide = to_csr_graph(g, n + 1, knn_graph_mode::distance);
  EXPECT_THROW((void)fuzzy_union(wide.view()), invalid_argument);
}

}  // namespace
}  // namespace spira::test
