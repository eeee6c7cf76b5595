// The k-NN tests' comparison with the float64 dense oracle (tests/support/oracle.hpp): check_knn
// and its helpers, used by knn_test.cpp, knn_budget_test.cpp and knn_graph_conversions_test.cpp.
//
// How a result is compared with the oracle (check_knn). The oracle ranks every index row of a query
// by its float64 distance in the metric's direction, ties broken by the smaller index, which is the
// order spira promises. spira computes in ValueT (float on the GPU) and reports float distances, so
// two candidates whose float64 distances differ by less than the rounding may legitimately swap.
// Hence, with tol = rounding bound of the distance (compared on the scale the engine accumulates:
// d^2 for euclidean, hellinger and jensenshannon, d^p for minkowski, d otherwise):
//  1. Each row holds k distinct indices in range, never the query itself under exclude_self.
//  2. Its distances are in the metric's order, and with float values among equal reported distances
//     the smaller index comes first (the promise, checked on spira's own numbers: exact).
//  3. Position j reports the oracle's j-th best distance within tol, and the oracle distance of the
//     index reported there matches the reported distance within tol (so each index is a true
//     neighbour at the distance given, not only a plausible number).
//  4. As a set, every index whose oracle distance is better than the oracle's k-th by more than
//     2 tol is reported: indices may differ from the oracle's only among near-ties with the k-th
//     distance.
//  5. Exact ties decided by the index, on the host (which computes ties from identical arithmetic):
//     for the counting metrics (hamming, jaccard, dice, russellrao), whose distances are rationals
//     of small integers, the indices equal the oracle's position by position, tie rule included;
//     and where index rows are bit-identical copies, a copy is never reported before, or instead
//     of, a copy with a smaller index. The CUDA backend documents that it may order float near-ties
//     differently, so there 1-4 apply.
#pragma once

#include "support/backend.hpp"
#include "support/knn_check.hpp"
#include "support/oracle.hpp"
#include "support/pairwise_check.hpp"
#include "support/wide_columns.hpp"

#include <spira/detail/knn_policy.hpp>
#include <spira/io.hpp>
#include <spira/knn.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace spira::test {

/// Rounding bound on the accumulated scale: float arithmetic (GPU, or float tiles), or double
/// arithmetic whose result is reported as float.
template <class V>
double knn_tolerance(double accumulated_value)
{
  return (std::is_same_v<V, float> ? 1e-4 : 1e-6) * (1.0 + std::abs(accumulated_value));
}

inline bool counting_metric(metric m)
{
  return m == metric::hamming || m == metric::jaccard || m == metric::dice ||
         m == metric::russellrao;
}

/// Rows bit-identical to an earlier row of m: copy_of[i] = the first row equal to row i.
template <class V, class I>
std::vector<std::int64_t> first_copies(const csr_matrix<V, I>& m)
{
  std::map<std::pair<std::vector<I>, std::vector<V>>, std::int64_t> seen;
  std::vector<std::int64_t> first(static_cast<std::size_t>(m.rows()));
  for (std::int64_t i = 0; i < m.rows(); ++i) {
    const auto b = m.row_ptr()[i], e = m.row_ptr()[i + 1];
    std::pair key{std::vector<I>(m.col_idx() + b, m.col_idx() + e),
                  std::vector<V>(m.values() + b, m.values() + e)};
    first[std::size_t(i)] = seen.try_emplace(std::move(key), i).first->second;
  }
  return first;
}

