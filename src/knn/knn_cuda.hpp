// The fused CUDA k-NN of the built-in metrics (spira/cuda/knn.cuh), behind a plain C++ interface
// for knn.cpp. Defined in knn_fused.cuh, compiled once per (value, index) type.
#pragma once

#include <spira/knn.hpp>

namespace spira::detail {

/// Whether knn_graph(cuda_resources) takes the fused algorithm for these operands (host views:
/// only shapes and nnz are read), given the device bytes it may use. Throws invalid_argument when
/// params.algo forces `fused` where it cannot run.
template <class V, class I>
bool knn_use_fused(csr_view<V, I> queries, csr_view<V, I> index, const knn_params& params,
                   std::size_t budget);

/// The fused k-NN of device CSR operands into device n_q x k arrays (sorted best first).
template <class V, class I>
void knn_fused_metric(const cuda_resources& res, csr_view<V, I> queries, csr_view<V, I> index,
                      const knn_params& params, dense_view<V> out_values,
                      dense_view<std::int64_t> out_indices);

}  // namespace spira::detail
