// spira internals: the host k-NN graph of a distance that gives every pair of rows without a shared
// column one value (`disjoint_distance`, spira/accuracy.hpp: cosine, inner_product). Each query
// row scatters its products into a dense accumulator of the index's length and notes the index
// rows it touched (a sparse accumulator); those rows are finalized as the host engine finalizes
// them (spira/detail/host_pairwise_engines.hpp: the same sums in the same order, the same guard),
// and so are the first k index rows it did not touch (in index order: the later ones tie with them
// at the disjoint value and cannot enter the list). A row's cost follows its products, not the
// index's length; the graph is the tiled algorithm's, bit for bit. Used by knn_host_ops (the
// built-in metrics, src/knn/knn.cpp) when the index rows all pass D::disjoint_index.
#pragma once

#include <spira/accuracy.hpp>
#include <spira/convert.hpp>
#include <spira/detail/host_pairwise_common.hpp>
#include <spira/detail/host_pairwise_dispatch.hpp>
#include <spira/detail/knn_driver.hpp>
#include <spira/detail/knn_policy.hpp>
#include <spira/knn.hpp>
#include <spira/selection/keys.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace spira::detail {

/// Whether knn_host_disjoint can serve D: a disjoint value, one accumulator term, no prepare step.
template <class D>
inline constexpr bool knn_host_disjoint_v = accuracy_traits<D, host_compute_t>::disjoint &&
                                            distance_traits<D, host_compute_t>::num_terms == 1 &&
                                            !distance_traits<D, host_compute_t>::has_prepare;

/// A candidate of a query row: its ranking key (selection::key_traits), index and value, ordered
/// by knn_key_better.
template <class ValueT>
struct knn_host_candidate {
  typename selection::key_traits<ValueT>::key_type key;
  std::int64_t index;
  ValueT value;

  friend bool operator<(const knn_host_candidate& a, const knn_host_candidate& b)
  {
    return knn_key_better(a.key, a.index, b.key, b.index);
  }
};

