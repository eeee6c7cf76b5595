// spira: validation, conversions and moves between memory spaces.
//
// Every conversion exists for both backends with the same signature; the resources type chooses.
// Host results live in host memory, CUDA results in device memory on res.device, ordered on
// res.stream. Both backends produce identical bytes for the same input.
#pragma once

#include <spira/matrix.hpp>
#include <spira/resources.hpp>

#include <vector>

namespace spira {

/// How much of the CSR invariants to check (see matrix.hpp).
enum class csr_check {
  valid,     ///< row pointers monotone from 0 to nnz, column indices in [0, cols)
  canonical  ///< valid, and strictly increasing columns in every row (sorted, no duplicates)
};

/// Throws spira::invalid_argument naming `name`, the row and the bad value when `a` violates
/// `level`. Host views are checked on the host; device views on the device (one reduction, one copy
/// back).
template <class ValueT, class IndexT>
void validate(const host_resources& res, csr_view<ValueT, IndexT> a, csr_check level,
              const char* name = "matrix");
template <class ValueT, class IndexT>
void validate(const cuda_resources& res, csr_view<ValueT, IndexT> a, csr_check level,
              const char* name = "matrix");

/// Throws spira::invalid_argument when an index of `a` is outside its extents.
template <class ValueT, class IndexT>
void validate(const host_resources& res, coo_view<ValueT, IndexT> a, const char* name = "matrix");
template <class ValueT, class IndexT>
void validate(const cuda_resources& res, coo_view<ValueT, IndexT> a, const char* name = "matrix");

/// COO -> canonical CSR: entries sorted by (row, column), duplicates summed (in input order, so
/// the result is deterministic). Explicit zeros are kept (see canonicalize to drop them).
template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> coo_to_csr(const host_resources& res, coo_view<ValueT, IndexT> a);
template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> coo_to_csr(const cuda_resources& res, coo_view<ValueT, IndexT> a);

/// CSR -> COO: expands the row pointers into row indices; entries keep CSR order.
template <class ValueT, class IndexT>
coo_matrix<ValueT, IndexT> csr_to_coo(const host_resources& res, csr_view<ValueT, IndexT> a);
template <class ValueT, class IndexT>
coo_matrix<ValueT, IndexT> csr_to_coo(const cuda_resources& res, csr_view<ValueT, IndexT> a);

/// The CSR of A^T (equivalently the CSC of A). A valid input gives a canonical output when the
/// input is canonical; within a column, entries keep their row order (stable).
template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> transpose(const host_resources& res, csr_view<ValueT, IndexT> a);
template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> transpose(const cuda_resources& res, csr_view<ValueT, IndexT> a);

struct canonicalize_options {
  bool drop_zeros = false;  ///< also remove entries whose (summed) value is exactly zero
};

/// Sorts the columns of each row, sums duplicates (in stored order) and optionally drops zeros.
template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> canonicalize(const host_resources& res, csr_view<ValueT, IndexT> a,
                                        canonicalize_options opts = {});
template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> canonicalize(const cuda_resources& res, csr_view<ValueT, IndexT> a,
                                        canonicalize_options opts = {});

/// Copies a matrix (any space) to device memory of res.device / to host memory.
template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> to_device(const cuda_resources& res, csr_view<ValueT, IndexT> a);
template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> to_host(csr_view<ValueT, IndexT> a, const cuda_resources& res = {});
template <class T>
dense_matrix<T> to_host(dense_view<const T> a, const cuda_resources& res = {});
template <class T>
dense_matrix<T> to_device(const cuda_resources& res, dense_view<const T> a);

/// Builds a host CSR from its three arrays (copied) and validates it at `level`.
template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> make_csr(const host_resources& res, std::int64_t rows, std::int64_t cols,
                                    std::span<const offset_t> row_ptr,
                                    std::span<const IndexT> col_idx, std::span<const ValueT> values,
                                    csr_check level = csr_check::valid);

/// Converts the index type (throws invalid_argument when the extents do not fit the target type).
template <class ToIndexT, class ValueT, class IndexT>
csr_matrix<ValueT, ToIndexT> cast_indices(const host_resources& res, csr_view<ValueT, IndexT> a);
/// Converts the value type (float <-> double) on the host.
template <class ToValueT, class ValueT, class IndexT>
csr_matrix<ToValueT, IndexT> cast_values(const host_resources& res, csr_view<ValueT, IndexT> a);

/// Rows [r0, r1) of a host CSR as a view of its arrays. Views keep row_ptr[0] == 0, so the slice's
/// row pointers are rebased into `ptr` (r1 - r0 + 1 entries), which must outlive the view.
template <class ValueT, class IndexT>
csr_view<ValueT, IndexT> row_slice(csr_view<ValueT, IndexT> a, std::int64_t r0, std::int64_t r1,
                                   std::vector<offset_t>& ptr)
{
  detail::expects(a.space == memory_space::host, "row_slice: the matrix is in device memory");
  detail::expects(0 <= r0 && r0 <= r1 && r1 <= a.rows, "row_slice: rows [", r0, ", ", r1,
                  ") are outside [0, ", a.rows, ")");
  const offset_t base = a.row_ptr[r0];
  ptr.assign(a.row_ptr + r0, a.row_ptr + r1 + 1);
  for (auto& p : ptr) {
    p -= base;
  }
  return {r1 - r0,          a.cols,          ptr.back(),        ptr.data(),
          a.col_idx + base, a.values + base, memory_space::host};
}

}  // namespace spira
