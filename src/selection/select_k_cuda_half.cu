// select_rows on the GPU for T = half (see select_k_cuda.cuh).
#include "select_k_cuda.cuh"

namespace spira::selection {
template void select_rows(const cuda_resources&, row_source<half, std::int32_t>,
                          row_sink<half, std::int32_t>, const problem&);
template void select_rows(const cuda_resources&, row_source<half, std::int64_t>,
                          row_sink<half, std::int64_t>, const problem&);
}  // namespace spira::selection
