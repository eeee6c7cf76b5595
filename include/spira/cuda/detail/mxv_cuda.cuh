// spira internals: mxv and vxm on CUDA (spira/cuda/graphblas.cuh). Two ways to t = op(A) ⊕.⊗ u
// (and u ⊕.⊗ op(A)), by how A is stored:
//   pull   the rows of A met by the vector: entry i folds the products of row i of A with the
//          entries u stores (looked up in a dense copy of u), a warp per row, in increasing k;
//   push   the rows of A selected by u: mxm of u as a one-row matrix with A (the expanded or
//          sorted path of detail/mxm_kernels.cuh), so the work is the entries of those rows;
//          with lor_land (a breadth-first search's semiring) the products are scattered straight
//          into the dense t instead (a warp per entry of u): its products are 0 or 1, so lor's
//          fold of them - the lone product as it is, two or more into 0 / 1 - is 1 exactly when
//          one is nonzero, whatever their order, and no sort is needed for the host's bytes.
// mxv takes the pull (push with transpose_a), vxm the push (pull with transpose_b): neither
// transposes A. The write-back w⟨m⟩ = accum(w, t) runs over the vectors' index space with dense
// copies of w, t and the mask (O(size)), then compacts the entries into a new sparse vector.
#pragma once

#include <spira/cuda/detail/graphblas_rows.cuh>
#include <spira/cuda/detail/mxm_cuda.cuh>
#include <spira/semirings/graphblas.hpp>
#include <spira/vector.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>

namespace spira::detail {

#if defined(__CUDACC__)

/// ⊗ with its arguments swapped: u ⊕.⊗ A computed as rows of A met by u keeps u's value first.
template <class S>
struct swapped_semiring {
  using add_monoid = typename S::add_monoid;
  static constexpr bool annihilating = S::annihilating;
  S s;
  template <class T>
  SPIRA_HD T multiply(T a, T b) const
  {
    return s.template multiply<T>(b, a);
  }
};

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

/// The same for the entries of a one-row CSR matrix (a product of push).
template <class ValueT, class IndexT>
__global__ void scatter_row_kernel(csr_view<ValueT, IndexT> m, unsigned char* state, double* value)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t p = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < m.nnz;
       p += stride) {
    const auto i = std::int64_t(m.col_idx[p]);
    state[i] = 2;
    value[i] = double(m.values[p]);
  }
}

/// The pull: t[i] = ⊕ over the k stored in row i of `a` and in u, in increasing k, of
/// ⊗(a[i,k], u[k]) (or ⊗(u[k], a[i,k]) with VectorFirst); only where the mask allows i. A warp
/// reads 32 entries of the row at a time and its lane 0 folds their products in order. Every
/// t_state[i] is written (0 where t has no entry). With `bad_row` (nullptr: `a` is known to be
/// canonical) every row is also checked as spira::validate's canonical level checks it, the rows
/// the mask leaves out too: the first row found wrong is kept in *bad_row (atomicMin) and its
/// entries are not used.
template <bool VectorFirst, class S, class ValueT, class IndexT>
__global__ void mxv_pull_kernel(csr_view<ValueT, IndexT> a, S s, const unsigned char* u_state,
                                const double* u_value, const unsigned char* mask_state,
                                bool structural, bool complement, unsigned char* t_state,
                                double* t_value, unsigned long long* bad_row)
{
  using add = typename S::add_monoid;
  __shared__ double staging[graphblas_rows_policy::block_threads];
  const int lane = threadIdx.x % 32;
  double* staged = staging + (threadIdx.x / 32) * 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < a.rows;
       i += warps) {
    // The same for the whole warp: whether the mask allows i, and the row's extent.
    const bool in = (mask_state == nullptr ||
                     (structural ? mask_state[i] > 0 : mask_state[i] == 2)) != complement;
    if (!in && bad_row == nullptr) {
      if (lane == 0) {
        t_state[i] = 0;
      }
      continue;
    }
    const offset_t begin = a.row_ptr[i], end = a.row_ptr[i + 1];
    if (bad_row != nullptr && !(begin >= 0 && begin <= end && end <= a.nnz &&
                                (i > 0 || begin == 0) && (i + 1 < a.rows || end == a.nnz))) {
      if (lane == 0) {
        atomicMin(bad_row, (unsigned long long)i);
        t_state[i] = 0;
      }
      continue;
    }
    bool found = false;
    double acc = 0.0;
    for (offset_t p0 = begin; p0 < end; p0 += 32) {
      const offset_t p = p0 + lane;
      bool here = false;
      double prod = 0.0;
      if (p < end) {
        const auto k = std::int64_t(a.col_idx[p]);
        if (bad_row != nullptr &&
            (k < 0 || k >= a.cols || (p > begin && std::int64_t(a.col_idx[p - 1]) >= k))) {
          atomicMin(bad_row, (unsigned long long)i);
        } else {
          here = in && u_state[k] != 0;
        }
        if (here) {
          const double x = double(a.values[p]);
          prod = rounded(double(VectorFirst ? s.template multiply<double>(u_value[k], x)
                                            : s.template multiply<double>(x, u_value[k])));
        }
      }
      // The fold in lane order, by lane 0 from the warp's staged products: its loads do not
      // depend on the running value, so only the ⊕ chain is serial (a row's fold is as long as
      // the row: the longest row sets the kernel's time).
      const unsigned present = __ballot_sync(0xffffffffu, here);
      staged[lane] = prod;
      __syncwarp();
      if (lane == 0) {
        const int n = int(min(offset_t(32), end - p0));
#pragma unroll 8
        for (int l = 0; l < n; ++l) {
          const double v = staged[l];
          if ((present >> l) & 1u) {
            acc = found ? double(add{}(acc, v)) : v;
            found = true;
          }
        }
      }
      __syncwarp();
    }
    if (lane == 0) {
      t_state[i] = found ? 2 : 0;
      if (found) {
        t_value[i] = acc;
      }
    }
  }
}

