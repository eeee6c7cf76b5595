// select_k benchmark: times spira::select_k on the CUDA backend for the cases given on stdin and
// prints one JSON object per line. bench/select_k/select_k.py drives it, runs torch.topk on the
// same shapes in the same session, and writes the results file.
//
// stdin, one case per line:   <rows> <length> <k> <algo: auto|binary_search|radix> [dist] [flags]
//   dist: uniform (default), normal, narrow (RadiK's adversarial: all keys share their top digits)
//   flags: "resident" (one input that is not rotated, so that an input that fits in L2 stays
//          there, as the CUB harness times it) and "int32" (int32 indices instead of int64)
// special lines:              copy            -> device-to-device copy bandwidth
//                             hitrate <rows> <length> <k> <max_iter>
//                                             -> time and hit rate of the approximate max_iter mode
//                             csr <k> <algo> <in.npz> <out.npz | ->
//                                             -> the k smallest of every row of a CSR read from a
//                                                scipy .npz (float32 values, int32 columns), n x k
//                                                output, unsorted; the output of one more call is
//                                                written to out.npz ("values" float32, "indices"
//                                                int32, rows x k) for the driver's check. The last
//                                                file read stays on the device for the next line.
//
// select_k_bench --check FILE.npz reads FILE as the csr lines do, prints its shape, degrees and
// checksums as one JSON object and exits without touching the GPU (exit status 1 on a bad file).
#include "common/cuda_timing.cuh"
#include "common/json_escape.hpp"

#include <spira/convert.hpp>
#include <spira/cuda/error.cuh>
#include <spira/io.hpp>
#include <spira/select_k.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

__global__ void fill_kernel(float* out, std::int64_t n, std::uint64_t seed, int dist)
{
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) {
    return;
  }
  std::uint64_t x = (static_cast<std::uint64_t>(i) + 1) * 0x9e3779b97f4a7c15ull ^ seed;
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  const float u = static_cast<float>(x >> 40) * (1.0f / 16777216.0f);  // [0, 1)
  if (dist == 1) {
    const float v = static_cast<float>((x >> 8) & 0xffffff) * (1.0f / 16777216.0f) + 1e-7f;
    out[i] = sqrtf(-2.0f * logf(v)) * cospif(2.0f * u);
  } else if (dist == 2) {
    out[i] = 128.0f + u / 64.0f;
  } else {
    out[i] = u;
  }
}

using spira::bench::json_escape;
using spira::bench::median_ms;
using spira::bench::print_copy_bandwidth;

spira::select_algo parse_algo(const std::string& s)
{
  if (s == "binary_search") {
    return spira::select_algo::binary_search;
  }
  if (s == "radix") {
    return spira::select_algo::radix;
  }
  return spira::select_algo::automatic;
}

int parse_dist(const std::string& s)
{
  return s == "normal" ? 1 : s == "narrow" ? 2 : 0;
}

/// Enough input copies that a rotation over them does not fit in L2.
std::int64_t copies_for(std::int64_t bytes)
{
  const std::int64_t l2_twice = 2ll * 60 * 1024 * 1024;
  return std::max<std::int64_t>(1, std::min<std::int64_t>(16, (l2_twice + bytes - 1) / bytes));
}

const char* resolved_name(spira::select_algo algo, std::int64_t rows, std::int64_t len,
                          std::int64_t k, int max_iter)
{
  if (algo == spira::select_algo::automatic) {
    algo = max_iter > 0 ? spira::select_algo::binary_search
                        : spira::choose_select_algo(rows, len, k, spira::select_dtype::f32);
  }
  return algo == spira::select_algo::binary_search ? "binary_search" : "radix";
}

/// How a case is timed beside its shape (the flags of a case line).
struct case_flags {
  bool resident = false;  // one input, not rotated
  bool int32 = false;     // int32 indices
};

