// CUDA dispatch of the built-in metrics onto the templated engine (spira/cuda/pairwise.cuh).
// Included by one translation unit per (value, index) type so that they compile in parallel.
#pragma once

#include <semirings/distances.hpp>
#include <spira/cuda/pairwise.cuh>
#include <spira/distance.hpp>

#include <cmath>

namespace spira {

template <class V, class I>
void pairwise_distance(const cuda_resources& res, csr_view<V, I> a, csr_view<V, I> b,
                       dense_view<V> out, const distance_params& params)
{
  constexpr const char* op = "spira::pairwise_distance";
  const metric m = params.metric;
  if (m == metric::minkowski) {
    detail::expects(std::isfinite(params.p) && params.p >= 1.0, op,
                    ": minkowski needs a finite p >= 1, got p = ", params.p);
  }
  detail::expects(supports_strategy(m, params.strategy), op, ": strategy ",
                  to_string(params.strategy), " cannot evaluate metric ", to_string(m),
                  " (see spira::supports_strategy)");
  if (requires_nonnegative(m)) {
    detail::require_device_space(a.space, op, "A");
    detail::require_device_space(b.space, op, "B");
    detail::pairwise_device_scope scope(res.device);
    detail::check_nonnegative(res, a, op, "A", to_string(m));
    detail::check_nonnegative(res, b, op, "B", to_string(m));
  }
  const pairwise_strategy s = params.strategy;
  namespace d = spira::distances;
  switch (m) {
    case metric::cosine: return pairwise(res, a, b, out, d::cosine{}, s);
    case metric::euclidean: return pairwise(res, a, b, out, d::euclidean{}, s);
    case metric::sqeuclidean: return pairwise(res, a, b, out, d::sqeuclidean{}, s);
    case metric::manhattan: return pairwise(res, a, b, out, d::manhattan{}, s);
    case metric::chebyshev: return pairwise(res, a, b, out, d::chebyshev{}, s);
    case metric::minkowski: return pairwise(res, a, b, out, d::minkowski{params.p}, s);
    case metric::canberra: return pairwise(res, a, b, out, d::canberra{}, s);
    case metric::braycurtis: return pairwise(res, a, b, out, d::braycurtis{}, s);
    case metric::hamming: return pairwise(res, a, b, out, d::hamming{}, s);
    case metric::jaccard: return pairwise(res, a, b, out, d::jaccard{}, s);
    case metric::dice: return pairwise(res, a, b, out, d::dice{}, s);
    case metric::russellrao: return pairwise(res, a, b, out, d::russellrao{}, s);
    case metric::correlation: return pairwise(res, a, b, out, d::correlation{}, s);
    case metric::jensenshannon: return pairwise(res, a, b, out, d::jensenshannon{}, s);
    case metric::hellinger: return pairwise(res, a, b, out, d::hellinger{}, s);
    case metric::kl_divergence: return pairwise(res, a, b, out, d::kl_divergence{}, s);
    case metric::inner_product: return pairwise(res, a, b, out, d::inner_product{}, s);
  }
  throw invalid_argument(detail::concat(op, ": unknown metric value ", static_cast<int>(m)));
}

}  // namespace spira
