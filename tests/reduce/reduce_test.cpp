// reduce_rows, reduce_cols and reduce_scalar (host) against GraphBLAS's GrB_Matrix_reduce (to a
// vector, of A and of Aᵀ, and to a scalar) with the plus, min and max monoids, on matrices with
// empty rows and columns (GraphBLAS leaves their entry out; spira's dense forms write the
// identity), and the same value for any number of threads; the masked form into a sparse vector,
// w⟨m⟩ = accum(w, reduce(op(A))), over the whole descriptor sweep.
#include "support/graphblas.hpp"

#include <spira/mxv.hpp>
#include <spira/ops.hpp>
#include <spira/semiring.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace spira::test {
namespace {

const auto* const env = ::testing::AddGlobalTestEnvironment(new graphblas_env);

/// GraphBLAS's reduction of each row of A (or of Aᵀ), `identity` where it has no entry.
std::vector<double> graphblas_reduce(GrB_Matrix a, GrB_Monoid m, bool columns, std::int64_t n,
                                     double identity)
{
  GrB_Vector w = nullptr;
  std::vector<double> out(std::size_t(n), identity);
  EXPECT_EQ(GrB_Vector_new(&w, GrB_FP64, GrB_Index(n)), GrB_SUCCESS);
  EXPECT_EQ(GrB_Matrix_reduce_Monoid(w, nullptr, nullptr, m, a, columns ? GrB_DESC_T0 : nullptr),
            GrB_SUCCESS);
  GrB_Index nv = 0;
  EXPECT_EQ(GrB_Vector_nvals(&nv, w), GrB_SUCCESS);
  std::vector<GrB_Index> idx(nv);
  std::vector<double> x(nv);
  EXPECT_EQ(GrB_Vector_extractTuples_FP64(idx.data(), x.data(), &nv, w), GrB_SUCCESS);
  for (GrB_Index p = 0; p < nv; ++p) {
    out[idx[p]] = x[p];
  }
  GrB_Vector_free(&w);
  return out;
}

template <class T>
class reduce_graphblas : public ::testing::Test {};
TYPED_TEST_SUITE(reduce_graphblas, value_index_types);

template <class V, class I, class M>
void check(const M& m, GrB_Monoid gm, double identity, const char* what)
{
  const auto a = operand<V, I>(57, 44, 101, false);
  GrB_Matrix ga = nullptr;
  make_grb(a.view(), GrB_FP64, &ga);
  const auto as_double = [](const std::vector<V>& v) {
    return std::vector<double>(v.begin(), v.end());
  };
  std::vector<V> rows(57), cols(44);
  reduce_rows(host_resources{}, a.view(), std::span<V>(rows), m);
  reduce_cols(host_resources{}, a.view(), std::span<V>(cols), m);
  EXPECT_EQ(as_double(rows), graphblas_reduce(ga, gm, false, 57, identity)) << what;
  EXPECT_EQ(as_double(cols), graphblas_reduce(ga, gm, true, 44, identity)) << what;
  double s = 0;
  GrB_Scalar gs = nullptr;
  ASSERT_EQ(GrB_Scalar_new(&gs, GrB_FP64), GrB_SUCCESS);
  ASSERT_EQ(GrB_Matrix_reduce_Monoid_Scalar(gs, nullptr, gm, ga, nullptr), GrB_SUCCESS);
  ASSERT_EQ(GrB_Scalar_extractElement_FP64(&s, gs), GrB_SUCCESS);
  EXPECT_EQ(double(reduce_scalar(host_resources{}, a.view(), m)), s) << what;
  EXPECT_EQ(reduce_scalar(host_resources{.threads = 1}, a.view(), m),
            reduce_scalar(host_resources{.threads = 3}, a.view(), m))
      << what;
  GrB_Scalar_free(&gs);
  GrB_Matrix_free(&ga);
}

TYPED_TEST(reduce_graphblas, rows_columns_and_scalar)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  constexpr double inf = std::numeric_limits<double>::infinity();
  check<V, I>(plus_monoid{}, GrB_PLUS_MONOID_FP64, 0.0, "plus");
  check<V, I>(min_monoid{}, GrB_MIN_MONOID_FP64, inf, "min");
  check<V, I>(max_monoid{}, GrB_MAX_MONOID_FP64, -inf, "max");
}

