// GraphBLAS operations on the GPU: spira's CUDA mxm against cuSPARSE's SpGEMM (through its C API)
// on the same device data, in one process. Cases (--cases, default both):
//
//   aat        C = A ⊕.⊗ Aᵀ with plus_times (Aᵀ built once beforehand for both: cuSPARSE's SpGEMM
//              takes no transpose)
//   triangles  the triangles of the undirected graph of A's pattern: spira C⟨L⟩ = L ⊕.⊗ Lᵀ with
//              plus_pair, L (the strictly lower triangle) as a structural mask and Lᵀ through the
//              descriptor; cuSPARSE, which has no mask, the whole L Lᵀ (Lᵀ built beforehand) and
//              then the sum of its entries that L stores; both end with the count on the device
//   spmv       w = A ⊕.⊗ u with plus_times and u holding every entry (random values): spira's mxv
//              (a sparse vector out: the rows with an entry) against cusparseSpMV (dense x and y)
//   bfs        breadth-first levels from vertex 0 of the undirected graph of A's pattern: spira as
//              a GraphBLAS user writes it (frontier⟨¬visited, structural, replace⟩ = frontier
//              lor.land G by vxm, then visited⟨⟩ lor= frontier by vxm with the identity as the
//              accumulated product), against cuSPARSE's SpMV on a dense 0/1 frontier followed by
//              a kernel that keeps the unvisited entries (the level-synchronous SpMV BFS); both
//              record every vertex's level on the device, compared at the end
//
// Each case runs once per tool to warm up, then --repeats times alternately, each call timed on
// the wall clock to the end of its work (the result allocated, computed and complete); an spmv
// time is the mean of spmv_batch consecutive calls (one call takes tens of microseconds). The two
// results are compared: aat the entries' count and their sum (cuSPARSE accumulates in float, spira
// in double: relative difference under 1e-4), triangles the count. One JSON line per case.
//
// usage: bench_graphblas_gpu --file PATH [--transpose] [--label NAME] [--repeats 5]
//                            [--cases aat,triangles,spmv,bfs]
#include "common/alternate.hpp"
#include "common/cusparse_call.hpp"
#include "common/split.hpp"

#include <semirings/graphblas.hpp>
#include <spira/convert.hpp>
#include <spira/cuda/graphblas.cuh>
#include <spira/io.hpp>
#include <spira/vector.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace {

using V = float;
using I = std::int32_t;
using spira::bench::cuda_try;
using spira::bench::cusparse_try;
using spira::bench::stream_buffer;

__global__ void narrow_kernel(const spira::offset_t* in, std::int64_t n, int* out)
{
  for (std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += std::int64_t(gridDim.x) * blockDim.x) {
    out[k] = int(in[k]);
  }
}

/// sum += Σ values (as integers: triangle counts) over all entries, or over the entries (i, j)
/// that `mask` (sorted rows) also stores.
template <class Ptr, class Col>
__global__ void count_kernel(const Ptr* ptr, const Col* col, const float* val, std::int64_t rows,
                             const int* m_ptr, const int* m_col, unsigned long long* sum)
{
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    unsigned long long s = 0;
    for (Ptr p = ptr[i]; p < ptr[i + 1]; ++p) {
      bool in = m_ptr == nullptr;
      for (int lo = m_ptr ? m_ptr[i] : 0, hi = m_ptr ? m_ptr[i + 1] : 0; lo < hi;) {
        const int mid = lo + (hi - lo) / 2;
        if (m_col[mid] < col[p]) {
          lo = mid + 1;
        } else {
          hi = mid;
          in = m_col[mid] == col[p];
          if (in) {
            break;
          }
        }
      }
      s += in ? (unsigned long long)(val[p]) : 0ull;
    }
    atomicAdd(sum, s);
  }
}

