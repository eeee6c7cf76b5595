// Moves between memory spaces: written once over spira::copy, so host-only and CUDA builds share
// it.
#include <spira/convert.hpp>

namespace spira {

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> to_host(csr_view<ValueT, IndexT> a, const cuda_resources& res)
{
  csr_matrix<ValueT, IndexT> m(host_resources{}, a.rows, a.cols, a.nnz);
  copy(m.row_ptr(), memory_space::host, a.row_ptr, a.space, static_cast<std::size_t>(a.rows) + 1,
       res);
  copy(m.col_idx(), memory_space::host, a.col_idx, a.space, static_cast<std::size_t>(a.nnz), res);
  copy(m.values(), memory_space::host, a.values, a.space, static_cast<std::size_t>(a.nnz), res);
  return m;
}

template <class T>
dense_matrix<T> to_host(dense_view<const T> a, const cuda_resources& res)
{
  dense_matrix<T> m(host_resources{}, a.rows, a.cols);
  for (std::int64_t i = 0; i < a.rows; ++i) {
    copy(m.data() + i * a.cols, memory_space::host, a.data + i * a.ld, a.space,
         static_cast<std::size_t>(a.cols), res);
  }
  return m;
}

template csr_matrix<float, std::int32_t> to_host(csr_view<float, std::int32_t>,
                                                 const cuda_resources&);
template csr_matrix<float, std::int64_t> to_host(csr_view<float, std::int64_t>,
                                                 const cuda_resources&);
template csr_matrix<double, std::int32_t> to_host(csr_view<double, std::int32_t>,
                                                  const cuda_resources&);
template csr_matrix<double, std::int64_t> to_host(csr_view<double, std::int64_t>,
                                                  const cuda_resources&);
template dense_matrix<float> to_host(dense_view<const float>, const cuda_resources&);
template dense_matrix<double> to_host(dense_view<const double>, const cuda_resources&);

}  // namespace spira
