// The k-NN graph of the built-in metrics on the GPU (CUDA builds; a host-only build has the
// not_compiled entry in src/core/no_cuda.cpp): the arguments and values are checked once, then the
// one k-NN driver (spira/detail/knn_driver.hpp) runs with the CUDA pieces
// (spira/detail/knn_cuda_ops.hpp), the metric's fused kernel and its distance tiles.
#include <spira/detail/knn_cuda_ops.hpp>
#include <spira/detail/knn_driver.hpp>
#include <spira/detail/type_lists.hpp>
#include <spira/knn.hpp>

#include "knn_cuda.hpp"
#include "knn_values.hpp"

#include <optional>

namespace spira {

template <class ValueT, class IndexT>
knn_result knn_graph(const cuda_resources& res, csr_view<ValueT, IndexT> index,
                     std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> queries,
                     const knn_params& params)
{
  const csr_view<ValueT, IndexT> q = detail::check_knn_args(index, queries, params, true);
  detail::check_minkowski_p(params.metric, params.p, "knn_graph");
  detail::check_strategy_supported(params.metric, params.strategy, "knn_graph");
  detail::knn_validate(res, index, queries);
  if (index.space == memory_space::host) {
    detail::check_nonnegative_input(index, queries, params);
  } else if (requires_nonnegative(params.metric)) {
    const char* m = to_string(params.metric);
    if (queries) {
      detail::check_nonnegative(res, *queries, "knn_graph", "the query matrix", m);
    }
    detail::check_nonnegative(res, index, "knn_graph", "the index", m);
  }
  const std::size_t budget = detail::knn_cuda_budget(res, params);
  const bool use_fused = detail::knn_use_fused(q, index, params, budget);
  const distance_params dp{.metric = params.metric, .p = params.p, .strategy = params.strategy};
  return detail::knn_cuda(
      res, index, queries, params, is_similarity(params.metric), budget, use_fused,
      [&](csr_view<ValueT, IndexT> qv, csr_view<ValueT, IndexT> iv, dense_view<ValueT> out,
          detail::prepared_distance_operand* prepared) {
        detail::pairwise_distance_checked(res, qv, iv, out, dp, prepared);
      },
      [&](csr_view<ValueT, IndexT> iv) { return detail::prepare_distance_operand(res, iv, dp); },
      [&](csr_view<ValueT, IndexT> qv, csr_view<ValueT, IndexT> iv, std::int64_t k,
          bool exclude_self, ValueT* self_values, dense_view<ValueT> dv,
          dense_view<std::int64_t> di) {
        detail::knn_fused_metric(res, qv, iv, params, k, exclude_self, self_values, dv, di);
      });
}

#define SPIRA_KNN_INSTANTIATE(ValueT, IndexT)                                    \
  template knn_result knn_graph(const cuda_resources&, csr_view<ValueT, IndexT>, \
                                std::optional<csr_view<ValueT, IndexT>>, const knn_params&);
SPIRA_FOR_EACH_VALUE_INDEX(SPIRA_KNN_INSTANTIATE)
#undef SPIRA_KNN_INSTANTIATE

}  // namespace spira
