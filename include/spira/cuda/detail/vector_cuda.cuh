// spira internals: sparse vectors on CUDA for the GraphBLAS-style operations
// (spira/cuda/graphblas.cuh): dense copies of a vector (a state and a value per index), the checks
// of a device vector with the host's messages, and the write-back every vector result ends with,
// w⟨m⟩ = accum(w, t) over dense copies, written in the same pass as a new sparse vector
// (ordered_vector.cuh; its entry count read back with the status words of the kernels that
// checked the operands).
#pragma once

#include <spira/cuda/detail/graphblas_rows.cuh>
#include <spira/cuda/detail/ordered_vector.cuh>
#include <spira/descriptor.hpp>
#include <spira/vector.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace spira::detail {

#if defined(__CUDACC__)

/// Whether entry p of a vector's indices is wrong: outside [0, size), or not above entry p - 1.
template <class IndexT>
__device__ bool wrong_vector_entry(const IndexT* indices, std::int64_t p, std::int64_t size)
{
  const auto i = std::int64_t(indices[p]);
  return i < 0 || i >= size || (p > 0 && std::int64_t(indices[p - 1]) >= i);
}

/// A dense copy of a sparse vector's entries: state 0 no entry, 1 a stored 0, 2 another value.
/// With `bad` (nullptr: the vector is known to be valid), an entry whose index is outside [0,
/// size) or does not increase is not copied and the first such entry is kept in *bad (atomicMin).
template <class ValueT, class IndexT>
__global__ void scatter_vector_kernel(sparse_vector_view<ValueT, IndexT> v, unsigned char* state,
                                      double* value, unsigned long long* bad)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t p = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < v.nnz;
       p += stride) {
    if (bad != nullptr && wrong_vector_entry(v.indices, p, v.size)) {
      atomicMin(bad, (unsigned long long)p);
      continue;
    }
    const auto i = std::int64_t(v.indices[p]);
    state[i] = v.values[p] != ValueT(0) ? 2 : 1;
    value[i] = double(v.values[p]);
  }
}

/// Indices a thread of vector_update_kernel takes (consecutive ones; a block's tile is
/// block_threads times as many).
constexpr int vector_update_items = 1;

/// w⟨m⟩ = accum(w, t) over dense copies (the vector form of masked_merge_op), written as a new
/// vector: a block per tile of consecutive indices.
template <class ValueT, class IndexT, class Accum>
__global__ void vector_update_kernel(std::int64_t size, const unsigned char* t_state,
                                     const double* t_value, const unsigned char* w_state,
                                     const double* w_value, const unsigned char* mask_state,
                                     Accum accum, descriptor o,
                                     ordered_vector_ref<ValueT, IndexT> out)
{
  constexpr bool accumulate = !std::is_same_v<Accum, no_accumulator>;
  constexpr int threads = graphblas_rows_policy::block_threads;
  constexpr int items = vector_update_items;
  __shared__ typename ordered_vector_ref<ValueT, IndexT>::template tile_storage<threads> storage;
  const std::int64_t tile = out.take_tile(storage);
  bool has_entry[items];
  std::int64_t index[items];
  double value[items];
#pragma unroll
  for (int e = 0; e < items; ++e) {
    const std::int64_t i = (tile * threads + threadIdx.x) * items + e;
    index[e] = i;
    has_entry[e] = false;
    value[e] = 0.0;
    if (i >= size) {
      continue;
    }
    const bool has_t = t_state[i] != 0;
    const bool has_c = w_state != nullptr && w_state[i] != 0;
    const bool in =
        mask_state == nullptr || (o.structural_mask ? mask_state[i] > 0 : mask_state[i] == 2);
    bool has = false;
    double v = 0.0;
    if (in != o.complement_mask) {
      if (has_t && (!accumulate || !has_c)) {
        has = true;
        v = t_value[i];
      } else if (has_c && accumulate) {
        if constexpr (accumulate) {
          has = true;
          // t's values are double (the pull's folds); the accumulator reads them rounded to
          // the value type, as T holds it (spira/descriptor.hpp).
          v = has_t ? double(accum(w_value[i], double(ValueT(t_value[i])))) : w_value[i];
        }
      }
    } else if (has_c && !o.replace) {
      has = true;
      v = w_value[i];
    }
    has_entry[e] = has;
    value[e] = v;
  }
  out.template write_tile<threads, items>(storage, tile, has_entry, index, value);
}

