// One B prepared once for calls with many A (detail::pairwise_prepared, passed to
// detail::pairwise_cuda as the tiled k-NN graph passes each index tile to every query tile): the
// results are those of calls without it, bit for bit, for every strategy, for distances with norms
// (euclidean, cosine), a sum NAMM (manhattan), a selection NAMM (chebyshev) and a distance with a
// prepare step (jensenshannon), on the declared columns and with the columns renumbered (declared
// columns beyond the stored entries). Values are small integers so that every sum is exact and the
// order of the atomic updates cannot change a bit; jensenshannon's logarithms are not exact, so
// its hybrid strategy, which sums in float with atomics, is compared within float rounding. The
// prepared intersection part is built by the first call that uses it and then reused; a call that
// renumbers the columns builds its own. Skips without a GPU.
#include "support/backend.hpp"
#include "support/oracle.hpp"

#include <semirings/distances.hpp>
#include <spira/cuda/pairwise.cuh>

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace spira::test {
namespace {

using V = float;
using I = std::int32_t;

/// A host copy of a device dense matrix.
std::vector<V> to_host_vector(const dense_matrix<V>& m)
{
  std::vector<V> h(std::size_t(m.rows() * m.cols()));
  copy(h.data(), memory_space::host, m.data(), memory_space::device, h.size(), m.cuda());
  return h;
}

/// out = d(A, B) with `strategy`, with or without the prepared B, back on the host.
template <class D>
std::vector<V> run_pairwise(const cuda_resources& res, const csr_matrix<V, I>& a,
                            const csr_matrix<V, I>& b, const D& d, pairwise_strategy strategy,
                            std::type_identity_t<detail::pairwise_prepared<D, V, I>>* prepared)
{
  dense_matrix<V> out(res, a.rows(), b.rows());
  detail::pairwise_cuda(res, a.view(), b.view(), out.view(), d, strategy, 0, "workspace_bytes",
                        true, prepared);
  return to_host_vector(out);
}

/// The strategies D runs with (automatic first).
template <class D>
std::vector<pairwise_strategy> strategies_of()
{
  std::vector<pairwise_strategy> s{pairwise_strategy::automatic, pairwise_strategy::hybrid};
  if constexpr (detail::intersection_capable_v<D, V>) {
    s.push_back(pairwise_strategy::intersection);
  }
  if constexpr (dot_product_form<D>::value) {
    s.push_back(pairwise_strategy::dense);
  }
  return s;
}

/// For each strategy: one prepared B against several A (different rows and degrees), each result
/// against the call without the prepared B. `renumbered`: the declared columns exceed every
/// pair's stored entries, so that every call renumbers its columns.
template <class D>
void expect_prepared_same(const D& d, const std::string& name, bool renumbered, bool inexact)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  const cuda_resources res{};
  const std::int64_t cols = renumbered ? 1 << 20 : 60;
  const auto host_b = random_csr<V, I>(
      {.rows = 150, .cols = cols, .mean_degree = 8, .small_integers = true, .seed = 3});
  const csr_matrix<V, I> b = to_device(res, host_b.view());
  std::vector<csr_matrix<V, I>> as;
  for (std::uint32_t t = 0; t < 3; ++t) {
    as.push_back(to_device(res, random_csr<V, I>({.rows = 40 + 30 * t,
                                                  .cols = cols,
                                                  .mean_degree = 4.0 + 3 * t,
                                                  .small_integers = true,
                                                  .seed = 10 + t})
                                    .view()));
  }
  for (const pairwise_strategy s : strategies_of<D>()) {
    const std::string label = name + ", " + to_string(s) + (renumbered ? ", renumbered" : "");
    SCOPED_TRACE(label);
    detail::pairwise_prepared<D, V, I> prepared(res, d, b.view());
    const std::size_t bytes0 = prepared.device_bytes();
    std::size_t bytes1 = 0;
    for (std::size_t t = 0; t < as.size(); ++t) {
      const std::vector<V> want = run_pairwise(res, as[t], b, d, s, nullptr);
      const std::vector<V> got = run_pairwise(res, as[t], b, d, s, &prepared);
      ASSERT_EQ(got.size(), want.size());
      std::int64_t mismatches = 0;
      for (std::size_t e = 0; e < want.size(); ++e) {
        const bool same =
            inexact && s == pairwise_strategy::hybrid
                ? std::abs(double(got[e]) - double(want[e])) <= 1e-5 * (1.0 + std::abs(want[e]))
                : std::bit_cast<std::uint32_t>(got[e]) == std::bit_cast<std::uint32_t>(want[e]);
        if (!same && ++mismatches <= 5) {
          ADD_FAILURE() << "A " << t << ", element " << e << ": " << got[e] << " prepared, "
                        << want[e] << " without";
        }
      }
      EXPECT_EQ(mismatches, 0);
      // The intersection part: built by the first call that runs the intersection strategy on
      // the declared columns, then reused (automatic may choose another strategy for some A).
      if (t == 0) {
        bytes1 = prepared.device_bytes();
      } else if (s != pairwise_strategy::automatic) {
        EXPECT_EQ(prepared.device_bytes(), bytes1);
      }
    }
    if (renumbered || s == pairwise_strategy::hybrid || s == pairwise_strategy::dense) {
      EXPECT_EQ(prepared.intersection, nullptr);
      EXPECT_EQ(bytes1, bytes0);
    } else if (s == pairwise_strategy::intersection) {
      EXPECT_NE(prepared.intersection, nullptr);
      EXPECT_GT(bytes1, bytes0);
    }
  }
}

TEST(pairwise_prepared, euclidean_same_bits)
{
  expect_prepared_same(distances::euclidean{}, "euclidean", false, false);
  expect_prepared_same(distances::euclidean{}, "euclidean", true, false);
}

TEST(pairwise_prepared, cosine_same_bits)
{
  expect_prepared_same(distances::cosine{}, "cosine", false, false);
  expect_prepared_same(distances::cosine{}, "cosine", true, false);
}

TEST(pairwise_prepared, manhattan_sum_namm_same_bits)
{
  expect_prepared_same(distances::manhattan{}, "manhattan", false, false);
  expect_prepared_same(distances::manhattan{}, "manhattan", true, false);
}

TEST(pairwise_prepared, chebyshev_selection_namm_same_bits)
{
  expect_prepared_same(distances::chebyshev{}, "chebyshev", false, false);
  expect_prepared_same(distances::chebyshev{}, "chebyshev", true, false);
}

TEST(pairwise_prepared, jensenshannon_prepared_values_same_bits)
{
  expect_prepared_same(distances::jensenshannon{}, "jensenshannon", false, true);
  expect_prepared_same(distances::jensenshannon{}, "jensenshannon", true, true);
}

TEST(pairwise_prepared, a_prepared_b_of_another_matrix_is_rejected)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  const cuda_resources res{};
  const auto b = to_device(res, random_csr<V, I>({.rows = 10, .cols = 20, .seed = 1}).view());
  const auto other = to_device(res, random_csr<V, I>({.rows = 10, .cols = 20, .seed = 2}).view());
  detail::pairwise_prepared<distances::euclidean, V, I> prepared(res, {}, other.view());
  dense_matrix<V> out(res, b.rows(), b.rows());
  EXPECT_THROW(
      detail::pairwise_cuda(res, b.view(), b.view(), out.view(), distances::euclidean{},
                            pairwise_strategy::automatic, 0, "workspace_bytes", true, &prepared),
      invalid_argument);
}

}  // namespace
}  // namespace spira::test
