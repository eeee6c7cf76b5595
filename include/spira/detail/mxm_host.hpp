// spira internals: the host mxm (spira/mxm.hpp). Gustavson's row-by-row product: row i of
// T = A ⊕.⊗ B is the ⊕ of the rows B[k,:] scaled by A[i,k], gathered in an accumulator, then merged
// with row i of C under row i of the mask (csr_by_rows: count, then fill at known offsets).
#pragma once

#include <spira/convert.hpp>
#include <spira/descriptor.hpp>
#include <spira/detail/host_pairwise_common.hpp>
#include <spira/detail/masked_update.hpp>
#include <spira/error.hpp>
#include <spira/matrix.hpp>
#include <spira/resources.hpp>
#include <spira/semiring.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace spira::detail {

/// The host mxm's tuning, in one place.
struct mxm_policy {
  /// A dense accumulator (a value and a row stamp per column, per thread) while B has at most this
  /// many columns (64 MiB per thread); sorted products beyond.
  static constexpr std::int64_t dense_accumulator_max_cols = std::int64_t{1} << 22;
  /// A row whose products number less than 1 / this of B's columns gathers and sorts them instead
  /// of filling a dense accumulator (decided for one-row products, vxm, where the accumulator's
  /// set-up is not shared by other rows); a row holding at least that fraction of the columns
  /// is read from the dense accumulator in column order instead of sorted.
  static constexpr std::int64_t sparse_row_fraction = 32;
};

/// Row i of T = A ⊕.⊗ B, built by one thread: columns in increasing order and their values
/// (computed in T, the host compute type).
template <class S, class ValueT, class IndexT>
class mxm_row_builder {
 public:
  using T = host_compute_t;

  mxm_row_builder(csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b, const S& s)
      : a_(a), b_(b), s_(s), dense_(b.cols <= mxm_policy::dense_accumulator_max_cols)
  {
    if (dense_ && a.rows == 1) {
      offset_t products = 0;
      for (offset_t p = a.row_ptr[0]; p < a.row_ptr[1]; ++p) {
        const auto k = std::int64_t(a.col_idx[p]);
        products += b.row_ptr[k + 1] - b.row_ptr[k];
      }
      dense_ = products * mxm_policy::sparse_row_fraction >= b.cols;
    }
    if (dense_) {
      stamp_.assign(std::size_t(b.cols), -1);
      value_.resize(std::size_t(b.cols));
    }
  }

  /// The columns (and, with `values`, the values) of row i of T, sorted by column.
  void build(std::int64_t i, bool values)
  {
    cols_.clear();
    vals_.clear();
    if (dense_) {
      build_dense(i, values);
    } else {
      build_sorted(i, values);
    }
  }

  [[nodiscard]] const std::vector<std::int64_t>& cols() const { return cols_; }
  [[nodiscard]] const std::vector<T>& values() const { return vals_; }

 private:
  using add = typename S::add_monoid;

  template <class Fn>
  void each_product(std::int64_t i, Fn&& fn) const
  {
    for (offset_t p = a_.row_ptr[i]; p < a_.row_ptr[i + 1]; ++p) {
      const auto k = std::int64_t(a_.col_idx[p]);
      const T x = T(a_.values[p]);
      for (offset_t q = b_.row_ptr[k]; q < b_.row_ptr[k + 1]; ++q) {
        fn(std::int64_t(b_.col_idx[q]), x, q);
      }
    }
  }

  void build_dense(std::int64_t i, bool values)
  {
    each_product(i, [&](std::int64_t j, T x, offset_t q) {
      const T prod = values ? T(s_.template multiply<T>(x, T(b_.values[q]))) : T(0);
      if (stamp_[j] != i) {
        stamp_[j] = i;
        value_[j] = prod;
        cols_.push_back(j);
      } else if (values) {
        value_[j] = add{}(value_[j], prod);
      }
    });
    if (std::int64_t(cols_.size()) * mxm_policy::sparse_row_fraction >=
        std::int64_t(stamp_.size())) {
      // A row holding a good part of the columns: one scan of the stamps in column order costs
      // less than sorting them.
      cols_.clear();
      for (std::int64_t j = 0; j < std::int64_t(stamp_.size()); ++j) {
        if (stamp_[std::size_t(j)] == i) {
          cols_.push_back(j);
        }
      }
    } else {
      std::sort(cols_.begin(), cols_.end());
    }
    if (values) {
      vals_.reserve(cols_.size());
      for (const std::int64_t j : cols_) {
        vals_.push_back(value_[j]);
      }
    }
  }

