// cuSPARSE baseline of the GPU pairwise benchmark, through cuSPARSE's C API: for a distance in
// dot-product form with the identity map (cosine, euclidean, ...), out = finalize(A Bᵀ) as a
// cuSPARSE user would compute it:
//   Bᵀ           cusparseCsr2cscEx2 (the CSC of B is the CSR of Bᵀ; SpGEMM takes no transpose),
//   C = A Bᵀ     cusparseSpGEMM (CSR x CSR -> CSR, float, CUSPARSE_SPGEMM_DEFAULT),
//   densify      C's entries scattered into the zeroed dense output,
//   expansion    the row norms and the distance's finalize (the engine's own kernels, so that both
//                sides do the same arithmetic after the product).
// Every cuSPARSE and CUDA status is checked; a failure is thrown as std::runtime_error naming the
// call and cuSPARSE's message, so that the benchmark reports it instead of crashing. cuSPARSE's
// SpGEMM takes 32-bit indices: the int64 row pointers of spira's CSR are converted once, outside
// the timed call (a cuSPARSE user would hold them in 32 bits).
#pragma once

#include <spira/cuda/pairwise.cuh>

#include <cuda_runtime.h>
#include <cusparse.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace spira::bench {

inline void cusparse_try(cusparseStatus_t status, const char* call)
{
  if (status != CUSPARSE_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuSPARSE ") + call + " failed: " +
                             cusparseGetErrorString(status) + " (status " +
                             std::to_string(int(status)) + ")");
  }
}

inline void cuda_try(cudaError_t status, const char* call)
{
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA ") + call + " failed: " + cudaGetErrorString(status));
  }
}

/// A device buffer from the stream-ordered allocator, freed stream-ordered.
class stream_buffer {
 public:
  stream_buffer(std::size_t bytes, cudaStream_t stream, const char* what) : stream_(stream)
  {
    if (bytes > 0) { cuda_try(cudaMallocAsync(&ptr_, bytes, stream), what); }
  }
  ~stream_buffer()
  {
    if (ptr_ != nullptr) { cudaFreeAsync(ptr_, stream_); }
  }
  stream_buffer(const stream_buffer&) = delete;
  stream_buffer& operator=(const stream_buffer&) = delete;
  template <class T>
  T* as() const
  {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
  cudaStream_t stream_;
};

namespace cusparse_detail {

__global__ void narrow_offsets(const offset_t* in, std::int64_t n, int* out)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    out[k] = int(in[k]);
  }
}

/// out(i, c) = C(i, c) for the stored entries of the CSR C (one warp per row); out was zeroed.
template <class V>
__global__ void scatter_rows(const int* c_ptr, const int* c_col, const V* c_val, std::int64_t rows,
                             V* out, std::int64_t ld)
{
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows;
       i += warps) {
    for (int k = c_ptr[i] + lane; k < c_ptr[i + 1]; k += 32) { out[i * ld + c_col[k]] = c_val[k]; }
  }
}

}  // namespace cusparse_detail

/// One CSR operand in cuSPARSE's 32-bit layout (row pointers narrowed; columns and values are
/// spira's own arrays). Built before timing.
struct cusparse_operand {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  const int* col_idx = nullptr;
  const float* values = nullptr;
  const offset_t* row_ptr64 = nullptr;  ///< spira's row pointers (for the engine's norm kernel)
  int* row_ptr = nullptr;
};

/// Holds the cuSPARSE handle and the 32-bit row pointers of A and B.
class cusparse_pairwise {
 public:
  cusparse_pairwise(const cuda_resources& res, csr_view<float, std::int32_t> a,
                    csr_view<float, std::int32_t> b)
    : res_(res),
      ptr_a_(std::size_t(a.rows + 1) * sizeof(int), res.stream, "cudaMallocAsync"),
      ptr_b_(std::size_t(b.rows + 1) * sizeof(int), res.stream, "cudaMallocAsync")
  {
    if (a.nnz > INT32_MAX || b.nnz > INT32_MAX) {
      throw std::runtime_error("cuSPARSE SpGEMM takes 32-bit indices: nnz exceeds 2^31 - 1");
    }
    cusparse_try(cusparseCreate(&handle_), "cusparseCreate");
    cusparse_try(cusparseSetStream(handle_, res.stream), "cusparseSetStream");
    a_ = operand(a, ptr_a_.as<int>());
    b_ = operand(b, ptr_b_.as<int>());
    cuda_try(cudaStreamSynchronize(res.stream), "cudaStreamSynchronize");
  }
  ~cusparse_pairwise()
  {
    if (handle_ != nullptr) { cusparseDestroy(handle_); }
  }
  cusparse_pairwise(const cusparse_pairwise&) = delete;
  cusparse_pairwise& operator=(const cusparse_pairwise&) = delete;

