// The fused CUDA k-NN for the built-in metrics: the metric's checks, then spira::knn_fused.
// Included by one translation unit per (value, index) type.
#pragma once

#include "../cuda/pairwise_distance.cuh"
#include "knn_cuda.hpp"

#include <spira/cuda/knn.cuh>

namespace spira::detail {

template <class V, class I>
bool knn_use_fused(csr_view<V, I> queries, csr_view<V, I> index, const knn_params& params,
                   std::size_t budget)
{
  if (params.algo == knn_algo::tiled) { return false; }
  const bool forced = params.algo == knn_algo::fused;
  const bool tiles_forced = params.query_tile > 0 || params.index_tile > 0;
  expects(!forced || !tiles_forced, "knn_graph: query_tile and index_tile size the tiles of the "
          "tiled algorithm; they cannot be combined with the fused one");
  if (tiles_forced) { return false; }
  const pairwise_strategy s = visit_metric(params.metric, params.p, [&](const auto& d) {
    return resolve_strategy<std::decay_t<decltype(d)>>(queries, index, params.strategy);
  });
  expects(!forced || s == pairwise_strategy::intersection,
          "knn_graph: the fused algorithm needs the intersection strategy; ", to_string(s),
          " was ", params.strategy == pairwise_strategy::automatic ? "chosen" : "requested",
          " for metric ", to_string(params.metric));
  expects(!forced || params.k <= knn_fused_max_k, "knn_graph: the fused algorithm serves k <= ",
          knn_fused_max_k, ", got k = ", params.k);
  if (s != pairwise_strategy::intersection || params.k > knn_fused_max_k) { return false; }
  // Device bytes: the operands, the CSC of the index, the per-row statistics, the outputs.
  const auto csr_bytes = [](csr_view<V, I> m) {
    return std::size_t(m.nnz) * (sizeof(V) + sizeof(I)) + std::size_t(m.rows + 1) * 8;
  };
  const std::size_t need = 3 * csr_bytes(index) + 2 * csr_bytes(queries) +
                           std::size_t(index.rows + queries.rows) * 64 +
                           std::size_t(queries.rows * params.k) * (sizeof(V) + 8);
  expects<out_of_memory>(!forced || need <= budget, "knn_graph: the fused algorithm needs about ",
                         need, " device bytes, more than the memory budget of ", budget);
  return need <= budget;
}

template <class V, class I>
void knn_fused_metric(const cuda_resources& res, csr_view<V, I> queries, csr_view<V, I> index,
                      const knn_params& params, dense_view<V> out_values,
                      dense_view<std::int64_t> out_indices)
{
  const distance_params dp{.metric = params.metric, .p = params.p, .strategy = params.strategy};
  check_metric_args(res, queries, index, dp, "spira::knn_graph");
  visit_metric(params.metric, params.p, [&](const auto& d) {
    using D = std::decay_t<decltype(d)>;
    if constexpr (D::annihilating || distance_traits<D, V>::invertible_add ||
                  selection_namm_v<D, V>) {
      knn_fused(res, queries, index, d, params.k, is_similarity(params.metric),
                params.exclude_self, out_values, out_indices);
    } else {
      throw invalid_argument(concat("knn_graph: metric ", to_string(params.metric),
                                    " has no fused k-NN"));
    }
  });
}

}  // namespace spira::detail

#define SPIRA_KNN_FUSED_INSTANTIATE(V, I)                                                         \
  namespace spira::detail {                                                                       \
  template bool knn_use_fused(csr_view<V, I>, csr_view<V, I>, const knn_params&, std::size_t);   \
  template void knn_fused_metric(const cuda_resources&, csr_view<V, I>, csr_view<V, I>,          \
                                 const knn_params&, dense_view<V>, dense_view<std::int64_t>);    \
  }
