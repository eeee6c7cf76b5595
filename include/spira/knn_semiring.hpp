// spira: exact k-NN graphs for a user-defined semiring or distance struct, on the host backend.
//
//   #include <spira/knn_semiring.hpp>
//   auto g = spira::knn_graph(spira::host_resources{}, index.view(), std::nullopt, my_distance{},
//                             spira::select_order::smallest, {.k = 15});
//
// The contract of spira::knn_graph (spira/knn.hpp) - tiles under the memory budget, a row-wise
// select_k per tile, a running merge, rows best first with the smaller index first among ties,
// exclude_self - with the distances of D from the host engine (spira/ops.hpp). `order` says which
// end of D's values is kept: smallest for distances, largest for similarities. params.metric, p,
// algo and strategy are not used. The CUDA counterpart, which also fuses the top-k into the
// distance kernel, is in spira/cuda/knn.cuh.
#pragma once

#include <spira/detail/knn_tiles.hpp>
#include <spira/knn.hpp>
#include <spira/ops.hpp>
#include <spira/select_k.hpp>

#include <optional>
#include <vector>

namespace spira {

template <class D, class V, class I>
knn_result knn_graph(const host_resources& res, csr_view<V, I> index,
                     std::type_identity_t<std::optional<csr_view<V, I>>> queries, const D& d,
                     select_order order,
                     const knn_params& params)
{
  const csr_view<V, I> q = detail::check_knn_args(index, queries, params);
  detail::expects(params.algo != knn_algo::fused,
                  "knn_graph: the fused algorithm runs on the CUDA backend only");
  const std::size_t budget =
    params.memory_budget > 0 ? params.memory_budget : detail::knn_default_host_budget();
  const detail::knn_tiling t =
    detail::plan_knn_tiles(budget, q.rows, index.rows, params.k, sizeof(V), params);
  std::vector<offset_t> qptr;
  std::vector<offset_t> iptr;
  return detail::run_knn_tiles(
    index, q, params, order == select_order::largest, t, res.num_threads(),
    [&](std::int64_t q0, std::int64_t q1, std::int64_t i0, std::int64_t i1, std::int64_t kt,
        dense_view<V> tv, dense_view<std::int64_t> tix) {
      dense_matrix<V> dist(res, q1 - q0, i1 - i0);
      pairwise(res, row_slice(q, q0, q1, qptr), row_slice(index, i0, i1, iptr), dist.view(), d);
      select_k<V, std::int64_t>(res, dense_view<const V>(dist.view()), kt, order, tv, tix,
                                {.sorted = true});
    });
}

}  // namespace spira
