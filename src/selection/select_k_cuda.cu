// select_rows on the GPU for T = float, double and half, both index types (see select_k_cuda.cuh).
// One translation unit: the three value types share most of what is compiled (the headers, CUB,
// the host dispatch), so together they take about 60% of the CPU time of one unit per type.
#include "select_k_cuda.cuh"

#define SPIRA_SELECT_ROWS_INSTANTIATE(T)                                        \
  template void select_rows(const cuda_resources&, row_source<T, std::int32_t>, \
                            row_sink<T, std::int32_t>, const problem&);         \
  template void select_rows(const cuda_resources&, row_source<T, std::int64_t>, \
                            row_sink<T, std::int64_t>, const problem&);

namespace spira::selection {
SPIRA_SELECT_ROWS_INSTANTIATE(float)
SPIRA_SELECT_ROWS_INSTANTIATE(double)
SPIRA_SELECT_ROWS_INSTANTIATE(half)
}  // namespace spira::selection
