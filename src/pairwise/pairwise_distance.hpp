// Host dispatch of the built-in metrics onto the header-only engine (spira/ops.hpp). Included by
// one translation unit per value type so that the two halves compile in parallel.
#pragma once

#include <semirings/distances.hpp>
#include <spira/detail/knn_host_disjoint.hpp>
#include <spira/distance.hpp>
#include <spira/ops.hpp>

#include "pairwise_host.hpp"

#include <cmath>
#include <memory>
#include <type_traits>

namespace spira::detail {

template <class ValueT, class IndexT>
void check_nonnegative(const host_resources& res, csr_view<ValueT, IndexT> m, const char* name,
                       metric mt)
{
  std::int64_t bad = m.nnz;
#pragma omp parallel for num_threads(res.num_threads()) reduction(min : bad) schedule(static)
  for (std::int64_t k = 0; k < m.nnz; ++k) {
    if (m.values[k] < ValueT(0)) {
      bad = std::min(bad, k);
    }
  }
  if (bad == m.nnz) {
    return;
  }
  const offset_t* it = std::upper_bound(m.row_ptr, m.row_ptr + m.rows + 1, offset_t(bad));
  const std::int64_t row = (it - m.row_ptr) - 1;
  throw invalid_argument(concat("spira::pairwise_distance: metric ", to_string(mt),
                                " requires non-negative values, but ", name, " has ", m.values[bad],
                                " at row ", row, ", column ", m.col_idx[bad]));
}

template <class ValueT, class IndexT>
void pairwise_distance_host(const host_resources& res, csr_view<ValueT, IndexT> a,
                            csr_view<ValueT, IndexT> b, dense_view<ValueT> out,
                            const distance_params& params)
{
  const metric m = params.metric;
  check_minkowski_p(m, params.p, "spira::pairwise_distance");
  if (requires_nonnegative(m)) {
    require_host_space(a.space, "spira::pairwise_distance", "A");
    require_host_space(b.space, "spira::pairwise_distance", "B");
    check_nonnegative(res, a, "A", m);
    check_nonnegative(res, b, "B", m);
  }
  visit_metric(m, params.p, [&](const auto& d) { pairwise(res, a, b, out, d); });
}

/// host_prepared_distance_operand of the metric's distance struct D.
template <class D, class ValueT, class IndexT>
class host_prepared_metric final : public host_prepared_distance_operand {
 public:
  host_prepared_metric(const host_resources& res, const D& d, csr_view<ValueT, IndexT> b)
      : prepared(res, d, b)
  {
  }
  [[nodiscard]] std::size_t host_bytes() const override { return prepared.host_bytes(); }
  host_pairwise_prepared<D, ValueT, IndexT> prepared;
};

template <class ValueT, class IndexT>
std::unique_ptr<host_prepared_distance_operand> prepare_host_distance_operand(
    const host_resources& res, csr_view<ValueT, IndexT> b, const distance_params& params)
{
  check_minkowski_p(params.metric, params.p, "spira::pairwise_distance");
  return visit_metric(params.metric, params.p,
                      [&](const auto& d) -> std::unique_ptr<host_prepared_distance_operand> {
                        using D = std::decay_t<decltype(d)>;
                        return std::make_unique<host_prepared_metric<D, ValueT, IndexT>>(res, d, b);
                      });
}

template <class ValueT, class IndexT>
void pairwise_distance_tile(const host_resources& res, csr_view<ValueT, IndexT> a,
                            csr_view<ValueT, IndexT> b, dense_view<ValueT> out,
                            const distance_params& params,
                            host_prepared_distance_operand* prepared_b)
{
  check_minkowski_p(params.metric, params.p, "spira::pairwise_distance");
  visit_metric(params.metric, params.p, [&](const auto& d) {
    using D = std::decay_t<decltype(d)>;
    host_pairwise_prepared<D, ValueT, IndexT>* pb = nullptr;
    if (prepared_b != nullptr) {
      auto* m = dynamic_cast<host_prepared_metric<D, ValueT, IndexT>*>(prepared_b);
      expects(m != nullptr, "pairwise_distance: B was prepared for another metric than ",
              to_string(params.metric));
      pb = &m->prepared;
    }
    pairwise_host(res, a, b, out, d, pb);
  });
}

template <class ValueT, class IndexT>
bool knn_host_by_rows(const host_resources& res, csr_view<ValueT, IndexT> queries,
                      csr_view<ValueT, IndexT> index, const knn_params& params, bool largest,
                      std::int64_t k, bool skip_self, ValueT* self_values, knn_result& out,
                      std::size_t budget)
{
  return visit_metric(params.metric, params.p, [&](const auto& d) {
    using D = std::decay_t<decltype(d)>;
    if constexpr (knn_host_disjoint_v<D>) {
      return knn_host_disjoint(res, queries, index, d, params, largest, k, skip_self, self_values,
                               out, budget);
    } else {
      return false;
    }
  });
}

template <class ValueT, class IndexT>
bool host_distances_symmetric(const distance_params& params)
{
  return visit_metric(params.metric, params.p, [](const auto& d) {
    return symmetric_capable_v<std::decay_t<decltype(d)>, host_compute_t>;
  });
}

/// The host entries of ValueT for both index types (pairwise_distance_float.cpp, ..._double.cpp).
#define SPIRA_PAIRWISE_HOST_INSTANTIATE(ValueT, IndexT)                                           \
  template std::unique_ptr<host_prepared_distance_operand> prepare_host_distance_operand(         \
      const host_resources&, csr_view<ValueT, IndexT>, const distance_params&);                   \
  template void pairwise_distance_tile(const host_resources&, csr_view<ValueT, IndexT>,           \
                                       csr_view<ValueT, IndexT>, dense_view<ValueT>,              \
                                       const distance_params&, host_prepared_distance_operand*);  \
  template bool knn_host_by_rows(const host_resources&, csr_view<ValueT, IndexT>,                 \
                                 csr_view<ValueT, IndexT>, const knn_params&, bool, std::int64_t, \
                                 bool, ValueT*, knn_result&, std::size_t);                        \
  template bool host_distances_symmetric<ValueT, IndexT>(const distance_params&);

}  // namespace spira::detail
