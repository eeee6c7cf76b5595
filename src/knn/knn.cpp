// The k-NN graph of the built-in metrics on the host (the CUDA entry is knn_cuda.cpp), and its
// conversions to a sparse graph. The one k-NN driver of both backends is
// spira/detail/knn_driver.hpp; here the metric picks the distance code (the distance tiles and the
// index tiles prepared once, compiled in src/pairwise: pairwise_host.hpp).
#include <spira/convert.hpp>
#include <spira/detail/knn_host_ops.hpp>
#include <spira/detail/type_lists.hpp>
#include <spira/ewise.hpp>
#include <spira/knn.hpp>
#include <spira/ops.hpp>
#include <spira/select_k.hpp>

#include "../pairwise/pairwise_host.hpp"
#include "knn_values.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace spira {

template <class ValueT, class IndexT>
knn_result knn_graph(const host_resources& res, csr_view<ValueT, IndexT> index,
                     std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> queries,
                     const knn_params& params)
{
  detail::check_knn_args(index, queries, params);
  detail::check_minkowski_p(params.metric, params.p, "knn_graph");
  detail::check_nonnegative_input(index, queries, params);
  const distance_params dp{.metric = params.metric, .p = params.p};
  return detail::knn_host(
      res, index, queries, params, is_similarity(params.metric),
      [&](csr_view<ValueT, IndexT> qv, csr_view<ValueT, IndexT> iv, dense_view<ValueT> out,
          detail::host_prepared_distance_operand* prepared) {
        detail::pairwise_distance_tile(res, qv, iv, out, dp, prepared);
      },
      [&](csr_view<ValueT, IndexT> iv) {
        return detail::prepare_host_distance_operand(res, iv, dp);
      },
      [&](std::int64_t k, bool largest, bool skip_self, ValueT* self_values, knn_result& out,
          std::size_t budget) {
        return detail::knn_host_by_rows(res, queries.value_or(index), index, params, largest, k,
                                        skip_self, self_values, out, budget);
      },
      detail::host_distances_symmetric<ValueT, IndexT>(dp));
}

csr_matrix<float, std::int64_t> to_csr_graph(const knn_result& g, std::int64_t index_rows,
                                             knn_graph_mode mode, knn_graph_order order)
{
  const host_resources res{};
  const std::int64_t n = g.indices.rows();
  const std::int64_t k = g.indices.cols();
  csr_matrix<float, std::int64_t> m(res, n, index_rows, n * k);
  std::vector<std::pair<std::int64_t, float>> row(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i <= n; ++i) {
    m.row_ptr()[i] = i * k;
  }
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t c = g.indices.view()(i, j);
      detail::expects(c >= 0 && c < index_rows, "to_csr_graph: neighbour index ", c, " of row ", i,
                      " is outside [0, ", index_rows, ")");
      row[j] = {c, mode == knn_graph_mode::distance ? g.distances.view()(i, j) : 1.0f};
    }
    if (order == knn_graph_order::by_column) {
      std::sort(row.begin(), row.end());
    }
    for (std::int64_t j = 0; j < k; ++j) {
      m.col_idx()[i * k + j] = row[j].first;
      m.values()[i * k + j] = row[j].second;
    }
  }
  return m;
}

namespace {

/// g with each row's entries in column order; a column listed twice in a row is an error.
csr_matrix<float, std::int64_t> rows_by_column(csr_view<float, std::int64_t> g, const char* op)
{
  const host_resources res{};
  std::vector<offset_t> ptr(g.row_ptr, g.row_ptr + g.rows + 1);
  std::vector<std::int64_t> cols(static_cast<std::size_t>(g.nnz));
  std::vector<float> vals(static_cast<std::size_t>(g.nnz));
  std::vector<std::pair<std::int64_t, float>> row;
  for (std::int64_t i = 0; i < g.rows; ++i) {
    row.clear();
    for (offset_t e = g.row_ptr[i]; e < g.row_ptr[i + 1]; ++e) {
      row.emplace_back(g.col_idx[e], g.values[e]);
    }
    std::sort(row.begin(), row.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    for (std::size_t j = 0; j < row.size(); ++j) {
      detail::expects(j == 0 || row[j - 1].first != row[j].first, op, ": graph row ", i,
                      " lists column ", row[j].first, " twice");
      cols[static_cast<std::size_t>(g.row_ptr[i]) + j] = row[j].first;
      vals[static_cast<std::size_t>(g.row_ptr[i]) + j] = row[j].second;
    }
  }
  return make_csr<float, std::int64_t>(res, g.rows, g.cols, ptr, cols, vals, csr_check::canonical);
}

/// g canonical (rows_by_column) and square, for symmetrize and fuzzy_union (`op` names the caller).
csr_matrix<float, std::int64_t> square_graph(csr_view<float, std::int64_t> input, const char* op)
{
  detail::expects(input.rows == input.cols, op, ": the graph must be square, got ", input.rows,
                  " x ", input.cols);
  validate(host_resources{}, input, csr_check::valid, (std::string(op) + ": graph").c_str());
  return rows_by_column(input, op);
}

}  // namespace

csr_matrix<float, std::int64_t> symmetrize(csr_view<float, std::int64_t> input)
{
  const auto g = square_graph(input, "symmetrize");
  // max(G, Gᵀ): the union of the patterns, the larger value where both hold one.
  return ewise_add(host_resources{}, std::nullopt, std::nullopt, no_accumulator{}, max_monoid{},
                   g.view(), g.view(), descriptor{.transpose_b = true});
}

csr_matrix<float, std::int64_t> fuzzy_union(csr_view<float, std::int64_t> input)
{
  const auto g = square_graph(input, "fuzzy_union");
  // G + Gᵀ - G∘Gᵀ: a + b - ab where both hold a value, the value itself where one does (0 stands
  // in for the missing one).
  return ewise_union(
      host_resources{}, std::nullopt, std::nullopt, no_accumulator{},
      [](double a, double b) { return a + b - a * b; }, g.view(), 0.0f, g.view(), 0.0f,
      descriptor{.transpose_b = true});
}

#define SPIRA_KNN_INSTANTIATE(ValueT, IndexT)                                    \
  template knn_result knn_graph(const host_resources&, csr_view<ValueT, IndexT>, \
                                std::optional<csr_view<ValueT, IndexT>>, const knn_params&);
SPIRA_FOR_EACH_VALUE_INDEX(SPIRA_KNN_INSTANTIATE)
#undef SPIRA_KNN_INSTANTIATE

}  // namespace spira
