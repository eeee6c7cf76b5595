// One B prepared once for calls with many A on the host (detail::host_pairwise_prepared, passed to
// detail::pairwise_host as the tiled k-NN graph passes each index tile to every query tile): the
// results are those of calls without it, bit for bit, for distances with norms (euclidean,
// cosine), a sum NAMM (manhattan, canberra), a selection NAMM (chebyshev), a distance with a
// prepare step (jensenshannon) and a boolean one (jaccard), on the declared columns and with the
// columns renumbered (declared columns beyond the stored entries), in float and double. The parts
// indexed by column (the CSC...) are built by the first call that keeps the declared columns and
// then reused; a call that renumbers the columns builds its own.
#include "support/oracle.hpp"

#include <semirings/distances.hpp>
#include <spira/ops.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace spira::test {
namespace {

/// out = d(A, B), with or without the prepared B.
template <class D, class V, class I>
dense_matrix<V> run_pairwise(const csr_matrix<V, I>& a, const csr_matrix<V, I>& b, const D& d,
                             std::type_identity_t<detail::host_pairwise_prepared<D, V, I>>* p)
{
  const host_resources res{};
  dense_matrix<V> out(res, a.rows(), b.rows());
  detail::pairwise_host(res, a.view(), b.view(), out.view(), d, p);
  return out;
}

/// One prepared B against several A (different rows and degrees), each result against the call
/// without it. `renumbered`: the declared columns exceed every pair's stored entries, so that
/// every call renumbers its columns.
template <class V, class I, class D>
void expect_prepared_same(const D& d, const std::string& name, bool renumbered)
{
  SCOPED_TRACE(name + (std::is_same_v<V, float> ? ", float" : ", double") +
               (renumbered ? ", renumbered" : ""));
  const host_resources res{};
  const std::int64_t cols = renumbered ? 1 << 16 : 60;
  const auto b = random_csr<V, I>({.rows = 150, .cols = cols, .mean_degree = 8, .seed = 3});
  std::vector<csr_matrix<V, I>> as;
  for (std::uint32_t t = 0; t < 3; ++t) {
    as.push_back(random_csr<V, I>(
        {.rows = 40 + 30 * t, .cols = cols, .mean_degree = 4.0 + 3 * t, .seed = 10 + t}));
  }
  detail::host_pairwise_prepared<D, V, I> prepared(res, d, b.view());
  const std::size_t bytes0 = prepared.host_bytes();
  std::size_t bytes1 = 0;
  for (std::size_t t = 0; t < as.size(); ++t) {
    const dense_matrix<V> want = run_pairwise(as[t], b, d, nullptr);
    const dense_matrix<V> got = run_pairwise(as[t], b, d, &prepared);
    std::int64_t mismatches = 0;
    for (std::int64_t i = 0; i < want.rows(); ++i) {
      for (std::int64_t j = 0; j < want.cols(); ++j) {
        const V w = want.view()(i, j);
        const V g = got.view()(i, j);
        if (std::memcmp(&w, &g, sizeof(V)) != 0 && ++mismatches <= 5) {
          ADD_FAILURE() << "A " << t << ", (" << i << ", " << j << "): " << g << " prepared, " << w
                        << " without";
        }
      }
    }
    EXPECT_EQ(mismatches, 0);
    // The parts built on first use are built once: the bytes grow at most on the first call.
    if (t == 0) {
      bytes1 = prepared.host_bytes();
    } else {
      EXPECT_EQ(prepared.host_bytes(), bytes1);
    }
  }
  EXPECT_GT(bytes0, std::size_t{0});  // the norms at least
  if (renumbered) {
    EXPECT_FALSE(prepared.csc.has_value());
  }
}

template <class D>
void expect_prepared_same_all(const D& d, const std::string& name)
{
  for (const bool renumbered : {false, true}) {
    expect_prepared_same<float, std::int32_t>(d, name, renumbered);
    expect_prepared_same<double, std::int64_t>(d, name, renumbered);
  }
}

TEST(host_pairwise_prepared, euclidean_same_bits)
{
  expect_prepared_same_all(distances::euclidean{}, "euclidean");
}

TEST(host_pairwise_prepared, cosine_same_bits)
{
  expect_prepared_same_all(distances::cosine{}, "cosine");
}

TEST(host_pairwise_prepared, manhattan_sum_namm_same_bits)
{
  expect_prepared_same_all(distances::manhattan{}, "manhattan");
}

TEST(host_pairwise_prepared, canberra_sum_namm_same_bits)
{
  expect_prepared_same_all(distances::canberra{}, "canberra");
}

TEST(host_pairwise_prepared, chebyshev_selection_namm_same_bits)
{
  expect_prepared_same_all(distances::chebyshev{}, "chebyshev");
}

TEST(host_pairwise_prepared, jensenshannon_prepared_values_same_bits)
{
  expect_prepared_same_all(distances::jensenshannon{}, "jensenshannon");
}

TEST(host_pairwise_prepared, jaccard_boolean_same_bits)
{
  expect_prepared_same_all(distances::jaccard{}, "jaccard");
}

/// What the engines keep: the CSC where a call keeps the declared columns (intersection and
/// selection engines), the NAMM terms of a sum NAMM, the sorted rows of a selection NAMM.
TEST(host_pairwise_prepared, keeps_the_parts_of_its_engine)
{
  using V = float;
  using I = std::int32_t;
  const auto b = random_csr<V, I>({.rows = 50, .cols = 40, .seed = 5});
  const auto a = random_csr<V, I>({.rows = 30, .cols = 40, .seed = 6});
  const host_resources res{};
  detail::host_pairwise_prepared<distances::cosine, V, I> cos(res, {}, b.view());
  (void)run_pairwise(a, b, distances::cosine{}, &cos);
  EXPECT_TRUE(cos.csc.has_value());
  EXPECT_FALSE(cos.csc_zero.has_value());
  detail::host_pairwise_prepared<distances::manhattan, V, I> man(res, {}, b.view());
  (void)run_pairwise(a, b, distances::manhattan{}, &man);
  EXPECT_TRUE(man.csc.has_value());
  EXPECT_TRUE(man.csc_zero.has_value());
  EXPECT_TRUE(man.corrections.has_value());
  detail::host_pairwise_prepared<distances::chebyshev, V, I> cheb(res, {}, b.view());
  (void)run_pairwise(a, b, distances::chebyshev{}, &cheb);
  EXPECT_TRUE(cheb.csc.has_value());
  EXPECT_TRUE(cheb.best_cols.has_value());
}

TEST(host_pairwise_prepared, a_prepared_b_of_another_matrix_is_rejected)
{
  using V = float;
  using I = std::int32_t;
  const auto b = random_csr<V, I>({.rows = 10, .cols = 20, .seed = 1});
  const auto other = random_csr<V, I>({.rows = 10, .cols = 20, .seed = 2});
  detail::host_pairwise_prepared<distances::euclidean, V, I> prepared(host_resources{}, {},
                                                                      other.view());
  EXPECT_THROW((void)run_pairwise(b, b, distances::euclidean{}, &prepared), invalid_argument);
}

}  // namespace
}  // namespace spira::test
