// The kernels of the k-NN driver's CUDA pieces (spira/detail/knn_cuda_ops.hpp): the running merge,
// the conversion of the lists into the float graph, the insertion of each point in a self query,
// the diagonal of a distance tile and row slices of device matrices. One thread per row: k is
// small next to the distance tiles these follow, and each row's merge is sequential.
#include <spira/cuda/device.cuh>
#include <spira/cuda/error.cuh>
#include <spira/detail/knn_cuda_ops.hpp>

#include "../cuda/launch.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace spira::detail {

namespace {

cudaStream_t stream_of(const cuda_resources& res)
{
  return reinterpret_cast<cudaStream_t>(res.stream);
}

template <class ValueT>
__global__ void merge_tile_kernel(std::int64_t rows, std::int64_t k, const ValueT* run_values,
                                  const std::int64_t* run_indices, const ValueT* tile_values,
                                  const std::int64_t* tile_indices, std::int64_t kt,
                                  std::int64_t offset, std::int64_t skip_first, bool largest,
                                  ValueT* out_values, std::int64_t* out_indices)
{
  for (std::int64_t r = grid_thread_index(); r < rows; r += grid_stride()) {
    const std::int64_t* ri = run_indices + r * k;
    std::int64_t have = 0;
    while (have < k && ri[have] >= 0) {
      ++have;
    }
    ValueT* ov = out_values + r * k;
    std::int64_t* oi = out_indices + r * k;
    const std::int64_t merged = knn_merge_sorted<ValueT>(
        {run_values + r * k, ri, have}, {tile_values + r * kt, tile_indices + r * kt, kt, offset},
        k, largest, skip_first >= 0 ? skip_first + r : -1, ov, oi);
    for (std::int64_t j = merged; j < k; ++j) {
      oi[j] = -1;
    }
  }
}

template <class ValueT>
__global__ void store_rows_kernel(std::int64_t n, const ValueT* values, const std::int64_t* indices,
                                  float* out_values, std::int64_t* out_indices)
{
  for (std::int64_t e = grid_thread_index(); e < n; e += grid_stride()) {
    out_values[e] = static_cast<float>(values[e]);
    out_indices[e] = indices[e];
  }
}

template <class ValueT>
__global__ void insert_self_kernel(std::int64_t n, std::int64_t ko, const float* others_values,
                                   const std::int64_t* others_indices, const ValueT* self,
                                   std::int64_t k, bool largest, float* out_values,
                                   std::int64_t* out_indices)
{
  for (std::int64_t i = grid_thread_index(); i < n; i += grid_stride()) {
    knn_insert_self_row<ValueT>(others_values + i * ko, others_indices + i * ko, ko, i,
                                static_cast<float>(self[i]), k, largest, out_values + i * k,
                                out_indices + i * k);
  }
}

__global__ void rebase_kernel(const offset_t* ptr, std::int64_t r0, std::int64_t n, offset_t* out)
{
  for (std::int64_t e = grid_thread_index(); e <= n; e += grid_stride()) {
    out[e] = ptr[r0 + e] - ptr[r0];
  }
}

}  // namespace

template <class ValueT>
void knn_merge_tile_cuda(const cuda_resources& res, std::int64_t rows, std::int64_t k,
                         const ValueT* run_values, const std::int64_t* run_indices,
                         const ValueT* tile_values, const std::int64_t* tile_indices,
                         std::int64_t kt, std::int64_t offset, std::int64_t skip_first,
                         bool largest, ValueT* out_values, std::int64_t* out_indices)
{
  if (rows == 0 || k == 0) {
    return;
  }
  device_guard guard(res.device);
  launch_elementwise(res, rows, merge_tile_kernel<ValueT>, rows, k, run_values, run_indices,
                     tile_values, tile_indices, kt, offset, skip_first, largest, out_values,
                     out_indices);
}

template <class ValueT>
void knn_store_rows_cuda(const cuda_resources& res, std::int64_t rows, std::int64_t k,
                         const ValueT* values, const std::int64_t* indices, float* out_values,
                         std::int64_t* out_indices)
{
  const std::int64_t n = rows * k;
  if (n == 0) {
    return;
  }
  device_guard guard(res.device);
  launch_elementwise(res, n, store_rows_kernel<ValueT>, n, values, indices, out_values,
                     out_indices);
}