  void build_sorted(std::int64_t i, bool values)
  {
    pairs_.clear();
    each_product(i, [&](std::int64_t j, T x, offset_t q) {
      pairs_.push_back({j, values ? T(s_.template multiply<T>(x, T(b_.values[q]))) : T(0)});
    });
    // Stable: the products of one column keep their order of k, so ⊕ runs as in the dense case.
    std::stable_sort(pairs_.begin(), pairs_.end(),
                     [](const auto& l, const auto& r) { return l.first < r.first; });
    for (std::size_t p = 0; p < pairs_.size(); ++p) {
      if (p > 0 && pairs_[p].first == pairs_[p - 1].first) {
        if (values) {
          vals_.back() = add{}(vals_.back(), pairs_[p].second);
        }
        continue;
      }
      cols_.push_back(pairs_[p].first);
      if (values) {
        vals_.push_back(pairs_[p].second);
      }
    }
  }

  csr_view<ValueT, IndexT> a_;
  csr_view<ValueT, IndexT> b_;
  S s_;
  bool dense_;
  std::vector<std::int64_t> stamp_;
  std::vector<T> value_;
  std::vector<std::pair<std::int64_t, T>> pairs_;
  std::vector<std::int64_t> cols_;
  std::vector<T> vals_;
};

/// Row i of T = A ⊕.⊗ op(B) at the positions a mask allows, and only there (a mask that is not
/// complemented: T is read nowhere else): for each allowed j, the ⊕ over the k stored in both row
/// i of A and row j of Bt = op(B)ᵀ, in increasing k - the same products folded in the same order
/// as mxm_row_builder, so the same values (the masked dot product; SuiteSparse:GraphBLAS's "dot3").
template <class S, class ValueT, class IndexT>
class mxm_dot_row_builder {
 public:
  using T = host_compute_t;

  mxm_dot_row_builder(csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> bt,
                      csr_view<ValueT, IndexT> mask, bool structural, const S& s)
      : a_(a), bt_(bt), mask_(mask), structural_(structural), s_(s)
  {
  }

  void build(std::int64_t i, bool values)
  {
    using add = typename S::add_monoid;
    cols_.clear();
    vals_.clear();
    const offset_t a0 = a_.row_ptr[i];
    const offset_t a1 = a_.row_ptr[i + 1];
    if (a0 == a1) {
      return;
    }
    for (offset_t pm = mask_.row_ptr[i]; pm < mask_.row_ptr[i + 1]; ++pm) {
      if (!structural_ && mask_.values[pm] == ValueT(0)) {
        continue;
      }
      const auto j = std::int64_t(mask_.col_idx[pm]);
      offset_t p = a0;
      offset_t q = bt_.row_ptr[j];
      const offset_t q1 = bt_.row_ptr[j + 1];
      bool found = false;
      T acc = T(0);
      while (p < a1 && q < q1) {
        const auto ka = std::int64_t(a_.col_idx[p]);
        const auto kb = std::int64_t(bt_.col_idx[q]);
        if (ka != kb) {
          p += ka < kb ? 1 : 0;
          q += kb < ka ? 1 : 0;
          continue;
        }
        if (!values) {  // the pattern needs one shared k
          found = true;
          break;
        }
        const T prod = T(s_.template multiply<T>(T(a_.values[p]), T(bt_.values[q])));
        acc = found ? T(add{}(acc, prod)) : prod;
        found = true;
        ++p;
        ++q;
      }
      if (found) {
        cols_.push_back(j);
        if (values) {
          vals_.push_back(acc);
        }
      }
    }
  }

  [[nodiscard]] const std::vector<std::int64_t>& cols() const { return cols_; }
  [[nodiscard]] const std::vector<T>& values() const { return vals_; }

 private:
  csr_view<ValueT, IndexT> a_;
  csr_view<ValueT, IndexT> bt_;
  csr_view<ValueT, IndexT> mask_;
  bool structural_;
  S s_;
  std::vector<std::int64_t> cols_;
  std::vector<T> vals_;
};

/// How mxm_host computes the product: chosen by its cost (automatic), or forced (tests).
enum class mxm_method { automatic, gustavson, masked_dot };

/// What the two ways to C⟨M⟩ = op(A) ⊕.⊗ op(B) read, `a` being op(A) and `b` B as given:
/// Gustavson's product Σ over A's entries (i, k) of |op(B)[k,:]|, the masked dot product Σ over the
/// mask's entries (i, j) of |A[i,:]| + |op(B)[:,j]| (infinite without a mask), each plus the
/// transposed copy of B it needs (Gustavson reads op(B) by rows, the dot product by columns, and B
/// is stored by rows). mxm_host takes the cheaper one, and sizes its thread team by its cost.
struct mxm_costs {
  double gustavson = 0.0;
  double dot = 0.0;
};

