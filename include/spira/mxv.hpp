// spira: the GraphBLAS matrix-vector products with sparse vectors, a mask and an accumulator, on
// the host.
//
//   w⟨m⟩ = accum(w, op(A) ⊕.⊗ u)      (GrB_mxv(w, mask, accum, semiring, A, u, descriptor))
//   w⟨m⟩ = accum(w, u ⊕.⊗ op(A))      (GrB_vxm(w, mask, accum, semiring, u, A, descriptor))
//
// For annihilating semirings (the built-ins of semirings/graphblas.hpp, or a user's struct):
// entry i of op(A) ⊕.⊗ u exists exactly where row i of op(A) and u share a stored index k, with
// value ⊕ over those k of ⊗(A[i,k], u[k]) (vxm: ⊗(u[k], A[k,j])); then the mask, accumulator and
// replace act as spira/descriptor.hpp says, the vectors taking the place of matrices. The order of
// ⊕: a product that reads A by rows (mxv, vxm with transpose_b: the "pull") folds each row's
// products in the fixed order of spira/detail/pull_fold.hpp (32 partial folds by position in the
// row, then a pairwise tree), the other (the "push") in increasing k; either way the same on both
// backends, whatever the number of threads. mxv transposes A with options.transpose_a (GrB_INP0),
// vxm with options.transpose_b (GrB_INP1); the other transpose flag is ignored. A breadth-first
// search step, the next frontier among the vertices not yet visited:
//
//   auto next = spira::vxm(res, std::nullopt, std::optional(visited.view()), no_accumulator{},
//                          semirings::lor_land{}, frontier.view(), graph.view(),
//                          {.structural_mask = true, .complement_mask = true, .replace = true});
//
// The pull works on the rows of A in parallel with a dense copy of u (O(size of u)); the push is
// mxm (spira/mxm.hpp) with u as a one-row matrix: one row of Gustavson's product, on one thread,
// in time proportional to the entries of A in the rows u selects (mxv with transpose_a first
// transposes A).
#pragma once

#include <spira/descriptor.hpp>
#include <spira/detail/mxm_host.hpp>
#include <spira/detail/pull_fold.hpp>
#include <spira/matrix.hpp>
#include <spira/resources.hpp>
#include <spira/vector.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace spira {

namespace detail {

/// A sparse vector seen as a one-row (1 x size) or one-column (size x 1) CSR matrix; holds the
/// row pointers (and, for a column, the column indices) the view points to.
template <class ValueT, class IndexT>
class vector_as_matrix {
 public:
  vector_as_matrix(sparse_vector_view<ValueT, IndexT> v, bool column)
  {
    if (!column) {
      ptr_ = {0, v.nnz};
      view_ = {1, v.size, v.nnz, ptr_.data(), v.indices, v.values};
      return;
    }
    ptr_.assign(std::size_t(v.size) + 1, 0);
    for (std::int64_t p = 0; p < v.nnz; ++p) {
      ptr_[std::size_t(v.indices[p]) + 1] = 1;
    }
    for (std::size_t i = 1; i < ptr_.size(); ++i) {
      ptr_[i] += ptr_[i - 1];
    }
    zeros_.assign(std::size_t(v.nnz), IndexT(0));
    view_ = {v.size, 1, v.nnz, ptr_.data(), zeros_.data(), v.values};
  }
  vector_as_matrix(const vector_as_matrix&) = delete;
  vector_as_matrix& operator=(const vector_as_matrix&) = delete;

  [[nodiscard]] csr_view<ValueT, IndexT> view() const { return view_; }

