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
    if (m.values[k] < V(0)) {
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

template <class V, class I>
void pairwise_distance_host(const host_resources& res, csr_view<V, I> a, csr_view<V, I> b,
                            dense_view<V> out, const distance_params& params)
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

}  // namespace spira::detail