template <class IndexT>
void run_case(std::int64_t rows, std::int64_t len, std::int64_t k, const std::string& algo_name,
              const std::string& dist_name, int max_iter, case_flags flags)
{
  spira::cuda_resources res{};
  const std::int64_t n = rows * len;
  const std::int64_t copies = flags.resident ? 1 : copies_for(n * std::int64_t(sizeof(float)));
  spira::buffer<float> in(res, n * copies, "bench input");
  const std::int64_t blocks = (n * copies + 255) / 256;
  fill_kernel<<<static_cast<unsigned>(blocks), 256>>>(in.data(), n * copies, 12345 + len,
                                                      parse_dist(dist_name));
  SPIRA_CHECK_LAUNCH();
  spira::buffer<float> vals(res, rows * k, "bench values");
  spira::buffer<IndexT> idx(res, rows * k, "bench indices");
  spira::select_params params;
  params.algo = parse_algo(algo_name);
  if (max_iter > 0) {
    params.max_iter = max_iter;
  }
  const auto dev = spira::memory_space::device;
  auto call = [&](int rep) {
    const float* src = in.data() + (rep % copies) * n;
    spira::select_k<float, IndexT>(res, spira::dense_view<const float>{rows, len, len, src, dev}, k,
                                   spira::select_order::largest,
                                   spira::dense_view<float>{rows, k, k, vals.data(), dev},
                                   spira::dense_view<IndexT>{rows, k, k, idx.data(), dev}, params);
  };
  const int reps = n >= (1ll << 26) ? 10 : 50;
  const double ms = median_ms(call, reps);
  double hit = -1;
  if (max_iter > 0) {  // fraction of the approximate selection that is in the exact top-k
    call(0);
    std::vector<IndexT> approx = spira::to_host_vector(idx);
    params.max_iter.reset();
    call(0);
    std::vector<IndexT> exact = spira::to_host_vector(idx);
    std::int64_t hits = 0;
    for (std::int64_t r = 0; r < rows; ++r) {  // both lists are sorted by index
      auto a = approx.begin() + r * k;
      auto e = exact.begin() + r * k;
      std::vector<IndexT> common;
      std::set_intersection(a, a + k, e, e + k, std::back_inserter(common));
      hits += std::int64_t(common.size());
    }
    hit = double(hits) / double(rows * k);
  }
  const double bytes = double(n) * 4 + double(rows * k) * double(4 + sizeof(IndexT));
  std::printf(
      "{\"kind\": \"select_k\", \"rows\": %lld, \"length\": %lld, \"k\": %lld, "
      "\"algo\": \"%s\", \"dist\": \"%s\", \"max_iter\": %d, \"ms\": %.6f, "
      "\"bytes\": %.0f, \"hit_rate\": %.6f, \"resolved_algo\": \"%s\", \"resident\": %s, "
      "\"index\": \"%s\"}\n",
      (long long)rows, (long long)len, (long long)k, algo_name.c_str(), dist_name.c_str(), max_iter,
      ms, bytes, hit, resolved_name(params.algo, rows, len, k, max_iter),
      flags.resident ? "true" : "false", sizeof(IndexT) == 4 ? "int32" : "int64");
  std::fflush(stdout);
}

using csr_f32 = spira::csr_matrix<float, std::int32_t>;

/// Shape, degrees and checksums of a host CSR (what --check prints, and what a csr case reports so
/// that the driver can compare it with the file it wrote).
struct csr_summary {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  std::int64_t min_degree = 0, max_degree = 0, empty_rows = 0;
  std::int64_t nonfinite_values = 0;
  long double col_sum = 0, finite_value_sum = 0;  ///< in stored order
};

csr_summary summarize(const csr_f32& m)
{
  csr_summary s;
  s.rows = m.rows();
  s.cols = m.cols();
  s.nnz = m.nnz();
  s.min_degree = s.rows > 0 ? s.nnz : 0;
  for (std::int64_t i = 0; i < s.rows; ++i) {
    const std::int64_t d = m.row_ptr()[i + 1] - m.row_ptr()[i];
    s.min_degree = std::min(s.min_degree, d);
    s.max_degree = std::max(s.max_degree, d);
    s.empty_rows += d == 0 ? 1 : 0;
  }
  for (std::int64_t e = 0; e < s.nnz; ++e) {
    s.col_sum += m.col_idx()[e];
    if (std::isfinite(m.values()[e])) {
      s.finite_value_sum += m.values()[e];
    } else {
      ++s.nonfinite_values;
    }
  }
  return s;
}

std::string summary_json(const csr_summary& s)
{
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "\"rows\": %lld, \"cols\": %lld, \"nnz\": %lld, \"min_degree\": %lld, "
                "\"max_degree\": %lld, \"empty_rows\": %lld, \"col_sum\": %.0Lf, "
                "\"finite_value_sum\": %.12Le, \"nonfinite_values\": %lld",
                (long long)s.rows, (long long)s.cols, (long long)s.nnz, (long long)s.min_degree,
                (long long)s.max_degree, (long long)s.empty_rows, s.col_sum, s.finite_value_sum,
                (long long)s.nonfinite_values);
  return buf;
}

/// The CSR of the last csr line, on the device in enough copies that a rotation leaves L2.
struct csr_input {
  std::string path;
  csr_summary summary;
  std::vector<csr_f32> copies;
};

