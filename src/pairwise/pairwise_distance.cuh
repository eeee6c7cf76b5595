// CUDA dispatch of the built-in metrics onto the templated engine (spira/cuda/pairwise.cuh).
// Included by one translation unit per (value, index) type so that they compile in parallel.
#pragma once

#include <semirings/distances.hpp>
#include <spira/cuda/pairwise.cuh>
#include <spira/distance.hpp>

#include "../knn/knn_cuda.hpp"

#include <cmath>
#include <memory>
#include <type_traits>

namespace spira {

/// The checks of a built-in metric's arguments that the engine itself does not make: minkowski's
/// p, the strategy, and nonnegative values for the metrics of distributions. A and B on the device.
template <class ValueT, class IndexT>
void check_metric_args(const cuda_resources& res, csr_view<ValueT, IndexT> a,
                       csr_view<ValueT, IndexT> b, const distance_params& params, const char* op)
{
  const metric m = params.metric;
  detail::check_minkowski_p(m, params.p, op);
  detail::check_strategy_supported(m, params.strategy, op);
  if (requires_nonnegative(m)) {
    detail::require_device_space(a.space, op, "A");
    detail::require_device_space(b.space, op, "B");
    detail::device_guard scope(res.device);
    detail::check_nonnegative(res, a, op, "A", to_string(m));
    detail::check_nonnegative(res, b, op, "B", to_string(m));
  }
}

namespace detail {

/// prepared_distance_operand of the metric's distance struct D.
template <class D, class ValueT, class IndexT>
class prepared_metric final : public prepared_distance_operand {
 public:
  prepared_metric(const cuda_resources& res, const D& d, csr_view<ValueT, IndexT> b)
      : prepared(res, d, b)
  {
  }
  [[nodiscard]] std::size_t device_bytes() const override { return prepared.device_bytes(); }
  pairwise_prepared<D, ValueT, IndexT> prepared;
};

/// The built-in metric's distances on the GPU; `check_operands` = false skips the validation of
/// the operands (the metric's own checks are check_metric_args, made by the callers).
template <class ValueT, class IndexT>
void pairwise_distance_run(const cuda_resources& res, csr_view<ValueT, IndexT> a,
                           csr_view<ValueT, IndexT> b, dense_view<ValueT> out,
                           const distance_params& params, bool check_operands,
                           prepared_distance_operand* prepared_b = nullptr)
{
  visit_metric(params.metric, params.p, [&](const auto& d) {
    using D = std::decay_t<decltype(d)>;
    pairwise_prepared<D, ValueT, IndexT>* pb = nullptr;
    if (prepared_b != nullptr) {
      auto* m = dynamic_cast<prepared_metric<D, ValueT, IndexT>*>(prepared_b);
      expects(m != nullptr, "pairwise_distance: B was prepared for another metric than ",
              to_string(params.metric));
      pb = &m->prepared;
    }
    detail::pairwise_cuda(res, a, b, out, d, params.strategy, params.workspace_bytes,
                          "params.workspace_bytes", check_operands, pb);
  });
}

template <class ValueT, class IndexT>
std::unique_ptr<prepared_distance_operand> prepare_distance_operand(const cuda_resources& res,
                                                                    csr_view<ValueT, IndexT> b,
                                                                    const distance_params& params)
{
  return visit_metric(params.metric, params.p,
                      [&](const auto& d) -> std::unique_ptr<prepared_distance_operand> {
                        using D = std::decay_t<decltype(d)>;
                        return std::make_unique<prepared_metric<D, ValueT, IndexT>>(res, d, b);
                      });
}

template <class ValueT, class IndexT>
void pairwise_distance_checked(const cuda_resources& res, csr_view<ValueT, IndexT> a,
                               csr_view<ValueT, IndexT> b, dense_view<ValueT> out,
                               const distance_params& params, prepared_distance_operand* prepared_b)
{
  pairwise_distance_run(res, a, b, out, params, false, prepared_b);
}

}  // namespace detail

template <class ValueT, class IndexT>
void pairwise_distance(const cuda_resources& res, csr_view<ValueT, IndexT> a,
                       csr_view<ValueT, IndexT> b, dense_view<ValueT> out,
                       const distance_params& params)
{
  check_metric_args(res, a, b, params, "spira::pairwise_distance");
  detail::pairwise_distance_run(res, a, b, out, params, true);
}

}  // namespace spira

/// Explicit instantiations of the built-in metrics' pairwise_distance (and its prepared
/// operands) for one value and index type (src/pairwise/metrics_cuda_*.cu).
#define SPIRA_PAIRWISE_INSTANTIATE(ValueT, IndexT)                                                 \
  namespace spira {                                                                                \
  template void pairwise_distance(const cuda_resources&, csr_view<ValueT, IndexT>,                 \
                                  csr_view<ValueT, IndexT>, dense_view<ValueT>,                    \
                                  const distance_params&);                                         \
  template void detail::pairwise_distance_checked(const cuda_resources&, csr_view<ValueT, IndexT>, \
                                                  csr_view<ValueT, IndexT>, dense_view<ValueT>,    \
                                                  const distance_params&,                          \
                                                  detail::prepared_distance_operand*);             \
  template std::unique_ptr<detail::prepared_distance_operand> detail::prepare_distance_operand(    \
      const cuda_resources&, csr_view<ValueT, IndexT>, const distance_params&);                    \
  }