/// The k-NN graph of `queries` against `index` for such a D (best k by knn_better; `skip_self`:
/// index row i is not a candidate of query row i, whose value goes to self_out[i] when self_out is
/// not null) into `out` (rows(queries) x k). Returns false, having done nothing, when an index row
/// fails D::disjoint_index or the accumulators do not fit `budget` bytes (the caller tiles then).
/// With params.progress, reports after each block of rows (knn_policy::progress_rows).
template <class D, class ValueT, class IndexT>
bool knn_host_disjoint(const host_resources& res, csr_view<ValueT, IndexT> queries,
                       csr_view<ValueT, IndexT> index, const D& d, const knn_params& params,
                       bool largest, std::int64_t k, bool skip_self, ValueT* self_out,
                       knn_result& out, std::size_t budget)
{
  using T = host_compute_t;
  using traits = distance_traits<D, T>;
  using acc_t = typename traits::accumulator;
  using add = typename traits::add_monoid;
  using norm_t = typename traits::norms::template values<T>;
  static_assert(knn_host_disjoint_v<D>);
  constexpr accumulator_bounds bounds = accumulator_bounds_of<T>();
  const std::int64_t n = index.rows;
  const int threads = res.num_threads();
  // Per thread: the accumulator and the touched flags of the index's length, the touched rows and
  // the candidates (at most the index's length each); the index's transpose.
  const std::size_t need = std::size_t(threads) * std::size_t(n) *
                               (sizeof(acc_t) + 1 + 2 * sizeof(std::int64_t) + sizeof(ValueT)) +
                           std::size_t(index.nnz + queries.nnz) * (sizeof(ValueT) + sizeof(IndexT));
  if (need > budget) {
    return false;
  }
  // The engine's view: the used columns only (any declared width), the declared one for finalize.
  const std::int64_t dim = index.cols;
  const compressed_columns<ValueT, IndexT> used(res, queries, index);
  // Worth it where many pairs share no column: the products, Σ over the queries' entries of their
  // column's length in the index, at most knn_policy::host_rows_max_products times the pairs (past
  // that, nearly every pair is finalized either way and the tiles' selection is the faster one).
  {
    std::vector<offset_t> length(std::size_t(used.b.cols), 0);
    for (std::int64_t e = 0; e < used.b.nnz; ++e) {
      ++length[std::size_t(used.b.col_idx[e])];
    }
    double products = 0;
    for (std::int64_t e = 0; e < used.a.nnz; ++e) {
      products += double(length[std::size_t(used.a.col_idx[e])]);
    }
    if (products > knn_policy::host_rows_max_products * double(queries.rows) * double(n)) {
      return false;
    }
  }
  const auto nb = row_norms<typename traits::norms, T>(res, index);
  const csr_rows<ValueT, IndexT> index_rows = rows_of(index);
  for (std::int64_t j = 0; j < n; ++j) {
    if (!d.template disjoint_index<T>(index_rows[j], nb[std::size_t(j)], bounds)) {
      return false;
    }
  }
  const auto na = row_norms<typename traits::norms, T>(res, queries);
  const csr_rows<ValueT, IndexT> rows_a = rows_of(used.a);
  const csr_rows<ValueT, IndexT> rows_b = rows_of(used.b);
  const csr_matrix<ValueT, IndexT> bt_own = transpose(res, used.b);
  const csr_view<ValueT, IndexT> bt = bt_own.view();
  queries = used.a;
  const acc_t zero = identity_terms<add, T, 1>();
  const std::int64_t step =
      params.progress ? knn_policy::progress_rows(queries.rows, knn_policy::progress_min_rows)
                      : queries.rows;
  for (std::int64_t r0 = 0; r0 < queries.rows; r0 += step) {
    const std::int64_t r1 = std::min(queries.rows, r0 + step);
    SPIRA_OMP(omp parallel num_threads(threads))
    {
      std::vector<acc_t> acc(std::size_t(n), zero);
      std::vector<unsigned char> touched(std::size_t(n), 0);
      // The touched index rows, then the untouched ones offered (at most n in all; one more slot
      // for the unconditional write below).
      std::vector<std::int64_t> rows(std::size_t(n) + 1);
      // The touched rows' totals and norms gathered, their fast values and the guard's verdicts.
      std::vector<acc_t> totals;
      std::vector<norm_t> norms;
      std::vector<T> fast, trust;
      std::vector<knn_host_candidate<ValueT>> cand;
      SPIRA_OMP(omp for schedule(dynamic, host_pairwise_policy::rows_per_chunk))
      for (std::int64_t i = r0; i < r1; ++i) {
        // The engine's sums: the row's columns in order, each column's index rows in order; the
        // touched rows noted without a branch (rows[0, count) - a row is written at the end
        // whether or not it is new, and kept by advancing the count when it is).
        std::size_t count = 0;
        for (offset_t e = queries.row_ptr[i]; e < queries.row_ptr[i + 1]; ++e) {
          const T x = T(queries.values[e]);
          const std::int64_t c = queries.col_idx[e];
          for (offset_t q = bt.row_ptr[c]; q < bt.row_ptr[c + 1]; ++q) {
            const std::int64_t j = bt.col_idx[q];
            add_terms<add>(acc[std::size_t(j)],
                           as_terms(d.template multiply<T>(x, T(bt.values[q]))));
            rows[count] = j;
            count += touched[std::size_t(j)] ^ 1u;
            touched[std::size_t(j)] = 1;
          }
        }
        cand.clear();
        // Pair (i, j) with the engine's value v, rounded as the graph returns it.
        const auto offer = [&](std::int64_t j, T v) {
          const ValueT r = as_returned(ValueT(v));
          if (skip_self && j == i) {
            if (self_out != nullptr) {
              self_out[i] = r;
            }
            return;
          }
          cand.push_back({selection::key_traits<ValueT>::to_key(r, largest), j, r});
        };
        // The engine's values of the index rows `js` (guarded_finalize in its two passes).
        const auto offer_rows = [&](const std::int64_t* js, std::size_t m) {
          totals.resize(m);
          norms.resize(m);
          fast.resize(m);
          trust.resize(m);
          for (std::size_t t = 0; t < m; ++t) {
            totals[t] = acc[std::size_t(js[t])];
            norms[t] = nb[std::size_t(js[t])];
          }
          finalize_and_trust<D, T>(d, totals.data(), na[std::size_t(i)], norms.data(), dim,
                                   std::int64_t(m), fast.data(), trust.data());
          for (std::size_t t = 0; t < m; ++t) {
            const std::int64_t j = js[t];
            offer(j, trust[t] != T(0)
                         ? fast[t]
                         : direct_value<D, T>(d, rows_a[i], rows_b[j], na[std::size_t(i)],
                                              nb[std::size_t(j)], dim));
          }
        };
        std::size_t offered = count;  // rows[count, offered): untouched rows offered
        if (d.template disjoint_query<T>(na[std::size_t(i)], bounds)) {
          // The first untouched rows: k of them besides row i (the self pair is offered for its
          // value when it is untouched too).
          std::int64_t others = 0;
          for (std::int64_t j = 0; j < n && others < k; ++j) {
            if (!touched[std::size_t(j)]) {
              others += skip_self && j == i ? 0 : 1;
              rows[offered++] = j;
            }
          }
          if (skip_self && self_out != nullptr && i < n && !touched[std::size_t(i)] &&
              std::find(rows.begin() + std::ptrdiff_t(count),
                        rows.begin() + std::ptrdiff_t(offered),
                        i) == rows.begin() + std::ptrdiff_t(offered)) {
            rows[offered++] = i;  // its value only
          }
        } else {
          for (std::int64_t j = 0; j < n; ++j) {  // every index row
            if (!touched[std::size_t(j)]) {
              rows[offered++] = j;
            }
          }
        }
        offer_rows(rows.data(), offered);
        for (std::size_t t = 0; t < count; ++t) {
          acc[std::size_t(rows[t])] = zero;
          touched[std::size_t(rows[t])] = 0;
        }
        const std::int64_t m = std::min<std::int64_t>(k, std::int64_t(cand.size()));
        std::partial_sort(cand.begin(), cand.begin() + m, cand.end());
        std::int64_t* oi = out.indices.view().row(i);
        float* ov = out.distances.view().row(i);
        for (std::int64_t c = 0; c < k; ++c) {
          oi[c] = c < m ? cand[std::size_t(c)].index : std::int64_t{-1};
          ov[c] = c < m ? static_cast<float>(cand[std::size_t(c)].value)
                        : selection::key_traits<float>::padding(largest);
        }
      }
    }
    if (params.progress) {
      params.progress(r1, queries.rows);
    }
  }
  return true;
}

}  // namespace spira::detail
