// The README's C++ quick start: the exact 15-NN cosine graph of a sparse matrix file.
#include <spira/spira.hpp>

#include <cstdio>

int main(int argc, char** argv)
{
  if (argc != 2) {
    return std::fprintf(stderr, "usage: %s MATRIX_FILE\n", argv[0]), 2;
  }
  const auto x = spira::io::read_matrix<float, std::int32_t>(argv[1]);  // .mtx, .npz, svmlight...
  const auto g = spira::knn_graph(spira::host_resources{}, x.view(), std::nullopt,
                                  {.k = 15, .metric = spira::metric::cosine});
  std::printf("row 0's neighbours:");  // each point first, then the nearest, ties by index
  for (std::int64_t c = 0; c < 15; ++c) {
    std::printf(" %lld (%.3f)", (long long)g.indices.view()(0, c), g.distances.view()(0, c));
  }
  std::printf("\n");
}
