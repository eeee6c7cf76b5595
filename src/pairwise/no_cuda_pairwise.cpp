// The CUDA pairwise entry point of a host-only build: it exists and throws spira::not_compiled, so
// that programs link the same way against either build and fail with a clear message at run time.
#include <spira/distance.hpp>
#include <spira/error.hpp>

#include <cstdint>

namespace spira {

template <class ValueT, class IndexT>
void pairwise_distance(const cuda_resources&, csr_view<ValueT, IndexT>, csr_view<ValueT, IndexT>,
                       dense_view<ValueT>, const distance_params&)
{
  throw not_compiled(
      "spira::pairwise_distance(cuda_resources): this build of spira was compiled "
      "without CUDA (configure with SPIRA_ENABLE_CUDA=ON and a CUDA toolkit)");
}

template void pairwise_distance(const cuda_resources&, csr_view<float, std::int32_t>,
                                csr_view<float, std::int32_t>, dense_view<float>,
                                const distance_params&);
template void pairwise_distance(const cuda_resources&, csr_view<float, std::int64_t>,
                                csr_view<float, std::int64_t>, dense_view<float>,
                                const distance_params&);
template void pairwise_distance(const cuda_resources&, csr_view<double, std::int32_t>,
                                csr_view<double, std::int32_t>, dense_view<double>,
                                const distance_params&);
template void pairwise_distance(const cuda_resources&, csr_view<double, std::int64_t>,
                                csr_view<double, std::int64_t>, dense_view<double>,
                                const distance_params&);

}  // namespace spira
