// The annihilating built-in semirings against SuiteSparse:GraphBLAS: C = A ⊕.⊗ Bᵀ computed by
// GrB_mxm (with GrB_DESC_T1) on the same random matrices. GraphBLAS leaves an entry out where rows
// share no stored column; spira's dense output holds the add identity there.
#include "support/graphblas.hpp"
#include "support/oracle.hpp"

#include <semirings/graphblas.hpp>
#include <spira/ops.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace spira::test {
namespace {

const auto* const env = ::testing::AddGlobalTestEnvironment(new graphblas_env);

/// Dense rows(A) x rows(B) result of GrB_mxm(A, Bᵀ), `identity` where GraphBLAS has no entry.
template <class V, class I>
void graphblas_abt(const csr_matrix<V, I>& a, const csr_matrix<V, I>& b, GrB_Semiring s,
                   GrB_Type type, double identity, std::vector<std::vector<double>>* out)
{
  GrB_Matrix ga = nullptr, gb = nullptr, gc = nullptr;
  make_grb(a.view(), type, &ga);
  make_grb(b.view(), type, &gb);
  SPIRA_GRB_OK(GrB_Matrix_new(&gc, type, GrB_Index(a.rows()), GrB_Index(b.rows())));
  SPIRA_GRB_OK(GrB_mxm(gc, nullptr, nullptr, s, ga, gb, GrB_DESC_T1));
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> e;
  grb_entries(gc, type, &e);
  out->assign(a.rows(), std::vector<double>(b.rows(), identity));
  for (const auto& [i, j, v] : e) {
    (*out)[i][j] = v;
  }
  GrB_Matrix_free(&ga);
  GrB_Matrix_free(&gb);
  GrB_Matrix_free(&gc);
}

template <class V, class I, class S>
std::vector<std::vector<double>> spira_abt(const csr_matrix<V, I>& a, const csr_matrix<V, I>& b,
                                           const S& s)
{
  dense_matrix<V> out(host_resources{}, a.rows(), b.rows());
  pairwise(host_resources{}, a.view(), b.view(), out.view(), s);
  std::vector<std::vector<double>> r(a.rows(), std::vector<double>(b.rows()));
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    for (std::int64_t j = 0; j < b.rows(); ++j) {
      r[i][j] = out.data()[i * b.rows() + j];
    }
  }
  return r;
}

template <class V>
void expect_same(const std::vector<std::vector<double>>& got,
                 const std::vector<std::vector<double>>& want, const char* what)
{
  const double rel = std::is_same_v<V, float> ? 2e-6 : 1e-12;
  std::int64_t mismatches = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    for (std::size_t j = 0; j < want[i].size(); ++j) {
      const double g = got[i][j], w = want[i][j];
      const bool ok = std::isinf(w) ? g == w : std::abs(g - w) <= rel * (1 + std::abs(w));
      if (!ok && ++mismatches <= 5) {
        ADD_FAILURE() << what << " (" << i << ", " << j << "): spira " << g << ", GraphBLAS " << w;
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << what;
}

template <class T>
class graphblas_mxm : public ::testing::Test {};
using value_index =
    ::testing::Types<std::pair<float, std::int32_t>, std::pair<float, std::int64_t>,
                     std::pair<double, std::int32_t>, std::pair<double, std::int64_t>>;
TYPED_TEST_SUITE(graphblas_mxm, value_index);

TYPED_TEST(graphblas_mxm, annihilating_builtins_match_grb_mxm_with_transposed_b)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (const std::uint32_t seed : {1u, 2u}) {
    // Different row counts, power-law degrees, empty rows and columns, signed values.
    const auto a = random_csr<V, I>(
        {.rows = 173, .cols = 211, .mean_degree = 12, .signed_values = true, .seed = seed});
    const auto b = random_csr<V, I>(
        {.rows = 118, .cols = 211, .mean_degree = 9, .signed_values = true, .seed = seed + 100});
    std::vector<std::vector<double>> want;
    using namespace spira::semirings;
    graphblas_abt(a, b, GrB_PLUS_TIMES_SEMIRING_FP64, GrB_FP64, 0.0, &want);
    expect_same<V>(spira_abt(a, b, plus_times{}), want, "plus_times");
    graphblas_abt(a, b, GrB_MIN_PLUS_SEMIRING_FP64, GrB_FP64, inf, &want);
    expect_same<V>(spira_abt(a, b, min_plus{}), want, "min_plus");
    graphblas_abt(a, b, GrB_MAX_PLUS_SEMIRING_FP64, GrB_FP64, -inf, &want);
    expect_same<V>(spira_abt(a, b, max_plus{}), want, "max_plus");
    graphblas_abt(a, b, GrB_MAX_MIN_SEMIRING_FP64, GrB_FP64, -inf, &want);
    expect_same<V>(spira_abt(a, b, max_min{}), want, "max_min");
    graphblas_abt(a, b, GxB_PLUS_PAIR_FP64, GrB_FP64, 0.0, &want);
    expect_same<V>(spira_abt(a, b, plus_pair{}), want, "plus_pair");
    graphblas_abt(a, b, GxB_ANY_PAIR_FP64, GrB_FP64, 0.0, &want);
    expect_same<V>(spira_abt(a, b, any_pair{}), want, "any_pair");
    graphblas_abt(a, b, GrB_LOR_LAND_SEMIRING_BOOL, GrB_BOOL, 0.0, &want);
    expect_same<V>(spira_abt(a, b, lor_land{}), want, "lor_land");
  }
}

}  // namespace
}  // namespace spira::test
