// The declarations the fused k-NN relies on (spira/accuracy.hpp), against the values the engines
// compute. zero_self_distance: d(x, x) is exactly 0 for a finite row x, and so is d(x, y) for a row
// y equal to x, as the fused k-NN assumes when it writes d(i, i) = 0 after a parallel check of the
// row instead of evaluating it, and when it gives the pairs of equal rows 0.
// disjoint_distance: a pair whose accumulator is ⊕'s identity has that value when its rows pass
// disjoint_query / disjoint_index, as the fused k-NN assumes when it skips such pairs;
// zero_rows_distance: an all-zero query row has that value with all-zero rows and the disjoint one
// with the others, as the fused k-NN assumes when it ranks such a row's pairs. Random rows
// at every scale (subnormal to near-overflow values, explicit zeros, negative values where the
// distance allows them, rows of up to a few thousand entries), float and double values, through
// the host's direct self distances and guarded finalize (the direct_value and the guard the
// device evaluates too).
#include <semirings/distances.hpp>
#include <spira/convert.hpp>
#include <spira/cuda/pairwise_strategy.hpp>
#include <spira/detail/host_pairwise_dispatch.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace spira::test {
namespace {

/// Rows of `cols` columns with lengths from 0 to 3,000; each row's values near 2^e for a random
/// e over the value type's whole range (a few subnormal), some explicit zeros; `nonnegative` for
/// the distances of distributions.
template <class V>
csr_matrix<V, std::int32_t> rows_at_every_scale(bool nonnegative, std::uint32_t seed)
{
  const std::int64_t rows = 160, cols = 5000;
  const int min_exp = std::numeric_limits<V>::min_exponent - std::numeric_limits<V>::digits + 4;
  const int max_exp = std::numeric_limits<V>::max_exponent - 8;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<offset_t> ptr{0};
  std::vector<std::int32_t> col;
  std::vector<V> val;
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t len =
        i % 16 == 0 ? std::int64_t(unit(rng) * 3000) : std::int64_t(unit(rng) * 40);
    const int e = min_exp + int(unit(rng) * double(max_exp - min_exp));
    std::int64_t c = 0;
    for (std::int64_t n = 0; n < len && c < cols; ++n, ++c) {
      c += std::int64_t(unit(rng) * 2.0);
      if (c >= cols) {
        break;
      }
      const int ee = std::min(max_exp, std::max(min_exp, e + int(unit(rng) * 16.0) - 8));
      double v = std::ldexp(1.0 + unit(rng), ee);
      if (!nonnegative && unit(rng) < 0.4) {
        v = -v;
      }
      if (unit(rng) < 0.05) {
        v = 0.0;
      }
      col.push_back(std::int32_t(c));
      val.push_back(V(v));
    }
    ptr.push_back(offset_t(col.size()));
  }
  return make_csr<V, std::int32_t>(host_resources{}, rows, cols, ptr, col, val);
}

template <class D, class V>
void expect_zero_self(const D& d, bool nonnegative, const std::string& name)
{
  static_assert(accuracy_traits<D, double>::zero_self);
  const host_resources res{};
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    const auto m = rows_at_every_scale<V>(nonnegative, seed);
    const auto self = detail::self_distances<D, double>(res, m.view(), d);
    for (std::int64_t i = 0; i < m.rows(); ++i) {
      ASSERT_EQ(self[std::size_t(i)], V(0)) << name << " seed " << seed << " row " << i << " ("
                                            << m.row_ptr()[i + 1] - m.row_ptr()[i] << " entries)";
    }
    // With an equal row elsewhere (row i of a copy of the matrix), as the fused k-NN gives the
    // pairs of equal rows without evaluating them (spira/cuda/detail/knn_equal_rows.cuh).
    const auto copy = make_csr<V, std::int32_t>(
        res, m.rows(), m.cols(), std::vector<offset_t>(m.row_ptr(), m.row_ptr() + m.rows() + 1),
        std::vector<std::int32_t>(m.col_idx(), m.col_idx() + m.nnz()),
        std::vector<V>(m.values(), m.values() + m.nnz()));
    dense_matrix<V> out(res, m.rows(), m.rows());
    detail::pairwise_direct<D, double>(res, m.view(), copy.view(), out.view(), d);
    for (std::int64_t i = 0; i < m.rows(); ++i) {
      ASSERT_EQ(out.view()(i, i), V(0))
          << name << " seed " << seed << " row " << i << " with its copy";
    }
  }
}

template <class V>
void every_declaring_distance()
{
  using namespace spira::distances;
  expect_zero_self<sqeuclidean, V>({}, false, "sqeuclidean");
  expect_zero_self<euclidean, V>({}, false, "euclidean");
  expect_zero_self<cosine, V>({}, false, "cosine");
  expect_zero_self<correlation, V>({}, false, "correlation");
  expect_zero_self<manhattan, V>({}, false, "manhattan");
  expect_zero_self<hamming, V>({}, false, "hamming");
  expect_zero_self<canberra, V>({}, false, "canberra");
  expect_zero_self<braycurtis, V>({}, false, "braycurtis");
  for (const double p : {1.0, 2.0, 3.5, 1000.0}) {
    expect_zero_self<minkowski, V>(minkowski{p}, false, "minkowski p " + std::to_string(p));
  }
  expect_zero_self<hellinger, V>({}, true, "hellinger");
  expect_zero_self<jensenshannon, V>({}, true, "jensenshannon");
}

TEST(zero_self_distance, direct_value_of_a_finite_row_with_itself_is_zero_float)
{
  every_declaring_distance<float>();
}

TEST(zero_self_distance, direct_value_of_a_finite_row_with_itself_is_zero_double)
{
  every_declaring_distance<double>();
}

