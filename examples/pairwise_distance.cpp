// The compiled entry point for the built-in metrics: no templates, no nvcc needed.
// Prints the cosine and Manhattan distances between two small matrices; exits non-zero when a
// value differs from the one worked out by hand in the comments.
#include <spira/convert.hpp>
#include <spira/distance.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

int main(int argc, char** argv)
{
  const spira::host_resources res{};  // all hardware threads
  // [usage]
  // A = [[1, 0, 2], [0, 3, 0]], B = [[1, 0, 2], [4, 0, 0]]
  const auto a = spira::make_csr<double, std::int32_t>(
      res, 2, 3, std::vector<spira::offset_t>{0, 2, 3}, std::vector<std::int32_t>{0, 2, 1},
      std::vector<double>{1, 2, 3}, spira::csr_check::canonical);
  const auto b = spira::make_csr<double, std::int32_t>(
      res, 2, 3, std::vector<spira::offset_t>{0, 2, 3}, std::vector<std::int32_t>{0, 2, 0},
      std::vector<double>{1, 2, 4}, spira::csr_check::canonical);

  const spira::metric m = spira::metric_from_string(argc > 1 ? argv[1] : "manhattan");
  spira::dense_matrix<double> d(res, a.rows(), b.rows());
  spira::pairwise_distance(res, a.view(), b.view(), d.view(), {.metric = m});
  // [usage]

  // Manhattan by hand: |1-1|+|2-2| = 0, |1-4|+|2| = 5, 1+3+2 = 6, 4+3 = 7.
  // Cosine by hand: 0, 1 - 4/(sqrt(5)*4) = 1 - 1/sqrt(5), 1, 1.
  const double manhattan[4] = {0, 5, 6, 7};
  const double cosine[4] = {0, 1 - 1 / std::sqrt(5.0), 1, 1};
  const double* want = m == spira::metric::cosine      ? cosine
                       : m == spira::metric::manhattan ? manhattan
                                                       : nullptr;
  int bad = 0;
  for (int k = 0; k < 4; ++k) {
    std::printf("%s(A%d, B%d) = %.6f\n", spira::to_string(m), k / 2, k % 2, d.data()[k]);
    if (want != nullptr && std::abs(d.data()[k] - want[k]) > 1e-12) {
      ++bad;
    }
  }
  return bad == 0 ? 0 : 1;
}
