// cuSPARSE baseline of the GPU pairwise benchmark, through cuSPARSE's C API: for a distance in
// dot-product form with the identity map (cosine, euclidean, ...), out = finalize(A Bᵀ) as a
// cuSPARSE user would compute it:
//   Bᵀ           cusparseCsr2cscEx2 (the CSC of B is the CSR of Bᵀ; SpGEMM takes no transpose),
//   C = A Bᵀ     cusparseSpGEMM (CSR x CSR -> CSR, float), over all rows of A at once or over
//                row blocks of A, with the algorithm of the current plan (see below),
//   densify      each block's C scattered into its rows of the zeroed dense output,
//   expansion    the row norms and the distance's finalize (the engine's own kernels, so that both
//                sides do the same arithmetic after the product).
// Plans: SpGEMM runs out of resources on large products (CUSPARSE_STATUS_INSUFFICIENT_RESOURCES on
// pbmc3k and 20newsgroups with the default algorithm). cusparse_pairwise::plans() lists what a
// user would try next, in order: the default algorithm on all rows, CUSPARSE_SPGEMM_ALG3 (the
// memory-bounded algorithm that computes the product in chunks of the intermediate products) on
// all rows, then row blocks of A of halving size, each with the default algorithm and then ALG3.
// The benchmark settles on the first plan that succeeds (untimed) and times that one.
// Every cuSPARSE and CUDA status is checked; a failure is thrown as cusparse_failure naming the
// call and cuSPARSE's message (resources() tells an out-of-resources / out-of-memory failure,
// the only kind another plan may cure), so that the benchmark reports it instead of crashing.
// cuSPARSE's SpGEMM takes 32-bit indices here: the int64 row pointers of spira's CSR are
// converted once per plan, outside the timed call (a cuSPARSE user would hold them in 32 bits).
#pragma once

#include "common/cusparse_call.hpp"

#include <spira/cuda/pairwise.cuh>

#include <cuda_runtime.h>
#include <cusparse.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace spira::bench {

namespace cusparse_detail {

/// out[k] = in[k] - in[0] for k in [0, n): a block's row pointers rebased to its first entry.
__global__ void narrow_offsets(const offset_t* in, std::int64_t n, int* out)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  const offset_t base = in[0];
  for (std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    out[k] = int(in[k] - base);
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
    for (int k = c_ptr[i] + lane; k < c_ptr[i + 1]; k += 32) {
      out[i * ld + c_col[k]] = c_val[k];
    }
  }
}

}  // namespace cusparse_detail

/// How the baseline calls SpGEMM: the algorithm and the rows of A per SpGEMM call.
struct cusparse_plan {
  cusparseSpGEMMAlg_t alg = CUSPARSE_SPGEMM_DEFAULT;
  std::int64_t block_rows = 0;  ///< rows of A per SpGEMM call (all rows: rows(A))
  float chunk_fraction = 0.2f;  ///< ALG3 only: the share of the intermediate products per chunk

  [[nodiscard]] std::string algorithm() const
  {
    return alg == CUSPARSE_SPGEMM_ALG3 ? "CUSPARSE_SPGEMM_ALG3" : "CUSPARSE_SPGEMM_DEFAULT";
  }
};