/// GrB_Matrix_reduce_Monoid(w, mask, accum, monoid, A, desc) of the case.
template <class V, class I>
vector_entries graphblas_masked_reduce(const sweep_case& k, GrB_Monoid gm, GrB_BinaryOp gacc,
                                       csr_view<V, I> a, sparse_vector_view<V, I> w,
                                       sparse_vector_view<V, I> m)
{
  GrB_Matrix ga = nullptr;
  grb_vector_case g;
  make_grb(a, GrB_FP64, &ga);
  grb_vector_case_of(k, GrB_FP64, w, m, GrB_INP0, &g);
  EXPECT_EQ(GrB_Matrix_reduce_Monoid(g.w, g.mask, k.accumulate ? gacc : nullptr, gm, ga, g.desc),
            GrB_SUCCESS);
  vector_entries out;
  grb_entries(g.w, GrB_FP64, &out);
  GrB_Matrix_free(&ga);
  grb_free(&g);
  return out;
}

template <class V, class I, class M, class Accum>
void masked_sweep(const M& m, GrB_Monoid gm, const Accum& acc, GrB_BinaryOp gacc, const char* what)
{
  const std::int64_t rows = 37, cols = 29;
  for (const bool ta : {false, true}) {
    // op(A) is rows x cols; w and the mask have rows(op(A)) entries.
    const auto a =
        ta ? operand<V, I>(cols, rows, 103, false) : operand<V, I>(rows, cols, 103, false);
    const auto w = vector_operand<V, I>(rows, 104, false);
    const auto mask = vector_operand<V, I>(rows, 105, false, true);
    for (int bits = 0; bits < sweep_case::count; ++bits) {
      const auto k = sweep_case::nth(bits, ta);
      const auto want = graphblas_masked_reduce(k, gm, gacc, a.view(), w.view(), mask.view());
      const auto w_in = k.with_c ? std::optional(w.view()) : std::nullopt;
      const auto m_in = k.mask != 0 ? std::optional(mask.view()) : std::nullopt;
      const auto got = with_accum(k, acc, [&](const auto& accum) {
        return reduce_rows(host_resources{}, w_in, m_in, accum, m, a.view(), k.desc());
      });
      ASSERT_EQ(entries_of(got.view()), want) << what << ": " << k.name();
    }
  }
}

TYPED_TEST(reduce_graphblas, into_a_masked_vector_every_descriptor)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  masked_sweep<V, I>(plus_monoid{}, GrB_PLUS_MONOID_FP64, plus_monoid{}, GrB_PLUS_FP64, "plus");
  masked_sweep<V, I>(min_monoid{}, GrB_MIN_MONOID_FP64, max_monoid{}, GrB_MAX_FP64, "min");
  masked_sweep<V, I>(max_monoid{}, GrB_MAX_MONOID_FP64, min_monoid{}, GrB_MIN_FP64, "max");
}

TEST(reduce, wrong_output_length_is_named)
{
  const auto a = random_csr<float, std::int32_t>({.rows = 10, .cols = 8, .seed = 102});
  std::vector<float> out(10);
  expect_throw_with<dimension_mismatch>(
      [&] { reduce_cols(host_resources{}, a.view(), std::span<float>(out), plus_monoid{}); },
      "spira::reduce_cols: out has 10 entries but A has 8 columns");
  const auto w = vector_operand<float, std::int32_t>(8, 106, false);
  expect_throw_with<dimension_mismatch>(
      [&] {
        (void)reduce_rows(host_resources{}, std::optional(w.view()), std::nullopt, no_accumulator{},
                          plus_monoid{}, a.view());
      },
      "spira::reduce_rows: w has size 8 but A has 10 rows");
}

}  // namespace
}  // namespace spira::test
