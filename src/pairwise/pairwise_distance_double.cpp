// Built-in metrics on the host for ValueT = double.
#include "pairwise_distance.hpp"

namespace spira {

template <class ValueT, class IndexT>
void pairwise_distance(const host_resources& res, csr_view<ValueT, IndexT> a,
                       csr_view<ValueT, IndexT> b, dense_view<ValueT> out,
                       const distance_params& params)
{
  detail::pairwise_distance_host(res, a, b, out, params);
}

template void pairwise_distance(const host_resources&, csr_view<double, std::int32_t>,
                                csr_view<double, std::int32_t>, dense_view<double>,
                                const distance_params&);
template void pairwise_distance(const host_resources&, csr_view<double, std::int64_t>,
                                csr_view<double, std::int64_t>, dense_view<double>,
                                const distance_params&);

namespace detail {
SPIRA_PAIRWISE_HOST_INSTANTIATE(double, std::int32_t)
SPIRA_PAIRWISE_HOST_INSTANTIATE(double, std::int64_t)
}  // namespace detail

}  // namespace spira
