// merge_knn with cuda_resources (CUDA builds; a host-only build has the not_compiled entry in
// src/core/no_cuda.cpp). The merge runs on the host (merge.cpp): device parts are copied to the
// host, merged, and the result is copied back to the device.
#include "merge.hpp"

#include <spira/knn.hpp>
#include <spira/memory.hpp>

#include <cstdint>
#include <vector>

namespace spira {

namespace {

/// A host copy of a device matrix view (one copy when its rows are contiguous).
template <class T>
dense_matrix<T> host_copy(const cuda_resources& res, dense_view<const T> a)
{
  dense_matrix<T> m(host_resources{}, a.rows, a.cols);
  if (a.ld == a.cols) {
    copy(m.data(), memory_space::host, a.data, a.space, static_cast<std::size_t>(a.rows * a.cols),
         res);
    return m;
  }
  for (std::int64_t i = 0; i < a.rows; ++i) {
    copy(m.data() + i * a.cols, memory_space::host, a.row(i), a.space,
         static_cast<std::size_t>(a.cols), res);
  }
  return m;
}

/// A device copy (allocated from res) of a host matrix.
template <class T>
dense_matrix<T> device_copy(const cuda_resources& res, const dense_matrix<T>& a)
{
  dense_matrix<T> m(res, a.rows(), a.cols());
  copy(m.data(), memory_space::device, a.data(), memory_space::host,
       static_cast<std::size_t>(a.rows() * a.cols()), res);
  return m;
}

}  // namespace

knn_result merge_knn(const cuda_resources& res, std::span<const knn_result_view> parts,
                     std::int64_t k, select_order order)
{
  const memory_space space = detail::check_merge_knn_parts(parts, k);
  const bool largest = order == select_order::largest;
  const int threads = host_resources{}.num_threads();
  if (space == memory_space::host) {
    return detail::merge_knn_host(parts, k, largest, threads);
  }
  std::vector<knn_result> host_parts;
  std::vector<knn_result_view> views;
  host_parts.reserve(parts.size());
  views.reserve(parts.size());
  for (const knn_result_view& p : parts) {
    host_parts.push_back({host_copy(res, p.indices), host_copy(res, p.distances)});
    views.push_back(host_parts.back().view());
  }
  const knn_result merged = detail::merge_knn_host(views, k, largest, threads);
  return {device_copy(res, merged.indices), device_copy(res, merged.distances)};
}

}  // namespace spira
