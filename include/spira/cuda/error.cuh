// spira: checking CUDA calls. Every runtime call and every kernel launch in spira goes through
// these macros, so a failure becomes a spira::cuda_error (or spira::out_of_memory) naming the call,
// the file and the line, never an abort or a silently ignored status.
#pragma once

#include <spira/error.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>

namespace spira::detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                          int line)
{
  cudaGetLastError();  // clear a sticky-free error so later calls are not blamed for it
  const std::string msg =
      concat("CUDA error ", cudaGetErrorName(status), " (", cudaGetErrorString(status), ") in ",
             call, " at ", file, ":", line);
  if (status == cudaErrorMemoryAllocation) {
    throw out_of_memory(msg);
  }
  throw cuda_error(msg);
}

}  // namespace spira::detail

/// Evaluates a CUDA runtime call and throws spira::cuda_error when it does not return cudaSuccess.
#define SPIRA_CUDA_TRY(call)                                                       \
  do {                                                                             \
    const cudaError_t spira_status_ = (call);                                      \
    if (spira_status_ != cudaSuccess) {                                            \
      ::spira::detail::throw_cuda_error(spira_status_, #call, __FILE__, __LINE__); \
    }                                                                              \
  } while (0)

/// The destructor-safe twin: reports a failure on stderr instead of throwing.
#define SPIRA_CUDA_TRY_NO_THROW(call)                                                    \
  do {                                                                                   \
    const cudaError_t spira_status_ = (call);                                            \
    if (spira_status_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "spira: %s failed at %s:%d: %s\n", #call, __FILE__, __LINE__, \
                   cudaGetErrorString(spira_status_));                                   \
    }                                                                                    \
  } while (0)

/// Checks the launch that just happened (configuration errors, and on debug builds nothing more:
/// asynchronous faults surface at the next synchronising call, also checked).
#define SPIRA_CHECK_LAUNCH() SPIRA_CUDA_TRY(cudaPeekAtLastError())