/// knn_graph on the backend against the oracle, by the rules at the top of this file.
template <class R, class V, class I>
void check_knn_once(const R& res, const csr_matrix<V, I>& index,
                    const std::type_identity_t<csr_matrix<V, I>>* queries, const knn_params& params,
                    const std::string& label)
{
  const metric m = params.metric;
  SCOPED_TRACE(label + ": " + to_string(m) + ", k = " + std::to_string(params.k) +
               (params.algo == knn_algo::tiled ? ", algo tiled" : "") +
               (params.exclude_self ? ", exclude_self" : "") + ", tiles = " +
               std::to_string(params.query_tile) + " x " + std::to_string(params.index_tile));
  const std::optional<csr_view<V, I>> qv =
      queries != nullptr ? std::optional{queries->view()} : std::nullopt;
  const knn_result got = knn_graph(res, index.view(), qv, params);
  const csr_matrix<V, I>& q = queries != nullptr ? *queries : index;
  const auto want = oracle::pairwise(m, densify(q), densify(index), params.p);
  const std::int64_t k = params.k;
  const std::int64_t n = index.rows();
  ASSERT_EQ(got.indices.rows(), q.rows());
  ASSERT_EQ(got.indices.cols(), k);
  ASSERT_EQ(got.distances.rows(), q.rows());
  ASSERT_EQ(got.distances.cols(), k);

  const bool largest = is_similarity(m);
  const bool host = std::is_same_v<R, host_resources>;
  const std::vector<std::int64_t> copy_of = first_copies(index);
  // The index queried against itself without exclude_self: the point itself comes before every
  // other index at its distance.
  const bool self_first = queries == nullptr && !params.exclude_self;
  std::int64_t query_row = -1;  // the row being checked
  auto rank_index = [&](std::int64_t i) { return self_first && i == query_row ? -1 : i; };
  // a is better than b (float64 values, then the index)
  auto better = [&](double va, std::int64_t ia, double vb, std::int64_t ib) {
    if (std::isnan(va) != std::isnan(vb)) {
      return std::isnan(vb);
    }
    if (!std::isnan(va) && va != vb) {
      return largest ? va > vb : va < vb;
    }
    return rank_index(ia) < rank_index(ib);
  };
  auto near = [&](double got_d, double want_d) {
    const double g = accumulated_scale(m, params.p, got_d),
                 w = accumulated_scale(m, params.p, want_d);
    if (std::isinf(w) || std::isnan(w)) {
      return g == w || (std::isnan(g) && std::isnan(w));
    }
    return std::abs(g - w) <= knn_tolerance<V>(w);
  };
  int failures = 0;
  auto fail = [&](std::int64_t r, std::int64_t j, const std::string& what) {
    if (++failures <= 8) {
      ADD_FAILURE() << "query row " << r << ", position " << j << ": " << what;
    }
  };

  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t r = 0; r < q.rows() && failures <= 8; ++r) {
    query_row = r;
    const std::vector<double>& d = want[std::size_t(r)];
    order.resize(std::size_t(n));
    std::iota(order.begin(), order.end(), 0);
    if (params.exclude_self) {
      order.erase(order.begin() + r);
    }
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](std::int64_t a, std::int64_t b) { return better(d[a], a, d[b], b); });
    const std::int64_t* gi = got.indices.view().row(r);
    const float* gd = got.distances.view().row(r);
    std::set<std::int64_t> reported;
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t idx = gi[j];
      if (idx < 0 || idx >= n) {
        fail(r, j, "index " + std::to_string(idx) + " out of range");
        continue;
      }
      if (!reported.insert(idx).second) {
        fail(r, j, "index " + std::to_string(idx) + " twice");
      }
      if (params.exclude_self && idx == r) {
        fail(r, j, "the query itself despite exclude_self");
      }
      // 2. the metric's order; among equal float distances the smaller index first
      if (j > 0) {
        const float prev = gd[j - 1];
        const bool out_of_order = largest ? gd[j] > prev : gd[j] < prev;
        if (out_of_order || (std::is_same_v<V, float> && gd[j] == prev &&
                             rank_index(gi[j - 1]) > rank_index(idx))) {
          fail(r, j,
               "order: (" + std::to_string(prev) + ", " + std::to_string(gi[j - 1]) + ") before (" +
                   std::to_string(gd[j]) + ", " + std::to_string(idx) + ")");
        }
      }
      // 3. the j-th best distance, and the true distance of the index reported
      if (!near(gd[j], d[order[j]])) {
        fail(r, j,
             "distance " + std::to_string(gd[j]) + ", oracle's j-th best " +
                 std::to_string(d[order[j]]));
      }
      if (!near(gd[j], d[idx])) {
        fail(r, j,
             "index " + std::to_string(idx) + " reported at " + std::to_string(gd[j]) +
                 " but the oracle puts it at " + std::to_string(d[idx]));
      }
      // 5. bit-identical copies: a smaller-index copy comes first (host)
      if (host && copy_of[idx] != idx && rank_index(idx) >= 0) {
        for (std::int64_t c = copy_of[idx]; c < idx; ++c) {
          if (copy_of[c] == copy_of[idx] && !(params.exclude_self && c == r) &&
              !reported.contains(c)) {
            fail(r, j,
                 "copy " + std::to_string(idx) + " reported before copy " + std::to_string(c) +
                     " of the same row");
          }
        }
      }
    }
    // 4. every clearly-better-than-k-th index is reported
    const double kth = accumulated_scale(m, params.p, d[order[k - 1]]);
    const double margin = 2 * knn_tolerance<V>(kth);
    for (std::int64_t j = 0; j < k; ++j) {
      const double v = accumulated_scale(m, params.p, d[order[j]]);
      const bool clearly =
          std::isinf(kth) ? std::isfinite(v) : (largest ? v > kth + margin : v < kth - margin);
      if (!clearly) {
        break;
      }
      if (!reported.contains(order[j])) {
        fail(r, j,
             "oracle neighbour " + std::to_string(order[j]) + " at " + std::to_string(d[order[j]]) +
                 " missing (k-th best " + std::to_string(d[order[k - 1]]) + ")");
      }
    }
    // 5. counting metrics on the host: exactly the oracle's indices, tie rule included
    if (host && counting_metric(m)) {
      for (std::int64_t j = 0; j < k; ++j) {
        if (gi[j] != order[j]) {
          fail(r, j,
               "tie rule: index " + std::to_string(gi[j]) + ", oracle " + std::to_string(order[j]) +
                   " (distances " + std::to_string(gd[j]) + " and " + std::to_string(d[order[j]]) +
                   ")");
          break;
        }
      }
    }
  }
  EXPECT_EQ(failures, 0) << failures << " mismatches";
}