/// level[i] = depth for the entries of a frontier (a sparse vector's indices).
__global__ void mark_level_kernel(const I* idx, std::int64_t n, int depth, int* level)
{
  for (std::int64_t p = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < n;
       p += std::int64_t(gridDim.x) * blockDim.x) {
    level[idx[p]] = depth;
  }
}

/// The SpMV BFS's step: the vertices y reaches that have no level yet get `depth` and form the
/// next dense frontier x; `count` counts them.
__global__ void next_frontier_kernel(const float* y, std::int64_t n, int depth, int* level,
                                     float* x, unsigned long long* count)
{
  unsigned long long c = 0;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const bool fresh = y[i] != 0.0f && level[i] < 0;
    if (fresh) {
      level[i] = depth;
    }
    x[i] = fresh ? 1.0f : 0.0f;
    c += fresh ? 1 : 0;
  }
  atomicAdd(count, c);
}

/// A device CSR with 32-bit row pointers, as cuSPARSE takes it.
struct csr32 {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  stream_buffer ptr, col, val;
};

csr32 narrow(const spira::csr_matrix<V, I>& m)
{
  csr32 o{
      m.rows(),
      m.cols(),
      m.nnz(),
      stream_buffer(std::size_t(m.rows() + 1) * sizeof(int), nullptr, "ptr"),
      stream_buffer(std::size_t(std::max<std::int64_t>(m.nnz(), 1)) * sizeof(int), nullptr, "col"),
      stream_buffer(std::size_t(std::max<std::int64_t>(m.nnz(), 1)) * sizeof(float), nullptr,
                    "val")};
  narrow_kernel<<<256, 256>>>(m.row_ptr(), m.rows() + 1, o.ptr.as<int>());
  cuda_try(
      cudaMemcpy(o.col.as<int>(), m.col_idx(), m.nnz() * sizeof(int), cudaMemcpyDeviceToDevice),
      "copy");
  cuda_try(
      cudaMemcpy(o.val.as<float>(), m.values(), m.nnz() * sizeof(float), cudaMemcpyDeviceToDevice),
      "copy");
  cuda_try(cudaDeviceSynchronize(), "narrow");
  return o;
}

/// C = A B with cuSPARSE SpGEMM: the default algorithm, or ALG3 (memory-bounded) when the default
/// runs out of resources.
class cusparse_spgemm {
 public:
  cusparse_spgemm() { cusparse_try(cusparseCreate(&handle_), "cusparseCreate"); }
  ~cusparse_spgemm() { cusparseDestroy(handle_); }
  cusparse_spgemm(const cusparse_spgemm&) = delete;
  cusparse_spgemm& operator=(const cusparse_spgemm&) = delete;

  csr32 multiply(const csr32& a, const csr32& b)
  {
    if (!alg3_) {
      try {
        return run(a, b, CUSPARSE_SPGEMM_DEFAULT);
      } catch (const spira::bench::cusparse_failure& e) {
        if (!e.resources()) {
          throw;
        }
        alg3_ = true;
      }
    }
    return run(a, b, CUSPARSE_SPGEMM_ALG3);
  }
  [[nodiscard]] const char* algorithm() const { return alg3_ ? "ALG3" : "DEFAULT"; }

