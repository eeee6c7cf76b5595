// spira internals: the decoupled look-back of a single-pass ordered write. Each block of a kernel
// handles one tile of consecutive items (tiles numbered in the order the blocks start, from a
// ticket, so every earlier tile is held by a running block), counts what its tile emits, and
// learns what the tiles before it emit by reading their published words, walking back only as far
// as the nearest word that already holds the running total. Learned from Merrill and Garland,
// "Single-pass Parallel Prefix Scan with Decoupled Look-back" (2016).
//
// Used by the device sparse vectors written in one pass (spira/cuda/detail/ordered_vector.cuh)
// and by the ordered passes of the one-row radix select (selection/radix_vector.cuh).
#pragma once

#include <cuda/atomic>

#include <cstdint>

namespace spira::detail {

#if defined(__CUDACC__)

/// The ticket of the tile this block handles next, for every thread of the block: thread 0 takes
/// it from `counter` (tickets come in the order blocks ask) and hands it on through `slot`, the
/// block's shared memory. All threads call it; it synchronises the block before (the last ticket
/// may still be read) and after.
template <class Counter>
__device__ __forceinline__ Counter take_ticket(Counter* counter, Counter& slot)
{
  __syncthreads();
  if (threadIdx.x == 0) {
    slot = atomicAdd(counter, Counter(1));
  }
  __syncthreads();
  return slot;
}

/// A tile's look-back word: the top two bits say what the low 62 hold. 0 and 3 say "not yet
/// published", so scratch set to zero and scratch set to all ones both start every tile there.
/// The value is the caller's: a count, or several packed counts whose sums stay in 62 bits.
struct look_back_word {
  static constexpr unsigned long long aggregate = 1ull;  // the tile's own value
  static constexpr unsigned long long inclusive = 2ull;  // the sum of the values up to the tile
  static constexpr unsigned long long value_mask = (1ull << 62) - 1;
  __device__ static unsigned long long make(unsigned long long kind, unsigned long long value)
  {
    return (kind << 62) | value;
  }
  __device__ static unsigned long long kind(unsigned long long word) { return word >> 62; }
};

/// The shared memory of a look-back by `Warps` warps (nothing for one warp).
template <int Warps>
struct look_back_storage {
  unsigned long long sum[Warps];
  int found[Warps];
};
template <>
struct look_back_storage<1> {};

/// Publishes `value`, this tile's own, in `words[tile]` and returns the sum of the values of the
/// tiles before it (then publishes the sum up to this tile). Each round, each of the `Warps` warps
/// reads 32 earlier words and waits only for the words nearer than the nearest finished one.
/// With one warp, the threads of one warp call it; with more, every thread of a block of exactly
/// `Warps` warps does (it synchronises the block, and a larger block would overrun `storage`).
/// Every calling thread gets the result.
template <int Warps>
__device__ __forceinline__ unsigned long long look_back(look_back_storage<Warps>& storage,
                                                        unsigned long long* words,
                                                        std::int64_t tile, unsigned long long value)
{
  (void)storage;  // one warp needs none
  using word = look_back_word;
  using word_ref = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;
  constexpr unsigned full = 0xffffffffu;
  const int lane = int(threadIdx.x % 32);
  const int w = Warps == 1 ? 0 : int(threadIdx.x / 32);
  if (threadIdx.x % (32 * Warps) == 0) {
    word_ref(words[tile])
        .store(word::make(tile == 0 ? word::inclusive : word::aggregate, value),
               cuda::memory_order_relaxed);
  }
  unsigned long long before = 0;
  for (std::int64_t end = tile - 1; end >= 0; end -= 32 * Warps) {
    const std::int64_t at = end - 32 * w - lane;
    unsigned long long s = 0;
    unsigned finished = 0;
    for (;;) {
      // Before the first tile: a finished word holding nothing.
      s = at >= 0 ? word_ref(words[at]).load(cuda::memory_order_relaxed)
                  : word::make(word::inclusive, 0);
      const unsigned long long k = word::kind(s);
      finished = __ballot_sync(full, k == word::inclusive);
      const unsigned waiting = __ballot_sync(full, k != word::aggregate && k != word::inclusive);
      // Lane 0 reads the nearest word; those beyond the nearest finished one are not needed.
      const unsigned needed = finished != 0 ? (finished & (0u - finished)) - 1u : full;
      if ((waiting & needed) == 0) {
        break;
      }
    }
    const int stop = finished != 0 ? __ffs(int(finished)) - 1 : 31;
    unsigned long long v = lane <= stop ? (s & word::value_mask) : 0ull;
#pragma unroll
    for (int h = 16; h > 0; h /= 2) {
      v += __shfl_xor_sync(full, v, h);
    }
    bool found = finished != 0;
    if constexpr (Warps == 1) {
      before += v;
    } else {
      if (lane == 0) {
        storage.sum[w] = v;
        storage.found[w] = found;
      }
      __syncthreads();
      // The nearest warp that found a finished word ends the walk.
      found = false;
      for (int u = 0; u < Warps && !found; ++u) {
        before += storage.sum[u];
        found = storage.found[u] != 0;
      }
      __syncthreads();  // the next round rewrites the storage
    }
    if (found) {
      break;
    }
  }
  if (tile > 0 && threadIdx.x % (32 * Warps) == 0) {
    word_ref(words[tile])
        .store(word::make(word::inclusive, before + value), cuda::memory_order_relaxed);
  }
  return before;
}

#endif  // __CUDACC__

}  // namespace spira::detail
