// spira internals: mxv and vxm on CUDA (spira/cuda/graphblas.cuh). Two ways to t = op(A) ⊕.⊗ u
// (and u ⊕.⊗ op(A)), by how A is stored:
//   pull   the rows of A met by the vector: entry i folds the products of row i of A with the
//          entries u stores (read in place when u stores every index, else looked up in a dense
//          copy), a warp per row (a group of lanes per row for short rows: mxv_pull_kernels.cuh),
//          in the order of spira/detail/pull_fold.hpp (the host's);
//   push   the rows of A selected by u: mxm of u as a one-row matrix with A (the expanded or
//          sorted path of detail/mxm_kernels.cuh), so the work is the entries of those rows;
//          with lor_land (a breadth-first search's semiring) the products are scattered straight
//          into the dense t instead (a warp per entry of u): its products are 0 or 1, so lor's
//          fold of them - the lone product as it is, two or more into 0 / 1 - is 1 exactly when
//          one is nonzero, whatever their order, and no sort is needed for the host's bytes.
// mxv takes the pull (push with transpose_a), vxm the push (pull with transpose_b): neither
// transposes A. The write-back w⟨m⟩ = accum(w, t) runs over the vectors' index space with dense
// copies of w, t and the mask (O(size)) and writes the new sparse vector in the same pass; a pull
// with no mask and no w writes the new vector itself.
#pragma once

#include <spira/cuda/detail/graphblas_rows.cuh>
#include <spira/cuda/detail/mxm_cuda.cuh>
#include <spira/cuda/detail/mxv_pull_kernels.cuh>
#include <spira/cuda/detail/vector_cuda.cuh>
#include <spira/semirings/graphblas.hpp>
#include <spira/vector.hpp>

#include <cstdint>
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

