// spira internals: a new device sparse vector written in one pass of the kernel that computes its
// entries (the pull of mxv / vxm, the write-back w⟨m⟩ = accum(w, t)). Each block of that kernel
// computes a tile of consecutive indices, counts the tile's entries, learns how many the tiles
// before it hold by a decoupled look-back, and writes its entries there: indices increase, and
// the bytes do not depend on the order the blocks run in. The tiles are numbered in the order the
// blocks start (a counter), so a block only ever waits for tiles already running
// (spira/cuda/detail/look_back.cuh).
//
// The vector is allocated for every index (its entries are at most its size) and keeps the
// count written by the last tile; one holding fewer than half its size is copied to an exact
// allocation when that frees more than 1 MiB. Its scratch is one allocation: device words set to
// all ones (ordered_words: the status words of the kernels that check the operands as they read
// them - the first finding, atomicMin; all ones: none - the tile counter, the entry count, a CSR
// check's report, then a state a tile) and, on request, dense copies of vectors of its size set to
// zero for the operation's own use: one allocation and two memsets a call in all.
#pragma once

#include <spira/cuda/detail/graphblas_rows.cuh>  // csr_report_words
#include <spira/cuda/detail/look_back.cuh>
#include <spira/cuda/error.cuh>
#include <spira/memory.hpp>
#include <spira/resources.hpp>
#include <spira/vector.hpp>

#include <cuda_runtime.h>
#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <cstdint>
#include <functional>

namespace spira::detail {

#if defined(__CUDACC__)

/// What throws an operand's error (spira::validate's messages) once the kernels of a product have
/// found one; never returns.
using operand_report = std::function<void()>;

/// Where the words of an ordered_vector's scratch are.
struct ordered_words {
  static constexpr int status = 0;   // two
  static constexpr int counter = 2;  // the next tile
  static constexpr int count = 3;    // the entry count, written by the last tile
  static constexpr int report = 4;   // a report of check_csr_async
  static constexpr int tiles = report + csr_report_words;  // a state a tile
};

/// A dense copy of a vector (a state and a value an index: state 0 no entry, 1 a stored 0, 2
/// another value) in memory someone else owns.
struct dense_vector_ref {
  unsigned char* state_data = nullptr;
  double* value_data = nullptr;
  [[nodiscard]] unsigned char* state() const { return state_data; }
  [[nodiscard]] double* value() const { return value_data; }
};

/// The device side of an ordered_vector: where a kernel writes its tiles.
template <class ValueT, class IndexT>
struct ordered_vector_ref {
  IndexT* indices;
  ValueT* values;
  unsigned long long* words;  // see ordered_words
  std::int64_t tiles;         // tiles the launch writes (its blocks)

  /// The shared memory of a block of Threads threads writing a tile (declared by the kernel).
  template <int Threads>
  struct tile_storage {
    typename cub::BlockScan<unsigned, Threads>::TempStorage scan;
    unsigned long long offset;
    unsigned long long ticket;
  };

  /// The tile this block writes (all threads; the order blocks take them in).
  template <int Threads>
  __device__ std::int64_t take_tile(tile_storage<Threads>& storage) const
  {
    // The counter starts at all ones.
    return std::int64_t(take_ticket(words + ordered_words::counter, storage.ticket) + 1ull);
  }

  /// Places this block's tile: thread t holds Items consecutive candidates of it (t * Items + j
  /// in the tile's order), `has` whether each is an entry; returns the position of the thread's
  /// first entry (the next ones follow it). All threads call it; the last tile writes the entry
  /// count.
  template <int Threads, int Items>
  __device__ std::int64_t place_tile(tile_storage<Threads>& storage, std::int64_t tile,
                                     const bool (&has)[Items]) const
  {
    unsigned mine = 0;
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      mine += has[j] ? 1u : 0u;
    }
    unsigned rank = 0, count = 0;
    cub::BlockScan<unsigned, Threads>(storage.scan).ExclusiveSum(mine, rank, count);
    if (threadIdx.x < 32) {
      look_back_storage<1> none;
      const unsigned long long before = look_back(none, words + ordered_words::tiles, tile, count);
      if (threadIdx.x == 0) {
        storage.offset = before;
        if (tile == tiles - 1) {
          words[ordered_words::count] = before + count;
        }
      }
    }
    __syncthreads();
    return std::int64_t(storage.offset) + rank;
  }

  /// Writes this block's tile: as place_tile, each entry at index `index` valued `value`.
  template <int Threads, int Items>
  __device__ void write_tile(tile_storage<Threads>& storage, std::int64_t tile,
                             const bool (&has)[Items], const std::int64_t (&index)[Items],
                             const double (&value)[Items]) const
  {
    std::int64_t at = place_tile<Threads, Items>(storage, tile, has);
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      if (has[j]) {
        indices[at] = IndexT(index[j]);
        values[at] = ValueT(value[j]);
        ++at;
      }
    }
  }
};