/// Holds the cuSPARSE handle, B's 32-bit row pointers and A's per-block 32-bit row pointers.
class cusparse_pairwise {
 public:
  cusparse_pairwise(const cuda_resources& res, csr_view<float, std::int32_t> a,
                    csr_view<float, std::int32_t> b)
      : res_(res), a64_(a), sms_(detail::multiprocessor_count(res.device))
  {
    if (a.nnz > INT32_MAX || b.nnz > INT32_MAX) {
      throw cusparse_failure("cuSPARSE SpGEMM takes 32-bit indices here: nnz exceeds 2^31 - 1",
                             false);
    }
    cusparse_try(cusparseCreate(&handle_), "cusparseCreate");
    cusparse_try(cusparseSetStream(handle_, res.stream), "cusparseSetStream");
    a_row_ptr_host_.resize(std::size_t(a.rows) + 1);
    cuda_try(cudaMemcpyAsync(a_row_ptr_host_.data(), a.row_ptr,
                             a_row_ptr_host_.size() * sizeof(offset_t), cudaMemcpyDeviceToHost,
                             res.stream),
             "cudaMemcpyAsync(A row pointers)");
    ptr_b_ = stream_buffer(std::size_t(b.rows + 1) * sizeof(int), res.stream, "cudaMallocAsync");
    b_ = narrow(b, ptr_b_.as<int>());
    cuda_try(cudaStreamSynchronize(res.stream), "cudaStreamSynchronize");
    set_plan(plans(a.rows).front());
  }
  ~cusparse_pairwise()
  {
    if (handle_ != nullptr) {
      cusparseDestroy(handle_);
    }
  }
  cusparse_pairwise(const cusparse_pairwise&) = delete;
  cusparse_pairwise& operator=(const cusparse_pairwise&) = delete;

  /// The plans to try, in order (see the header comment): DEFAULT and ALG3 on all `rows` rows,
  /// then both on row blocks of rows/2, rows/4, ... down to 256 rows.
  static std::vector<cusparse_plan> plans(std::int64_t rows)
  {
    std::vector<cusparse_plan> out;
    const std::int64_t all = std::max<std::int64_t>(rows, 1);
    for (std::int64_t block = all;; block = (block + 1) / 2) {
      out.push_back({CUSPARSE_SPGEMM_DEFAULT, block, 0.2f});
      out.push_back({CUSPARSE_SPGEMM_ALG3, block, 0.2f});
      if (block <= 256) {
        break;
      }
    }
    return out;
  }

  /// Uses `p` from the next run on; rebuilds A's per-block 32-bit row pointers (untimed setup).
  void set_plan(const cusparse_plan& p)
  {
    plan_ = p;
    plan_.block_rows =
        std::clamp<std::int64_t>(p.block_rows, 1, std::max<std::int64_t>(a64_.rows, 1));
    const std::int64_t blocks = (a64_.rows + plan_.block_rows - 1) / plan_.block_rows;
    ptr_a_ = stream_buffer(std::size_t(a64_.rows + blocks + 1) * sizeof(int), res_.stream,
                           "cudaMallocAsync(A blocks)");
    for (std::int64_t k = 0; k < blocks; ++k) {
      const std::int64_t r0 = k * plan_.block_rows;
      const std::int64_t n = std::min(plan_.block_rows, a64_.rows - r0) + 1;
      cusparse_detail::narrow_offsets<<<detail::elementwise_grid(n, sms_), 256, 0, res_.stream>>>(
          a64_.row_ptr + r0, n, ptr_a_.as<int>() + r0 + k);
      cuda_try(cudaGetLastError(), "narrow_offsets launch");
    }
    cuda_try(cudaStreamSynchronize(res_.stream), "cudaStreamSynchronize");
  }
  [[nodiscard]] const cusparse_plan& plan() const noexcept { return plan_; }
  /// nnz(A Bᵀ) and the intermediate products (ALG3 only; else -1) of the last run.
  [[nodiscard]] std::int64_t product_nnz() const noexcept { return c_nnz_; }
  [[nodiscard]] std::int64_t products() const noexcept { return products_; }