 private:
  std::vector<offset_t> ptr_;
  std::vector<IndexT> zeros_;
  csr_view<ValueT, IndexT> view_{};
};

/// The entries of a one-column (column = true) or one-row result as a sparse vector.
template <class ValueT, class IndexT>
sparse_vector<ValueT, IndexT> vector_of(const host_resources& res,
                                        const csr_matrix<ValueT, IndexT>& m, bool column)
{
  sparse_vector<ValueT, IndexT> v(res, column ? m.rows() : m.cols(), m.nnz());
  if (!column) {
    std::copy_n(m.col_idx(), m.nnz(), v.indices());
  } else {
    std::int64_t p = 0;
    for (std::int64_t i = 0; i < m.rows(); ++i) {
      if (m.row_ptr()[i + 1] > m.row_ptr()[i]) {
        v.indices()[p++] = IndexT(i);
      }
    }
  }
  std::copy_n(m.values(), m.nnz(), v.values());
  return v;
}

/// w and the mask of a vector result: valid host vectors of the result's `size` (`what` says
/// where that size comes from, in messages).
template <class ValueT, class IndexT>
void check_output_vectors(const host_resources& res,
                          const std::optional<sparse_vector_view<ValueT, IndexT>>& w,
                          const std::optional<sparse_vector_view<ValueT, IndexT>>& mask,
                          std::int64_t size, const char* op, const std::string& what)
{
  for (const auto& [v, name] : {std::pair{w, "w"}, std::pair{mask, "mask"}}) {
    if (v) {
      validate(res, *v, (std::string(op) + ": " + name).c_str());
      expects<dimension_mismatch>(v->size == size, op, ": ", name, " has size ", v->size, " but ",
                                  what);
    }
  }
}

/// w and the mask as one-column (or one-row) matrices, for the matrix write-back.
template <class ValueT, class IndexT>
struct output_vectors {
  std::optional<vector_as_matrix<ValueT, IndexT>> wm, mm;
  std::optional<csr_view<ValueT, IndexT>> w, mask;
  output_vectors(const std::optional<sparse_vector_view<ValueT, IndexT>>& wv,
                 const std::optional<sparse_vector_view<ValueT, IndexT>>& maskv, bool column)
  {
    if (wv) {
      w = wm.emplace(*wv, column).view();
    }
    if (maskv) {
      mask = mm.emplace(*maskv, column).view();
    }
  }
};

/// The pull: t = A ⊕.⊗ u (VectorFirst: the products ⊗(u[k], A[i,k]), vxm with transpose_b), a row
/// of A per entry of t folded in pull_fold's order, then w⟨m⟩ = accum(w, t) with w and the mask as
/// one-column matrices. u, w and the mask are checked by the caller.
template <bool VectorFirst, class S, class Accum, class ValueT, class IndexT>
sparse_vector<ValueT, IndexT> vector_pull(const host_resources& res,
                                          const output_vectors<ValueT, IndexT>& outs,
                                          const Accum& accum, const S& s,
                                          csr_view<ValueT, IndexT> a,
                                          sparse_vector_view<ValueT, IndexT> u, const descriptor& o,
                                          const char* op)
{
  using T = host_compute_t;
  using traits = distance_traits<S, T>;
  static_assert(semiring<S, T>, "spira::mxv: S must model spira::semiring");
  static_assert(traits::annihilating,
                "spira::mxv: the semiring must be annihilating (a NAMM's product is dense)");
  static_assert(traits::num_terms == 1, "spira::mxv: the semiring must have a single term");
  require_host_space(a.space, op, "A");
  validate(res, a, csr_check::canonical, (std::string(op) + ": A").c_str());
  std::vector<unsigned char> has(std::size_t(u.size), 0);
  std::vector<T> value(std::size_t(u.size));
  for (std::int64_t p = 0; p < u.nnz; ++p) {
    has[std::size_t(u.indices[p])] = 1;
    value[std::size_t(u.indices[p])] = T(u.values[p]);
  }
  const auto t = csr_by_rows<ValueT, IndexT>(
      res, a.rows, 1, a.nnz, [] { return no_row_state{}; },
      [&](no_row_state&, std::int64_t i, bool values, auto&& out) {
        pull_fold<typename S::add_monoid, T> fold;
        const offset_t begin = a.row_ptr[i];
        for (offset_t p = begin; p < a.row_ptr[i + 1]; ++p) {
          const auto k = std::size_t(a.col_idx[p]);
          if (has[k] != 0) {
            const T x = T(a.values[p]);
            fold.add(p - begin, !values       ? T(0)
                                : VectorFirst ? T(s.template multiply<T>(value[k], x))
                                              : T(s.template multiply<T>(x, value[k])));
          }
        }
        const std::int64_t column = 0;
        const T v = fold.found() ? fold.result() : T(0);
        masked_merge_row(i, &column, &v, fold.found() ? 1 : 0, outs.w, outs.mask, accum, o, values,
                         out);
      });
  return vector_of(res, t, true);
}

/// mxv (column = true, the vector u on the right) or vxm: checks the vectors against op(A), then
/// runs the pull, or mxm on their matrix forms.
template <class S, class Accum, class ValueT, class IndexT>
sparse_vector<ValueT, IndexT> vector_product(
    const host_resources& res,
    const std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>>& w,
    const std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>>& mask,
    const Accum& accum, const S& s, csr_view<ValueT, IndexT> a,
    sparse_vector_view<ValueT, IndexT> u, const descriptor& o, bool column)
{
  const char* op = column ? "spira::mxv" : "spira::vxm";
  const auto name = [&](const char* what) { return std::string(op) + ": " + what; };
  validate(res, u, name("u").c_str());
  const bool transpose = column ? o.transpose_a : o.transpose_b;
  const std::int64_t rows = transpose ? a.cols : a.rows;
  const std::int64_t cols = transpose ? a.rows : a.cols;
  const char* shape = transpose ? "Aᵀ" : "A";
  // u meets op(A)'s columns (mxv) or rows (vxm); w and the mask have the result's size.
  const std::int64_t inner = column ? cols : rows;
  const std::int64_t out = column ? rows : cols;
  expects<dimension_mismatch>(u.size == inner, op, ": u has size ", u.size, " but ", shape, " is ",
                              rows, " x ", cols);
  check_output_vectors(
      res, w, mask, out, op,
      concat("the product has size ", out, " (", shape, " is ", rows, " x ", cols, ")"));
  if (column != transpose) {
    // A read by rows: the result is a column whichever side u is on.
    const output_vectors<ValueT, IndexT> outs(w, mask, true);
    return column ? vector_pull<false>(res, outs, accum, s, a, u, o, op)
                  : vector_pull<true>(res, outs, accum, s, a, u, o, op);
  }
  const vector_as_matrix<ValueT, IndexT> um(u, column);
  const output_vectors<ValueT, IndexT> outs(w, mask, column);
  const auto& wv = outs.w;
  const auto& mv = outs.mask;
  descriptor d = o;
  if (column) {
    d.transpose_b = false;
    return vector_of(res, mxm_host(res, wv, mv, accum, s, a, um.view(), d, op, "A", "u"), true);
  }
  d.transpose_a = false;
  return vector_of(res, mxm_host(res, wv, mv, accum, s, um.view(), a, d, op, "u", "A"), false);
}

}  // namespace detail