void run_csr(csr_input& input, std::int64_t k, const std::string& algo_name,
             const std::string& in_path, const std::string& out_path)
{
  spira::cuda_resources res{};
  if (input.path != in_path) {
    input = {};
    const csr_f32 host = spira::io::read_npz<float, std::int32_t>(in_path);
    input.summary = summarize(host);
    const std::int64_t bytes = host.nnz() * std::int64_t(sizeof(float) + sizeof(std::int32_t)) +
                               (host.rows() + 1) * std::int64_t(sizeof(spira::offset_t));
    const std::int64_t copies = copies_for(std::max<std::int64_t>(bytes, 1));
    for (std::int64_t c = 0; c < copies; ++c) {
      input.copies.push_back(spira::to_device(res, host.view()));
    }
    input.path = in_path;
  }
  const csr_summary& s = input.summary;
  const std::int64_t copies = std::int64_t(input.copies.size());
  spira::buffer<float> vals(res, s.rows * k, "bench values");
  spira::buffer<std::int32_t> idx(res, s.rows * k, "bench indices");
  spira::select_params params;
  params.algo = parse_algo(algo_name);
  const auto dev = spira::memory_space::device;
  auto call = [&](int rep) {
    spira::select_k<float, std::int32_t>(
        res, input.copies[rep % copies].view(), k, spira::select_order::smallest,
        spira::dense_view<float>{s.rows, k, k, vals.data(), dev},
        spira::dense_view<std::int32_t>{s.rows, k, k, idx.data(), dev}, params);
  };
  const int reps = s.nnz >= (1ll << 26) ? 20 : 50;
  const double ms = median_ms(call, reps);
  if (out_path != "-") {
    call(0);
    SPIRA_CUDA_TRY(cudaDeviceSynchronize());
    const std::vector<float> hv = spira::to_host_vector(vals);
    const std::vector<std::int32_t> hi = spira::to_host_vector(idx);
    const auto host = spira::memory_space::host;
    using spira::io::npz_entry;
    const npz_entry entries[] = {
        npz_entry::of<float>("values",
                             spira::dense_view<const float>{s.rows, k, k, hv.data(), host}),
        npz_entry::of<std::int32_t>(
            "indices", spira::dense_view<const std::int32_t>{s.rows, k, k, hi.data(), host})};
    spira::io::write_npz(out_path, std::span<const spira::io::npz_entry>(entries));
  }
  spira::select_algo resolved = params.algo;
  if (resolved == spira::select_algo::automatic) {
    resolved = spira::choose_select_algo(s.rows, s.max_degree, k, spira::select_dtype::f32);
    if (resolved == spira::select_algo::delegate) {
      resolved = spira::select_algo::radix;
    }
  }
  // Input read once (values, column indices, row pointers), output written once (values and the
  // int32 column indices this overload writes).
  const double bytes =
      double(s.nnz) * (4 + 4) + double(s.rows + 1) * 8 + double(s.rows * k) * (4 + 4);
  std::printf(
      "{\"kind\": \"select_k_csr\", \"file\": \"%s\", %s, \"k\": %lld, \"algo\": \"%s\", "
      "\"resolved_algo\": \"%s\", \"order\": \"smallest\", \"ms\": %.6f, "
      "\"bytes\": %.0f, \"copies\": %lld, \"reps\": %d}\n",
      json_escape(in_path).c_str(), summary_json(s).c_str(), (long long)k, algo_name.c_str(),
      resolved == spira::select_algo::binary_search ? "binary_search" : "radix", ms, bytes,
      (long long)copies, reps);
  std::fflush(stdout);
}

int check_file(const char* path)
{
  try {
    const csr_f32 host = spira::io::read_npz<float, std::int32_t>(path);
    std::printf("{\"kind\": \"csr_check\", \"file\": \"%s\", %s}\n", json_escape(path).c_str(),
                summary_json(summarize(host)).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "select_k_bench --check: %s\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv)
{
  if (argc == 3 && std::strcmp(argv[1], "--check") == 0) {
    return check_file(argv[2]);
  }
  if (argc != 1) {
    std::fprintf(stderr,
                 "usage: select_k_bench            (cases on stdin: bench/select_k/select_k.cu)\n"
                 "       select_k_bench --check FILE.npz\n");
    return 2;
  }
  csr_input csr;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream is(line);
    std::string first;
    if (!(is >> first)) {
      continue;
    }
    try {
      if (first == "copy") {
        print_copy_bandwidth();
      } else if (first == "csr") {
        long long k = 0;
        std::string algo, in_path, out_path;
        if (!(is >> k >> algo >> in_path >> out_path)) {
          throw std::runtime_error("expected: csr <k> <algo> <in.npz> <out.npz | ->");
        }
        run_csr(csr, k, algo, in_path, out_path);
      } else if (first == "hitrate") {
        long long rows, len, k;
        int it;
        is >> rows >> len >> k >> it;
        run_case<std::int64_t>(rows, len, k, "binary_search", "uniform", it, case_flags{});
      } else {
        long long len, k;
        std::string algo = "auto", dist = "uniform";
        is >> len >> k >> algo >> dist;
        case_flags flags;
        for (std::string flag; is >> flag;) {
          if (flag == "resident") {
            flags.resident = true;
          } else if (flag == "int32") {
            flags.int32 = true;
          } else {
            throw std::runtime_error("unknown flag '" + flag + "' (resident, int32)");
          }
        }
        if (flags.int32) {
          run_case<std::int32_t>(std::stoll(first), len, k, algo, dist, 0, flags);
        } else {
          run_case<std::int64_t>(std::stoll(first), len, k, algo, dist, 0, flags);
        }
      }
    } catch (const std::exception& e) {
      std::printf("{\"kind\": \"error\", \"case\": \"%s\", \"what\": \"%s\"}\n",
                  json_escape(line).c_str(), json_escape(e.what()).c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}
