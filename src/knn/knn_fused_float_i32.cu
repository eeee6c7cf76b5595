// The fused CUDA k-NN of the built-in metrics for ValueT = float, IndexT = int32_t.
#include "knn_fused.cuh"

SPIRA_KNN_FUSED_INSTANTIATE(float, std::int32_t)