/// w⟨m⟩ = accum(w, op(A) ⊕.⊗ u), returned as a new sparse vector of size rows(op(A)). `w` is the
/// current w (nullopt: empty), `mask` m (nullopt: none), both of that size; `accum` a binary
/// operator on the value type or no_accumulator{}. A canonical CSR, vectors valid, all in host
/// memory. Throws dimension_mismatch naming the operand whose size does not fit, invalid_argument
/// for an invalid operand.
template <class S, class Accum, class ValueT, class IndexT>
[[nodiscard]] sparse_vector<ValueT, IndexT> mxv(
    const host_resources& res,
    std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>> w,
    std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>> mask,
    const Accum& accum, const S& semiring, csr_view<ValueT, IndexT> a,
    sparse_vector_view<ValueT, IndexT> u, const descriptor& options = {})
{
  return detail::vector_product(res, w, mask, accum, semiring, a, u, options, true);
}

/// w⟨m⟩ = accum(w, u ⊕.⊗ op(A)), returned as a new sparse vector of size cols(op(A)); as mxv.
template <class S, class Accum, class ValueT, class IndexT>
[[nodiscard]] sparse_vector<ValueT, IndexT> vxm(
    const host_resources& res,
    std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>> w,
    std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>> mask,
    const Accum& accum, const S& semiring, sparse_vector_view<ValueT, IndexT> u,
    csr_view<ValueT, IndexT> a, const descriptor& options = {})
{
  return detail::vector_product(res, w, mask, accum, semiring, a, u, options, false);
}

