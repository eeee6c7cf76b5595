// spira: the index-unary predicates of GraphBLAS select (GrB_TRIL, GrB_VALUEGT, ...), as callable
// structs with their thunk as a member, usable on the host and on the device (spira::select in
// spira/select.hpp and spira/cuda/graphblas.cuh).
#pragma once

#include <spira/config.hpp>

#include <cstdint>

namespace spira {

/// The index-unary predicates of GraphBLAS select (GrB_TRIL, GrB_TRIU, ... with their thunk).
namespace select_ops {
struct tril {  ///< col <= row + k (GrB_TRIL)
  std::int64_t k = 0;
  SPIRA_HD bool operator()(double, std::int64_t i, std::int64_t j) const { return j <= i + k; }
};
struct triu {  ///< col >= row + k (GrB_TRIU)
  std::int64_t k = 0;
  SPIRA_HD bool operator()(double, std::int64_t i, std::int64_t j) const { return j >= i + k; }
};
struct diag {  ///< col == row + k (GrB_DIAG)
  std::int64_t k = 0;
  SPIRA_HD bool operator()(double, std::int64_t i, std::int64_t j) const { return j == i + k; }
};
struct offdiag {  ///< col != row + k (GrB_OFFDIAG)
  std::int64_t k = 0;
  SPIRA_HD bool operator()(double, std::int64_t i, std::int64_t j) const { return j != i + k; }
};
struct row_le {  ///< row <= k (GrB_ROWLE)
  std::int64_t k = 0;
  SPIRA_HD bool operator()(double, std::int64_t i, std::int64_t) const { return i <= k; }
};
struct row_gt {  ///< row > k (GrB_ROWGT)
  std::int64_t k = 0;
  SPIRA_HD bool operator()(double, std::int64_t i, std::int64_t) const { return i > k; }
};
struct col_le {  ///< col <= k (GrB_COLLE)
  std::int64_t k = 0;
  SPIRA_HD bool operator()(double, std::int64_t, std::int64_t j) const { return j <= k; }
};
struct col_gt {  ///< col > k (GrB_COLGT)
  std::int64_t k = 0;
  SPIRA_HD bool operator()(double, std::int64_t, std::int64_t j) const { return j > k; }
};
struct value_eq {  ///< value == y (GrB_VALUEEQ)
  double y = 0;
  SPIRA_HD bool operator()(double x, std::int64_t, std::int64_t) const { return x == y; }
};
struct value_ne {  ///< value != y (GrB_VALUENE)
  double y = 0;
  SPIRA_HD bool operator()(double x, std::int64_t, std::int64_t) const { return x != y; }
};
struct value_gt {  ///< value > y (GrB_VALUEGT)
  double y = 0;
  SPIRA_HD bool operator()(double x, std::int64_t, std::int64_t) const { return x > y; }
};
struct value_ge {  ///< value >= y (GrB_VALUEGE)
  double y = 0;
  SPIRA_HD bool operator()(double x, std::int64_t, std::int64_t) const { return x >= y; }
};
struct value_lt {  ///< value < y (GrB_VALUELT)
  double y = 0;
  SPIRA_HD bool operator()(double x, std::int64_t, std::int64_t) const { return x < y; }
};
struct value_le {  ///< value <= y (GrB_VALUELE)
  double y = 0;
  SPIRA_HD bool operator()(double x, std::int64_t, std::int64_t) const { return x <= y; }
};
}  // namespace select_ops

}  // namespace spira
