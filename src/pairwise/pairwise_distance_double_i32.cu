// Built-in metrics on the GPU for ValueT = double, IndexT = int32_t.
#include "pairwise_distance.cuh"

namespace spira {
template void pairwise_distance(const cuda_resources&, csr_view<double, std::int32_t>,
                                csr_view<double, std::int32_t>, dense_view<double>,
                                const distance_params&);
template void detail::pairwise_distance_checked(const cuda_resources&,
                                                csr_view<double, std::int32_t>,
                                                csr_view<double, std::int32_t>, dense_view<double>,
                                                const distance_params&,
                                                detail::prepared_distance_operand*);
template std::unique_ptr<detail::prepared_distance_operand> detail::prepare_distance_operand(
    const cuda_resources&, csr_view<double, std::int32_t>, const distance_params&);
}  // namespace spira