  /// out = finalize_D(A Bᵀ) for a distance D in dot-product form with the identity map. Returns
  /// nnz(A Bᵀ). Queued on res.stream, with the host reads of sizes cuSPARSE's API requires.
  template <class D>
  std::int64_t run(const D& d, dense_view<float> out)
  {
    static_assert(dot_product_form<D>::value, "the cuSPARSE baseline computes dot products");
    const cudaStream_t stream = res_.stream;
    const int sms = detail::multiprocessor_count(res_.device);
    // Bᵀ in CSR (the CSC of B).
    stream_buffer bt_ptr(std::size_t(b_.cols + 1) * sizeof(int), stream, "cudaMallocAsync(Bt)");
    stream_buffer bt_col(std::size_t(std::max<std::int64_t>(b_.nnz, 1)) * sizeof(int), stream,
                         "cudaMallocAsync(Bt)");
    stream_buffer bt_val(std::size_t(std::max<std::int64_t>(b_.nnz, 1)) * sizeof(float), stream,
                         "cudaMallocAsync(Bt)");
    std::size_t csc_bytes = 0;
    cusparse_try(cusparseCsr2cscEx2_bufferSize(
                   handle_, int(b_.rows), int(b_.cols), int(b_.nnz), b_.values, b_.row_ptr,
                   b_.col_idx, bt_val.as<float>(), bt_ptr.as<int>(), bt_col.as<int>(), CUDA_R_32F,
                   CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1,
                   &csc_bytes),
                 "cusparseCsr2cscEx2_bufferSize");
    {
      stream_buffer work(csc_bytes, stream, "cudaMallocAsync(csr2csc)");
      cusparse_try(cusparseCsr2cscEx2(handle_, int(b_.rows), int(b_.cols), int(b_.nnz), b_.values,
                                      b_.row_ptr, b_.col_idx, bt_val.as<float>(), bt_ptr.as<int>(),
                                      bt_col.as<int>(), CUDA_R_32F, CUSPARSE_ACTION_NUMERIC,
                                      CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1,
                                      work.as<void>()),
                   "cusparseCsr2cscEx2");
    }
    // C = A Bᵀ.
    cusparseSpMatDescr_t ma = nullptr, mb = nullptr, mc = nullptr;
    cusparseSpGEMMDescr_t gemm = nullptr;
    struct guard_t {
      cusparseSpMatDescr_t* m[3];
      cusparseSpGEMMDescr_t* g;
      ~guard_t()
      {
        for (auto* p : m) {
          if (*p != nullptr) { cusparseDestroySpMat(*p); }
        }
        if (*g != nullptr) { cusparseSpGEMM_destroyDescr(*g); }
      }
    } guard{{&ma, &mb, &mc}, &gemm};
    cusparse_try(cusparseCreateCsr(&ma, a_.rows, a_.cols, a_.nnz, a_.row_ptr,
                                   const_cast<int*>(a_.col_idx), const_cast<float*>(a_.values),
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
                 "cusparseCreateCsr(A)");
    cusparse_try(cusparseCreateCsr(&mb, b_.cols, b_.rows, b_.nnz, bt_ptr.as<int>(),
                                   bt_col.as<int>(), bt_val.as<float>(), CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
                 "cusparseCreateCsr(Bt)");
    cusparse_try(cusparseCreateCsr(&mc, a_.rows, b_.rows, 0, nullptr, nullptr, nullptr,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
                 "cusparseCreateCsr(C)");
    cusparse_try(cusparseSpGEMM_createDescr(&gemm), "cusparseSpGEMM_createDescr");
    const float one = 1.0f, zero = 0.0f;
    const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const auto alg = CUSPARSE_SPGEMM_DEFAULT;
    std::size_t bytes1 = 0, bytes2 = 0;
    cusparse_try(cusparseSpGEMM_workEstimation(handle_, op, op, &one, ma, mb, &zero, mc,
                                               CUDA_R_32F, alg, gemm, &bytes1, nullptr),
                 "cusparseSpGEMM_workEstimation (size)");
    stream_buffer work1(bytes1, stream, "cudaMallocAsync(SpGEMM work estimation)");
    cusparse_try(cusparseSpGEMM_workEstimation(handle_, op, op, &one, ma, mb, &zero, mc,
                                               CUDA_R_32F, alg, gemm, &bytes1, work1.as<void>()),
                 "cusparseSpGEMM_workEstimation");
    cusparse_try(cusparseSpGEMM_compute(handle_, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F, alg,
                                        gemm, &bytes2, nullptr),
                 "cusparseSpGEMM_compute (size)");
    stream_buffer work2(bytes2, stream, "cudaMallocAsync(SpGEMM compute)");
    cusparse_try(cusparseSpGEMM_compute(handle_, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F, alg,
                                        gemm, &bytes2, work2.as<void>()),
                 "cusparseSpGEMM_compute");
    std::int64_t c_rows = 0, c_cols = 0, c_nnz = 0;
    cusparse_try(cusparseSpMatGetSize(mc, &c_rows, &c_cols, &c_nnz), "cusparseSpMatGetSize");
    stream_buffer c_ptr(std::size_t(a_.rows + 1) * sizeof(int), stream, "cudaMallocAsync(C)");
    stream_buffer c_col(std::size_t(std::max<std::int64_t>(c_nnz, 1)) * sizeof(int), stream,
                        "cudaMallocAsync(C)");
    stream_buffer c_val(std::size_t(std::max<std::int64_t>(c_nnz, 1)) * sizeof(float), stream,
                        "cudaMallocAsync(C)");
    cusparse_try(cusparseCsrSetPointers(mc, c_ptr.as<int>(), c_col.as<int>(), c_val.as<float>()),
                 "cusparseCsrSetPointers");
    cusparse_try(cusparseSpGEMM_copy(handle_, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F, alg,
                                     gemm),
                 "cusparseSpGEMM_copy");
    // Densify and expand (the engine's norm and finalize kernels).
    cuda_try(cudaMemset2DAsync(out.data, std::size_t(out.ld) * sizeof(float), 0,
                               std::size_t(out.cols) * sizeof(float), std::size_t(out.rows),
                               stream),
             "cudaMemset2DAsync");
    const unsigned rows_grid = detail::row_grid(a_.rows, sms);
    cusparse_detail::scatter_rows<float><<<rows_grid, 256, 0, stream>>>(
      c_ptr.as<int>(), c_col.as<int>(), c_val.as<float>(), a_.rows, out.data, out.ld);
    cuda_try(cudaGetLastError(), "scatter kernel launch");
    using traits = distance_traits<D, double>;
    if constexpr (traits::has_finalize) {
      using norm_values = typename traits::norm_values;
      stream_buffer na(std::size_t(std::max<std::int64_t>(a_.rows, 1)) * sizeof(norm_values),
                       stream, "cudaMallocAsync(norms)");
      stream_buffer nb(std::size_t(std::max<std::int64_t>(b_.rows, 1)) * sizeof(norm_values),
                       stream, "cudaMallocAsync(norms)");
      if constexpr (traits::norms::size > 0) {
        detail::row_norms_kernel<typename traits::norms, float>
          <<<detail::row_grid(a_.rows, sms), 256, 0, stream>>>(a_.row_ptr64, a_.values, a_.rows,
                                                              na.as<norm_values>());
        detail::row_norms_kernel<typename traits::norms, float>
          <<<detail::row_grid(b_.rows, sms), 256, 0, stream>>>(b_.row_ptr64, b_.values, b_.rows,
                                                              nb.as<norm_values>());
      }
      detail::finalize_in_place_kernel<D, float>
        <<<detail::elementwise_grid(a_.rows * b_.rows, sms), 256, 0, stream>>>(
          d, out.data, out.ld, a_.rows, b_.rows, a_.cols, na.as<norm_values>(),
          nb.as<norm_values>());
      cuda_try(cudaGetLastError(), "expansion kernel launch");
    }
    return c_nnz;
  }

 private:
  cusparse_operand operand(csr_view<float, std::int32_t> m, int* ptr32)
  {
    cusparse_operand o;
    o.rows = m.rows;
    o.cols = m.cols;
    o.nnz = m.nnz;
    o.col_idx = m.col_idx;
    o.values = m.values;
    o.row_ptr64 = m.row_ptr;
    o.row_ptr = ptr32;
    const int sms = detail::multiprocessor_count(res_.device);
    cusparse_detail::narrow_offsets<<<detail::elementwise_grid(m.rows + 1, sms), 256, 0,
                                      res_.stream>>>(m.row_ptr, m.rows + 1, ptr32);
    cuda_try(cudaGetLastError(), "narrow_offsets launch");
    return o;
  }

  const cuda_resources& res_;
  cusparseHandle_t handle_ = nullptr;
  stream_buffer ptr_a_, ptr_b_;
  cusparse_operand a_, b_;
};

}  // namespace spira::bench
