// mxm: triangle counting with a masked product. L is the strictly lower triangle of an undirected
// graph's adjacency matrix; C⟨L⟩ = L ⊕.⊗ Lᵀ with plus_pair counts, for each edge (i, j) of L, the
// common neighbours k < j of i and j: each triangle once. Prints the count; exits non-zero when it
// differs from the triangles counted by brute force over all vertex triples.
#include <spira/convert.hpp>
#include <spira/mxm.hpp>
#include <spira/semirings/graphblas.hpp>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <utility>
#include <vector>

int main()
{
  const spira::host_resources res{};
  // A small graph: two triangles sharing the edge 1-2 (0-1-2, 1-2-3), a square 3-4-5-6 and its
  // diagonal 3-5 (triangles 3-4-5 and 3-5-6), and a pendant vertex 7.
  const std::set<std::pair<int, int>> edges{{1, 0}, {2, 0}, {2, 1}, {3, 1}, {3, 2}, {4, 3},
                                            {5, 4}, {6, 5}, {6, 3}, {5, 3}, {7, 6}};
  const int n = 8;
  std::vector<spira::offset_t> ptr(n + 1, 0);
  std::vector<std::int32_t> cols;
  for (const auto& [i, j] : edges) {  // sorted by (i, j): rows in order, columns increasing
    ++ptr[i + 1];
    cols.push_back(j);
  }
  for (int i = 0; i < n; ++i) {
    ptr[i + 1] += ptr[i];
  }
  const auto lower = spira::make_csr<float, std::int32_t>(
      res, n, n, ptr, cols, std::vector<float>(cols.size(), 1.0f), spira::csr_check::canonical);

  // [usage]
  // C⟨L⟩ = L ⊕.⊗ Lᵀ (plus_pair: C[i,j] = |{k : L[i,k] and L[j,k] stored}|), only where L has an
  // edge (a structural mask); the sum of C is the number of triangles.
  const spira::descriptor o{.transpose_b = true, .structural_mask = true};
  const auto c = spira::mxm(res, std::nullopt, std::optional(lower.view()), spira::no_accumulator{},
                            spira::semirings::plus_pair{}, lower.view(), lower.view(), o);
  double triangles = 0;
  for (std::int64_t p = 0; p < c.nnz(); ++p) {
    triangles += c.values()[p];
  }
  // [usage]

  int brute = 0;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < a; ++b) {
      for (int d = 0; d < b; ++d) {
        brute += edges.count({a, b}) && edges.count({a, d}) && edges.count({b, d});
      }
    }
  }
  std::printf("triangles: %g (brute force: %d)\n", triangles, brute);
  return triangles == brute && brute == 4 ? 0 : 1;
}