/// A dense copy (a state and a value an index) of `size` entries, all absent, in one allocation
/// of its own (an operation writing a vector takes its dense copies from the ordered_vector's
/// scratch instead).
class dense_vector_copy {
 public:
  dense_vector_copy(const cuda_resources& res, std::int64_t size)
      : n_(std::size_t(std::max<std::int64_t>(size, 1))),
        bytes_(res, n_ * (sizeof(double) + 1), "dense vector copy")
  {
    fill_zero_bytes(state(), memory_space::device, n_, res);
  }
  [[nodiscard]] double* value() { return reinterpret_cast<double*>(bytes_.data()); }
  [[nodiscard]] const double* value() const
  {
    return reinterpret_cast<const double*>(bytes_.data());
  }
  [[nodiscard]] unsigned char* state() { return bytes_.data() + n_ * sizeof(double); }
  [[nodiscard]] const unsigned char* state() const { return bytes_.data() + n_ * sizeof(double); }

 private:
  std::size_t n_;
  buffer<unsigned char> bytes_;
};

/// Scatters a device sparse vector into a dense copy of its size (with `bad`, checking its entries:
/// see scatter_vector_kernel).
template <class ValueT, class IndexT, class Dense>
void scatter_vector(const cuda_resources& res, sparse_vector_view<ValueT, IndexT> v, Dense&& d,
                    unsigned long long* bad = nullptr)
{
  if (v.nnz > 0) {
    scatter_vector_kernel<<<graphblas_grid(v.nnz, res.device), graphblas_rows_policy::block_threads,
                            0, res.stream>>>(v, d.state(), d.value(), bad);
    SPIRA_CHECK_LAUNCH();
  }
}

/// The first entry of a vector whose index is outside [0, size) or does not increase (into
/// `first`, which starts at the largest value).
template <class IndexT>
__global__ void check_vector_kernel(const IndexT* indices, std::int64_t nnz, std::int64_t size,
                                    unsigned long long* first)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t p = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < nnz; p += stride) {
    if (wrong_vector_entry(indices, p, size)) {
      atomicMin(first, (unsigned long long)p);
    }
  }
}

/// A device sparse vector, checked: size and nnz in range, indices increasing in [0, size); the
/// messages are the host's (spira::validate of a sparse vector). With `entries` false only what
/// the host can see is checked (the caller's kernels check the indices).
template <class ValueT, class IndexT>
void check_vector_cuda(const cuda_resources& res, sparse_vector_view<ValueT, IndexT> v,
                       const char* op, const char* name, bool entries = true)
{
  require_device_space(v.space, op, name);
  const std::string what = std::string(op) + ": " + name;
  expects(v.size >= 0 && v.nnz >= 0 && v.nnz <= v.size, what, ": size = ", v.size,
          " and nnz = ", v.nnz, " do not describe a vector (0 <= nnz <= size)");
  expects(v.nnz == 0 || (v.indices != nullptr && v.values != nullptr), what,
          ": indices or values is null with nnz = ", v.nnz);
  if (v.nnz == 0 || !entries) {
    return;
  }
  buffer<unsigned long long> first(res, 1, "vector check");
  SPIRA_CUDA_TRY(cudaMemsetAsync(first.data(), 0xFF, sizeof(unsigned long long), res.stream));
  check_vector_kernel<<<graphblas_grid(v.nnz, res.device), graphblas_rows_policy::block_threads, 0,
                        res.stream>>>(v.indices, v.nnz, v.size, first.data());
  SPIRA_CHECK_LAUNCH();
  unsigned long long p = 0;
  copy(&p, memory_space::host, first.data(), memory_space::device, 1, res);
  if (p == ~0ull) {
    return;
  }
  IndexT pair[2] = {IndexT(0), IndexT(0)};  // entries p - 1 and p
  const std::int64_t from = p > 0 ? std::int64_t(p) - 1 : 0;
  copy(pair + (p > 0 ? 0 : 1), memory_space::host, v.indices + from, memory_space::device,
       p > 0 ? 2 : 1, res);
  const auto i = std::int64_t(pair[1]);
  expects(i >= 0 && i < v.size, what, ": index ", i, " (entry ", p, ") is outside [0, ", v.size,
          ")");
  expects(false, what, ": index ", i, " (entry ", p, ") follows ", std::int64_t(pair[0]),
          " (indices must increase)");
}

