// spira: making a resources handle's device current for the duration of a call. Every CUDA entry
// point of spira opens a device_guard before its first runtime call, so results never depend on
// which device the caller left current, and a machine without a usable GPU gets one clear error.
#pragma once

#include <spira/cuda/error.cuh>
#include <spira/error.hpp>

#include <cuda_runtime_api.h>

namespace spira::detail {

/// Makes `device` the calling thread's current device for the guard's lifetime and restores the
/// previous one afterwards. Throws spira::cuda_error "no usable CUDA device" when the runtime has
/// no device to offer (no GPU, no driver, a driver older than the runtime), and
/// spira::invalid_argument when `device` is not one of the machine's devices.
class device_guard {
 public:
  explicit device_guard(int device)
  {
    const cudaError_t status = cudaGetDevice(&previous_);
    if (status != cudaSuccess) {
      cudaGetLastError();
      throw cuda_error(concat("no usable CUDA device: ", cudaGetErrorString(status), " (",
                              cudaGetErrorName(status),
                              "); the CUDA backend needs an NVIDIA GPU "
                              "and its driver, host_resources runs anywhere"));
    }
    if (previous_ != device) {
      int count = 0;
      SPIRA_CUDA_TRY(cudaGetDeviceCount(&count));
      expects(device >= 0 && device < count, "cuda_resources::device = ", device,
              " but this machine has ", count, " CUDA device", count == 1 ? "" : "s");
      SPIRA_CUDA_TRY(cudaSetDevice(device));
      changed_ = true;
    }
  }
  ~device_guard()
  {
    if (changed_) {
      SPIRA_CUDA_TRY_NO_THROW(cudaSetDevice(previous_));
    }
  }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

}  // namespace spira::detail
