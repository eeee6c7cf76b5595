// The CUDA pieces of the built-in metrics' k-NN graph (src/knn/knn_cuda.cpp), behind a plain C++
// interface: the fused kernel (knn_fused.cuh, compiled once per (value, index) type), the distance
// tiles without a second check of their operands (src/pairwise/pairwise_distance.cuh) and the check
// of non-negative values on the device (src/pairwise/pairwise_support.cu).
#pragma once

#include <spira/distance.hpp>
#include <spira/knn.hpp>

#include <cstddef>
#include <memory>

namespace spira::detail {

/// Whether knn_graph(cuda_resources) takes the fused algorithm for these operands (only shapes and
/// nnz are read), given the device bytes it may use. Throws invalid_argument when params.algo
/// forces `fused` where it cannot run.
template <class ValueT, class IndexT>
bool knn_use_fused(csr_view<ValueT, IndexT> queries, csr_view<ValueT, IndexT> index,
                   const knn_params& params, std::size_t budget);

/// The fused k-NN of checked device CSR operands into device n_q x k arrays (sorted best first),
/// with k in place of params.k; with exclude_self and self_values, d(i, i) into self_values[i].
template <class ValueT, class IndexT>
void knn_fused_metric(const cuda_resources& res, csr_view<ValueT, IndexT> queries,
                      csr_view<ValueT, IndexT> index, const knn_params& params, std::int64_t k,
                      bool exclude_self, ValueT* self_values, dense_view<ValueT> out_values,
                      dense_view<std::int64_t> out_indices);

/// An operand B prepared once by the distance engine for calls with many A (the metric's
/// pairwise_prepared, spira/cuda/detail/pairwise_context.cuh, behind a plain C++ interface): made
/// by prepare_distance_operand, passed to pairwise_distance_checked with the same B and params.
class prepared_distance_operand {
 public:
  virtual ~prepared_distance_operand() = default;
  /// Bytes of device memory held (grows when a strategy builds its part on first use).
  [[nodiscard]] virtual std::size_t device_bytes() const = 0;
};

/// B (checked, on the device) prepared for the metric of params.
template <class ValueT, class IndexT>
std::unique_ptr<prepared_distance_operand> prepare_distance_operand(const cuda_resources& res,
                                                                    csr_view<ValueT, IndexT> b,
                                                                    const distance_params& params);

/// pairwise_distance on the GPU for operands already checked (canonical, values in the metric's
/// domain): the k-NN driver's distance tiles. `prepared_b`: B prepared by prepare_distance_operand
/// with the same params, or nullptr; the values are the same either way.
template <class ValueT, class IndexT>
void pairwise_distance_checked(const cuda_resources& res, csr_view<ValueT, IndexT> a,
                               csr_view<ValueT, IndexT> b, dense_view<ValueT> out,
                               const distance_params& params,
                               prepared_distance_operand* prepared_b = nullptr);

/// Throws spira::invalid_argument naming the first negative value of a device CSR (by row and
/// column) when it has one.
template <class ValueT, class IndexT>
void check_nonnegative(const cuda_resources& res, csr_view<ValueT, IndexT> m, const char* op,
                       const char* name, const char* what);

}  // namespace spira::detail
