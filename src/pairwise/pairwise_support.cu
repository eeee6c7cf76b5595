// CUDA pairwise engine: the pieces that do not depend on the semiring, compiled once into the
// library (the renumbering of the used columns, row partitions of the hybrid kernel, the cuBLAS
// GEMM of the dense strategy, the non-negativity check of the built-in metrics).
#include "../cuda/primitives.cuh"

#include <spira/cuda/pairwise.cuh>

#include <cublas_v2.h>

#include <algorithm>
#include <mutex>
#include <type_traits>
#include <unordered_map>

namespace spira::detail {

namespace {

template <class IndexT>
__global__ void count_parts_kernel(const offset_t* row_ptr, std::int64_t rows,
                                   std::int64_t max_part, offset_t* counts)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i <= rows;
       i += stride) {
    if (i == rows) {
      counts[i] = 0;  // becomes the total after the exclusive sum
      continue;
    }
    const std::int64_t deg = row_ptr[i + 1] - row_ptr[i];
    counts[i] = max_part <= 0 ? 1 : std::max<std::int64_t>(1, (deg + max_part - 1) / max_part);
  }
}

/// Part p of row i (np parts): entries [rb + deg p / np, rb + deg (p+1) / np), columns from the
/// first column of the part (0 for the first part) to the first column of the next (cols for the
/// last), so the parts of a row cover [0, cols) without overlap.
template <class IndexT>
__global__ void fill_parts_kernel(const offset_t* row_ptr, const IndexT* col_idx, std::int64_t rows,
                                  std::int64_t cols, const offset_t* offsets, hybrid_part* parts)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += stride) {
    const std::int64_t rb = row_ptr[i], deg = row_ptr[i + 1] - rb;
    const std::int64_t first = offsets[i], np = offsets[i + 1] - first;
    for (std::int64_t q = 0; q < np; ++q) {
      hybrid_part part;
      part.row = i;
      part.begin = rb + deg * q / np;
      part.end = rb + deg * (q + 1) / np;
      part.col_lo = q == 0 ? 0 : std::int64_t(col_idx[part.begin]);
      part.col_hi = q == np - 1 ? cols : std::int64_t(col_idx[part.end]);
      parts[first + q] = part;
    }
  }
}

/// keys[k] = the column of entry k of A (k < nnz_a) or of entry k - nnz_a of B; order[k] = k.
template <class IndexT, class K>
__global__ void column_keys_kernel(const IndexT* a_col, std::int64_t nnz_a, const IndexT* b_col,
                                   std::int64_t n, K* keys, offset_t* order)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    keys[k] = K(k < nnz_a ? a_col[k] : b_col[k - nnz_a]);
    order[k] = k;
  }
}

/// first[k] = 1 where sorted key k starts a run of equal keys, else 0; first[n] = 0 (after the
/// exclusive sum, first[n] is the number of runs).
template <class K>
__global__ void run_starts_kernel(const K* sorted, std::int64_t n, offset_t* first)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k <= n; k += stride) {
    first[k] = k < n && (k == 0 || sorted[k] != sorted[k - 1]) ? 1 : 0;
  }
}

/// out[order[k]] = the run of sorted key k (runs before it, inclusive, minus one).
template <class IndexT>
__global__ void scatter_ranks_kernel(const offset_t* order, const offset_t* runs, std::int64_t n,
                                     IndexT* out)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    out[order[k]] = IndexT(runs[k + 1] - 1);
  }
}

template <class ValueT>
__global__ void first_negative_kernel(const ValueT* values, std::int64_t nnz,
                                      unsigned long long* first)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < nnz; k += stride) {
    if (values[k] < ValueT(0)) {
      atomicMin(first, static_cast<unsigned long long>(k));
    }
  }
}

unsigned grid_of(std::int64_t n, int sms)
{
  const std::int64_t want = (n + 255) / 256;
  return unsigned(std::clamp<std::int64_t>(want, 1, std::int64_t(sms) * 8));
}

void cublas_try(cublasStatus_t status, const char* call)
{
  if (status == CUBLAS_STATUS_SUCCESS) {
    return;
  }
  if (status == CUBLAS_STATUS_ALLOC_FAILED) {
    throw out_of_memory(concat("cuBLAS ", call, " failed to allocate (status ", int(status), ")"));
  }
  throw cuda_error(concat("cuBLAS ", call, " failed with status ", int(status)));
}