/// The push for lor_land (products 0 or 1): for every entry u[k] (a warp each) and entry A[k, j]
/// of row k that the mask allows, t[j] gets an entry, valued 1 if any of its products ⊗(u[k],
/// A[k,j]) (⊗(A[k,j], u[k]) with AFirst) is nonzero, else 0 - lor over the products, in any
/// order. Every writer of t[j] stores the same state (2) and the same value (1): the stores are
/// deliberately not atomic (same-value, aligned; the next kernel reads them). t_value starts at 0.
/// A semiring whose products are other values keeps its lone product, so it takes the mxm push.
template <bool AFirst, class S, class ValueT, class IndexT>
__global__ void push_lor_kernel(csr_view<ValueT, IndexT> a, S s,
                                sparse_vector_view<ValueT, IndexT> u,
                                const unsigned char* mask_state, bool structural, bool complement,
                                unsigned char* t_state, double* t_value)
{
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t p = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; p < u.nnz;
       p += warps) {
    const auto k = std::int64_t(u.indices[p]);
    const double x = double(u.values[p]);
    for (offset_t q = a.row_ptr[k] + lane; q < a.row_ptr[k + 1]; q += 32) {
      const auto j = std::int64_t(a.col_idx[q]);
      const bool in =
          mask_state == nullptr || (structural ? mask_state[j] > 0 : mask_state[j] == 2);
      if (in == complement) {
        continue;
      }
      const double y = double(a.values[q]);
      const double prod =
          AFirst ? s.template multiply<double>(y, x) : s.template multiply<double>(x, y);
      t_state[j] = 2;
      if (prod != 0.0) {
        t_value[j] = 1.0;
      }
    }
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

static __global__ void one_row_kernel(offset_t* ptr, std::int64_t nnz)
{
  ptr[0] = 0;
  ptr[1] = nnz;
}

/// Device row pointers {0, nnz} for a vector seen as a one-row matrix (written on the stream).
inline buffer<offset_t> one_row_pointers(const cuda_resources& res, std::int64_t nnz)
{
  buffer<offset_t> ptr(res, 2, "one-row pointers");
  one_row_kernel<<<1, 1, 0, res.stream>>>(ptr.data(), nnz);
  SPIRA_CHECK_LAUNCH();
  return ptr;
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

/// What the kernels of a product found wrong in its operands: two device words (~0 where nothing
/// was), read back with the result's entry count (one synchronisation), and what throws the
/// operands' error once they are known (spira::validate's messages).
struct operand_status {
  buffer<unsigned long long> words;
  std::function<void(const unsigned long long*)> report;
  operand_status(const cuda_resources& res, std::function<void(const unsigned long long*)> r)
      : words(res, 2, "operand status"), report(std::move(r))
  {
    SPIRA_CUDA_TRY(cudaMemsetAsync(words.data(), 0xFF, 2 * sizeof(unsigned long long), res.stream));
  }
};

/// w⟨m⟩ = accum(w, t) over dense copies of t and the mask (`m_dense`: nullptr for none), into a
/// new sparse vector of t's size; w (checked, of that size) is scattered here. With `status`, its
/// report runs (and may throw) before the result is allocated.
template <class Accum, class ValueT, class IndexT>
sparse_vector<ValueT, IndexT> vector_write_back(
    const cuda_resources& res,
    const std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>>& w,
    const dense_vector_copy* m_dense, const Accum& accum, const descriptor& o,
    const dense_vector_copy& t, std::int64_t size, operand_status* status = nullptr)
{
  constexpr int block = graphblas_rows_policy::block_threads;
  std::optional<dense_vector_copy> w_dense;
  if (w) {
    w_dense.emplace(res, size);
    scatter_vector(res, *w, *w_dense);
  }
  const int n_status = status != nullptr ? 2 : 0;
  buffer<offset_t> at(res, std::size_t(size) + 1 + std::size_t(n_status), "vector offsets");
  buffer<double> value(res, std::size_t(std::max<std::int64_t>(size, 1)), "vector values");
  if (size > 0) {
    vector_update_kernel<ValueT><<<graphblas_grid(size, res.device), block, 0, res.stream>>>(
        size, t.state.data(), t.value.data(), w_dense ? w_dense->state.data() : nullptr,
        w_dense ? w_dense->value.data() : nullptr, m_dense ? m_dense->state.data() : nullptr, accum,
        o, at.data(), value.data());
    SPIRA_CHECK_LAUNCH();
  }
  unsigned long long found[2] = {0, 0};
  const offset_t nnz =
      counts_to_offsets(res, at, size, status ? status->words.data() : nullptr, found, n_status);
  if (status != nullptr && (found[0] != ~0ull || found[1] != ~0ull)) {
    status->report(found);
  }
  sparse_vector<ValueT, IndexT> out(res, size, nnz);
  if (nnz > 0) {
    compact_vector_kernel<<<graphblas_grid(size, res.device), block, 0, res.stream>>>(
        size, at.data(), value.data(), out.indices(), out.values());
    SPIRA_CHECK_LAUNCH();
  }
  return out;
}

/// w and the mask of a product or reduction of `size` entries, checked (the host's messages);
/// `shape` says where the size comes from.
template <class ValueT, class IndexT>
void check_output_vectors_cuda(
    const cuda_resources& res,
    const std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>>& w,
    const std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>>& mask,
    std::int64_t size, const char* op, const std::string& shape)
{
  for (const auto& [v, what] : {std::pair{w, "w"}, std::pair{mask, "mask"}}) {
    if (v) {
      check_vector_cuda(res, *v, op, what);
      expects<dimension_mismatch>(v->size == size, op, ": ", what, " has size ", v->size, " but ",
                                  shape);
    }
  }
}

/// mxv (column = true: w⟨m⟩ = accum(w, op(A) ⊕.⊗ u)) or vxm (u ⊕.⊗ op(A)) on CUDA.
template <class S, class Accum, class ValueT, class IndexT>
sparse_vector<ValueT, IndexT> vector_product_cuda(
    const cuda_resources& res,
    const std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>>& w,
    const std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>>& mask,
    const Accum& accum, const S& s, csr_view<ValueT, IndexT> a,
    sparse_vector_view<ValueT, IndexT> u, const descriptor& o, bool column)
{
  using traits = distance_traits<S, double>;
  static_assert(semiring<S, double>, "spira::mxv / vxm: S must model spira::semiring");
  static_assert(traits::annihilating,
                "spira::mxv / vxm: the semiring must be annihilating (a NAMM's product is dense)");
  static_assert(traits::num_terms == 1, "spira::mxv / vxm: the semiring must have a single term");
  const char* op = column ? "spira::mxv" : "spira::vxm";
  const device_guard guard(res.device);
  const bool transpose = column ? o.transpose_a : o.transpose_b;
  // mxv reads A by rows unless transposed; vxm reads A's rows selected by u unless transposed.
  const bool pull = column != transpose;
  // The pull reads all of A and of u: its kernels check them, and what they found is read back
  // with the result's entry count (spira::validate's messages, thrown before the result exists).
  std::optional<operand_status> status;
  if (pull && a.space == memory_space::device && a.rows > 0 && a.cols >= 0 && a.nnz >= 0 &&
      a.row_ptr != nullptr && (a.nnz == 0 || (a.col_idx != nullptr && a.values != nullptr))) {
    check_vector_cuda(res, u, op, "u", false);
    status.emplace(res, [&, op](const unsigned long long* found) {
      if (found[1] != ~0ull) {
        validate(res, a, csr_check::canonical, (std::string(op) + ": A").c_str());
      }
      check_vector_cuda(res, u, op, "u");
      throw cuda_error(concat(op, ": the device check flagged an operand that checks out"));
    });
  } else {
    checked_operands<ValueT, IndexT>().check(res, a, op, "A");
    check_vector_cuda(res, u, op, "u");
  }
  const std::int64_t rows = transpose ? a.cols : a.rows;
  const std::int64_t cols = transpose ? a.rows : a.cols;
  const char* shape = transpose ? "Aᵀ" : "A";
  const std::int64_t inner = column ? cols : rows;
  const std::int64_t size = column ? rows : cols;
  expects<dimension_mismatch>(u.size == inner, op, ": u has size ", u.size, " but ", shape, " is ",
                              rows, " x ", cols);
  check_output_vectors_cuda<ValueT, IndexT>(
      res, w, mask, size, op,
      concat("the product has size ", size, " (", shape, " is ", rows, " x ", cols, ")"));
  constexpr int block = graphblas_rows_policy::block_threads;
  std::optional<dense_vector_copy> m_dense;
  if (mask) {
    m_dense.emplace(res, size);
    scatter_vector(res, *mask, *m_dense);
  }
  dense_vector_copy t(res, size, !pull);  // the pull writes every state
  if (pull) {
    dense_vector_copy ud(res, inner);
    scatter_vector(res, u, ud, status ? status->words.data() : nullptr);
    const unsigned char* ms = m_dense ? m_dense->state.data() : nullptr;
    unsigned long long* bad_row = status ? status->words.data() + 1 : nullptr;
    if (a.rows > 0) {
      const unsigned grid = graphblas_grid(a.rows * 32, res.device);
      if (column) {
        mxv_pull_kernel<false><<<grid, block, 0, res.stream>>>(
            a, s, ud.state.data(), ud.value.data(), ms, o.structural_mask, o.complement_mask,
            t.state.data(), t.value.data(), bad_row);
      } else {
        mxv_pull_kernel<true><<<grid, block, 0, res.stream>>>(
            a, s, ud.state.data(), ud.value.data(), ms, o.structural_mask, o.complement_mask,
            t.state.data(), t.value.data(), bad_row);
      }
      SPIRA_CHECK_LAUNCH();
    }
  } else if constexpr (std::is_same_v<S, semirings::lor_land>) {
    fill_zero_bytes(t.value.data(), memory_space::device, t.value.size() * sizeof(double), res);
    const unsigned char* ms = m_dense ? m_dense->state.data() : nullptr;
    if (u.nnz > 0) {
      const unsigned grid = graphblas_grid(u.nnz * 32, res.device);
      // vxm: ⊗(u[k], A[k,j]); mxv with Aᵀ: ⊗(A[k,i], u[k]), u's value second.
      if (column) {
        push_lor_kernel<true><<<grid, block, 0, res.stream>>>(
            a, s, u, ms, o.structural_mask, o.complement_mask, t.state.data(), t.value.data());
      } else {
        push_lor_kernel<false><<<grid, block, 0, res.stream>>>(
            a, s, u, ms, o.structural_mask, o.complement_mask, t.state.data(), t.value.data());
      }
      SPIRA_CHECK_LAUNCH();
    }
  } else {
    const auto u_ptr = one_row_pointers(res, u.nnz);
    const csr_view<ValueT, IndexT> u_row{
        1, u.size, u.nnz, u_ptr.data(), u.indices, u.values, memory_space::device};
    std::optional<buffer<offset_t>> m_ptr;
    std::optional<csr_view<ValueT, IndexT>> m_row;
    if (mask) {
      m_ptr.emplace(one_row_pointers(res, mask->nnz));
      m_row = csr_view<ValueT, IndexT>{1,
                                       mask->size,
                                       mask->nnz,
                                       m_ptr->data(),
                                       mask->indices,
                                       mask->values,
                                       memory_space::device};
    }
    const descriptor d{.structural_mask = o.structural_mask, .complement_mask = o.complement_mask};
    const auto product = [&](const auto& semiring) {
      return mxm_cuda(res, std::nullopt, m_row, no_accumulator{}, semiring, u_row, a, d,
                      mxm_path::automatic, op, "u", "A");
    };
    // vxm: ⊗(u[k], A[k,j]); mxv with Aᵀ: ⊗(A[k,i], u[k]), u's value second.
    const auto row = column ? product(swapped_semiring<S>{s}) : product(s);
    if (row.nnz() > 0) {
      scatter_row_kernel<<<graphblas_grid(row.nnz(), res.device), block, 0, res.stream>>>(
          row.view(), t.state.data(), t.value.data());
      SPIRA_CHECK_LAUNCH();
    }
  }
  return vector_write_back<Accum, ValueT, IndexT>(res, w, m_dense ? &*m_dense : nullptr, accum, o,
                                                  t, size, status ? &*status : nullptr);
}

#endif  // __CUDACC__

}  // namespace spira::detail