/// The push for lor_land (products 0 or 1): for every entry u[k] (a warp each) and entry A[k, j]
/// of row k that the mask allows, t[j] gets an entry, valued 1 if any of its products ⊗(u[k],
/// A[k,j]) (⊗(A[k,j], u[k]) with AFirst) is nonzero, else 0 - lor over the products, in any
/// order. Every writer of t[j] stores the same state (2) and the same value (1): the stores are
/// deliberately not atomic (same-value, aligned; the next kernel reads them). t_value starts at 0.
/// A semiring whose products are other values keeps its lone product, so it takes the mxm push.
/// With `bad` (nullptr: the operands are known to be valid), what it reads is checked before it
/// is used - u's indices (in range, increasing: bad[0]), the extent and columns of the rows of A
/// they select (bad[1]; the whole of A is checked beside it, check_csr_async) - and a wrong one
/// is not used.
template <bool AFirst, class S, class ValueT, class IndexT>
__global__ void push_lor_kernel(csr_view<ValueT, IndexT> a, S s,
                                sparse_vector_view<ValueT, IndexT> u,
                                const unsigned char* mask_state, bool structural, bool complement,
                                unsigned char* t_state, double* t_value, unsigned long long* bad)
{
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t p = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; p < u.nnz;
       p += warps) {
    if (bad != nullptr && wrong_vector_entry(u.indices, p, a.rows)) {
      atomicMin(bad, (unsigned long long)p);
      continue;
    }
    const auto k = std::int64_t(u.indices[p]);
    const offset_t begin = a.row_ptr[k], end = a.row_ptr[k + 1];
    if (bad != nullptr && !(begin >= 0 && begin <= end && end <= a.nnz)) {
      atomicMin(bad + 1, 0ull);
      continue;
    }
    const double x = double(u.values[p]);
    for (offset_t q = begin + lane; q < end; q += 32) {
      const auto j = std::int64_t(a.col_idx[q]);
      if (bad != nullptr && (j < 0 || j >= a.cols)) {
        atomicMin(bad + 1, 0ull);
        continue;
      }
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

/// The pull of vector_product_cuda (A read by rows, the products ⊗(A[i,k], u[k]), or ⊗(u[k],
/// A[i,k]) for vxm): u read in place when it stores every index, else from a dense copy; t
/// written as the new vector itself (`next`) when there is no mask and no w, else as a dense
/// copy for the write-back (next's, which then has one for t and one for w if given). With `report`
/// (nullptr: the operands are known to be valid) the kernels check A and u into next's status
/// words, and what they find is thrown by it (ordered_vector::finish).
template <class Accum, class ValueT, class IndexT, class S>
sparse_vector<ValueT, IndexT> vector_pull(
    const cuda_resources& res,
    const std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>>& w,
    const unsigned char* mask_state, const Accum& accum, const S& s, csr_view<ValueT, IndexT> a,
    sparse_vector_view<ValueT, IndexT> u, const descriptor& o, bool column, std::int64_t size,
    ordered_vector<ValueT, IndexT>& next, const operand_report* report)
{
  constexpr int block = mxv_pull_policy::threads;
  static_assert(mxv_pull_policy::tile_rows<false> >= vector_min_tile &&
                mxv_pull_policy::tile_rows<true> >= vector_min_tile);
  unsigned long long* bad = report != nullptr ? next.status() : nullptr;
  const unsigned char* ms = mask_state;
  // Short rows on average: a warp takes a tile of rows (see mxv_pull_kernel).
  const bool tiled = a.nnz <= mxv_pull_policy::tiled_max_mean_row * a.rows;
  const std::int64_t rows_per_tile =
      tiled ? mxv_pull_policy::tile_rows<true> : mxv_pull_policy::tile_rows<false>;
  const std::int64_t tiles = (a.rows + rows_per_tile - 1) / rows_per_tile;
  const auto launch = [&](const auto& in_u, const auto& to) {
    if (tiles == 0) {
      return;
    }
    const auto grid = unsigned(tiles);
    const auto run = [&](auto tiled_kernel, auto vector_first) {
      mxv_pull_kernel<decltype(tiled_kernel)::value, decltype(vector_first)::value>
          <<<grid, block, 0, res.stream>>>(a, s, in_u, ms, o.structural_mask, o.complement_mask, to,
                                           bad);
    };
    const auto side = [&](auto tiled_kernel) {
      column ? run(tiled_kernel, std::false_type{}) : run(tiled_kernel, std::true_type{});
    };
    tiled ? side(std::true_type{}) : side(std::false_type{});
    SPIRA_CHECK_LAUNCH();
  };
  const auto product = [&](const auto& to) {
    if (u.nnz == u.size) {
      launch(pull_u_full<ValueT, IndexT>{u.indices, u.values, u.nnz}, to);
      return;
    }
    dense_vector_copy ud(res, u.size);
    scatter_vector(res, u, ud, bad);
    launch(pull_u_dense{ud.state(), ud.value()}, to);
  };
  if (!w && mask_state == nullptr) {
    product(pull_to_vector<ValueT, IndexT>{next.ref(tiles)});
    return next.finish(res, report);
  }
  const dense_vector_ref t = next.take_dense();
  product(pull_to_dense{t.state(), t.value()});
  return vector_write_back<Accum, ValueT, IndexT>(res, w, mask_state, accum, o, t.state(),
                                                  t.value(), size, &next, report);
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
  // The pull reads all of A and of u, and lor_land's push the entries of u and the rows of A they
  // select: their kernels check what they read (A whole beside the push) and the scatters of w
  // and the mask check those; what they found is read back with the result's entry count, and
  // the operands are then checked again in the host's order for spira::validate's message,
  // thrown before the result exists.
  const bool plausible_a = a.space == memory_space::device && a.rows > 0 && a.cols >= 0 &&
                           a.nnz >= 0 && a.row_ptr != nullptr &&
                           (a.nnz == 0 || (a.col_idx != nullptr && a.values != nullptr));
  const bool on_device = plausible_a && (pull || std::is_same_v<S, semirings::lor_land>);
  operand_report report;
  if (on_device) {
    check_vector_cuda(res, u, op, "u", false);
    report = [&, op] {
      check_vector_cuda(res, u, op, "u");
      for (const auto& [v, name] : {std::pair{w, "w"}, std::pair{mask, "mask"}}) {
        if (v) {
          check_vector_cuda(res, *v, op, name);
        }
      }
      validate(res, a, csr_check::canonical, (std::string(op) + ": A").c_str());
      throw cuda_error(concat(op, ": the device check flagged an operand that checks out"));
    };
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
      concat("the product has size ", size, " (", shape, " is ", rows, " x ", cols, ")"),
      !on_device);
  constexpr int block = graphblas_rows_policy::block_threads;
  // The dense copies (in the new vector's scratch, all absent): the mask's, t's unless the pull
  // writes the new vector itself (no mask, no w), and w's.
  const bool dense_t = !pull || w || mask;
  ordered_vector<ValueT, IndexT> next(res, size, vector_min_tile,
                                      (mask ? 1 : 0) + (dense_t ? 1 : 0) + (w ? 1 : 0));
  const operand_report* reported = on_device ? &report : nullptr;
  unsigned long long* bad = on_device ? next.status() : nullptr;
  const unsigned char* ms = nullptr;
  if (mask) {
    const dense_vector_ref m_dense = next.take_dense();
    scatter_vector(res, *mask, m_dense, bad);
    ms = m_dense.state();
  }
  if (pull) {
    return vector_pull<Accum, ValueT, IndexT>(res, w, ms, accum, s, a, u, o, column, size, next,
                                              reported);
  }
  // Every state and value 0: lor_land's push sets only the values of products 1.
  const dense_vector_ref t = next.take_dense();
  if constexpr (std::is_same_v<S, semirings::lor_land>) {
    if (on_device) {
      check_csr_async(res, a, csr_check::canonical, bad + 1, next.csr_report());
    }
    if (u.nnz > 0) {
      const unsigned grid = graphblas_grid(u.nnz * 32, res.device);
      // vxm: ⊗(u[k], A[k,j]); mxv with Aᵀ: ⊗(A[k,i], u[k]), u's value second.
      if (column) {
        push_lor_kernel<true><<<grid, block, 0, res.stream>>>(
            a, s, u, ms, o.structural_mask, o.complement_mask, t.state(), t.value(), bad);
      } else {
        push_lor_kernel<false><<<grid, block, 0, res.stream>>>(
            a, s, u, ms, o.structural_mask, o.complement_mask, t.state(), t.value(), bad);
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
          row.view(), t.state(), t.value());
      SPIRA_CHECK_LAUNCH();
    }
  }
  return vector_write_back<Accum, ValueT, IndexT>(res, w, ms, accum, o, t.state(), t.value(), size,
                                                  &next, reported);
}

#endif  // __CUDACC__

}  // namespace spira::detail
