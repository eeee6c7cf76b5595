// select_k on CSR rows, CUDA backend: the longest row and the compaction of the padded outputs
// into a CSR matrix.
#include <spira/detail/type_lists.hpp>
#include "selection/dispatch.hpp"
#include "selection/launch.hpp"

#include <spira/cuda/device.cuh>
#include <spira/cuda/error.cuh>

#include <cub/device/device_scan.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <limits>

namespace spira::selection {

using spira::detail::device_guard;

namespace {

__global__ void max_length_kernel(const offset_t* row_ptr, std::int64_t rows,
                                  unsigned long long* longest, int* decreasing)
{
  const std::int64_t r = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) {
    return;
  }
  const std::int64_t len = row_ptr[r + 1] - row_ptr[r];
  if (len < 0) {
    atomicExch(decreasing, 1);
  } else {
    atomicMax(longest, static_cast<unsigned long long>(len));
  }
}

__global__ void kept_per_row_kernel(const offset_t* row_ptr, std::int64_t rows, std::int64_t k,
                                    offset_t* kept)
{
  const std::int64_t r = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) {
    return;
  }
  const std::int64_t len = row_ptr[r + 1] - row_ptr[r];
  kept[r] = len < k ? len : k;
}

template <class ValueT, class IndexT>
__global__ void compact_kernel(std::int64_t rows, std::int64_t k, const offset_t* out_ptr,
                               const ValueT* values, const IndexT* indices, ValueT* out_values,
                               IndexT* out_cols)
{
  const std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= rows * k) {
    return;
  }
  const std::int64_t row = e / k;
  const std::int64_t j = e % k;
  if (j < out_ptr[row + 1] - out_ptr[row]) {
    out_values[out_ptr[row] + j] = values[e];
    out_cols[out_ptr[row] + j] = indices[e];
  }
}

}  // namespace

std::int64_t max_row_length(const cuda_resources& res, const offset_t* row_ptr, std::int64_t rows)
{
  device_guard guard(res.device);
  const cudaStream_t stream = stream_of(res);
  buffer<unsigned long long> longest(res, 1, "select_k longest row");
  buffer<int> bad(res, 1, "select_k row pointer check");
  detail::fill_zero_bytes(longest.data(), memory_space::device, sizeof(unsigned long long), res);
  detail::fill_zero_bytes(bad.data(), memory_space::device, sizeof(int), res);
  const std::int64_t blocks = blocks_for(rows, 256);
  check_grid(blocks, "the row length scan");
  max_length_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(row_ptr, rows,
                                                                       longest.data(), bad.data());
  SPIRA_CHECK_LAUNCH();
  unsigned long long h_longest = 0;
  int h_bad = 0;
  copy(&h_longest, memory_space::host, longest.data(), memory_space::device, 1, res);
  copy(&h_bad, memory_space::host, bad.data(), memory_space::device, 1, res);
  detail::expects(h_bad == 0, "select_k(cuda_resources): rows.row_ptr is not non-decreasing");
  return static_cast<std::int64_t>(h_longest);
}

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> compact_rows(const cuda_resources& res, csr_view<ValueT, IndexT> rows,
                                        const dense_matrix<ValueT>& values,
                                        const dense_matrix<IndexT>& indices, std::int64_t k)
{
  device_guard guard(res.device);
  const cudaStream_t stream = stream_of(res);
  buffer<offset_t> kept(res, rows.rows, "select_k kept per row");
  buffer<offset_t> ptr(res, rows.rows + 1, "select_k output row pointers");
  detail::fill_zero_bytes(ptr.data(), memory_space::device, sizeof(offset_t), res);
  const std::int64_t blocks = blocks_for(rows.rows, 256);
  kept_per_row_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(rows.row_ptr, rows.rows, k,
                                                                         kept.data());
  SPIRA_CHECK_LAUNCH();
  std::size_t temp_bytes = 0;
  SPIRA_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, kept.data(), ptr.data() + 1,
                                               rows.rows, stream));
  buffer<unsigned char> temp(res, std::max<std::size_t>(temp_bytes, 1), "select_k scan workspace");
  SPIRA_CUDA_TRY(cub::DeviceScan::InclusiveSum(temp.data(), temp_bytes, kept.data(), ptr.data() + 1,
                                               rows.rows, stream));
  offset_t nnz = 0;
  copy(&nnz, memory_space::host, ptr.data() + rows.rows, memory_space::device, 1, res);
  csr_matrix<ValueT, IndexT> out(res, rows.rows, rows.cols, nnz);
  copy(out.row_ptr(), memory_space::device, ptr.data(), memory_space::device, rows.rows + 1, res);
  const std::int64_t eblocks = blocks_for(rows.rows * k, 256);
  check_grid(eblocks, "the CSR compaction");
  compact_kernel<<<static_cast<unsigned>(eblocks), 256, 0, stream>>>(
      rows.rows, k, out.row_ptr(), values.data(), indices.data(), out.values(), out.col_idx());
  SPIRA_CHECK_LAUNCH();
  return out;
}

#define SPIRA_COMPACT_CUDA(ValueT, IndexT)                                          \
  template csr_matrix<ValueT, IndexT> compact_rows(                                 \
      const cuda_resources&, csr_view<ValueT, IndexT>, const dense_matrix<ValueT>&, \
      const dense_matrix<IndexT>&, std::int64_t);
SPIRA_FOR_EACH_VALUE_INDEX(SPIRA_COMPACT_CUDA)
#undef SPIRA_COMPACT_CUDA

}  // namespace spira::selection
