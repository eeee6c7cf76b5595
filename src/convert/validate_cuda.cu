// CUDA backend: validation of device matrices (spira::validate, and detail::check_csr_async for
// the operations that check their operands beside their own kernels). A kernel finds the smallest
// offending row (or entry); the host reads that one back and throws the host's message for it.
#include <spira/cuda/detail/graphblas_rows.cuh>  // check_csr_async, csr_report_words
#include <spira/cuda/device.cuh>
#include <spira/detail/type_lists.hpp>
#include "../cuda/launch.cuh"
#include "convert_cuda.cuh"
#include "view_checks.hpp"

#include <spira/convert.hpp>
#include <spira/cuda/error.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace spira {

namespace {

using detail::grid_stride;
using detail::grid_thread_index;
using detail::launch_elementwise;
using detail::read_back;
using detail::row_of_entry;

constexpr unsigned long long no_row = ~0ULL;  // "nothing found" for atomicMin reductions

/// What check_csr found; the *_row members stay no_row when nothing is wrong.
struct csr_report {
  offset_t first;                     ///< row_ptr[0]
  offset_t last;                      ///< row_ptr[rows]
  unsigned long long decreasing_row;  ///< smallest i with row_ptr[i] > row_ptr[i + 1]
  unsigned long long bad_entry_row;   ///< smallest row with a column out of range (or out of order)
};

template <class IndexT>
__global__ void check_csr(const offset_t* row_ptr, const IndexT* col_idx, std::int64_t rows,
                          std::int64_t cols, std::int64_t nnz, bool canonical, csr_report* report)
{
  const std::int64_t first = grid_thread_index();
  const std::int64_t stride = grid_stride();
  if (first == 0) {
    report->first = row_ptr[0];
    report->last = row_ptr[rows];
  }
  // Each thread visits increasing indices, so its first hit is its smallest.
  for (std::int64_t i = first; i < rows; i += stride) {
    if (row_ptr[i] > row_ptr[i + 1]) {
      atomicMin(&report->decreasing_row, static_cast<unsigned long long>(i));
      break;
    }
  }
  if (rows == 0) {
    return;
  }
  // Rows found through possibly invalid pointers are only used once the pointers passed.
  unsigned long long bad = no_row;
  for (std::int64_t k = first; k < nnz; k += stride) {
    const std::int64_t c = col_idx[k];
    const std::int64_t row = row_of_entry(row_ptr, rows, k);
    bool ok = c >= 0 && c < cols;
    if (ok && canonical && k > 0 && k > row_ptr[row]) {
      ok = std::int64_t(col_idx[k - 1]) < c;
    }
    if (!ok && static_cast<unsigned long long>(row) < bad) {
      bad = row;
    }
  }
  if (bad != no_row) {
    atomicMin(&report->bad_entry_row, bad);
  }
}

template <class IndexT>
__global__ void check_coo(const IndexT* row_idx, const IndexT* col_idx, std::int64_t rows,
                          std::int64_t cols, std::int64_t nnz, unsigned long long* bad_entry)
{
  for (std::int64_t k = grid_thread_index(); k < nnz; k += grid_stride()) {
    const std::int64_t r = row_idx[k];
    const std::int64_t c = col_idx[k];
    if (r < 0 || r >= rows || c < 0 || c >= cols) {
      atomicMin(bad_entry, static_cast<unsigned long long>(k));
      break;
    }
  }
}
}  // namespace