/// One cuBLAS handle per (thread, device), created on first use and kept for the thread's life
/// (creating a handle costs milliseconds; the dense strategy calls GEMM once per tile pair).
cublasHandle_t cublas_handle(int device)
{
  struct handles {
    std::unordered_map<int, cublasHandle_t> by_device;
    ~handles()
    {
      for (auto& [dev, h] : by_device) {
        cublasDestroy(h);
      }
    }
  };
  thread_local handles cache;
  auto it = cache.by_device.find(device);
  if (it != cache.by_device.end()) {
    return it->second;
  }
  cublasHandle_t h = nullptr;
  cublas_try(cublasCreate(&h), "cublasCreate");
  // Pedantic math: float32 GEMMs stay float32 (no TF32 or other reduced-precision shortcuts).
  cublas_try(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
  cache.by_device.emplace(device, h);
  return h;
}

}  // namespace

int multiprocessor_count(int device)
{
  int sms = 0;
  SPIRA_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return std::max(sms, 1);
}

template <class IndexT>
hybrid_partition partition_rows(const cuda_resources& res, const offset_t* row_ptr,
                                const IndexT* col_idx, std::int64_t rows, std::int64_t cols,
                                std::int64_t max_part)
{
  const int sms = multiprocessor_count(res.device);
  hybrid_partition out;
  buffer<offset_t> offsets(res, std::size_t(rows) + 1, "hybrid row-part offsets");
  count_parts_kernel<IndexT>
      <<<grid_of(rows + 1, sms), 256, 0, res.stream>>>(row_ptr, rows, max_part, offsets.data());
  SPIRA_CHECK_LAUNCH();
  exclusive_sum_in_place(res, offsets.data(), rows + 1);
  out.row_part_offset.resize(std::size_t(rows) + 1);
  copy(out.row_part_offset.data(), memory_space::host, offsets.data(), memory_space::device,
       out.row_part_offset.size(), res);
  const std::int64_t total = out.row_part_offset.back();
  out.parts =
      buffer<hybrid_part>(res, std::size_t(std::max<std::int64_t>(total, 1)), "hybrid row parts");
  if (rows > 0) {
    fill_parts_kernel<IndexT><<<grid_of(rows, sms), 256, 0, res.stream>>>(
        row_ptr, col_idx, rows, cols, offsets.data(), out.parts.data());
    SPIRA_CHECK_LAUNCH();
  }
  return out;
}

template hybrid_partition partition_rows(const cuda_resources&, const offset_t*,
                                         const std::int32_t*, std::int64_t, std::int64_t,
                                         std::int64_t);
template hybrid_partition partition_rows(const cuda_resources&, const offset_t*,
                                         const std::int64_t*, std::int64_t, std::int64_t,
                                         std::int64_t);

template <class IndexT>
renumbered_columns<IndexT> renumber_columns(const cuda_resources& res, const IndexT* a_col,
                                            std::int64_t nnz_a, const IndexT* b_col,
                                            std::int64_t nnz_b, std::int64_t cols)
{
  using K = std::make_unsigned_t<IndexT>;
  const std::int64_t n = nnz_a + nnz_b;
  renumbered_columns<IndexT> out;
  out.col_idx =
      buffer<IndexT>(res, std::size_t(std::max<std::int64_t>(n, 1)), "renumbered columns");
  if (n == 0) {
    return out;
  }
  const int sms = multiprocessor_count(res.device);
  buffer<K> keys(res, std::size_t(n), "column keys");
  buffer<K> keys_alt(res, std::size_t(n), "column keys");
  buffer<offset_t> order(res, std::size_t(n), "column key positions");
  buffer<offset_t> order_alt(res, std::size_t(n), "column key positions");
  column_keys_kernel<IndexT, K>
      <<<grid_of(n, sms), 256, 0, res.stream>>>(a_col, nnz_a, b_col, n, keys.data(), order.data());
  SPIRA_CHECK_LAUNCH();
  ping_pong<K> kp{keys.data(), keys_alt.data()};
  ping_pong<offset_t> op{order.data(), order_alt.data()};
  stable_sort_pairs(res, kp, op, n, bits_for_extent(cols));
  buffer<offset_t> runs(res, std::size_t(n) + 1, "column runs");
  run_starts_kernel<K><<<grid_of(n + 1, sms), 256, 0, res.stream>>>(kp.current, n, runs.data());
  SPIRA_CHECK_LAUNCH();
  exclusive_sum_in_place(res, runs.data(), n + 1);
  scatter_ranks_kernel<IndexT>
      <<<grid_of(n, sms), 256, 0, res.stream>>>(op.current, runs.data(), n, out.col_idx.data());
  SPIRA_CHECK_LAUNCH();
  offset_t used = 0;
  copy(&used, memory_space::host, runs.data() + n, memory_space::device, 1, res);
  out.used = used;
  return out;
}

