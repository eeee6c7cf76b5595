// Test support: the sweep of the GraphBLAS-style operations' arguments (mask kind, complement,
// accumulator, replace, transposes, C given or not), random operands with small integer values and
// matrices as entry lists; shared by the cross-checks against SuiteSparse:GraphBLAS
// (support/graphblas.hpp) and the CUDA operations' checks against the host ones.
#pragma once

#include "support/oracle.hpp"

#include <spira/descriptor.hpp>
#include <spira/matrix.hpp>
#include <spira/vector.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace spira::test {

using entry_list = std::vector<std::tuple<std::int64_t, std::int64_t, double>>;

/// The entries of m as (row, column, value) tuples, row-major.
template <class V, class I>
std::vector<std::tuple<std::int64_t, std::int64_t, double>> entries_of(csr_view<V, I> m)
{
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> e;
  for (std::int64_t i = 0; i < m.rows; ++i) {
    for (offset_t k = m.row_ptr[i]; k < m.row_ptr[i + 1]; ++k) {
      e.emplace_back(i, std::int64_t(m.col_idx[k]), double(m.values[k]));
    }
  }
  return e;
}

/// One case of a descriptor sweep: which of C and the mask are given, and the descriptor.
struct sweep_case {
  int mask = 0;  ///< 0 none, 1 valued, 2 structural
  bool complement = false;
  bool accumulate = false;
  bool replace = false;
  bool transpose_a = false;
  bool transpose_b = false;
  bool with_c = false;

  /// Case `bits` of the 48 combinations of mask, complement, accumulator, replace and C.
  static sweep_case nth(int bits, bool transpose_a = false, bool transpose_b = false)
  {
    return {.mask = bits % 3,
            .complement = (bits / 3) % 2 != 0,
            .accumulate = (bits / 6) % 2 != 0,
            .replace = (bits / 12) % 2 != 0,
            .transpose_a = transpose_a,
            .transpose_b = transpose_b,
            .with_c = (bits / 24) % 2 != 0};
  }
  static constexpr int count = 48;

  [[nodiscard]] descriptor desc() const
  {
    return {.transpose_a = transpose_a,
            .transpose_b = transpose_b,
            .structural_mask = mask == 2,
            .complement_mask = complement,
            .replace = replace};
  }

  template <class V, class I>
  [[nodiscard]] std::optional<csr_view<V, I>> c_of(csr_view<V, I> c) const
  {
    return with_c ? std::optional(c) : std::nullopt;
  }
  template <class V, class I>
  [[nodiscard]] std::optional<csr_view<V, I>> mask_of(csr_view<V, I> m) const
  {
    return mask != 0 ? std::optional(m) : std::nullopt;
  }

  [[nodiscard]] std::string name() const
  {
    return std::string("mask=") + "nvs"[mask] + (complement ? " comp" : "") +
           (accumulate ? " accum" : "") + (replace ? " replace" : "") + (transpose_a ? " A'" : "") +
           (transpose_b ? " B'" : "") + (with_c ? " C" : "");
  }
};

using vector_entries = std::vector<std::pair<std::int64_t, double>>;

template <class V, class I>
vector_entries entries_of(sparse_vector_view<V, I> v)
{
  vector_entries e;
  for (std::int64_t p = 0; p < v.nnz; ++p) {
    e.emplace_back(std::int64_t(v.indices[p]), double(v.values[p]));
  }
  return e;
}

/// A device copy of a host sparse vector (cuda_resources: nvcc-compiled tests only).
template <class V, class I>
sparse_vector<V, I> vector_on_device(const cuda_resources& res, const sparse_vector<V, I>& v)
{
  sparse_vector<V, I> d(res, v.size(), v.nnz());
  copy(d.indices(), memory_space::device, v.indices(), memory_space::host, std::size_t(v.nnz()),
       res);
  copy(d.values(), memory_space::device, v.values(), memory_space::host, std::size_t(v.nnz()), res);
  return d;
}

/// The entries of a device sparse vector, read back to the host.
template <class V, class I>
vector_entries vector_host_entries(const sparse_vector<V, I>& d)
{
  std::vector<I> idx(std::size_t(d.nnz()));
  std::vector<V> val(std::size_t(d.nnz()));
  copy(idx.data(), memory_space::host, d.indices(), memory_space::device, idx.size(), d.cuda());
  copy(val.data(), memory_space::host, d.values(), memory_space::device, val.size(), d.cuda());
  vector_entries e;
  for (std::size_t p = 0; p < idx.size(); ++p) {
    e.emplace_back(std::int64_t(idx[p]), double(val[p]));
  }
  return e;
}