  /// out = finalize_D(A Bᵀ) for a distance D in dot-product form with the identity map, with the
  /// current plan. Queued on res.stream, with the host reads of sizes cuSPARSE's API requires.
  template <class D>
  void run(const D& d, dense_view<float> out)
  {
    static_assert(dot_product_form<D>::value, "the cuSPARSE baseline computes dot products");
    const cudaStream_t stream = res_.stream;
    // Bᵀ in CSR (the CSC of B).
    stream_buffer bt_ptr(std::size_t(b_.cols + 1) * sizeof(int), stream, "cudaMallocAsync(Bt)");
    stream_buffer bt_col(std::size_t(std::max<std::int64_t>(b_.nnz, 1)) * sizeof(int), stream,
                         "cudaMallocAsync(Bt)");
    stream_buffer bt_val(std::size_t(std::max<std::int64_t>(b_.nnz, 1)) * sizeof(float), stream,
                         "cudaMallocAsync(Bt)");
    std::size_t csc_bytes = 0;
    cusparse_try(
        cusparseCsr2cscEx2_bufferSize(handle_, int(b_.rows), int(b_.cols), int(b_.nnz), b_.values,
                                      b_.row_ptr, b_.col_idx, bt_val.as<float>(), bt_ptr.as<int>(),
                                      bt_col.as<int>(), CUDA_R_32F, CUSPARSE_ACTION_NUMERIC,
                                      CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, &csc_bytes),
        "cusparseCsr2cscEx2_bufferSize");
    {
      stream_buffer work(csc_bytes, stream, "cudaMallocAsync(csr2csc)");
      cusparse_try(
          cusparseCsr2cscEx2(handle_, int(b_.rows), int(b_.cols), int(b_.nnz), b_.values,
                             b_.row_ptr, b_.col_idx, bt_val.as<float>(), bt_ptr.as<int>(),
                             bt_col.as<int>(), CUDA_R_32F, CUSPARSE_ACTION_NUMERIC,
                             CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, work.as<void>()),
          "cusparseCsr2cscEx2");
    }
    cuda_try(
        cudaMemset2DAsync(out.data, std::size_t(out.ld) * sizeof(float), 0,
                          std::size_t(out.cols) * sizeof(float), std::size_t(out.rows), stream),
        "cudaMemset2DAsync");
    c_nnz_ = 0;
    products_ = plan_.alg == CUSPARSE_SPGEMM_ALG3 ? 0 : -1;
    const std::int64_t blocks = (a64_.rows + plan_.block_rows - 1) / plan_.block_rows;
    for (std::int64_t k = 0; k < blocks; ++k) {
      const std::int64_t r0 = k * plan_.block_rows;
      const std::int64_t rows = std::min(plan_.block_rows, a64_.rows - r0);
      const offset_t e0 = a_row_ptr_host_[std::size_t(r0)];
      const std::int64_t nnz = a_row_ptr_host_[std::size_t(r0 + rows)] - e0;
      multiply_block(ptr_a_.as<int>() + r0 + k, a64_.col_idx + e0, a64_.values + e0, rows, nnz,
                     bt_ptr, bt_col, bt_val, out.data + r0 * out.ld, out.ld);
    }
    // Expansion (the engine's norm and finalize kernels).
    using traits = distance_traits<D, double>;
    if constexpr (traits::has_finalize) {
      using norm_values = typename traits::norm_values;
      stream_buffer na(std::size_t(std::max<std::int64_t>(a64_.rows, 1)) * sizeof(norm_values),
                       stream, "cudaMallocAsync(norms)");
      stream_buffer nb(std::size_t(std::max<std::int64_t>(b_.rows, 1)) * sizeof(norm_values),
                       stream, "cudaMallocAsync(norms)");
      if constexpr (traits::norms::size > 0) {
        detail::row_norms_kernel<typename traits::norms, float>
            <<<detail::row_grid(a64_.rows, sms_), 256, 0, stream>>>(
                a64_.row_ptr, a64_.values, a64_.rows, na.as<norm_values>());
        detail::row_norms_kernel<typename traits::norms, float>
            <<<detail::row_grid(b_.rows, sms_), 256, 0, stream>>>(b_.row_ptr64, b_.values, b_.rows,
                                                                  nb.as<norm_values>());
      }
      // spira's finalize, with its accuracy guard (which reads the operands' rows).
      const csr_view<float, std::int32_t> b_rows{
          b_.rows, b_.cols, b_.nnz, b_.row_ptr64, b_.col_idx, b_.values, memory_space::device};
      detail::finalize_in_place_kernel<D, float, std::int32_t>
          <<<detail::elementwise_grid(a64_.rows * b_.rows, sms_), 256, 0, stream>>>(
              d, out.data, out.ld, a64_.rows, b_.rows, a64_.cols, na.as<norm_values>(),
              nb.as<norm_values>(), a64_, b_rows);
      cuda_try(cudaGetLastError(), "expansion kernel launch");
    }
  }

