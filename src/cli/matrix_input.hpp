// spira CLI: reading the sparse inputs of distance and knn with the narrowest index type that fits.
#pragma once

#include <spira/io.hpp>

#include <cmath>
#include <string>

namespace spira::cli {

/// Reads `path` as a canonical host CSR with int64 indices, then calls fn(matrix) with int32
/// indices when the column count allows (halving index traffic), else with int64 indices.
template <class ValueT, class Fn>
decltype(auto) with_matrix(const std::string& path, Fn&& fn)
{
  auto m = io::read_matrix<ValueT, std::int64_t>(path);
  if (detail::fits_index<std::int32_t>(m.cols()) && detail::fits_index<std::int32_t>(m.rows())) {
    return fn(cast_indices<std::int32_t>(host_resources{}, m.view()));
  }
  return fn(std::move(m));
}

/// True when every value of m is exactly a float32 (NaN included): the GPU may then compute in
/// float without changing the data.
template <class IndexT>
bool values_fit_float(csr_view<double, IndexT> m)
{
  for (std::int64_t k = 0; k < m.nnz; ++k) {
    const double v = m.values[k];
    if (!(double(static_cast<float>(v)) == v) && !std::isnan(v)) {
      return false;
    }
  }
  return true;
}

}  // namespace spira::cli