/// A random sparse vector of `size` with about a third of its entries stored, values as operand()'s
/// ({1, 2, 3}, or {0, 1} for `logical`; `zeros`: every third stored value an explicit 0).
template <class V, class I>
sparse_vector<V, I> vector_operand(std::int64_t size, std::uint32_t seed, bool logical,
                                   bool zeros = false)
{
  std::vector<I> idx;
  std::vector<V> x;
  std::uint32_t state = seed * 2654435761u + 1u;
  for (std::int64_t j = 0; j < size; ++j) {
    state = state * 1664525u + 1013904223u;
    if ((state >> 16) % 3 != 0) {
      continue;
    }
    const std::uint32_t r = (state >> 8) & 0xff;
    V value = logical ? V(r % 2) : V(1 + r % 3);
    if (zeros && idx.size() % 3 == 0) {
      value = V(0);
    }
    idx.push_back(I(j));
    x.push_back(value);
  }
  return make_sparse_vector<V, I>(host_resources{}, size, idx, x);
}

/// A random sparse vector of `size` with about half of its entries stored, uniform reals in
/// [0.5, 8): products and sums of them round in float and in double.
template <class V, class I>
sparse_vector<V, I> real_vector(std::int64_t size, std::uint32_t seed)
{
  std::vector<I> idx;
  std::vector<V> x;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(0.5, 8.0);
  for (std::int64_t j = 0; j < size; ++j) {
    if (rng() % 2 == 0) {
      idx.push_back(I(j));
      x.push_back(V(value(rng)));
    }
  }
  return make_sparse_vector<V, I>(host_resources{}, size, idx, x);
}

/// fn(accum) with the case's accumulator `acc`, or fn(no_accumulator{}).
template <class Accum, class Fn>
auto with_accum(const sweep_case& k, const Accum& acc, const Fn& fn)
{
  return k.accumulate ? fn(acc) : fn(no_accumulator{});
}

/// A random matrix with values in {1, 2, 3} (or {0, 1} for `logical`), so that sums and products
/// stay exact in float; `zeros`: every third stored value set to an explicit 0.
template <class V, class I>
csr_matrix<V, I> operand(std::int64_t rows, std::int64_t cols, std::uint32_t seed, bool logical,
                         bool zeros = false)
{
  auto m = random_csr<V, I>(
      {.rows = rows, .cols = cols, .mean_degree = 5, .small_integers = true, .seed = seed});
  for (std::int64_t p = 0; p < m.nnz(); ++p) {
    if (logical) {
      m.values()[p] = V(m.values()[p] > V(1) ? 1 : 0);
    }
    if (zeros && p % 3 == 0) {
      m.values()[p] = V(0);
    }
  }
  return m;
}

/// A sweep operand: values in {1, 2, 3} ({0, 1} for `logical`), or uniform reals (`reals`), whose
/// products and sums round.
template <class V, class I>
csr_matrix<V, I> sweep_operand(std::int64_t rows, std::int64_t cols, std::uint32_t seed,
                               bool logical, bool reals)
{
  return reals ? random_csr<V, I>({.rows = rows, .cols = cols, .mean_degree = 5, .seed = seed})
               : operand<V, I>(rows, cols, seed, logical);
}

/// The value and index types every GraphBLAS cross-check runs with.
using value_index_types =
    ::testing::Types<std::pair<float, std::int32_t>, std::pair<float, std::int64_t>,
                     std::pair<double, std::int32_t>, std::pair<double, std::int64_t>>;

/// The value and index types the CUDA operations' checks against the host run with (the two
/// extremes of value_index_types).
using cuda_value_index_types =
    ::testing::Types<std::pair<float, std::int32_t>, std::pair<double, std::int64_t>>;

/// fn() throws E with `text` in its message.
template <class E, class Fn>
void expect_throw_with(Fn&& fn, const std::string& text)
{
  try {
    fn();
    ADD_FAILURE() << "no exception; expected one saying: " << text;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

}  // namespace spira::test
