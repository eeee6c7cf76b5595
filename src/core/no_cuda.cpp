// The CUDA entry points of a host-only build: each exists and throws spira::not_compiled, so that
// programs link the same way against either build and fail with a clear message at run time.
#include <spira/convert.hpp>
#include <spira/detail/type_lists.hpp>
#include <spira/knn.hpp>
#include <spira/memory.hpp>
#include <spira/resources.hpp>

#include <cstring>

namespace spira {

namespace {
[[noreturn]] void no_cuda(const char* what)
{
  throw not_compiled(detail::concat(what,
                                    ": this build of spira was compiled without CUDA "
                                    "(configure with SPIRA_ENABLE_CUDA=ON and a CUDA toolkit)"));
}
}  // namespace

bool cuda_compiled() noexcept
{
  return false;
}
int cuda_device_count() noexcept
{
  return 0;
}
void synchronize(const cuda_resources&)
{
  no_cuda("spira::synchronize");
}
std::size_t cuda_free_memory(const cuda_resources&)
{
  no_cuda("spira::cuda_free_memory");
}
csr_matrix<float, std::int64_t> symmetrize(const cuda_resources&, csr_view<float, std::int64_t>)
{
  no_cuda("spira::symmetrize");
}
csr_matrix<float, std::int64_t> fuzzy_union(const cuda_resources&, csr_view<float, std::int64_t>)
{
  no_cuda("spira::fuzzy_union");
}

namespace detail {
void* device_allocate(std::size_t, const cuda_resources&, const char* what)
{
  no_cuda(what);
}
void device_deallocate(void*, const cuda_resources&) noexcept {}
void copy_bytes(void* dst, memory_space dst_space, const void* src, memory_space src_space,
                std::size_t bytes, const cuda_resources&)
{
  if (dst_space != memory_space::host || src_space != memory_space::host) {
    no_cuda("spira::copy to or from device memory");
  }
  std::memmove(dst, src, bytes);
}
void round_to_float_in_place(double*, std::int64_t, std::int64_t, std::int64_t,
                             const cuda_resources&)
{
  no_cuda("spira::knn_graph on device memory");
}
void fill_zero_bytes(void* dst, memory_space space, std::size_t bytes, const cuda_resources&)
{
  if (space != memory_space::host) {
    no_cuda("spira::fill on device memory");
  }
  std::memset(dst, 0, bytes);
}
}  // namespace detail

template <class ValueT, class IndexT>
void validate(const cuda_resources&, csr_view<ValueT, IndexT>, csr_check, const char*)
{
  no_cuda("spira::validate(cuda_resources)");
}
template <class ValueT, class IndexT>
void validate(const cuda_resources&, coo_view<ValueT, IndexT>, const char*)
{
  no_cuda("spira::validate(cuda_resources)");
}
template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> coo_to_csr(const cuda_resources&, coo_view<ValueT, IndexT>)
{
  no_cuda("spira::coo_to_csr(cuda_resources)");
}
template <class ValueT, class IndexT>
coo_matrix<ValueT, IndexT> csr_to_coo(const cuda_resources&, csr_view<ValueT, IndexT>)
{
  no_cuda("spira::csr_to_coo(cuda_resources)");
}
template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> transpose(const cuda_resources&, csr_view<ValueT, IndexT>)
{
  no_cuda("spira::transpose(cuda_resources)");
}
template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> canonicalize(const cuda_resources&, csr_view<ValueT, IndexT>,
                                        canonicalize_options)
{
  no_cuda("spira::canonicalize(cuda_resources)");
}
template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> to_device(const cuda_resources&, csr_view<ValueT, IndexT>)
{
  no_cuda("spira::to_device");
}
template <class T>
dense_matrix<T> to_device(const cuda_resources&, dense_view<const T>)
{
  no_cuda("spira::to_device");
}

#define SPIRA_INSTANTIATE(ValueT, IndexT)                                                          \
  template void validate(const cuda_resources&, csr_view<ValueT, IndexT>, csr_check, const char*); \
  template void validate(const cuda_resources&, coo_view<ValueT, IndexT>, const char*);            \
  template csr_matrix<ValueT, IndexT> coo_to_csr(const cuda_resources&, coo_view<ValueT, IndexT>); \
  template coo_matrix<ValueT, IndexT> csr_to_coo(const cuda_resources&, csr_view<ValueT, IndexT>); \
  template csr_matrix<ValueT, IndexT> transpose(const cuda_resources&, csr_view<ValueT, IndexT>);  \
  template csr_matrix<ValueT, IndexT> canonicalize(                                                \
      const cuda_resources&, csr_view<ValueT, IndexT>, canonicalize_options);                      \
  template csr_matrix<ValueT, IndexT> to_device(const cuda_resources&, csr_view<ValueT, IndexT>);
SPIRA_FOR_EACH_VALUE_INDEX(SPIRA_INSTANTIATE)
#undef SPIRA_INSTANTIATE
template dense_matrix<float> to_device(const cuda_resources&, dense_view<const float>);
template dense_matrix<double> to_device(const cuda_resources&, dense_view<const double>);

template <class ValueT, class IndexT>
knn_result knn_graph(const cuda_resources&, csr_view<ValueT, IndexT>,
                     std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>>,
                     const knn_params&)
{
  no_cuda("spira::knn_graph(cuda_resources)");
}
#define SPIRA_KNN_INSTANTIATE(ValueT, IndexT)                                    \
  template knn_result knn_graph(const cuda_resources&, csr_view<ValueT, IndexT>, \
                                std::optional<csr_view<ValueT, IndexT>>, const knn_params&);
SPIRA_FOR_EACH_VALUE_INDEX(SPIRA_KNN_INSTANTIATE)
#undef SPIRA_KNN_INSTANTIATE

knn_result merge_knn(const cuda_resources&, std::span<const knn_result_view>, std::int64_t,
                     select_order, merge_check)
{
  no_cuda("spira::merge_knn(cuda_resources)");
}

}  // namespace spira