/// check_knn_once on both algorithms of the CUDA backend: automatic runs the tiled algorithm when a
/// tile size is forced and may take the fused top-k otherwise, so each case runs once more with the
/// other one (tiles cleared, or the tiled algorithm forced). The host has one algorithm.
template <class R, class V, class I>
void check_knn(const R& res, const csr_matrix<V, I>& index,
               const std::type_identity_t<csr_matrix<V, I>>* queries, const knn_params& params,
               const std::string& label)
{
  check_knn_once(res, index, queries, params, label);
  if constexpr (std::is_same_v<R, cuda_resources>) {
    knn_params other = params;
    if (params.query_tile > 0 || params.index_tile > 0) {
      other.query_tile = 0;
      other.index_tile = 0;
    } else {
      other.algo = knn_algo::tiled;
    }
    check_knn_once(res, index, queries, other, label);
  }
}

template <class V = float, class I = std::int32_t>
csr_matrix<V, I> random_matrix(std::int64_t rows, std::int64_t cols, double degree,
                               std::uint32_t seed, bool signed_values = false,
                               bool small_integers = false)
{
  return random_csr<V, I>({.rows = rows,
                           .cols = cols,
                           .mean_degree = degree,
                           .signed_values = signed_values,
                           .small_integers = small_integers,
                           .seed = seed});
}

/// The k-NN graph of the index against itself (no separate queries).
template <class R, class V, class I>
knn_result knn_self(const R& res, csr_view<V, I> index, const knn_params& params)
{
  return knn_graph(res, index, std::optional<csr_view<V, I>>{}, params);
}

inline double exponent_of(metric m)
{
  return m == metric::minkowski ? 3.0 : 2.0;
}

}  // namespace spira::test
