// SuiteSparse:GraphBLAS as a test oracle: its library started once per test binary, spira CSR
// matrices converted to GrB_Matrix (FP64, or BOOL for the logical semirings) and back.
#pragma once

#include <spira/matrix.hpp>

#include <gtest/gtest.h>

extern "C" {
#include <GraphBLAS.h>
}

#include <algorithm>
#include <cstdint>
#include <memory>
#include <tuple>
#include <vector>

namespace spira::test {

#define SPIRA_GRB_OK(call) ASSERT_EQ((call), GrB_SUCCESS) << #call

/// GrB_init before the tests of the binary, GrB_finalize after them.
class graphblas_env : public ::testing::Environment {
 public:
  void SetUp() override { ASSERT_EQ(GrB_init(GrB_NONBLOCKING), GrB_SUCCESS); }
  void TearDown() override { GrB_finalize(); }
};

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

/// m as a new GrB_Matrix of `type` (GrB_FP64 or GrB_BOOL: nonzero is true).
template <class V, class I>
void to_graphblas(csr_view<V, I> m, GrB_Type type, GrB_Matrix* out)
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
inline void from_graphblas(GrB_Matrix m, GrB_Type type,
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

}  // namespace spira::test
