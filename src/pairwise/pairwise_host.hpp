// The host pieces of the built-in metrics' k-NN graph (src/knn/knn.cpp), behind a plain interface
// so that the metric engines are compiled once, in the pairwise translation units
// (pairwise_distance_float.cpp, pairwise_distance_double.cpp): an index tile prepared once for the
// host engine, and the distance tiles.
#pragma once

#include <spira/distance.hpp>
#include <spira/knn.hpp>
#include <spira/resources.hpp>

#include <cstddef>
#include <memory>

namespace spira::detail {

/// An operand B prepared once by the host engine for calls with many A (the metric's
/// host_pairwise_prepared, spira/detail/host_pairwise_common.hpp, behind a plain interface): made
/// by prepare_host_distance_operand, passed to pairwise_distance_tile with the same B and params.
class host_prepared_distance_operand {
 public:
  virtual ~host_prepared_distance_operand() = default;
  /// Bytes of host memory held (grows when an engine builds its part on first use).
  [[nodiscard]] virtual std::size_t host_bytes() const = 0;
};

/// B (host CSR) prepared for the metric of params.
template <class ValueT, class IndexT>
std::unique_ptr<host_prepared_distance_operand> prepare_host_distance_operand(
    const host_resources& res, csr_view<ValueT, IndexT> b, const distance_params& params);

/// pairwise_distance on the host for operands whose values the caller checked against the metric
/// (non-negative where the metric requires it; the k-NN graph checks its whole input once): the
/// k-NN driver's distance tiles. `prepared_b`: B prepared by prepare_host_distance_operand with
/// the same params, or nullptr; the values are the same either way.
template <class ValueT, class IndexT>
void pairwise_distance_tile(const host_resources& res, csr_view<ValueT, IndexT> a,
                            csr_view<ValueT, IndexT> b, dense_view<ValueT> out,
                            const distance_params& params,
                            host_prepared_distance_operand* prepared_b = nullptr);

/// The k-NN graph of queries against index by rows without distance tiles
/// (spira/detail/knn_host_disjoint.hpp) for a metric with a disjoint value (cosine,
/// inner_product): true when it ran, false (nothing done) for the other metrics, an index row the
/// metric's disjoint_index refuses or accumulators beyond `budget` bytes. The arguments are those
/// of knn_host_ops::fused plus the metric's params.
template <class ValueT, class IndexT>
bool knn_host_by_rows(const host_resources& res, csr_view<ValueT, IndexT> queries,
                      csr_view<ValueT, IndexT> index, const knn_params& params, bool largest,
                      std::int64_t k, bool skip_self, ValueT* self_values, knn_result& out,
                      std::size_t budget);

/// Whether pairwise_distance_tile's value of (i, j) is its value of (j, i), bit for bit, for the
/// metric of params (the metrics whose host engine evaluates a matrix against itself as a
/// symmetric product: symmetric_capable_v): the k-NN graph's square tiles (knn_host_ops).
template <class ValueT, class IndexT>
bool host_distances_symmetric(const distance_params& params);

}  // namespace spira::detail