template renumbered_columns<std::int32_t> renumber_columns(const cuda_resources&,
                                                           const std::int32_t*, std::int64_t,
                                                           const std::int32_t*, std::int64_t,
                                                           std::int64_t);
template renumbered_columns<std::int64_t> renumber_columns(const cuda_resources&,
                                                           const std::int64_t*, std::int64_t,
                                                           const std::int64_t*, std::int64_t,
                                                           std::int64_t);

template <class ValueT>
void gemm_abt(const cuda_resources& res, const ValueT* a, const ValueT* b, ValueT* c,
              std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t ldc)
{
  if (m == 0 || n == 0) {
    return;
  }
  expects(m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX && ldc <= INT32_MAX,
          "spira::pairwise(cuda, dense): a GEMM tile of ", m, " x ", n, " x ", k,
          " exceeds the 32-bit extents of cuBLAS");
  cublasHandle_t h = cublas_handle(res.device);
  cublas_try(cublasSetStream(h, res.stream), "cublasSetStream");
  const ValueT one = 1, zero = 0;
  // Row-major C (m x n) = A Bᵀ is column-major Cᵀ (n x m) = B Aᵀ, with B and A read as the
  // column-major k x n and k x m matrices their row-major storage already is.
  if constexpr (std::is_same_v<ValueT, float>) {
    cublas_try(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, int(n), int(m), int(k), &one, b, int(k), a,
                           int(k), &zero, c, int(ldc)),
               "cublasSgemm");
  } else {
    cublas_try(cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, int(n), int(m), int(k), &one, b, int(k), a,
                           int(k), &zero, c, int(ldc)),
               "cublasDgemm");
  }
}

template void gemm_abt(const cuda_resources&, const float*, const float*, float*, std::int64_t,
                       std::int64_t, std::int64_t, std::int64_t);
template void gemm_abt(const cuda_resources&, const double*, const double*, double*, std::int64_t,
                       std::int64_t, std::int64_t, std::int64_t);

template <class ValueT, class IndexT>
void check_nonnegative(const cuda_resources& res, csr_view<ValueT, IndexT> m, const char* op,
                       const char* name, const char* what)
{
  if (m.nnz == 0) {
    return;
  }
  const int sms = multiprocessor_count(res.device);
  buffer<unsigned long long> first(res, 1, "first negative entry");
  const unsigned long long none = static_cast<unsigned long long>(m.nnz);
  copy(first.data(), memory_space::device, &none, memory_space::host, 1, res);
  first_negative_kernel<ValueT>
      <<<grid_of(m.nnz, sms), 256, 0, res.stream>>>(m.values, m.nnz, first.data());
  SPIRA_CHECK_LAUNCH();
  unsigned long long k = none;
  copy(&k, memory_space::host, first.data(), memory_space::device, 1, res);
  if (k == none) {
    return;
  }
  ValueT value{};
  IndexT col{};
  copy(&value, memory_space::host, m.values + k, memory_space::device, 1, res);
  copy(&col, memory_space::host, m.col_idx + k, memory_space::device, 1, res);
  std::vector<offset_t> ptr(std::size_t(m.rows) + 1);
  copy(ptr.data(), memory_space::host, m.row_ptr, memory_space::device, ptr.size(), res);
  const auto it = std::upper_bound(ptr.begin(), ptr.end(), offset_t(k));
  const std::int64_t row = (it - ptr.begin()) - 1;
  throw invalid_argument(concat(op, ": metric ", what, " requires non-negative values, but ", name,
                                " has ", value, " at row ", row, ", column ", col));
}

template void check_nonnegative(const cuda_resources&, csr_view<float, std::int32_t>, const char*,
                                const char*, const char*);
template void check_nonnegative(const cuda_resources&, csr_view<float, std::int64_t>, const char*,
                                const char*, const char*);
template void check_nonnegative(const cuda_resources&, csr_view<double, std::int32_t>, const char*,
                                const char*, const char*);
template void check_nonnegative(const cuda_resources&, csr_view<double, std::int64_t>, const char*,
                                const char*, const char*);

}  // namespace spira::detail
