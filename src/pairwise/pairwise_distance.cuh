// CUDA dispatch of the built-in metrics onto the templated engine (spira/cuda/pairwise.cuh).
// Included by one translation unit per (value, index) type so that they compile in parallel.
#pragma once

#include <semirings/distances.hpp>
#include <spira/cuda/pairwise.cuh>
#include <spira/distance.hpp>

#include "../knn/knn_cuda.hpp"

#include <cmath>

namespace spira {

/// The checks of a built-in metric's arguments that the engine itself does not make: minkowski's
/// p, the strategy, and nonnegative values for the metrics of distributions. A and B on the device.
template <class V, class I>
void check_metric_args(const cuda_resources& res, csr_view<V, I> a, csr_view<V, I> b,
                       const distance_params& params, const char* op)
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

/// The built-in metric's distances on the GPU; `check_operands` = false skips the validation of
/// the operands (the metric's own checks are check_metric_args, made by the callers).
template <class V, class I>
void pairwise_distance_run(const cuda_resources& res, csr_view<V, I> a, csr_view<V, I> b,
                           dense_view<V> out, const distance_params& params, bool check_operands)
{
  visit_metric(params.metric, params.p, [&](const auto& d) {
    detail::pairwise_cuda(res, a, b, out, d, params.strategy, params.workspace_bytes,
                          "params.workspace_bytes", check_operands);
  });
}

template <class V, class I>
void pairwise_distance_checked(const cuda_resources& res, csr_view<V, I> a, csr_view<V, I> b,
                               dense_view<V> out, const distance_params& params)
{
  pairwise_distance_run(res, a, b, out, params, false);
}

}  // namespace detail

template <class V, class I>
void pairwise_distance(const cuda_resources& res, csr_view<V, I> a, csr_view<V, I> b,
                       dense_view<V> out, const distance_params& params)
{
  check_metric_args(res, a, b, params, "spira::pairwise_distance");
  detail::pairwise_distance_run(res, a, b, out, params, true);
}

}  // namespace spira
