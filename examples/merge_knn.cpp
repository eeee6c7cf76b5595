// merge_knn: the k-NN graph of an index cut into two row blocks, each block searched on its own
// (as two tasks of a distributed run would), then merged. Prints the merged neighbours; exits
// non-zero when they differ from knn_graph of the whole index.
#include <spira/convert.hpp>
#include <spira/knn.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <span>
#include <utility>
#include <vector>

int main()
{
  const spira::host_resources res{};
  // Six points on a line (one column): 0, 1, 2, 3, 4, 5. Queries: 0.4 and 3.5.
  const auto index = spira::make_csr<float, std::int32_t>(
      res, 6, 1, std::vector<spira::offset_t>{0, 0, 1, 2, 3, 4, 5},
      std::vector<std::int32_t>{0, 0, 0, 0, 0}, std::vector<float>{1, 2, 3, 4, 5},
      spira::csr_check::canonical);
  const auto queries = spira::make_csr<float, std::int32_t>(
      res, 2, 1, std::vector<spira::offset_t>{0, 1, 2}, std::vector<std::int32_t>{0, 0},
      std::vector<float>{0.4f, 3.5f}, spira::csr_check::canonical);

  // [usage]
  // Block 0 holds index rows [0, 4), block 1 rows [4, 6): the blocks must not share a row.
  const std::int64_t k = 3;
  const std::int64_t first[] = {0, 4, 6};
  std::vector<spira::knn_result> parts;
  std::vector<spira::offset_t> ptr;
  for (int b = 0; b < 2; ++b) {
    const auto block = spira::row_slice(index.view(), first[b], first[b + 1], ptr);
    const std::int64_t kb = std::min(k, block.rows);  // knn_graph needs k <= rows of the block
    spira::knn_result part = spira::knn_graph(res, block, queries.view(), {.k = kb});
    // knn_graph numbers the rows of the block from 0: make the indices global.
    for (std::int64_t e = 0; e < part.indices.rows() * part.indices.cols(); ++e) {
      part.indices.data()[e] += first[b];
    }
    parts.push_back(std::move(part));
  }
  const spira::knn_result g = spira::merge_knn(res, std::span<const spira::knn_result>(parts), k,
                                               spira::select_order::smallest);
  // g: query 0.4 -> 0 (0.4), 1 (0.6), 2 (1.6); query 3.5 -> 3 (0.5), 4 (0.5), 2 (1.5)
  // [usage]

  const spira::knn_result whole = spira::knn_graph(res, index.view(), queries.view(), {.k = k});
  int bad = 0;
  for (std::int64_t i = 0; i < g.indices.rows(); ++i) {
    std::printf("query %lld:", static_cast<long long>(i));
    for (std::int64_t j = 0; j < k; ++j) {
      std::printf(" %lld (%.2f)", static_cast<long long>(g.indices.view()(i, j)),
                  g.distances.view()(i, j));
      bad += g.indices.view()(i, j) != whole.indices.view()(i, j) ||
             g.distances.view()(i, j) != whole.distances.view()(i, j);
    }
    std::printf("\n");
  }
  return bad == 0 ? 0 : 1;
}