/// The plain products op(A) ⊕.⊗ u and u ⊕.⊗ op(A) (no w, no mask, no accumulator).
template <class S, class ValueT, class IndexT>
[[nodiscard]] sparse_vector<ValueT, IndexT> mxv(const host_resources& res,
                                                csr_view<ValueT, IndexT> a,
                                                sparse_vector_view<ValueT, IndexT> u,
                                                const S& semiring, const descriptor& options = {})
{
  return detail::vector_product(res, std::nullopt, std::nullopt, no_accumulator{}, semiring, a, u,
                                options, true);
}
template <class S, class ValueT, class IndexT>
[[nodiscard]] sparse_vector<ValueT, IndexT> vxm(const host_resources& res,
                                                sparse_vector_view<ValueT, IndexT> u,
                                                csr_view<ValueT, IndexT> a, const S& semiring,
                                                const descriptor& options = {})
{
  return detail::vector_product(res, std::nullopt, std::nullopt, no_accumulator{}, semiring, a, u,
                                options, false);
}

/// w⟨m⟩ = accum(w, T), T[i] the ⊕ of monoid `m` over the stored entries of row i of op(A), in
/// column order, and no entry for a row with none (GrB_Matrix_reduce_Monoid; transpose_a reduces
/// the columns of A). w and the mask are host sparse vectors of size rows(op(A)) (nullopt: empty,
/// none); the result is a new sparse vector. A canonical CSR in host memory. Work O(nnz(A) + size)
/// (plus a transposed copy with transpose_a), the same for any number of threads.
template <class M, class Accum, class ValueT, class IndexT>
[[nodiscard]] sparse_vector<ValueT, IndexT> reduce_rows(
    const host_resources& res,
    std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>> w,
    std::type_identity_t<std::optional<sparse_vector_view<ValueT, IndexT>>> mask,
    const Accum& accum, const M& m, csr_view<ValueT, IndexT> a, const descriptor& options = {})
{
  using T = detail::host_compute_t;
  static_assert(monoid<M, T>, "spira::reduce_rows: M must model spira::monoid");
  const char* op = "spira::reduce_rows";
  std::optional<csr_matrix<ValueT, IndexT>> at;
  const std::optional<csr_view<ValueT, IndexT>> none;
  a = detail::unary_operand(res, op, a, none, none, options, at);
  detail::check_output_vectors(
      res, w, mask, a.rows, op,
      detail::concat(options.transpose_a ? "Aᵀ" : "A", " has ", a.rows, " rows"));
  const auto t = detail::csr_by_rows<ValueT, IndexT>(
      res, a.rows, 1, a.nnz, [] { return detail::no_row_state{}; },
      [&](detail::no_row_state, std::int64_t i, bool values, auto&& out) {
        if (a.row_ptr[i] == a.row_ptr[i + 1]) {
          return;
        }
        T acc = M::template identity<T>();
        if (values) {
          for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            acc = m(acc, T(a.values[k]));
          }
        }
        out(0, acc);
      });
  const detail::output_vectors<ValueT, IndexT> outs(w, mask, true);
  return detail::vector_of(
      res, detail::masked_update(res, outs.w, outs.mask, accum, t.view(), options), true);
}

}  // namespace spira
