// spira: umbrella header. Includes the whole public C++ API of the host compiler: containers,
// conversions, file formats, the semiring model and the host engine for user semirings, the
// built-in metrics, top-k selection and k-NN graphs (both backends through the compiled library).
// The CUDA templates for user semirings need nvcc and are included separately:
// spira/cuda/pairwise.cuh and spira/cuda/knn.cuh.
#pragma once

#include <spira/accuracy.hpp>
#include <spira/apply.hpp>
#include <spira/config.hpp>
#include <spira/convert.hpp>
#include <spira/descriptor.hpp>
#include <spira/distance.hpp>
#include <spira/error.hpp>
#include <spira/ewise.hpp>
#include <spira/io.hpp>
#include <spira/knn.hpp>
#include <spira/knn_semiring.hpp>
#include <spira/matrix.hpp>
#include <spira/memory.hpp>
#include <spira/mxm.hpp>
#include <spira/mxv.hpp>
#include <spira/ops.hpp>
#include <spira/resources.hpp>
#include <spira/select.hpp>
#include <spira/select_k.hpp>
#include <spira/semiring.hpp>
#include <spira/vector.hpp>