TEST(zero_self_distance, only_distances_that_vanish_on_the_diagonal_declare_it)
{
  using namespace spira::distances;
  static_assert(!accuracy_traits<inner_product, double>::zero_self);
  static_assert(!accuracy_traits<kl_divergence, double>::zero_self);  // epsilon-clipped entries
  static_assert(!accuracy_traits<russellrao, double>::zero_self);
  SUCCEED();
}

/// Every pair (x, y) of rows at every scale (and all-zero rows: empty, explicit zeros) whose rows
/// pass D's disjoint predicates gets D::disjoint_distance from an accumulator at ⊕'s identity,
/// through the guard with the bounds of the device's accumulator type (the fused k-NN's view),
/// whether or not the rows share columns (products may cancel or vanish). Returns the pairs
/// checked and counts the rows each predicate refused.
template <class D, class V>
std::int64_t expect_disjoint(const D& d, bool nonnegative, const std::string& name,
                             std::int64_t& refused)
{
  static_assert(accuracy_traits<D, double>::disjoint);
  using A = std::conditional_t<intersection_sums_in_double<D>::value, double, V>;
  constexpr int N = distance_traits<D, double>::num_terms;
  const accumulator_bounds bounds = accumulator_bounds_of<A>();
  const host_resources res{};
  std::int64_t checked = 0;
  for (std::uint32_t seed : {4u, 5u}) {
    const auto scaled = rows_at_every_scale<V>(nonnegative, seed);
    // Two all-zero rows after them: one empty, one of explicit zeros.
    std::vector<offset_t> ptr(scaled.row_ptr(), scaled.row_ptr() + scaled.rows() + 1);
    std::vector<std::int32_t> col(scaled.col_idx(), scaled.col_idx() + scaled.nnz());
    std::vector<V> val(scaled.values(), scaled.values() + scaled.nnz());
    ptr.push_back(ptr.back());
    col.insert(col.end(), {3, 70});
    val.insert(val.end(), {V(0), V(-0.0)});
    ptr.push_back(offset_t(col.size()));
    const auto m = make_csr<V, std::int32_t>(res, scaled.rows() + 2, scaled.cols(), ptr, col, val);
    const auto norms =
        detail::row_norms<typename distance_traits<D, double>::norms, double>(res, m.view());
    const auto rows = rows_of(m.view());
    terms<double, N> identity, magnitude;
    for (int t = 0; t < N; ++t) {
      identity[t] = D::add_monoid::template identity<double>();
      magnitude[t] = 0.0;
    }
    const auto all_zero = [&](std::int64_t r) {
      return std::all_of(rows[r].values, rows[r].values + rows[r].size,
                         [](V v) { return v == V(0); });
    };
    for (std::int64_t i = 0; i < m.rows(); ++i) {
      // An all-zero query row: zero_rows_distance's promise, where D declares it.
      bool zero_query = false;
      if constexpr (accuracy_traits<D, double>::zero_rows) {
        zero_query = all_zero(i);
      }
      if (!zero_query && !d.template disjoint_query<double>(norms[std::size_t(i)], bounds)) {
        ++refused;
        continue;
      }
      for (std::int64_t j = 0; j < m.rows(); ++j) {
        if (!d.template disjoint_index<double>(rows[j], norms[std::size_t(j)], bounds)) {
          refused += i == 0 ? 1 : 0;
          continue;
        }
        double declared = D::disjoint_distance;
        if constexpr (accuracy_traits<D, double>::zero_rows) {
          declared = zero_query && all_zero(j) ? D::zero_rows_distance : declared;
        }
        const double v =
            guarded_finalize<D, double>(d, identity, magnitude, norms[std::size_t(i)],
                                        norms[std::size_t(j)], m.cols(), rows, i, rows, j, bounds);
        if (float(v) != float(declared)) {
          ADD_FAILURE() << name << " seed " << seed << " pair (" << i << ", " << j << "): " << v
                        << ", declared " << declared;
          return checked;
        }
        ++checked;
      }
    }
  }
  return checked;
}

template <class V>
void every_disjoint_declaration()
{
  using namespace spira::distances;
  std::int64_t refused = 0;
  const std::int64_t cosine_pairs = expect_disjoint<cosine, V>(cosine{}, false, "cosine", refused);
  EXPECT_GT(cosine_pairs, 2000);
  EXPECT_GT(refused, 0) << "cosine: rows at every scale include rows it must refuse";
  refused = 0;
  const std::int64_t inner_pairs =
      expect_disjoint<inner_product, V>(inner_product{}, false, "inner_product", refused);
  EXPECT_EQ(inner_pairs, 2 * 162 * 162);
  EXPECT_EQ(refused, 0);
}

TEST(disjoint_distance, pairs_at_the_identity_take_the_declared_value_float)
{
  every_disjoint_declaration<float>();
}

TEST(disjoint_distance, pairs_at_the_identity_take_the_declared_value_double)
{
  every_disjoint_declaration<double>();
}

TEST(disjoint_distance, only_distances_with_one_value_for_disjoint_rows_declare_it)
{
  using namespace spira::distances;
  static_assert(!accuracy_traits<euclidean, double>::disjoint);  // |x|^2 + |y|^2 varies
  static_assert(!accuracy_traits<correlation, double>::disjoint);
  static_assert(!accuracy_traits<manhattan, double>::disjoint);  // not annihilating
  static_assert(accuracy_traits<cosine, double>::zero_rows);
  static_assert(!accuracy_traits<inner_product, double>::zero_rows);  // its disjoint_query takes
                                                                      // every row
  SUCCEED();
}

}  // namespace
}  // namespace spira::test
