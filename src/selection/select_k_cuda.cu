// select_rows on the GPU for every value type of select_k (float, double, half) and index type
// (see select_k_cuda.cuh). One translation unit: the three value types share most of what is
// compiled (the headers, CUB, the host dispatch), so together they take about 60% of the CPU time
// of one unit per type.
#include "select_k_cuda.cuh"

#include <spira/detail/type_lists.hpp>

#define SPIRA_SELECT_ROWS_INSTANTIATE(T, IndexT)                                               \
  template void select_rows(const cuda_resources&, row_source<T, IndexT>, row_sink<T, IndexT>, \
                            const problem&);

namespace spira::selection {
SPIRA_FOR_EACH_SELECT_VALUE_INDEX(SPIRA_SELECT_ROWS_INSTANTIATE)
}  // namespace spira::selection
