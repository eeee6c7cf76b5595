// Built-in metrics on the GPU for ValueT = float, IndexT = int64_t.
#include "pairwise_distance.cuh"

namespace spira {
template void pairwise_distance(const cuda_resources&, csr_view<float, std::int64_t>,
                                csr_view<float, std::int64_t>, dense_view<float>,
                                const distance_params&);
template void detail::pairwise_distance_checked(const cuda_resources&,
                                                csr_view<float, std::int64_t>,
                                                csr_view<float, std::int64_t>, dense_view<float>,
                                                const distance_params&,
                                                detail::prepared_distance_operand*);
template std::unique_ptr<detail::prepared_distance_operand> detail::prepare_distance_operand(
    const cuda_resources&, csr_view<float, std::int64_t>, const distance_params&);
}  // namespace spira
