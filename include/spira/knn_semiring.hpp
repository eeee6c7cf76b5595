// spira: exact k-NN graphs for a user-defined semiring or distance struct, on the host backend.
//
//   #include <spira/knn_semiring.hpp>
//   auto g = spira::knn_graph(spira::host_resources{}, index.view(), std::nullopt, my_distance{},
//                             spira::select_order::smallest, {.k = 15});
//
// The contract of spira::knn_graph (spira/knn.hpp) - tiles under the memory budget, a row-wise
// select_k per tile, a running merge, rows best first with the smaller index first among ties,
// exclude_self - with the distances of D from the host engine (spira/ops.hpp), each index tile
// prepared once for the engine when several query tiles use it. `order` says which
// end of D's values is kept: smallest for distances, largest for similarities. params.metric, p,
// algo and strategy are not used. The CUDA counterpart, which also fuses the top-k into the
// distance kernel, is in spira/cuda/knn.cuh.
#pragma once

#include <spira/detail/knn_host_ops.hpp>
#include <spira/knn.hpp>
#include <spira/ops.hpp>
#include <spira/select_k.hpp>

#include <memory>
#include <optional>

namespace spira {

template <class D, class ValueT, class IndexT>
knn_result knn_graph(const host_resources& res, csr_view<ValueT, IndexT> index,
                     std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> queries,
                     const D& d, select_order order, const knn_params& params)
{
  detail::check_knn_args(index, queries, params);
  return detail::knn_host(
      res, index, queries, params, order == select_order::largest,
      [&](csr_view<ValueT, IndexT> qv, csr_view<ValueT, IndexT> iv, dense_view<ValueT> out,
          detail::host_pairwise_prepared<D, ValueT, IndexT>* prepared) {
        detail::pairwise_host(res, qv, iv, out, d, prepared);
      },
      [&](csr_view<ValueT, IndexT> iv) {
        return std::make_unique<detail::host_pairwise_prepared<D, ValueT, IndexT>>(res, d, iv);
      });
}

}  // namespace spira
