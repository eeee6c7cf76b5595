// The fused CUDA k-NN for the built-in metrics: spira::detail::knn_fused_run with the metric's
// distance struct. Included by one translation unit per (value, index) type.
#pragma once

#include "../pairwise/pairwise_distance.cuh"
#include "knn_cuda.hpp"

#include <spira/cuda/knn.cuh>

namespace spira::detail {

template <class ValueT, class IndexT>
bool knn_use_fused(csr_view<ValueT, IndexT> queries, csr_view<ValueT, IndexT> index,
                   const knn_params& params, std::size_t budget)
{
  return visit_metric(params.metric, params.p, [&](const auto& d) {
    return knn_fused_applies<std::decay_t<decltype(d)>>(queries, index, params, budget);
  });
}

template <class ValueT, class IndexT>
void knn_fused_metric(const cuda_resources& res, csr_view<ValueT, IndexT> queries,
                      csr_view<ValueT, IndexT> index, const knn_params& params, std::int64_t k,
                      bool exclude_self, ValueT* self_values, dense_view<ValueT> out_values,
                      dense_view<std::int64_t> out_indices)
{
  visit_metric(params.metric, params.p, [&](const auto& d) {
    using D = std::decay_t<decltype(d)>;
    if constexpr (intersection_capable_v<D, ValueT>) {
      knn_fused_run(res, queries, index, d, k, is_similarity(params.metric), exclude_self,
                    self_values, out_values, out_indices, params.progress);
    } else {
      throw invalid_argument(
          concat("knn_graph: metric ", to_string(params.metric), " has no fused k-NN"));
    }
  });
}

}  // namespace spira::detail

#define SPIRA_KNN_FUSED_INSTANTIATE(ValueT, IndexT)                                               \
  namespace spira::detail {                                                                       \
  template bool knn_use_fused(csr_view<ValueT, IndexT>, csr_view<ValueT, IndexT>,                 \
                              const knn_params&, std::size_t);                                    \
  template void knn_fused_metric(const cuda_resources&, csr_view<ValueT, IndexT>,                 \
                                 csr_view<ValueT, IndexT>, const knn_params&, std::int64_t, bool, \
                                 ValueT*, dense_view<ValueT>, dense_view<std::int64_t>);          \
  }
