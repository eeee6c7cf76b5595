// SuiteSparse:GraphBLAS as a test oracle: its library started once per test binary, spira CSR
// matrices converted to GrB_Matrix (FP64, or BOOL for the logical semirings) and back.
#pragma once

#include "support/oracle.hpp"
#include "support/sweep.hpp"

#include <semirings/graphblas.hpp>
#include <spira/descriptor.hpp>
#include <spira/matrix.hpp>
#include <spira/semiring.hpp>
#include <spira/vector.hpp>

#include <gtest/gtest.h>

extern "C" {
#include <GraphBLAS.h>
}

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace spira::test {

#define SPIRA_GRB_OK(call) ASSERT_EQ((call), GrB_SUCCESS) << #call

/// GrB_init before the tests of the binary, GrB_finalize after them.
class graphblas_env : public ::testing::Environment {
 public:
  void SetUp() override { ASSERT_EQ(GrB_init(GrB_NONBLOCKING), GrB_SUCCESS); }
  void TearDown() override { GrB_finalize(); }
};

/// m as a new GrB_Matrix of `type` (GrB_FP64, GrB_FP32 or GrB_BOOL: nonzero is true).
template <class V, class I>
void make_grb(csr_view<V, I> m, GrB_Type type, GrB_Matrix* out)
{
  std::vector<GrB_Index> r, c;
  std::vector<double> x;
  for (const auto& [i, j, v] : entries_of(m)) {
    r.push_back(GrB_Index(i));
    c.push_back(GrB_Index(j));
    x.push_back(v);
  }
  SPIRA_GRB_OK(GrB_Matrix_new(out, type, GrB_Index(m.rows), GrB_Index(m.cols)));
  if (type == GrB_BOOL) {
    std::unique_ptr<bool[]> xb(new bool[x.size()]);
    for (std::size_t k = 0; k < x.size(); ++k) {
      xb[k] = x[k] != 0;
    }
    SPIRA_GRB_OK(
        GrB_Matrix_build_BOOL(*out, r.data(), c.data(), xb.get(), GrB_Index(x.size()), GrB_LOR));
  } else {
    SPIRA_GRB_OK(GrB_Matrix_build_FP64(*out, r.data(), c.data(), x.data(), GrB_Index(x.size()),
                                       GrB_PLUS_FP64));
  }
}

/// The entries of a GrB_Matrix of `type` as (row, column, value) tuples, row-major.
inline void grb_entries(GrB_Matrix m, GrB_Type type,
                        std::vector<std::tuple<std::int64_t, std::int64_t, double>>* out)
{
  GrB_Index nvals = 0;
  SPIRA_GRB_OK(GrB_Matrix_nvals(&nvals, m));
  std::vector<GrB_Index> r(nvals), c(nvals);
  std::vector<double> x(nvals);
  if (type == GrB_BOOL) {
    std::unique_ptr<bool[]> xb(new bool[nvals]);
    SPIRA_GRB_OK(GrB_Matrix_extractTuples_BOOL(r.data(), c.data(), xb.get(), &nvals, m));
    for (GrB_Index k = 0; k < nvals; ++k) {
      x[k] = xb[k] ? 1.0 : 0.0;
    }
  } else {
    SPIRA_GRB_OK(GrB_Matrix_extractTuples_FP64(r.data(), c.data(), x.data(), &nvals, m));
  }
  out->clear();
  for (GrB_Index k = 0; k < nvals; ++k) {
    out->emplace_back(std::int64_t(r[k]), std::int64_t(c[k]), x[k]);
  }
  std::sort(out->begin(), out->end());
}

/// v as a new GrB_Vector of `type` (GrB_FP64, GrB_FP32 or GrB_BOOL: nonzero is true).
template <class V, class I>
void make_grb(sparse_vector_view<V, I> v, GrB_Type type, GrB_Vector* out)
{
  std::vector<GrB_Index> idx;
  std::vector<double> x;
  for (const auto& [i, value] : entries_of(v)) {
    idx.push_back(GrB_Index(i));
    x.push_back(value);
  }
  SPIRA_GRB_OK(GrB_Vector_new(out, type, GrB_Index(v.size)));
  if (type == GrB_BOOL) {
    std::unique_ptr<bool[]> xb(new bool[x.size()]);
    for (std::size_t k = 0; k < x.size(); ++k) {
      xb[k] = x[k] != 0;
    }
    SPIRA_GRB_OK(GrB_Vector_build_BOOL(*out, idx.data(), xb.get(), GrB_Index(x.size()), GrB_LOR));
  } else {
    SPIRA_GRB_OK(
        GrB_Vector_build_FP64(*out, idx.data(), x.data(), GrB_Index(x.size()), GrB_PLUS_FP64));
  }
}

/// The entries of a GrB_Vector of `type`, by index.
inline void grb_entries(GrB_Vector v, GrB_Type type, vector_entries* out)
{
  GrB_Index nvals = 0;
  SPIRA_GRB_OK(GrB_Vector_nvals(&nvals, v));
  std::vector<GrB_Index> idx(nvals);
  std::vector<double> x(nvals);
  if (type == GrB_BOOL) {
    std::unique_ptr<bool[]> xb(new bool[nvals]);
    SPIRA_GRB_OK(GrB_Vector_extractTuples_BOOL(idx.data(), xb.get(), &nvals, v));
    for (GrB_Index k = 0; k < nvals; ++k) {
      x[k] = xb[k] ? 1.0 : 0.0;
    }
  } else {
    SPIRA_GRB_OK(GrB_Vector_extractTuples_FP64(idx.data(), x.data(), &nvals, v));
  }
  out->clear();
  for (GrB_Index k = 0; k < nvals; ++k) {
    out->emplace_back(std::int64_t(idx[k]), x[k]);
  }
  std::sort(out->begin(), out->end());
}

/// The GraphBLAS side of a case: C (given or a new empty matrix of `rows` x `cols`), the mask
/// (FP64: a valued mask's 0 is false, or null) and the descriptor. Free them with grb_free.
struct grb_case {
  GrB_Matrix c = nullptr;
  GrB_Matrix mask = nullptr;
  GrB_Descriptor desc = nullptr;
};

/// The descriptor of a case: replace, the mask's kind and complement, and the transposes (op(A)
/// on input `a_input`: GrB_INP0, or GrB_INP1 where A is the second operand, as in vxm).
inline void grb_descriptor_of(const sweep_case& k, GrB_Desc_Field a_input, GrB_Descriptor* d)
{
  SPIRA_GRB_OK(GrB_Descriptor_new(d));
  if (k.replace) {
    SPIRA_GRB_OK(GrB_Descriptor_set(*d, GrB_OUTP, GrB_REPLACE));
  }
  if (k.mask == 2) {
    SPIRA_GRB_OK(GrB_Descriptor_set(*d, GrB_MASK, GrB_STRUCTURE));
  }
  if (k.complement) {
    SPIRA_GRB_OK(GrB_Descriptor_set(*d, GrB_MASK, GrB_COMP));
  }
  if (k.transpose_a) {
    SPIRA_GRB_OK(GrB_Descriptor_set(*d, a_input, GrB_TRAN));
  }
  if (k.transpose_b) {
    SPIRA_GRB_OK(GrB_Descriptor_set(*d, GrB_INP1, GrB_TRAN));
  }
}

/// The GraphBLAS side of a vector case: w (given or a new empty vector of w's size), the mask
/// (FP64) and the descriptor (op(A) on input `a_input`). Free them with grb_free.
struct grb_vector_case {
  GrB_Vector w = nullptr;
  GrB_Vector mask = nullptr;
  GrB_Descriptor desc = nullptr;
};

template <class V, class I>
void grb_vector_case_of(const sweep_case& k, GrB_Type type, sparse_vector_view<V, I> w,
                        sparse_vector_view<V, I> m, GrB_Desc_Field a_input, grb_vector_case* g)
{
  if (k.with_c) {
    make_grb(w, type, &g->w);
  } else {
    SPIRA_GRB_OK(GrB_Vector_new(&g->w, type, GrB_Index(w.size)));
  }
  if (k.mask != 0) {
    make_grb(m, GrB_FP64, &g->mask);
  }
  grb_descriptor_of(k, a_input, &g->desc);
}

inline void grb_free(grb_vector_case* g)
{
  GrB_Vector_free(&g->w);
  GrB_Vector_free(&g->mask);
  GrB_Descriptor_free(&g->desc);
}

template <class V, class I>
void grb_case_of(const sweep_case& k, GrB_Type type, csr_view<V, I> c, csr_view<V, I> m,
                 grb_case* g)
{
  if (k.with_c) {
    make_grb(c, type, &g->c);
  } else {
    SPIRA_GRB_OK(GrB_Matrix_new(&g->c, type, GrB_Index(c.rows), GrB_Index(c.cols)));
  }
  if (k.mask != 0) {
    make_grb(m, GrB_FP64, &g->mask);
  }
  grb_descriptor_of(k, GrB_INP0, &g->desc);
}

inline void grb_free(grb_case* g)
{
  GrB_Matrix_free(&g->c);
  GrB_Matrix_free(&g->mask);
  GrB_Descriptor_free(&g->desc);
}

/// fn(semiring, its GraphBLAS semiring, an accumulator, its GraphBLAS operator, logical, name) for
/// each built-in annihilating semiring; `logical`: GraphBLAS runs it on GrB_BOOL operands.
template <class Fn>
void for_each_builtin_semiring(const Fn& fn)
{
  using namespace spira::semirings;
  fn(plus_times{}, GrB_PLUS_TIMES_SEMIRING_FP64, plus_monoid{}, GrB_PLUS_FP64, false, "plus_times");
  fn(min_plus{}, GrB_MIN_PLUS_SEMIRING_FP64, min_monoid{}, GrB_MIN_FP64, false, "min_plus");
  fn(max_plus{}, GrB_MAX_PLUS_SEMIRING_FP64, max_monoid{}, GrB_MAX_FP64, false, "max_plus");
  fn(max_min{}, GrB_MAX_MIN_SEMIRING_FP64, plus_monoid{}, GrB_PLUS_FP64, false, "max_min");
  fn(plus_pair{}, GxB_PLUS_PAIR_FP64, plus_monoid{}, GrB_PLUS_FP64, false, "plus_pair");
  fn(any_pair{}, GxB_ANY_PAIR_FP64, max_monoid{}, GrB_MAX_FP64, false, "any_pair");
  fn(lor_land{}, GrB_LOR_LAND_SEMIRING_BOOL, lor_monoid{}, GrB_LOR, true, "lor_land");
}

/// For both orientations of A (op(A) is rows_a x cols_a) and every case of the sweep, with C and
/// the mask out_rows x out_cols (FP64): grb(k, g, ga) runs the GraphBLAS operation into g.c and
/// mine(k, a, c, mask) returns spira's; they must be equal entry for entry.
template <class V, class I, class Grb, class Mine>
void sweep_unary(std::int64_t rows_a, std::int64_t cols_a, std::int64_t out_rows,
                 std::int64_t out_cols, const Grb& grb, const Mine& mine, const char* what)
{
  for (const bool ta : {false, true}) {
    const auto a =
        ta ? operand<V, I>(cols_a, rows_a, 91, false) : operand<V, I>(rows_a, cols_a, 91, false);
    const auto c = operand<V, I>(out_rows, out_cols, 92, false);
    const auto mask = operand<V, I>(out_rows, out_cols, 93, false, true);
    for (int bits = 0; bits < sweep_case::count; ++bits) {
      const auto k = sweep_case::nth(bits, ta);
      GrB_Matrix ga = nullptr;
      grb_case g;
      make_grb(a.view(), GrB_FP64, &ga);
      grb_case_of(k, GrB_FP64, c.view(), mask.view(), &g);
      grb(k, g, ga);
      entry_list want;
      grb_entries(g.c, GrB_FP64, &want);
      GrB_Matrix_free(&ga);
      grb_free(&g);
      const auto got = mine(k, a.view(), c.view(), mask.view());
      ASSERT_EQ(entries_of(got.view()), want) << what << ": " << k.name();
    }
  }
}

}  // namespace spira::test
