// spira internals: the order in which mxv's pull folds the products of a row (spira/mxv.hpp), the
// same on both backends so that they return the same bytes.
//
// Row i of A meets u in the products x_p = ⊗(A[i, k_p], u[k_p]) at the positions p = 0, 1, ... of
// the row whose k_p u stores. They are folded in `lanes` partial folds, fold l taking the
// positions p ≡ l (mod lanes) in increasing p, and the partial folds are then combined pairwise,
// l with l + h for h = lanes / 2, lanes / 4, ..., 1 (the lower lane's value on the left). A fold
// with no product is absent: it leaves the other side as it is, so ⊕'s identity is never added.
// This is a warp's natural reduction on the GPU (a lane per partial fold, then shuffles), and on
// the host lanes independent chains instead of one; a row of at most `lanes` stored entries folds
// by the tree alone.
#pragma once

#include <array>
#include <cstdint>

namespace spira::detail {

/// The host side of the order: add(position, product) in increasing position, then result().
template <class Add, class T>
class pull_fold {
 public:
  /// The number of partial folds (a warp on the GPU).
  static constexpr int lanes = 32;

  void add(std::int64_t position, T product)
  {
    const auto l = std::size_t(position % lanes);
    value_[l] = (present_ >> l) & 1u ? T(Add{}(value_[l], product)) : product;
    present_ |= 1u << l;
  }

  /// Whether any product was added.
  [[nodiscard]] bool found() const { return present_ != 0; }
  /// The fold of the products added (once found(); combines the partial folds, so call it once).
  [[nodiscard]] T result()
  {
    for (int h = lanes / 2; h > 0; h /= 2) {
      for (int l = 0; l < h; ++l) {
        if (((present_ >> (l + h)) & 1u) == 0) {
          continue;
        }
        value_[l] = (present_ >> l) & 1u ? T(Add{}(value_[l], value_[l + h])) : value_[l + h];
        present_ |= 1u << l;
      }
    }
    return value_[0];
  }

 private:
  std::array<T, lanes> value_{};
  std::uint32_t present_ = 0;
};

}  // namespace spira::detail