template <class ValueT>
void knn_insert_self_cuda(const cuda_resources& res, std::int64_t n, std::int64_t ko,
                          const float* others_values, const std::int64_t* others_indices,
                          const ValueT* self, std::int64_t k, bool largest, float* out_values,
                          std::int64_t* out_indices)
{
  if (n == 0) {
    return;
  }
  device_guard guard(res.device);
  launch_elementwise(res, n, insert_self_kernel<ValueT>, n, ko, others_values, others_indices, self,
                     k, largest, out_values, out_indices);
}

void knn_clear_indices_cuda(const cuda_resources& res, std::int64_t* indices, std::int64_t n)
{
  if (n == 0) {
    return;
  }
  device_guard guard(res.device);
  SPIRA_CUDA_TRY(
      cudaMemsetAsync(indices, 0xff, std::size_t(n) * sizeof(std::int64_t), stream_of(res)));
}

template <class ValueT>
void knn_copy_diagonal_cuda(const cuda_resources& res, const ValueT* d, std::int64_t ld,
                            std::int64_t count, ValueT* dst)
{
  if (count == 0) {
    return;
  }
  device_guard guard(res.device);
  SPIRA_CUDA_TRY(cudaMemcpy2DAsync(dst, sizeof(ValueT), d, std::size_t(ld + 1) * sizeof(ValueT),
                                   sizeof(ValueT), std::size_t(count), cudaMemcpyDeviceToDevice,
                                   stream_of(res)));
}

template <class ValueT, class IndexT>
csr_view<ValueT, IndexT> device_row_slice(const cuda_resources& res, csr_view<ValueT, IndexT> a,
                                          std::int64_t r0, std::int64_t r1, buffer<offset_t>& ptr)
{
  expects(0 <= r0 && r0 <= r1 && r1 <= a.rows, "device_row_slice: rows [", r0, ", ", r1,
          ") are outside [0, ", a.rows, ")");
  device_guard guard(res.device);
  const std::int64_t n = r1 - r0;
  ptr = buffer<offset_t>(res, std::size_t(n + 1), "row pointers of a row slice");
  offset_t bounds[2] = {0, 0};
  copy(&bounds[0], memory_space::host, a.row_ptr + r0, memory_space::device, 1, res);
  copy(&bounds[1], memory_space::host, a.row_ptr + r1, memory_space::device, 1, res);
  launch_elementwise(res, n + 1, rebase_kernel, a.row_ptr, r0, n, ptr.data());
  return {n,
          a.cols,
          bounds[1] - bounds[0],
          ptr.data(),
          a.col_idx + bounds[0],
          a.values + bounds[0],
          memory_space::device};
}

#define SPIRA_KNN_OPS_CUDA(ValueT)                                                                 \
  template void knn_merge_tile_cuda(const cuda_resources&, std::int64_t, std::int64_t,             \
                                    const ValueT*, const std::int64_t*, const ValueT*,             \
                                    const std::int64_t*, std::int64_t, std::int64_t, std::int64_t, \
                                    bool, ValueT*, std::int64_t*);                                 \
  template void knn_store_rows_cuda(const cuda_resources&, std::int64_t, std::int64_t,             \
                                    const ValueT*, const std::int64_t*, float*, std::int64_t*);    \
  template void knn_insert_self_cuda(const cuda_resources&, std::int64_t, std::int64_t,            \
                                     const float*, const std::int64_t*, const ValueT*,             \
                                     std::int64_t, bool, float*, std::int64_t*);                   \
  template void knn_copy_diagonal_cuda(const cuda_resources&, const ValueT*, std::int64_t,         \
                                       std::int64_t, ValueT*);                                     \
  template csr_view<ValueT, std::int32_t> device_row_slice(                                        \
      const cuda_resources&, csr_view<ValueT, std::int32_t>, std::int64_t, std::int64_t,           \
      buffer<offset_t>&);                                                                          \
  template csr_view<ValueT, std::int64_t> device_row_slice(                                        \
      const cuda_resources&, csr_view<ValueT, std::int64_t>, std::int64_t, std::int64_t,           \
      buffer<offset_t>&);
SPIRA_KNN_OPS_CUDA(float)
SPIRA_KNN_OPS_CUDA(double)
#undef SPIRA_KNN_OPS_CUDA

}  // namespace spira::detail
