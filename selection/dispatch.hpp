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
};

template <class T, class IndexT>
void select_rows(const host_resources& res, row_source<T, IndexT> src, row_sink<T, IndexT> dst,
                 const problem& p);
template <class T, class IndexT>
void select_rows(const cuda_resources& res, row_source<T, IndexT> src, row_sink<T, IndexT> dst,
                 const problem& p);

/// The longest row of a CSR row-pointer array (rows + 1 entries in the backend's memory).
std::int64_t max_row_length(const host_resources& res, const offset_t* row_ptr, std::int64_t rows);
std::int64_t max_row_length(const cuda_resources& res, const offset_t* row_ptr, std::int64_t rows);

/// Drops the padding of rows x k outputs (row r keeps min(k, degree of r) entries) into a CSR.
template <class V, class I>
csr_matrix<V, I> compact_rows(const host_resources& res, csr_view<V, I> rows,
                              const dense_matrix<V>& values, const dense_matrix<I>& indices,
                              std::int64_t k);
template <class V, class I>
csr_matrix<V, I> compact_rows(const cuda_resources& res, csr_view<V, I> rows,
                              const dense_matrix<V>& values, const dense_matrix<I>& indices,
                              std::int64_t k);

}  // namespace spira::selection
