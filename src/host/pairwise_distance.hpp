// Host dispatch of the built-in metrics onto the header-only engine (spira/ops.hpp). Included by
// one translation unit per value type so that the two halves compile in parallel.
#pragma once

#include <semirings/distances.hpp>
#include <spira/distance.hpp>
#include <spira/ops.hpp>

#include <cmath>

namespace spira::detail {

template <class V, class I>
void check_nonnegative(const host_resources& res, csr_view<V, I> m, const char* name, metric mt)
{
  std::int64_t bad = m.nnz;
#pragma omp parallel for num_threads(res.num_threads()) reduction(min : bad) schedule(static)
  for (std::int64_t k = 0; k < m.nnz; ++k) {
    if (m.values[k] < V(0)) { bad = std::min(bad, k); }
  }
  if (bad == m.nnz) { return; }
  const offset_t* it = std::upper_bound(m.row_ptr, m.row_ptr + m.rows + 1, offset_t(bad));
  const std::int64_t row = (it - m.row_ptr) - 1;
  throw invalid_argument(concat("spira::pairwise_distance: metric ", to_string(mt),
                                " requires non-negative values, but ", name, " has ",
                                m.values[bad], " at row ", row, ", column ", m.col_idx[bad]));
}

template <class V, class I>
void pairwise_distance_host(const host_resources& res, csr_view<V, I> a, csr_view<V, I> b,
                            dense_view<V> out, const distance_params& params)
{
  const metric m = params.metric;
  if (m == metric::minkowski) {
    expects(std::isfinite(params.p) && params.p >= 1.0,
            "spira::pairwise_distance: minkowski needs a finite p >= 1, got p = ", params.p);
  }
  if (requires_nonnegative(m)) {
    require_host_space(a.space, "spira::pairwise_distance", "A");
    require_host_space(b.space, "spira::pairwise_distance", "B");
    check_nonnegative(res, a, "A", m);
    check_nonnegative(res, b, "B", m);
  }
  namespace d = spira::distances;
  switch (m) {
    case metric::cosine: return pairwise(res, a, b, out, d::cosine{});
    case metric::euclidean: return pairwise(res, a, b, out, d::euclidean{});
    case metric::sqeuclidean: return pairwise(res, a, b, out, d::sqeuclidean{});
    case metric::manhattan: return pairwise(res, a, b, out, d::manhattan{});
    case metric::chebyshev: return pairwise(res, a, b, out, d::chebyshev{});
    case metric::minkowski: return pairwise(res, a, b, out, d::minkowski{params.p});
    case metric::canberra: return pairwise(res, a, b, out, d::canberra{});
    case metric::braycurtis: return pairwise(res, a, b, out, d::braycurtis{});
    case metric::hamming: return pairwise(res, a, b, out, d::hamming{});
    case metric::jaccard: return pairwise(res, a, b, out, d::jaccard{});
    case metric::dice: return pairwise(res, a, b, out, d::dice{});
    case metric::russellrao: return pairwise(res, a, b, out, d::russellrao{});
    case metric::correlation: return pairwise(res, a, b, out, d::correlation{});
    case metric::jensenshannon: return pairwise(res, a, b, out, d::jensenshannon{});
    case metric::hellinger: return pairwise(res, a, b, out, d::hellinger{});
    case metric::kl_divergence: return pairwise(res, a, b, out, d::kl_divergence{});
    case metric::inner_product: return pairwise(res, a, b, out, d::inner_product{});
  }
  throw invalid_argument(concat("spira::pairwise_distance: unknown metric value ",
                                static_cast<int>(m)));
}

}  // namespace spira::detail
