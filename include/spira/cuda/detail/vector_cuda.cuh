// spira internals: sparse vectors on CUDA for the GraphBLAS-style operations
// (spira/cuda/graphblas.cuh): dense copies of a vector (a state and a value per index), the checks
// of a device vector with the host's messages, and the write-back every vector result ends with,
// w⟨m⟩ = accum(w, t) over dense copies, then compacted into a new sparse vector (its flags scanned
// into offsets, the entry count read back with the status words of the kernels that checked the
// operands).
#pragma once

#include <spira/cuda/detail/graphblas_rows.cuh>
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
    const auto i = std::int64_t(v.indices[p]);
    if (bad != nullptr &&
        (i < 0 || i >= v.size || (p > 0 && std::int64_t(v.indices[p - 1]) >= i))) {
      atomicMin(bad, (unsigned long long)p);
      continue;
    }
    state[i] = v.values[p] != ValueT(0) ? 2 : 1;
    value[i] = double(v.values[p]);
  }
}

/// w⟨m⟩ = accum(w, t) at index i, over dense copies (the vector form of masked_merge_op); writes
/// the new entry's presence to `flag` and its value to `out`.
template <class ValueT, class Accum>
__global__ void vector_update_kernel(std::int64_t size, const unsigned char* t_state,
                                     const double* t_value, const unsigned char* w_state,
                                     const double* w_value, const unsigned char* mask_state,
                                     Accum accum, descriptor o, offset_t* flag, double* out)
{
  constexpr bool accumulate = !std::is_same_v<Accum, no_accumulator>;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < size;
       i += stride) {
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
    flag[i] = has ? 1 : 0;
    out[i] = v;
  }
}

template <class ValueT, class IndexT>
__global__ void compact_vector_kernel(std::int64_t size, const offset_t* at, const double* value,
                                      IndexT* indices, ValueT* values)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < size;
       i += stride) {
    if (at[i + 1] != at[i]) {
      indices[at[i]] = IndexT(i);
      values[at[i]] = ValueT(value[i]);
    }
  }
}

/// A dense copy (state, value) of `size` entries, all absent unless asked otherwise.
struct dense_vector_copy {
  buffer<unsigned char> state;
  buffer<double> value;
  /// `cleared` false: the states are left unset, for a kernel that writes every one.
  dense_vector_copy(const cuda_resources& res, std::int64_t size, bool cleared = true)
      : state(res, std::size_t(std::max<std::int64_t>(size, 1)), "dense vector states"),
        value(res, std::size_t(std::max<std::int64_t>(size, 1)), "dense vector values")
  {
    if (cleared) {
      fill_zero_bytes(state.data(), memory_space::device, state.size(), res);
    }
  }
};

/// Scatters a device sparse vector into a dense copy of its size (with `bad`, checking its entries:
/// see scatter_vector_kernel).
template <class ValueT, class IndexT>
void scatter_vector(const cuda_resources& res, sparse_vector_view<ValueT, IndexT> v,
                    dense_vector_copy& d, unsigned long long* bad = nullptr)
{
  if (v.nnz > 0) {
    scatter_vector_kernel<<<graphblas_grid(v.nnz, res.device), graphblas_rows_policy::block_threads,
                            0, res.stream>>>(v, d.state.data(), d.value.data(), bad);
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
    const auto i = std::int64_t(indices[p]);
    if (i < 0 || i >= size || (p > 0 && std::int64_t(indices[p - 1]) >= i)) {
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

/// What throws an operand's error (spira::validate's messages) once the kernels of a product have
/// found it: called with the two status words of vector_offsets (~0 where nothing was found).
using operand_report = std::function<void(const unsigned long long*)>;

/// A new vector's flags (then offsets) for `size` indices and its values. `at` has room after the
/// flags for the scan's total and for two status words, read back with it (one synchronisation):
/// with `checked`, they start at ~0 for kernels that check the operands (atomicMin).
struct vector_offsets {
  buffer<offset_t> at;
  buffer<double> value;
  std::int64_t size;
  vector_offsets(const cuda_resources& res, std::int64_t n, bool checked)
      : at(res, std::size_t(n) + 3, "vector offsets"),
        value(res, std::size_t(std::max<std::int64_t>(n, 1)), "vector values"),
        size(n)
  {
    if (checked) {
      SPIRA_CUDA_TRY(cudaMemsetAsync(status(), 0xFF, 2 * sizeof(unsigned long long), res.stream));
    }
  }
  [[nodiscard]] unsigned long long* status()
  {
    return reinterpret_cast<unsigned long long*>(at.data() + size + 1);
  }
};

/// The new sparse vector whose entries are the indices i flagged in `next` (at[i] = 1), valued
/// value[i]; its flags become offsets. With `report` (nullptr: the operands were not checked),
/// the status words are read back with the entry count and the report runs (and throws) before
/// the result is allocated when they hold a finding.
template <class ValueT, class IndexT>
sparse_vector<ValueT, IndexT> compact_vector(const cuda_resources& res, vector_offsets& next,
                                             const operand_report* report)
{
  const std::int64_t size = next.size;
  unsigned long long found[2] = {~0ull, ~0ull};
  const offset_t nnz = counts_to_offsets(res, next.at, size, report ? next.status() : nullptr,
                                         found, report ? 2 : 0);
  if (report != nullptr && (found[0] != ~0ull || found[1] != ~0ull)) {
    (*report)(found);
  }
  sparse_vector<ValueT, IndexT> out(res, size, nnz);
  if (nnz > 0) {
    compact_vector_kernel<<<graphblas_grid(size, res.device), graphblas_rows_policy::block_threads,
                            0, res.stream>>>(size, next.at.data(), next.value.data(), out.indices(),
                                             out.values());
    SPIRA_CHECK_LAUNCH();
  }
  return out;
}

/// w⟨m⟩ = accum(w, t) over dense copies of t and the mask (`m_dense`: nullptr for none), into a
/// new sparse vector of t's size; w (of that size) is scattered here. `next` (nullptr: allocated
/// here) holds the new vector's flags; with `report`, w's scatter checks its entries into next's
/// status words (see compact_vector).
template <class Accum, class ValueT, class IndexT>
sparse_vector<ValueT, IndexT> vector_write_back(
    const cuda_resources& res,
    const std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>>& w,
    const dense_vector_copy* m_dense, const Accum& accum, const descriptor& o,
    const dense_vector_copy& t, std::int64_t size, vector_offsets* next = nullptr,
    const operand_report* report = nullptr)
{
  std::optional<dense_vector_copy> w_dense;
  std::optional<vector_offsets> own;
  if (next == nullptr) {
    next = &own.emplace(res, size, false);
  }
  if (w) {
    w_dense.emplace(res, size);
    scatter_vector(res, *w, *w_dense, report != nullptr ? next->status() : nullptr);
  }
  if (size > 0) {
    vector_update_kernel<ValueT>
        <<<graphblas_grid(size, res.device), graphblas_rows_policy::block_threads, 0, res.stream>>>(
            size, t.state.data(), t.value.data(), w_dense ? w_dense->state.data() : nullptr,
            w_dense ? w_dense->value.data() : nullptr, m_dense ? m_dense->state.data() : nullptr,
            accum, o, next->at.data(), next->value.data());
    SPIRA_CHECK_LAUNCH();
  }
  return compact_vector<ValueT, IndexT>(res, *next, report);
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