 private:
  csr32 run(const csr32& a, const csr32& b, cusparseSpGEMMAlg_t alg)
  {
    cusparseSpMatDescr_t ma = nullptr, mb = nullptr, mc = nullptr;
    cusparseSpGEMMDescr_t g = nullptr;
    struct guard_t {
      cusparseSpMatDescr_t *a, *b, *c;
      cusparseSpGEMMDescr_t* g;
      ~guard_t()
      {
        for (auto* p : {a, b, c}) {
          if (*p) cusparseDestroySpMat(*p);
        }
        if (*g) cusparseSpGEMM_destroyDescr(*g);
      }
    } guard{&ma, &mb, &mc, &g};
    const auto make = [](cusparseSpMatDescr_t* d, const csr32& m) {
      cusparse_try(cusparseCreateCsr(d, m.rows, m.cols, m.nnz, m.ptr.as<int>(), m.col.as<int>(),
                                     m.val.as<float>(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
                   "cusparseCreateCsr");
    };
    make(&ma, a);
    make(&mb, b);
    cusparse_try(
        cusparseCreateCsr(&mc, a.rows, b.cols, 0, nullptr, nullptr, nullptr, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
        "cusparseCreateCsr(C)");
    cusparse_try(cusparseSpGEMM_createDescr(&g), "cusparseSpGEMM_createDescr");
    const float one = 1, zero = 0;
    const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    std::size_t b1 = 0, b2 = 0;
    cusparse_try(cusparseSpGEMM_workEstimation(handle_, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F,
                                               alg, g, &b1, nullptr),
                 "workEstimation");
    stream_buffer w1(b1, nullptr, "work estimation");
    cusparse_try(cusparseSpGEMM_workEstimation(handle_, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F,
                                               alg, g, &b1, w1.as<void>()),
                 "workEstimation");
    if (alg == CUSPARSE_SPGEMM_ALG3) {
      std::size_t b3 = 0;
      cusparse_try(cusparseSpGEMM_estimateMemory(handle_, op, op, &one, ma, mb, &zero, mc,
                                                 CUDA_R_32F, alg, g, 0.2f, &b3, nullptr, nullptr),
                   "estimateMemory");
      stream_buffer w3(b3, nullptr, "estimate memory");
      cusparse_try(cusparseSpGEMM_estimateMemory(handle_, op, op, &one, ma, mb, &zero, mc,
                                                 CUDA_R_32F, alg, g, 0.2f, &b3, w3.as<void>(), &b2),
                   "estimateMemory");
    } else {
      cusparse_try(cusparseSpGEMM_compute(handle_, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F, alg,
                                          g, &b2, nullptr),
                   "compute");
    }
    stream_buffer w2(b2, nullptr, "compute");
    cusparse_try(cusparseSpGEMM_compute(handle_, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F, alg,
                                        g, &b2, w2.as<void>()),
                 "compute");
    std::int64_t r = 0, c = 0, nnz = 0;
    cusparse_try(cusparseSpMatGetSize(mc, &r, &c, &nnz), "cusparseSpMatGetSize");
    csr32 out{
        r,
        c,
        nnz,
        stream_buffer(std::size_t(r + 1) * sizeof(int), nullptr, "C"),
        stream_buffer(std::size_t(std::max<std::int64_t>(nnz, 1)) * sizeof(int), nullptr, "C"),
        stream_buffer(std::size_t(std::max<std::int64_t>(nnz, 1)) * sizeof(float), nullptr, "C")};
    cusparse_try(
        cusparseCsrSetPointers(mc, out.ptr.as<int>(), out.col.as<int>(), out.val.as<float>()),
        "cusparseCsrSetPointers");
    cusparse_try(cusparseSpGEMM_copy(handle_, op, op, &one, ma, mb, &zero, mc, CUDA_R_32F, alg, g),
                 "cusparseSpGEMM_copy");
    return out;
  }

  cusparseHandle_t handle_ = nullptr;
  bool alg3_ = false;
};

double value_sum(const csr32& c)
{
  std::vector<float> v(std::size_t(c.nnz));
  cuda_try(
      cudaMemcpy(v.data(), c.val.as<float>(), v.size() * sizeof(float), cudaMemcpyDeviceToHost),
      "copy");
  double s = 0;
  for (const float x : v) s += x;
  return s;
}

/// The sum of C's values (triangle counts), or of those at the entries `mask` stores, on the
/// device.
template <class Ptr, class Col>
unsigned long long count(const Ptr* ptr, const Col* col, const float* val, std::int64_t rows,
                         const csr32* mask)
{
  stream_buffer sum(sizeof(unsigned long long), nullptr, "sum");
  cuda_try(cudaMemset(sum.as<void>(), 0, sizeof(unsigned long long)), "memset");
  count_kernel<<<1024, 128>>>(ptr, col, val, rows, mask ? mask->ptr.as<int>() : nullptr,
                              mask ? mask->col.as<int>() : nullptr, sum.as<unsigned long long>());
  unsigned long long h = 0;
  cuda_try(cudaMemcpy(&h, sum.as<void>(), sizeof(h), cudaMemcpyDeviceToHost), "copy");
  return h;
}

void report(const std::string& label, const char* name, const spira::csr_matrix<V, I>& a,
            const spira::bench::timing& t, bool same, const std::string& extra)
{
  std::printf(
      "{\"dataset\": \"%s\", \"case\": \"%s\", \"rows\": %lld, \"cols\": %lld, "
      "\"nnz\": %lld, \"spira_ms\": %.3f, \"cusparse_ms\": %.3f, \"spira_min_ms\": %.3f, "
      "\"cusparse_min_ms\": %.3f, \"same\": %s%s}\n",
      label.c_str(), name, (long long)a.rows(), (long long)a.cols(), (long long)a.nnz(),
      spira::bench::median(t.mine_ms), spira::bench::median(t.theirs_ms),
      *std::min_element(t.mine_ms.begin(), t.mine_ms.end()),
      *std::min_element(t.theirs_ms.begin(), t.theirs_ms.end()), same ? "true" : "false",
      extra.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv)
{
  std::string file, label, cases = "aat,triangles,spmv,bfs";
  bool transpose = false;
  int repeats = 5;
  constexpr int spmv_batch = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc && arg != "--transpose") {
      std::fprintf(stderr, "bench_graphblas_gpu: %s needs a value\n", arg.c_str());
      return 2;
    }
    if (arg == "--file")
      file = argv[++i];
    else if (arg == "--transpose")
      transpose = true;
    else if (arg == "--label")
      label = argv[++i];
    else if (arg == "--repeats")
      repeats = std::atoi(argv[++i]);
    else if (arg == "--cases")
      cases = argv[++i];
    else {
      std::fprintf(stderr, "bench_graphblas_gpu: unknown argument %s\n", arg.c_str());
      return 2;
    }
  }
  if (file.empty() || repeats < 1) {
    std::fprintf(stderr, "bench_graphblas_gpu: --file is required; --repeats >= 1\n");
    return 2;
  }
  try {
    const spira::host_resources host;
    const spira::cuda_resources res{};
    auto a = spira::io::read_matrix<V, I>(file);
    if (transpose) a = spira::transpose(host, a.view());
    if (label.empty()) label = file;
    cusparse_spgemm cs;
    for (const auto& c : spira::bench::split(cases)) {
      if (c == "aat") {
        const auto ad = spira::to_device(res, a.view());
        const auto atd = spira::transpose(res, ad.view());
        const auto a32 = narrow(ad), at32 = narrow(atd);
        std::optional<spira::csr_matrix<V, I>> mine;
        std::optional<csr32> theirs;
        const auto t = spira::bench::alternate(
            repeats,
            [&] {
              mine.reset();
              mine = spira::mxm(res, ad.view(), atd.view(), spira::semirings::plus_times{});
              spira::synchronize(res);
            },
            [&] {
              theirs.reset();
              theirs = cs.multiply(a32, at32);
              cuda_try(cudaDeviceSynchronize(), "SpGEMM");
            });
        const auto m32 = narrow(*mine);
        const double s1 = value_sum(m32), s2 = value_sum(*theirs);
        const bool same =
            mine->nnz() == theirs->nnz && std::abs(s1 - s2) <= 1e-4 * std::max(std::abs(s1), 1.0);
        report(label, "aat", a, t, same,
               ", \"result_nnz\": " + std::to_string(mine->nnz()) + ", \"cusparse_alg\": \"" +
                   cs.algorithm() + "\"");
      } else if (c == "triangles") {
        if (a.rows() != a.cols()) {
          std::fprintf(stderr, "bench_graphblas_gpu: triangles needs a square matrix\n");
          continue;
        }
        const auto l = spira::bench::lower_pattern(a);
        const auto ld = spira::to_device(res, l.view());
        const auto ltd = spira::transpose(res, ld.view());
        const auto l32 = narrow(ld), lt32 = narrow(ltd);
        unsigned long long mine = 0, theirs = 0;
        // As a GraphBLAS user writes it: Lᵀ through the descriptor (cuSPARSE gets Lᵀ built).
        const spira::descriptor o{.transpose_b = true, .structural_mask = true};
        const auto t = spira::bench::alternate(
            repeats,
            [&] {
              const auto cm =
                  spira::mxm(res, std::nullopt, std::optional(ld.view()), spira::no_accumulator{},
                             spira::semirings::plus_pair{}, ld.view(), ld.view(), o);
              mine = count(cm.row_ptr(), cm.col_idx(), cm.values(), cm.rows(), nullptr);
            },
            [&] {
              const auto cc = cs.multiply(l32, lt32);
              theirs = count(cc.ptr.as<int>(), cc.col.as<int>(), cc.val.as<float>(), cc.rows, &l32);
            });
        report(label, "triangles", a, t, mine == theirs,
               ", \"triangles\": " + std::to_string(mine) + ", \"cusparse_triangles\": " +
                   std::to_string(theirs) + ", \"cusparse_alg\": \"" + cs.algorithm() + "\"");
      } else if (c == "spmv") {
        const auto ad = spira::to_device(res, a.view());
        const auto a32 = narrow(ad);
        std::vector<I> idx(static_cast<std::size_t>(a.cols()));
        std::vector<V> x(idx.size());
        for (std::size_t j = 0; j < idx.size(); ++j) {
          idx[j] = I(j);
          x[j] = V(0.25 + double((j * 2654435761u) % 1000) / 1000.0);
        }
        spira::sparse_vector<V, I> u(res, a.cols(), a.cols());
        spira::copy(u.indices(), spira::memory_space::device, idx.data(), spira::memory_space::host,
                    idx.size(), res);
        spira::copy(u.values(), spira::memory_space::device, x.data(), spira::memory_space::host,
                    x.size(), res);
        stream_buffer xd(x.size() * sizeof(float), nullptr, "x");
        stream_buffer yd(std::size_t(std::max<std::int64_t>(a.rows(), 1)) * sizeof(float), nullptr,
                         "y");
        cuda_try(
            cudaMemcpy(xd.as<void>(), x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice),
            "x");
        cusparseHandle_t h = nullptr;
        cusparse_try(cusparseCreate(&h), "cusparseCreate");
        cusparseSpMatDescr_t ma = nullptr;
        cusparseDnVecDescr_t vx = nullptr, vy = nullptr;
        cusparse_try(cusparseCreateCsr(&ma, a32.rows, a32.cols, a32.nnz, a32.ptr.as<int>(),
                                       a32.col.as<int>(), a32.val.as<float>(), CUSPARSE_INDEX_32I,
                                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
                     "cusparseCreateCsr");
        cusparse_try(cusparseCreateDnVec(&vx, a.cols(), xd.as<float>(), CUDA_R_32F), "DnVec");
        cusparse_try(cusparseCreateDnVec(&vy, a.rows(), yd.as<float>(), CUDA_R_32F), "DnVec");
        const float one = 1, zero = 0;
        std::size_t bytes = 0;
        cusparse_try(
            cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, ma, vx, &zero, vy,
                                    CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes),
            "cusparseSpMV_bufferSize");
        stream_buffer work(bytes, nullptr, "SpMV");
        std::optional<spira::sparse_vector<V, I>> mine;
        const auto t = spira::bench::alternate(
            repeats,
            [&] {
              mine.reset();
              mine = spira::mxv(res, ad.view(), u.view(), spira::semirings::plus_times{});
              spira::synchronize(res);
            },
            [&] {
              cusparse_try(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, ma, vx, &zero,
                                        vy, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, work.as<void>()),
                           "cusparseSpMV");
              cuda_try(cudaDeviceSynchronize(), "SpMV");
            },
            spmv_batch);
        std::vector<float> y(static_cast<std::size_t>(a.rows())),
            mv(static_cast<std::size_t>(mine->nnz()));
        cuda_try(
            cudaMemcpy(y.data(), yd.as<void>(), y.size() * sizeof(float), cudaMemcpyDeviceToHost),
            "y");
        spira::copy(mv.data(), spira::memory_space::host, mine->values(),
                    spira::memory_space::device, mv.size(), res);
        double s1 = 0, s2 = 0;
        for (const float v : mv) s1 += v;
        for (const float v : y) s2 += v;
        cusparseDestroyDnVec(vx);
        cusparseDestroyDnVec(vy);
        cusparseDestroySpMat(ma);
        cusparseDestroy(h);
        report(label, "spmv", a, t, std::abs(s1 - s2) <= 1e-4 * std::max(std::abs(s2), 1.0),
               ", \"result_nnz\": " + std::to_string(mine->nnz()) + ", \"cusparse_alg\": \"SpMV\"");
      } else if (c == "bfs") {
        if (a.rows() != a.cols()) {
          std::fprintf(stderr, "bench_graphblas_gpu: bfs needs a square matrix\n");
          continue;
        }
        const auto g = spira::bench::graph_pattern(a, false);
        const std::int64_t n = g.rows();
        const auto gd = spira::to_device(res, g.view());
        const auto g32 = narrow(gd);
        spira::csr_matrix<V, I> eye(host, n, n, n);
        for (std::int64_t i = 0; i <= n; ++i) eye.row_ptr()[i] = i;
        for (std::int64_t i = 0; i < n; ++i) {
          eye.col_idx()[i] = I(i);
          eye.values()[i] = V(1);
        }
        const auto eye_d = spira::to_device(res, eye.view());
        const std::vector<I> source{0};
        const std::vector<V> one_v{1};
        const spira::descriptor unvisited{
            .structural_mask = true, .complement_mask = true, .replace = true};
        stream_buffer mine_level(std::size_t(n) * sizeof(int), nullptr, "levels");
        stream_buffer theirs_level(std::size_t(n) * sizeof(int), nullptr, "levels");
        stream_buffer x(std::size_t(n) * sizeof(float), nullptr, "x");
        stream_buffer y(std::size_t(n) * sizeof(float), nullptr, "y");
        stream_buffer fresh(sizeof(unsigned long long), nullptr, "count");
        const auto first_vector = [&] {
          const auto h = spira::make_sparse_vector<V, I>(host, n, source, one_v);
          spira::sparse_vector<V, I> d(res, n, 1);
          spira::copy(d.indices(), spira::memory_space::device, h.indices(),
                      spira::memory_space::host, 1, res);
          spira::copy(d.values(), spira::memory_space::device, h.values(),
                      spira::memory_space::host, 1, res);
          return d;
        };
        const auto start_levels = [&](stream_buffer& level) {
          cuda_try(cudaMemset(level.as<void>(), 0xFF, std::size_t(n) * sizeof(int)), "levels");
          const int zero_level = 0;
          cuda_try(cudaMemcpy(level.as<int>(), &zero_level, sizeof(int), cudaMemcpyHostToDevice),
                   "levels");
        };
        cusparseHandle_t h = nullptr;
        cusparse_try(cusparseCreate(&h), "cusparseCreate");
        cusparseSpMatDescr_t mg = nullptr;
        cusparseDnVecDescr_t vx = nullptr, vy = nullptr;
        cusparse_try(cusparseCreateCsr(&mg, n, n, g32.nnz, g32.ptr.as<int>(), g32.col.as<int>(),
                                       g32.val.as<float>(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                       CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
                     "cusparseCreateCsr");
        cusparse_try(cusparseCreateDnVec(&vx, n, x.as<float>(), CUDA_R_32F), "DnVec");
        cusparse_try(cusparseCreateDnVec(&vy, n, y.as<float>(), CUDA_R_32F), "DnVec");
        const float one = 1, zero = 0;
        std::size_t bytes = 0;
        cusparse_try(
            cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mg, vx, &zero, vy,
                                    CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes),
            "cusparseSpMV_bufferSize");
        stream_buffer work(bytes, nullptr, "SpMV");
        int levels = 0;
        const auto t = spira::bench::alternate(
            repeats,
            [&] {
              start_levels(mine_level);
              auto frontier = first_vector();
              auto visited = first_vector();
              int depth = 1;
              for (; frontier.nnz() > 0; ++depth) {
                frontier = spira::vxm(res, std::nullopt, std::optional(visited.view()),
                                      spira::no_accumulator{}, spira::semirings::lor_land{},
                                      frontier.view(), gd.view(), unvisited);
                if (frontier.nnz() == 0) break;
                mark_level_kernel<<<256, 256, 0, res.stream>>>(frontier.indices(), frontier.nnz(),
                                                               depth, mine_level.as<int>());
                visited = spira::vxm(res, std::optional(visited.view()), std::nullopt,
                                     spira::lor_monoid{}, spira::semirings::lor_land{},
                                     frontier.view(), eye_d.view());
              }
              spira::synchronize(res);
              levels = depth - 1;
            },
            [&] {
              start_levels(theirs_level);
              cuda_try(cudaMemset(x.as<void>(), 0, std::size_t(n) * sizeof(float)), "x");
              const float one_f = 1;
              cuda_try(cudaMemcpy(x.as<float>(), &one_f, sizeof(float), cudaMemcpyHostToDevice),
                       "x");
              for (int depth = 1;; ++depth) {
                cusparse_try(
                    cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mg, vx, &zero, vy,
                                 CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, work.as<void>()),
                    "cusparseSpMV");
                cuda_try(cudaMemset(fresh.as<void>(), 0, sizeof(unsigned long long)), "count");
                next_frontier_kernel<<<512, 256>>>(y.as<float>(), n, depth, theirs_level.as<int>(),
                                                   x.as<float>(), fresh.as<unsigned long long>());
                unsigned long long count = 0;
                cuda_try(
                    cudaMemcpy(&count, fresh.as<void>(), sizeof(count), cudaMemcpyDeviceToHost),
                    "count");
                if (count == 0) break;
              }
            });
        std::vector<int> l1(static_cast<std::size_t>(n)), l2(l1.size());
        cuda_try(cudaMemcpy(l1.data(), mine_level.as<void>(), l1.size() * sizeof(int),
                            cudaMemcpyDeviceToHost),
                 "levels");
        cuda_try(cudaMemcpy(l2.data(), theirs_level.as<void>(), l2.size() * sizeof(int),
                            cudaMemcpyDeviceToHost),
                 "levels");
        cusparseDestroyDnVec(vx);
        cusparseDestroyDnVec(vy);
        cusparseDestroySpMat(mg);
        cusparseDestroy(h);
        const auto reached = std::count_if(l1.begin(), l1.end(), [](int v) { return v >= 0; });
        report(label, "bfs", a, t, l1 == l2,
               ", \"levels\": " + std::to_string(levels) +
                   ", \"reached\": " + std::to_string(reached) + ", \"cusparse_alg\": \"SpMV\"");
      } else {
        std::fprintf(stderr, "bench_graphblas_gpu: unknown case %s\n", c.c_str());
        return 2;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_graphblas_gpu: %s\n", e.what());
    return 1;
  }
  return 0;
}
