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
    std::sort(cols_.begin(), cols_.end());
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

template <class S, class Accum, class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> mxm_host(
    const host_resources& res, std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> c,
    std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> mask, const Accum& accum,
    const S& s, csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b, const descriptor& o,
    const char* op = "spira::mxm", const char* name_a = "A", const char* name_b = "B")
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
  b = maybe_transposed(res, b, o.transpose_b, bt);
  const std::string ta = std::string(name_a) + (o.transpose_a ? "ᵀ" : "");
  const std::string tb = std::string(name_b) + (o.transpose_b ? "ᵀ" : "");
  expects<dimension_mismatch>(a.cols == b.rows, op, ": ", ta, " is ", a.rows, " x ", a.cols,
                              " but ", tb, " is ", b.rows, " x ", b.cols,
                              " (inner dimensions differ)");
  const std::string shape = ta + " " + tb;
  check_output_operands(res, c, mask, a.rows, b.cols, op, shape.c_str());
  return csr_by_rows<ValueT, IndexT>(
      res, a.rows, b.cols, [&] { return mxm_row_builder<S, ValueT, IndexT>(a, b, s); },
      [&](mxm_row_builder<S, ValueT, IndexT>& row, std::int64_t i, bool values, auto&& out) {
        row.build(i, values);
        masked_merge_row(i, row.cols().data(), row.values().data(), row.cols().size(), c, mask,
                         accum, o, values, out);
      });
}

}  // namespace spira::detail
