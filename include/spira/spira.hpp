// spira: umbrella header. Includes the whole public C++ API (no CUDA headers).
#pragma once

#include <spira/config.hpp>
#include <spira/convert.hpp>
#include <spira/error.hpp>
#include <spira/matrix.hpp>
#include <spira/memory.hpp>
#include <spira/resources.hpp>
#include <spira/distance.hpp>
#include <spira/io.hpp>
#include <spira/knn.hpp>
#include <spira/select_k.hpp>