/// The smallest tile of the kernels that write an ordered_vector here: vector_update_kernel's,
/// and the pull's (mxv_pull_kernels.cuh).
constexpr std::int64_t vector_min_tile = 4;

/// w⟨m⟩ = accum(w, t) over dense copies of t and the mask (their states and t's values; a null
/// mask_state: no mask), into a new sparse vector of t's size; w (of that size) is scattered here,
/// into a dense copy `next` gives (take_dense: one asked for when w is given). `next` (nullptr:
/// made here) receives the new vector; with `report`, w's scatter checks its entries into next's
/// status words (see ordered_vector::finish).
template <class Accum, class ValueT, class IndexT>
sparse_vector<ValueT, IndexT> vector_write_back(
    const cuda_resources& res,
    const std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>>& w,
    const unsigned char* mask_state, const Accum& accum, const descriptor& o,
    const unsigned char* t_state, const double* t_value, std::int64_t size,
    ordered_vector<ValueT, IndexT>* next = nullptr, const operand_report* report = nullptr)
{
  std::optional<ordered_vector<ValueT, IndexT>> own;
  if (next == nullptr) {
    next = &own.emplace(res, size, vector_min_tile, w ? 1 : 0);
  }
  dense_vector_ref w_dense;
  if (w) {
    w_dense = next->take_dense();
    scatter_vector(res, *w, w_dense, report != nullptr ? next->status() : nullptr);
  }
  constexpr std::int64_t tile =
      std::int64_t(graphblas_rows_policy::block_threads) * vector_update_items;
  static_assert(tile >= vector_min_tile);
  const std::int64_t tiles = (size + tile - 1) / tile;
  if (tiles > 0) {
    vector_update_kernel<<<unsigned(tiles), graphblas_rows_policy::block_threads, 0, res.stream>>>(
        size, t_state, t_value, w_dense.state(), w_dense.value(), mask_state, accum, o,
        next->ref(tiles));
    SPIRA_CHECK_LAUNCH();
  }
  return next->finish(res, report);
}

/// w and the mask of a product or reduction of `size` entries, checked (the host's messages);
/// `shape` says where the size comes from. With `entries` false only what the host can see
/// (their scatters check the entries).
template <class ValueT, class IndexT>
void check_output_vectors_cuda(
    const cuda_resources& res,
    const std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>>& w,
    const std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>>& mask,
    std::int64_t size, const char* op, const std::string& shape, bool entries = true)
{
  for (const auto& [v, what] : {std::pair{w, "w"}, std::pair{mask, "mask"}}) {
    if (v) {
      check_vector_cuda(res, *v, op, what, entries);
      expects<dimension_mismatch>(v->size == size, op, ": ", what, " has size ", v->size, " but ",
                                  shape);
    }
  }
}

#endif  // __CUDACC__

}  // namespace spira::detail
