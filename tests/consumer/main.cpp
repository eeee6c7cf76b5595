// Uses the installed library: builds a small COO matrix, converts it, and checks the result.
#include <spira/spira.hpp>

#include <cstdio>

int main()
{
  const spira::host_resources res{};
  spira::coo_matrix<float, std::int32_t> coo(res, 2, 3, 3);
  const std::int32_t rows[] = {1, 0, 1};
  const std::int32_t cols[] = {2, 1, 0};
  const float vals[] = {3.f, 1.f, 2.f};
  std::copy(rows, rows + 3, coo.row_idx());
  std::copy(cols, cols + 3, coo.col_idx());
  std::copy(vals, vals + 3, coo.values());
  const auto csr = spira::coo_to_csr(res, coo.view());
  const bool ok = csr.row_ptr()[1] == 1 && csr.row_ptr()[2] == 3 && csr.col_idx()[1] == 0 &&
                  csr.values()[2] == 3.f;
  std::printf("spira %s consumer: %s (CUDA compiled: %s)\n", spira::version(),
              ok ? "ok" : "WRONG RESULT", spira::cuda_compiled() ? "yes" : "no");
  return ok ? 0 : 1;
}
