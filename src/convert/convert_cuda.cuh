// CUDA backend: host-side helpers shared by the device conversions (convert_cuda.cu) and the
// device validation (validate_cuda.cu).
#pragma once

#include <spira/memory.hpp>
#include <spira/resources.hpp>

namespace spira::detail {

/// Throws unless `s` is device memory, naming the operation and its argument.
inline void require_device(memory_space s, const char* op, const char* name)
{
  expects(s == memory_space::device, op, ": ", name,
          " is in host memory; pass host_resources or copy it with spira::to_device");
}

/// One value copied back from device memory (synchronises res.stream).
template <class T>
T read_back(const T* device_ptr, const cuda_resources& res)
{
  T value{};
  copy(&value, memory_space::host, device_ptr, memory_space::device, 1, res);
  return value;
}

}  // namespace spira::detail