/// A new device sparse vector of `size` written by one kernel's tiles (see above), with the
/// status words of the kernels that check its operands and the operation's dense copies.
template <class ValueT, class IndexT>
class ordered_vector {
 public:
  /// Room for every index, for the tiles of a kernel taking at least `min_tile` indices a tile,
  /// and for `dense_copies` dense copies of vectors of `size` (take_dense), all absent.
  ordered_vector(const cuda_resources& res, std::int64_t size, std::int64_t min_tile,
                 int dense_copies = 0)
      : out_(res, size, size),
        words_(std::size_t(ordered_words::tiles + (size + min_tile - 1) / min_tile)),
        dense_stride_((std::size_t(std::max<std::int64_t>(size, 1)) * (sizeof(double) + 1) + 7) /
                      8 * 8),
        copies_(dense_copies),
        scratch_(res, words_ * sizeof(unsigned long long) + std::size_t(copies_) * dense_stride_,
                 "vector scratch")
  {
    SPIRA_CUDA_TRY(
        cudaMemsetAsync(scratch_.data(), 0xFF, words_ * sizeof(unsigned long long), res.stream));
    if (copies_ > 0) {
      fill_zero_bytes(scratch_.data() + words_ * sizeof(unsigned long long), memory_space::device,
                      std::size_t(copies_) * dense_stride_, res);
    }
  }
  [[nodiscard]] std::int64_t size() const { return out_.size(); }
  /// The status words (two) of the kernels that check the operands.
  [[nodiscard]] unsigned long long* status() { return words() + ordered_words::status; }
  /// csr_report_words words, all ones, for a report of check_csr_async.
  [[nodiscard]] unsigned long long* csr_report() { return words() + ordered_words::report; }
  /// The next of the dense copies asked for: every state 0 and every value 0.
  [[nodiscard]] dense_vector_ref take_dense()
  {
    expects(taken_ < copies_, "ordered_vector: ", copies_, " dense copies taken already");
    unsigned char* at = scratch_.data() + words_ * sizeof(unsigned long long) +
                        std::size_t(taken_++) * dense_stride_;
    const auto n = std::size_t(std::max<std::int64_t>(size(), 1));
    return {at + n * sizeof(double), reinterpret_cast<double*>(at)};
  }
  /// For a kernel launched with `tiles` blocks (each writes one tile).
  [[nodiscard]] ordered_vector_ref<ValueT, IndexT> ref(std::int64_t tiles)
  {
    written_ = tiles > 0;
    return {out_.indices(), out_.values(), words(), tiles};
  }
  /// The vector, once its kernel is queued: the entry count and the status words are read back
  /// (one synchronisation) and, with `report` and a finding, the report throws.
  sparse_vector<ValueT, IndexT> finish(const cuda_resources& res, const operand_report* report)
  {
    unsigned long long w[4] = {~0ull, ~0ull, 0ull, 0ull};
    copy(w, memory_space::host, words(), memory_space::device, 4, res);
    if (report != nullptr &&
        (w[ordered_words::status] != ~0ull || w[ordered_words::status + 1] != ~0ull)) {
      (*report)();
    }
    const std::int64_t nnz = written_ ? std::int64_t(w[ordered_words::count]) : 0;
    out_.shrink(nnz);
    // Room left unused beyond half the vector and 1 MiB goes back: a copy of the entries.
    const auto slack = std::uint64_t(size() - nnz) * (sizeof(ValueT) + sizeof(IndexT));
    if (nnz < size() / 2 && slack > max_slack_bytes) {
      sparse_vector<ValueT, IndexT> exact(res, size(), nnz);
      copy(exact.indices(), memory_space::device, out_.indices(), memory_space::device,
           std::size_t(nnz), res);
      copy(exact.values(), memory_space::device, out_.values(), memory_space::device,
           std::size_t(nnz), res);
      return exact;
    }
    return std::move(out_);
  }

  /// Unused room a finished vector may keep when it holds fewer entries than half its size.
  static constexpr std::uint64_t max_slack_bytes = std::uint64_t(1) << 20;

 private:
  unsigned long long* words() { return reinterpret_cast<unsigned long long*>(scratch_.data()); }

  sparse_vector<ValueT, IndexT> out_;
  std::size_t words_;         // device words before the dense copies
  std::size_t dense_stride_;  // bytes of a dense copy (a multiple of 8)
  int copies_;
  int taken_ = 0;
  buffer<unsigned char> scratch_;
  bool written_ = false;
};

#endif  // __CUDACC__

}  // namespace spira::detail
