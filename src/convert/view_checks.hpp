// What spira::validate checks of a matrix view before it reads the view's arrays, on both backends
// (convert.cpp, validate_cuda.cu): the extents, and the arrays present where they hold entries.
#pragma once

#include <spira/error.hpp>
#include <spira/matrix.hpp>

#include <cstdint>

namespace spira::detail {

template <class View>
void check_view_extents(const View& a, const char* name)
{
  expects(a.rows >= 0 && a.cols >= 0 && a.nnz >= 0, name, ": negative extent (rows = ", a.rows,
          ", cols = ", a.cols, ", nnz = ", a.nnz, ")");
}

template <class ValueT, class IndexT>
void check_view_arrays(csr_view<ValueT, IndexT> a, const char* name)
{
  check_view_extents(a, name);
  expects(a.row_ptr != nullptr, name, ": row_ptr is null");
  expects(a.nnz == 0 || (a.col_idx != nullptr && a.values != nullptr), name,
          ": col_idx or values is null with nnz = ", a.nnz);
}

template <class ValueT, class IndexT>
void check_view_arrays(coo_view<ValueT, IndexT> a, const char* name)
{
  check_view_extents(a, name);
  expects(a.nnz == 0 || (a.row_idx != nullptr && a.col_idx != nullptr && a.values != nullptr), name,
          ": row_idx, col_idx or values is null with nnz = ", a.nnz);
}

}  // namespace spira::detail