template <class ValueT, class IndexT>
void validate(const cuda_resources& res, csr_view<ValueT, IndexT> a, csr_check level,
              const char* name)
{
  if (a.space == memory_space::host) {
    validate(host_resources{}, a, level, name);
    return;
  }
  detail::check_view_arrays(a, name);
  detail::device_guard guard(res.device);
  buffer<csr_report> report(res, 1, "validation report");
  SPIRA_CUDA_TRY(cudaMemsetAsync(report.data(), 0xFF, sizeof(csr_report), res.stream));
  launch_elementwise(res, std::max({a.rows, a.nnz, std::int64_t{1}}), check_csr<IndexT>, a.row_ptr,
                     a.col_idx, a.rows, a.cols, a.nnz, level == csr_check::canonical,
                     report.data());
  const csr_report r = read_back(report.data(), res);

  detail::expects(r.first == 0, name, ": row_ptr[0] must be 0, got ", r.first);
  detail::expects(r.last == a.nnz, name, ": row_ptr[", a.rows, "] = ", r.last,
                  " differs from nnz = ", a.nnz);
  if (r.decreasing_row != no_row) {
    const auto i = static_cast<std::int64_t>(r.decreasing_row);
    offset_t p[2];
    copy(p, memory_space::host, a.row_ptr + i, memory_space::device, 2, res);
    throw invalid_argument(detail::concat(name, ": row pointers decrease at row ", i, " (row_ptr[",
                                          i, "] = ", p[0], " > row_ptr[", i + 1, "] = ", p[1],
                                          ")"));
  }
  if (r.bad_entry_row == no_row) {
    return;
  }
  const auto bad_row = static_cast<std::int64_t>(r.bad_entry_row);
  offset_t p[2];
  copy(p, memory_space::host, a.row_ptr + bad_row, memory_space::device, 2, res);
  std::vector<IndexT> row(static_cast<std::size_t>(p[1] - p[0]));
  copy(row.data(), memory_space::host, a.col_idx + p[0], memory_space::device, row.size(), res);
  for (offset_t k = p[0]; k < p[1]; ++k) {
    const std::int64_t c = row[k - p[0]];
    detail::expects(c >= 0 && c < a.cols, name, ": column index ", c, " at row ", bad_row,
                    " (entry ", k, ") is outside [0, ", a.cols, ")");
    detail::expects(k == p[0] || row[k - 1 - p[0]] < c, name, ": row ", bad_row,
                    " is not canonical: column ", c, " follows column ", row[k - 1 - p[0]],
                    " (unsorted or duplicate; see spira::canonicalize)");
  }
  throw cuda_error(detail::concat(name, ": device validation flagged row ", bad_row,
                                  " but its entries check out on the host"));
}

namespace {
/// Sets *flag to 0 (atomicMin) when the report of check_csr found anything wrong.
__global__ void flag_csr_report(const csr_report* r, offset_t nnz, unsigned long long* flag)
{
  if (r->first != 0 || r->last != nnz || r->decreasing_row != no_row ||
      r->bad_entry_row != no_row) {
    atomicMin(flag, 0ull);
  }
}
}  // namespace

namespace detail {

template <class ValueT, class IndexT>
void check_csr_async(const cuda_resources& res, csr_view<ValueT, IndexT> a, csr_check level,
                     unsigned long long* flag, unsigned long long* report_words)
{
  static_assert(sizeof(csr_report) == csr_report_words * sizeof(unsigned long long) &&
                alignof(csr_report) <= alignof(unsigned long long));
  device_guard guard(res.device);
  auto* report = reinterpret_cast<csr_report*>(report_words);  // all ones: nothing found
  launch_elementwise(res, std::max({a.rows, a.nnz, std::int64_t{1}}), check_csr<IndexT>, a.row_ptr,
                     a.col_idx, a.rows, a.cols, a.nnz, level == csr_check::canonical, report);
  flag_csr_report<<<1, 1, 0, res.stream>>>(report, a.nnz, flag);
  SPIRA_CUDA_TRY(cudaGetLastError());
}

}  // namespace detail

template <class ValueT, class IndexT>
void validate(const cuda_resources& res, coo_view<ValueT, IndexT> a, const char* name)
{
  if (a.space == memory_space::host) {
    validate(host_resources{}, a, name);
    return;
  }
  detail::check_view_arrays(a, name);
  if (a.nnz == 0) {
    return;
  }
  detail::device_guard guard(res.device);
  buffer<unsigned long long> bad(res, 1, "validation report");
  SPIRA_CUDA_TRY(cudaMemsetAsync(bad.data(), 0xFF, sizeof(unsigned long long), res.stream));
  launch_elementwise(res, a.nnz, check_coo<IndexT>, a.row_idx, a.col_idx, a.rows, a.cols, a.nnz,
                     bad.data());
  const unsigned long long k = read_back(bad.data(), res);
  if (k == no_row) {
    return;
  }
  const IndexT r = read_back(a.row_idx + k, res);
  const IndexT c = read_back(a.col_idx + k, res);
  detail::expects(r >= 0 && r < a.rows, name, ": row index ", r, " of entry ", k,
                  " is outside [0, ", a.rows, ")");
  detail::expects(c >= 0 && c < a.cols, name, ": column index ", c, " of entry ", k,
                  " is outside [0, ", a.cols, ")");
  throw cuda_error(detail::concat(name, ": device validation flagged entry ", k,
                                  " but it checks out on the host"));
}
#define SPIRA_INSTANTIATE(ValueT, IndexT)                                                          \
  template void validate(const cuda_resources&, csr_view<ValueT, IndexT>, csr_check, const char*); \
  template void detail::check_csr_async(const cuda_resources&, csr_view<ValueT, IndexT>,           \
                                        csr_check, unsigned long long*, unsigned long long*);      \
  template void validate(const cuda_resources&, coo_view<ValueT, IndexT>, const char*);
SPIRA_FOR_EACH_VALUE_INDEX(SPIRA_INSTANTIATE)
#undef SPIRA_INSTANTIATE

}  // namespace spira
