// CUDA backend: device-wide primitives (CUB) behind plain host functions.
//
// The CUB dispatch templates are the expensive part of compiling the backend, so they are
// instantiated once, in primitives.cu, for the few key types the library sorts, and every other
// translation unit calls these declarations. Temporary storage comes from spira::buffer on the
// caller's resources (the stream-ordered pool), never from cudaMalloc; all work is queued on
// res.stream and nothing here synchronises.
#pragma once

#include <spira/config.hpp>
#include <spira/matrix.hpp>
#include <spira/resources.hpp>

#include <cstdint>

namespace spira::detail {

/// Two device arrays of equal length; `current` holds the data, `alternate` is scratch of the same
/// size. Sorting leaves the result in `current` (the two pointers may have been swapped).
template <class T>
struct ping_pong {
  T* current = nullptr;
  T* alternate = nullptr;
};

/// Stable LSD radix sort of n (key, value) pairs by bits [0, end_bit) of the keys; pairs with
/// equal keys keep their relative order. Keys must be zero above end_bit for the order to be the
/// numeric one. end_bit == 0 leaves the pairs as they are.
void stable_sort_pairs(const cuda_resources& res, ping_pong<std::uint32_t>& keys,
                       ping_pong<offset_t>& values, std::int64_t n, int end_bit);
void stable_sort_pairs(const cuda_resources& res, ping_pong<std::uint64_t>& keys,
                       ping_pong<offset_t>& values, std::int64_t n, int end_bit);

/// In-place exclusive prefix sum of n offsets: data[i] <- data[0] + ... + data[i-1].
void exclusive_sum_in_place(const cuda_resources& res, offset_t* data, std::int64_t n);

}  // namespace spira::detail
