// The fused CUDA k-NN of the built-in metrics for ValueT = double, IndexT = int32_t.
#include "knn_fused.cuh"

SPIRA_KNN_FUSED_INSTANTIATE(double, std::int32_t)
