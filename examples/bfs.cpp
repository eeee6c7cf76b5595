// vxm: breadth-first search levels with a masked vector-matrix product. Each step's frontier is
// the frontier ⊕.⊗ A with lor_land, kept only where the complement of `visited` allows (a
// structural mask, replace): the neighbours not yet seen. Prints each vertex's level; exits
// non-zero when they differ from the levels of this small graph worked out by hand.
#include <spira/convert.hpp>
#include <spira/mxv.hpp>
#include <spira/semirings/graphblas.hpp>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <vector>

int main()
{
  const spira::host_resources res{};
  // A directed graph: 0 -> 1, 2; 1 -> 3; 2 -> 3, 4; 3 -> 5; 4 -> 5; 5 -> 0; 6 -> 0 (6 unreachable),
  // as (source, target) pairs made into a CSR adjacency matrix.
  const int n = 7;
  const std::vector<std::int32_t> from{0, 0, 1, 2, 2, 3, 4, 5, 6};
  const std::vector<std::int32_t> to{1, 2, 3, 3, 4, 5, 5, 0, 0};
  const std::vector<float> ones(from.size(), 1.0f);
  const auto a = spira::coo_to_csr(
      res, spira::coo_view<float, std::int32_t>{n, n, std::int64_t(from.size()), from.data(),
                                                to.data(), ones.data()});

  // [usage]
  // Levels from vertex 0: the frontier starts as {0}; each step keeps the neighbours of the
  // frontier that are not yet visited (complemented structural mask, replace).
  const std::vector<std::int32_t> source{0};
  const std::vector<float> one{1.0f};
  auto frontier = spira::make_sparse_vector<float, std::int32_t>(res, n, source, one);
  auto visited = spira::make_sparse_vector<float, std::int32_t>(res, n, source, one);
  std::vector<int> level(n, -1);
  level[0] = 0;
  const spira::descriptor unvisited{
      .structural_mask = true, .complement_mask = true, .replace = true};
  for (int depth = 1; frontier.nnz() > 0; ++depth) {
    frontier = spira::vxm(res, std::nullopt, std::optional(visited.view()), spira::no_accumulator{},
                          spira::semirings::lor_land{}, frontier.view(), a.view(), unvisited);
    for (std::int64_t p = 0; p < frontier.nnz(); ++p) {
      level[frontier.indices()[p]] = depth;
    }
    std::vector<std::int32_t> seen;
    for (int v = 0; v < n; ++v) {
      if (level[v] >= 0) {
        seen.push_back(v);
      }
    }
    visited = spira::make_sparse_vector<float, std::int32_t>(res, n, seen,
                                                             std::vector<float>(seen.size(), 1.0f));
  }
  // [usage]

  const std::vector<int> expected{0, 1, 1, 2, 2, 3, -1};
  for (int v = 0; v < n; ++v) {
    std::printf("vertex %d: level %d\n", v, level[v]);
  }
  return level == expected ? 0 : 1;
}
