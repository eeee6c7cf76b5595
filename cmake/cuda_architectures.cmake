# CUDA toolchain settings applied before enable_language(CUDA): target architectures, and the
# C++20 dialect flag for CMake versions that lack it.
#
# CMAKE_CUDA_ARCHITECTURES default: the compute capability of the visible GPU, else 90 (H100/H200).
# Set it on the command line to override (e.g. -DCMAKE_CUDA_ARCHITECTURES="80;90").
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
  set(_spira_arch 90)
  find_program(_spira_nvidia_smi nvidia-smi)
  if(_spira_nvidia_smi)
    execute_process(COMMAND ${_spira_nvidia_smi} --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE _spira_cc RESULT_VARIABLE _spira_rc ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_spira_rc EQUAL 0 AND _spira_cc MATCHES "^([0-9]+)\\.([0-9]+)")
      set(_spira_arch "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
    endif()
  endif()
  set(CMAKE_CUDA_ARCHITECTURES ${_spira_arch} CACHE STRING "CUDA architectures to build for")
endif()

# CMake < 3.26 does not know nvcc's C++20 flag, so CMAKE_CUDA_STANDARD 20 fails to configure there
# ("does not support this, or CMake does not know the flags"). nvcc >= 12 accepts -std=c++20.
if(CMAKE_VERSION VERSION_LESS 3.26 AND NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()
