// CUDA backend: making a resources handle's device current for the duration of a call.
#pragma once

#include <spira/cuda/error.cuh>

#include <cuda_runtime_api.h>

namespace spira::detail {

/// Makes `device` the calling thread's current device for the guard's lifetime and restores the
/// previous one afterwards. Every CUDA entry point of spira opens one before its first runtime call,
/// so results never depend on which device the caller happened to leave current.
class device_guard {
 public:
  explicit device_guard(int device)
  {
    SPIRA_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ != device) {
      SPIRA_CUDA_TRY(cudaSetDevice(device));
      changed_ = true;
    }
  }
  ~device_guard()
  {
    if (changed_) { SPIRA_CUDA_TRY_NO_THROW(cudaSetDevice(previous_)); }
  }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

}  // namespace spira::detail
