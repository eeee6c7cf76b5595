// spira selection: the backend entry points behind the public select_k (internal header).
// The public functions (src/selection/select_k.cpp) validate every argument once and forward here
// with the algorithm already resolved; the backends assume valid arguments.
#pragma once

#include <spira/select_k.hpp>

#include "selection/keys.hpp"

namespace spira::selection {

/// One select_k problem, validated: rows from `src`, k, direction, resolved algorithm.
struct problem {
  std::int64_t k = 0;
  bool largest = false;
  std::int64_t max_length = 0;  ///< the longest row
  select_algo algo = select_algo::radix;
  bool sorted = false;
  int max_iter = 0;  ///< 0: exact
  /// delegate only: the sub-range length (a power of two >= 32); 0: Rule 4's cost model decides.
  std::int64_t delegate_subrange = 0;
};

template <class T, class IndexT>
void select_rows(const host_resources& res, row_source<T, IndexT> src, row_sink<T, IndexT> dst,
                 const problem& p);
template <class T, class IndexT>
void select_rows(const cuda_resources& res, row_source<T, IndexT> src, row_sink<T, IndexT> dst,
                 const problem& p);

/// Dense rows with the delegate algorithm (Dr. Top-k, selection/delegate.cuh): each row on its
/// own, on the whole device. `src` must be dense (row_ptr == nullptr). Defined in
/// src/selection/select_vector_cuda.cu (no_cuda.cpp in a host-only build).
template <class T, class IndexT>
void select_vector(const cuda_resources& res, row_source<T, IndexT> src, row_sink<T, IndexT> dst,
                   const problem& p);

/// Delegates per sub-range of the delegate algorithm (Dr. Top-k's beta; the paper finds 2 best).
inline constexpr int delegate_beta = 2;

/// The constant C of Rule 4 (the cost of a sub-range's delegates over the cost of one candidate
/// element), measured on an H200 with bench/select_k/select_vector_tune.py
/// (bench/results/select_vector-tune-2026-11-21-v3.json, after the branch-free tile kernel: best
/// interval 512 .. 1722, the rule then within 6.5% of the fastest measured sub-range length,
/// geometric mean over 20 cases; 609 .. 1722 and 3.2% before).
inline constexpr double delegate_rule4_constant = 1024.0;

/// The sub-range length the delegate algorithm uses for rows of n elements and a given k: Rule 4
/// of Dr. Top-k, sqrt(C * n / k) rounded to a power of two in [32, 2^16], with C measured on the
/// H200 (docs/selection.md, "delegate").
std::int64_t delegate_subrange_for(std::int64_t n, std::int64_t k) noexcept;

/// The longest row of a CSR row-pointer array (rows + 1 entries in the backend's memory).
std::int64_t max_row_length(const host_resources& res, const offset_t* row_ptr, std::int64_t rows);
std::int64_t max_row_length(const cuda_resources& res, const offset_t* row_ptr, std::int64_t rows);

/// Drops the padding of rows x k outputs (row r keeps min(k, degree of r) entries) into a CSR.
template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> compact_rows(const host_resources& res, csr_view<ValueT, IndexT> rows,
                                        const dense_matrix<ValueT>& values,
                                        const dense_matrix<IndexT>& indices, std::int64_t k);
template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> compact_rows(const cuda_resources& res, csr_view<ValueT, IndexT> rows,
                                        const dense_matrix<ValueT>& values,
                                        const dense_matrix<IndexT>& indices, std::int64_t k);

}  // namespace spira::selection