 private:
  /// One CSR operand in cuSPARSE's 32-bit layout (row pointers narrowed; columns and values are
  /// spira's own arrays).
  struct operand {
    std::int64_t rows = 0, cols = 0, nnz = 0;
    const int* col_idx = nullptr;
    const float* values = nullptr;
    const offset_t* row_ptr64 = nullptr;  ///< spira's row pointers (for the engine's norm kernel)
    int* row_ptr = nullptr;
  };

  operand narrow(csr_view<float, std::int32_t> m, int* ptr32)
  {
    operand o{m.rows, m.cols, m.nnz, m.col_idx, m.values, m.row_ptr, ptr32};
    cusparse_detail::
        narrow_offsets<<<detail::elementwise_grid(m.rows + 1, sms_), 256, 0, res_.stream>>>(
            m.row_ptr, m.rows + 1, ptr32);
    cuda_try(cudaGetLastError(), "narrow_offsets launch");
    return o;
  }

  /// out[0 : rows, :] = A_blk Bᵀ for the block (a_ptr, a_col, a_val) of A, with the plan's
  /// algorithm.
  void multiply_block(int* a_ptr, const int* a_col, const float* a_val, std::int64_t rows,
                      std::int64_t nnz, const stream_buffer& bt_ptr, const stream_buffer& bt_col,
                      const stream_buffer& bt_val, float* out, std::int64_t ld)
  {
    const cudaStream_t stream = res_.stream;
    cusparseSpMatDescr_t ma = nullptr, mb = nullptr, mc = nullptr;
    cusparseSpGEMMDescr_t gemm = nullptr;
    struct guard_t {
      cusparseSpMatDescr_t* m[3];
      cusparseSpGEMMDescr_t* g;
      ~guard_t()
      {
        for (auto* p : m) {
          if (*p != nullptr) {
            cusparseDestroySpMat(*p);
          }
        }
        if (*g != nullptr) {
          cusparseSpGEMM_destroyDescr(*g);
        }
      }
    } guard{{&ma, &mb, &mc}, &gemm};
    cusparse_try(cusparseCreateCsr(&ma, rows, a64_.cols, nnz, a_ptr, const_cast<int*>(a_col),
                                   const_cast<float*>(a_val), CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
                 "cusparseCreateCsr(A)");
    cusparse_try(cusparseCreateCsr(&mb, b_.cols, b_.rows, b_.nnz, bt_ptr.as<int>(),
                                   bt_col.as<int>(), bt_val.as<float>(), CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
                 "cusparseCreateCsr(Bt)");
    cusparse_try(
        cusparseCreateCsr(&mc, rows, b_.rows, 0, nullptr, nullptr, nullptr, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
        "cusparseCreateCsr(C)");
    cusparse_try(cusparseSpGEMM_createDescr(&gemm), "cusparseSpGEMM_createDescr");
    const float one = 1.0f, zero = 0.0f;
    const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const auto alg = plan_.alg;
    std::size_t bytes1 = 0, bytes2 = 0;
    cusparse_try(cusparseSpGEMM_workEstimation(handle_, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F,
                                               alg, gemm, &bytes1, nullptr),
                 "cusparseSpGEMM_workEstimation (size)");
    stream_buffer work1(bytes1, stream, "cudaMallocAsync(SpGEMM work estimation)");
    cusparse_try(cusparseSpGEMM_workEstimation(handle_, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F,
                                               alg, gemm, &bytes1, work1.as<void>()),
                 "cusparseSpGEMM_workEstimation");
    stream_buffer work2;
    if (alg == CUSPARSE_SPGEMM_ALG3) {
      // ALG3: the memory of the compute step is bounded by chunk_fraction of the products.
      std::int64_t products = 0;
      cusparse_try(cusparseSpGEMM_getNumProducts(gemm, &products), "cusparseSpGEMM_getNumProducts");
      products_ += products;
      std::size_t bytes3 = 0;
      cusparse_try(
          cusparseSpGEMM_estimateMemory(handle_, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F, alg,
                                        gemm, plan_.chunk_fraction, &bytes3, nullptr, nullptr),
          "cusparseSpGEMM_estimateMemory (size)");
      {
        stream_buffer work3(bytes3, stream, "cudaMallocAsync(SpGEMM memory estimation)");
        cusparse_try(cusparseSpGEMM_estimateMemory(handle_, op, op, &one, ma, mb, &zero, mc,
                                                   CUDA_R_32F, alg, gemm, plan_.chunk_fraction,
                                                   &bytes3, work3.as<void>(), &bytes2),
                     "cusparseSpGEMM_estimateMemory");
      }
    } else {
      cusparse_try(cusparseSpGEMM_compute(handle_, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F, alg,
                                          gemm, &bytes2, nullptr),
                   "cusparseSpGEMM_compute (size)");
    }
    work2 = stream_buffer(bytes2, stream, "cudaMallocAsync(SpGEMM compute)");
    cusparse_try(cusparseSpGEMM_compute(handle_, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F, alg,
                                        gemm, &bytes2, work2.as<void>()),
                 "cusparseSpGEMM_compute");
    std::int64_t c_rows = 0, c_cols = 0, c_nnz = 0;
    cusparse_try(cusparseSpMatGetSize(mc, &c_rows, &c_cols, &c_nnz), "cusparseSpMatGetSize");
    if (c_nnz > INT32_MAX) {
      throw cusparse_failure(
          "cuSPARSE SpGEMM: nnz(C) = " + std::to_string(c_nnz) + " exceeds 32-bit indices", true);
    }
    c_nnz_ += c_nnz;
    stream_buffer c_ptr(std::size_t(rows + 1) * sizeof(int), stream, "cudaMallocAsync(C)");
    stream_buffer c_col(std::size_t(std::max<std::int64_t>(c_nnz, 1)) * sizeof(int), stream,
                        "cudaMallocAsync(C)");
    stream_buffer c_val(std::size_t(std::max<std::int64_t>(c_nnz, 1)) * sizeof(float), stream,
                        "cudaMallocAsync(C)");
    cusparse_try(cusparseCsrSetPointers(mc, c_ptr.as<int>(), c_col.as<int>(), c_val.as<float>()),
                 "cusparseCsrSetPointers");
    cusparse_try(
        cusparseSpGEMM_copy(handle_, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F, alg, gemm),
        "cusparseSpGEMM_copy");
    cusparse_detail::scatter_rows<float><<<detail::row_grid(rows, sms_), 256, 0, stream>>>(
        c_ptr.as<int>(), c_col.as<int>(), c_val.as<float>(), rows, out, ld);
    cuda_try(cudaGetLastError(), "scatter kernel launch");
  }

  const cuda_resources& res_;
  csr_view<float, std::int32_t> a64_;
  int sms_;
  cusparseHandle_t handle_ = nullptr;
  std::vector<offset_t> a_row_ptr_host_;
  stream_buffer ptr_a_, ptr_b_;
  operand b_;
  cusparse_plan plan_;
  std::int64_t c_nnz_ = 0, products_ = -1;
};

}  // namespace spira::bench