template <class ValueT, class IndexT>
mxm_costs mxm_costs_of(csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b, bool transpose_b,
                       const std::type_identity_t<csr_view<ValueT, IndexT>>* mask)
{
  // B's column lengths, where a cost reads them (not for Gustavson's product on B itself).
  std::vector<offset_t> col_len;
  if (transpose_b || mask != nullptr) {
    col_len.assign(std::size_t(b.cols), 0);
    for (offset_t p = 0; p < b.nnz; ++p) {
      ++col_len[std::size_t(b.col_idx[p])];
    }
  }
  const auto row_len = [&](std::int64_t k) { return b.row_ptr[k + 1] - b.row_ptr[k]; };
  // Row k of op(B) and column j of op(B), by their lengths in B.
  const auto op_row = [&](std::int64_t k) {
    return transpose_b ? col_len[std::size_t(k)] : row_len(k);
  };
  const auto op_col = [&](std::int64_t j) {
    return transpose_b ? row_len(j) : col_len[std::size_t(j)];
  };
  mxm_costs costs{transpose_b ? double(b.nnz) : 0.0, transpose_b ? 0.0 : double(b.nnz)};
  for (offset_t p = 0; p < a.nnz; ++p) {
    costs.gustavson += double(op_row(std::int64_t(a.col_idx[p])));
  }
  if (mask == nullptr) {
    costs.dot = std::numeric_limits<double>::infinity();
    return costs;
  }
  for (std::int64_t i = 0; i < mask->rows; ++i) {
    const double a_len = double(a.row_ptr[i + 1] - a.row_ptr[i]);
    for (offset_t p = mask->row_ptr[i]; p < mask->row_ptr[i + 1]; ++p) {
      costs.dot += a_len + double(op_col(std::int64_t(mask->col_idx[p])));
    }
  }
  return costs;
}

template <class S, class Accum, class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> mxm_host(
    const host_resources& res, std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> c,
    std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> mask, const Accum& accum,
    const S& s, csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b, const descriptor& o,
    const char* op = "spira::mxm", const char* name_a = "A", const char* name_b = "B",
    mxm_method method = mxm_method::automatic)
{
  using T = host_compute_t;
  using traits = distance_traits<S, T>;
  static_assert(semiring<S, T>, "spira::mxm: S must model spira::semiring");
  static_assert(traits::annihilating,
                "spira::mxm: the semiring must be annihilating (a NAMM's product of sparse "
                "matrices is dense)");
  static_assert(traits::num_terms == 1, "spira::mxm: the semiring must have a single term");
  require_host_space(a.space, op, name_a);
  require_host_space(b.space, op, name_b);
  validate(res, a, csr_check::canonical, (std::string(op) + ": " + name_a).c_str());
  validate(res, b, csr_check::canonical, (std::string(op) + ": " + name_b).c_str());
  std::optional<csr_matrix<ValueT, IndexT>> at, bt;
  a = maybe_transposed(res, a, o.transpose_a, at);
  const std::int64_t b_rows = o.transpose_b ? b.cols : b.rows;
  const std::int64_t b_cols = o.transpose_b ? b.rows : b.cols;
  const std::string ta = std::string(name_a) + (o.transpose_a ? "ᵀ" : "");
  const std::string tb = std::string(name_b) + (o.transpose_b ? "ᵀ" : "");
  expects<dimension_mismatch>(a.cols == b_rows, op, ": ", ta, " is ", a.rows, " x ", a.cols,
                              " but ", tb, " is ", b_rows, " x ", b_cols,
                              " (inner dimensions differ)");
  const std::string shape = ta + " " + tb;
  check_output_operands(res, c, mask, a.rows, b_cols, op, shape.c_str());
  // With a mask that is not complemented only the entries it allows are computed, by dot
  // products of rows of op(A) and columns of op(B), when that reads less than the whole product.
  const bool maskable = mask.has_value() && !o.complement_mask;
  const mxm_costs costs = mxm_costs_of(a, b, o.transpose_b, maskable ? &*mask : nullptr);
  const bool dot = maskable && (method == mxm_method::masked_dot ||
                                (method == mxm_method::automatic && costs.dot < costs.gustavson));
  const std::int64_t work = std::int64_t(std::min(dot ? costs.dot : costs.gustavson, 0x1p62)) +
                            (c ? c->nnz : 0) + (mask ? mask->nnz : 0);
  const auto product = [&](const auto& make_row) {
    return csr_by_rows<ValueT, IndexT>(res, a.rows, b_cols, work, make_row,
                                       [&](auto& row, std::int64_t i, bool values, auto&& out) {
                                         row.build(i, values);
                                         masked_merge_row(i, row.cols().data(), row.values().data(),
                                                          row.cols().size(), c, mask, accum, o,
                                                          values, out);
                                       });
  };
  if (dot) {
    // op(B)ᵀ by rows: B itself when op transposes it.
    const csr_view<ValueT, IndexT> b_by_cols = maybe_transposed(res, b, !o.transpose_b, bt);
    return product([&] {
      return mxm_dot_row_builder<S, ValueT, IndexT>(a, b_by_cols, *mask, o.structural_mask, s);
    });
  }
  b = maybe_transposed(res, b, o.transpose_b, bt);
  return product([&] { return mxm_row_builder<S, ValueT, IndexT>(a, b, s); });
}

}  // namespace spira::detail
