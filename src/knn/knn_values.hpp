// The check of the metrics of distributions on the k-NN graph's operands (non-negative values),
// made once per call on the whole input, so that a bad value is reported at its row of the
// caller's matrix and as the index or the queries.
#pragma once

#include <spira/distance.hpp>
#include <spira/error.hpp>
#include <spira/knn.hpp>

#include <optional>

namespace spira::detail {

/// Host operands.
template <class ValueT, class IndexT>
void check_nonnegative_input(csr_view<ValueT, IndexT> index,
                             std::optional<csr_view<ValueT, IndexT>> queries,
                             const knn_params& params)
{
  if (!requires_nonnegative(params.metric)) {
    return;
  }
  const auto check = [&](csr_view<ValueT, IndexT> m, const char* name) {
    for (std::int64_t i = 0; i < m.rows; ++i) {
      for (offset_t e = m.row_ptr[i]; e < m.row_ptr[i + 1]; ++e) {
        if (m.values[e] < ValueT(0)) {
          throw invalid_argument(concat("knn_graph: metric ", to_string(params.metric),
                                        " requires non-negative values, but ", name, " has ",
                                        m.values[e], " at row ", i, ", column ", m.col_idx[e]));
        }
      }
    }
  };
  if (queries) {
    check(*queries, "the query matrix");
  }
  check(index, "the index");
}

}  // namespace spira::detail
