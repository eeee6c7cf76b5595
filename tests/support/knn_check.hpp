// Test support: checks a k-NN result against exact (float64) distances, as sets with the tie rule.
#pragma once

#include <spira/knn.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace spira::test {

/// Checks a k-NN result against float64 distances `exact` (n_q x n_i) as sets with the tie rule:
/// every listed neighbour is distinct, its distance matches the exact one, no unlisted row is
/// better than the listed k-th by more than `tol`, and rows are sorted best first. Rows excluded
/// by exclude_self are not candidates.
inline void expect_knn_matches(const knn_result& g, const std::vector<std::vector<double>>& exact,
                               bool largest, bool exclude_self, double tol, const char* what)
{
  const std::int64_t n_q = g.indices.rows();
  const std::int64_t k = g.indices.cols();
  for (std::int64_t r = 0; r < n_q; ++r) {
    std::vector<double> others;
    for (std::size_t j = 0; j < exact[r].size(); ++j) {
      if (!(exclude_self && std::int64_t(j) == r)) {
        others.push_back(exact[r][j]);
      }
    }
    auto order = [&](double a, double b) { return largest ? a > b : a < b; };
    std::nth_element(others.begin(), others.begin() + (k - 1), others.end(), order);
    const double kth = others[std::size_t(k - 1)];
    std::vector<std::int64_t> seen;
    for (std::int64_t c = 0; c < k; ++c) {
      const std::int64_t j = g.indices.view()(r, c);
      const double d = g.distances.view()(r, c);
      ASSERT_GE(j, 0) << what << ": row " << r << " position " << c;
      ASSERT_LT(j, std::int64_t(exact[r].size())) << what;
      ASSERT_FALSE(exclude_self && j == r) << what << ": row " << r << " lists itself";
      seen.push_back(j);
      const double e = exact[r][std::size_t(j)];
      const double scale = std::isfinite(e) ? std::max(1.0, std::abs(e)) : 1.0;
      if (!(d == e)) {  // equal infinities match exactly
        ASSERT_NEAR(d, e, tol * scale) << what << ": row " << r << " neighbour " << j;
      }
      const bool within = largest ? e >= kth : e <= kth;
      const bool near = std::isfinite(e) && std::isfinite(kth) && std::abs(e - kth) <= tol * scale;
      ASSERT_TRUE(within || near) << what << ": row " << r << " lists " << j << " at " << e
                                  << " beyond the k-th " << kth;
      if (c > 0) {
        const double prev = g.distances.view()(r, c - 1);
        ASSERT_TRUE(largest ? prev >= d : prev <= d) << what << ": row " << r << " not sorted";
      }
    }
    std::sort(seen.begin(), seen.end());
    ASSERT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end())
        << what << ": row " << r << " lists a neighbour twice";
  }
}

/// The float64 brute force of a k-NN problem: exact[r][j] = f(row r of the queries, row j of the
/// index) over dense copies.
template <class F>
std::vector<std::vector<double>> brute_force_distances(const std::vector<std::vector<double>>& q,
                                                       const std::vector<std::vector<double>>& x,
                                                       F f)
{
  std::vector<std::vector<double>> out(q.size(), std::vector<double>(x.size()));
  for (std::size_t r = 0; r < q.size(); ++r) {
    for (std::size_t j = 0; j < x.size(); ++j) {
      out[r][j] = f(q[r], x[j]);
    }
  }
  return out;
}

/// Two host graphs with the same bytes: the same shape, every index and every distance's bits
/// (tilings and paths that must not change the result); `label` names the case in a failure.
inline void expect_identical_graphs(const knn_result& a, const knn_result& b,
                                    const std::string& label = {})
{
  ASSERT_EQ(a.indices.rows(), b.indices.rows()) << label;
  ASSERT_EQ(a.indices.cols(), b.indices.cols()) << label;
  const std::int64_t n = a.indices.rows() * a.indices.cols();
  for (std::int64_t e = 0; e < n; ++e) {
    ASSERT_EQ(a.indices.data()[e], b.indices.data()[e]) << label << " entry " << e;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(a.distances.data()[e]),
              std::bit_cast<std::uint32_t>(b.distances.data()[e]))
        << label << " entry " << e << ": " << a.distances.data()[e] << " and "
        << b.distances.data()[e];
  }
}

/// Two graphs of the same k-NN problem whose sums ran in different orders (on CUDA the order of
/// the shared-memory atomics varies between launches, docs/knn.md; the fused kernel's ways of
/// taking a row sum in different orders): distances equal up to the last bits, indices equal
/// except where two neighbours lie within that rounding of each other; NaN distances (the worst,
/// tied by index) on both sides with the same index.
inline void expect_same_graph_up_to_rounding(const knn_result& a, const knn_result& b)
{
  ASSERT_EQ(a.indices.rows(), b.indices.rows());
  ASSERT_EQ(a.indices.cols(), b.indices.cols());
  const std::int64_t k = a.indices.cols();
  for (std::int64_t r = 0; r < a.indices.rows(); ++r) {
    for (std::int64_t c = 0; c < k; ++c) {
      const float d = a.distances.view()(r, c);
      if (std::isnan(d) || std::isnan(b.distances.view()(r, c))) {  // NaN ties go by index
        ASSERT_TRUE(std::isnan(d) && std::isnan(b.distances.view()(r, c)))
            << "row " << r << " position " << c;
        ASSERT_EQ(a.indices.view()(r, c), b.indices.view()(r, c))
            << "row " << r << " position " << c;
        continue;
      }
      const float tol = 1e-6f * (1.0f + std::abs(d));
      if (d != b.distances.view()(r, c)) {  // (equal infinities are not near by ASSERT_NEAR)
        ASSERT_NEAR(d, b.distances.view()(r, c), tol) << "row " << r << " position " << c;
      }
      if (a.indices.view()(r, c) != b.indices.view()(r, c)) {
        const auto near = [&](std::int64_t c2) {
          return c2 >= 0 && c2 < k &&
                 (a.distances.view()(r, c2) == d || std::abs(a.distances.view()(r, c2) - d) <= tol);
        };
        ASSERT_TRUE(c + 1 == k || near(c - 1) || near(c + 1))
            << "row " << r << " position " << c << ": " << a.indices.view()(r, c) << " vs "
            << b.indices.view()(r, c) << " without a near tie";
      }
    }
  }
}

}  // namespace spira::test
