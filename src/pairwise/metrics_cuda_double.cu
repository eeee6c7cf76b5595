// The built-in metrics on the GPU for ValueT = double, both index types: pairwise_distance (with
// its prepared operands) and the fused k-NN. One translation unit per value type: the kernels that
// depend on the value type alone (row norms, corrections, right sides) and the pairwise setup the
// fused k-NN shares with pairwise_distance are then compiled once instead of up to four times.
#include "../knn/knn_fused.cuh"
#include "pairwise_distance.cuh"

#include <spira/detail/type_lists.hpp>

SPIRA_FOR_EACH_INDEX(SPIRA_PAIRWISE_INSTANTIATE, double)
SPIRA_FOR_EACH_INDEX(SPIRA_KNN_FUSED_INSTANTIATE, double)
