// Host memory, version and host resources: the parts of the core that never need CUDA.
#include <spira/config.hpp>
#include <spira/error.hpp>
#include <spira/memory.hpp>
#include <spira/resources.hpp>

#include <omp.h>

#include <algorithm>
#include <new>

namespace spira {

const char* version() noexcept { return "0.1.0"; }

int host_resources::num_threads() const noexcept
{
  if (threads > 0) { return threads; }
  return std::max(1, omp_get_max_threads());
}

namespace detail {

namespace {
constexpr std::align_val_t host_alignment{64};  // one cache line; also satisfies AVX-512 loads
}

void* host_allocate(std::size_t bytes, const char* what)
{
  void* p = ::operator new(bytes, host_alignment, std::nothrow);
  expects<out_of_memory>(p != nullptr, "out of host memory allocating ", what, ": ", bytes,
                         " bytes (", bytes >> 20, " MiB)");
  return p;
}

void host_deallocate(void* p) noexcept { ::operator delete(p, host_alignment); }

}  // namespace detail
}  // namespace spira
