// The CUDA entry points of select_k in a host-only build: each exists and throws
// spira::not_compiled, so programs link the same way against either build.
#include <spira/detail/type_lists.hpp>
#include "selection/dispatch.hpp"

namespace spira::selection {

namespace {
[[noreturn]] void no_cuda(const char* what)
{
  throw not_compiled(detail::concat(what,
                                    ": this build of spira was compiled without CUDA "
                                    "(configure with SPIRA_ENABLE_CUDA=ON and a CUDA toolkit)"));
}
}  // namespace

template <class T, class IndexT>
void select_rows(const cuda_resources&, row_source<T, IndexT>, row_sink<T, IndexT>, const problem&)
{
  no_cuda("spira::select_k(cuda_resources)");
}

template <class T, class IndexT>
void select_vector(const cuda_resources&, row_source<T, IndexT>, row_sink<T, IndexT>,
                   const problem&)
{
  no_cuda("spira::select_k(cuda_resources)");
}

std::int64_t max_row_length(const cuda_resources&, const offset_t*, std::int64_t)
{
  no_cuda("spira::select_k(cuda_resources)");
}

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> compact_rows(const cuda_resources&, csr_view<ValueT, IndexT>,
                                        const dense_matrix<ValueT>&, const dense_matrix<IndexT>&,
                                        std::int64_t)
{
  no_cuda("spira::select_k(cuda_resources)");
}

#define SPIRA_SELECT_NO_CUDA(T, IndexT)                                                          \
  template void select_rows(const cuda_resources&, row_source<T, IndexT>, row_sink<T, IndexT>,   \
                            const problem&);                                                     \
  template void select_vector(const cuda_resources&, row_source<T, IndexT>, row_sink<T, IndexT>, \
                              const problem&);
SPIRA_FOR_EACH_SELECT_VALUE_INDEX(SPIRA_SELECT_NO_CUDA)
#undef SPIRA_SELECT_NO_CUDA
#define SPIRA_COMPACT_NO_CUDA(ValueT, IndexT)                                       \
  template csr_matrix<ValueT, IndexT> compact_rows(                                 \
      const cuda_resources&, csr_view<ValueT, IndexT>, const dense_matrix<ValueT>&, \
      const dense_matrix<IndexT>&, std::int64_t);
SPIRA_FOR_EACH_VALUE_INDEX(SPIRA_COMPACT_NO_CUDA)
#undef SPIRA_COMPACT_NO_CUDA

}  // namespace spira::selection
