// spira topk IN.npy -k K [--smallest] [--backend ...] -o OUT.npz
// The K largest (or smallest) values of every row: arrays `indices` (int64) and `values` (dtype of
// the input, float32 or float64), each row best first.
#include "args.hpp"
#include "commands.hpp"
#include "limits.hpp"

#include <spira/convert.hpp>
#include <spira/io.hpp>
#include <spira/select_k.hpp>

#include <chrono>
#include <cstdio>
#include <limits>

namespace spira::cli {

namespace {

template <class T>
void topk(const host_resources& host, const std::string& in_path, std::int64_t k,
          select_order order, backend be, const std::string& out_path)
{
  const dense_matrix<T> in = io::read_npy<T>(in_path);
  if (k > in.cols()) {
    throw usage_error(
        detail::concat("option '-k': ", k, " exceeds the row length ", in.cols(), " of ", in_path));
  }
  // The .npz: indices (int64) and values (T), rows x k, headers and directory under 1 KiB.
  check_free_space(out_path, 1024 + std::uint64_t(in.rows()) * std::uint64_t(k) * (8 + sizeof(T)));
  const auto t0 = std::chrono::steady_clock::now();
  dense_matrix<T> values(host, in.rows(), k);
  dense_matrix<std::int64_t> indices(host, in.rows(), k);
  const select_params params{.sorted = true};
  if (be == backend::cuda) {
    const cuda_resources res{};
    const dense_matrix<T> d_in = to_device(res, in.view());
    dense_matrix<T> d_values(res, in.rows(), k);
    dense_matrix<std::int64_t> d_indices(res, in.rows(), k);
    select_k<T, std::int64_t>(res, d_in.view(), k, order, d_values.view(), d_indices.view(),
                              params);
    copy(values.data(), memory_space::host, d_values.data(), memory_space::device,
         static_cast<std::size_t>(in.rows() * k), res);
    copy(indices.data(), memory_space::host, d_indices.data(), memory_space::device,
         static_cast<std::size_t>(in.rows() * k), res);
  } else {
    select_k<T, std::int64_t>(host, in.view(), k, order, values.view(), indices.view(), params);
  }
  const io::npz_entry entries[] = {
      io::npz_entry::of("indices", dense_view<const std::int64_t>(indices.view())),
      io::npz_entry::of("values", dense_view<const T>(values.view()))};
  io::write_npz(out_path, entries);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(summary_stream(out_path),
               "spira topk: %lld rows x %lld, k = %lld, %s, %s, %.3f s -> %s\n",
               (long long)in.rows(), (long long)in.cols(), (long long)k, to_string(order),
               be == backend::cuda ? "cuda" : "host", seconds, out_path.c_str());
}

}  // namespace

int run_topk(int argc, char** argv)
{
  const arguments args(
      argc, argv, 2,
      {{"k", 'k'}, {"smallest", 0, false}, {"backend", 0}, {"threads", 0}, {"output", 'o'}});
  if (args.positional().size() != 1) {
    throw usage_error("expects one input IN.npy (usage: spira topk IN.npy -k K -o OUT.npz)");
  }
  const std::string in_path = args.positional()[0];
  const auto k =
      args.integer("k", 1, std::numeric_limits<std::int32_t>::max(), "1 to the row length of IN");
  if (!k) {
    throw usage_error("missing required option '-k'");
  }
  const std::string out_path = args.output_path("output", ".npz");
  const host_resources host = host_resources_of(args);
  const select_order order = args.flag("smallest") ? select_order::smallest : select_order::largest;
  const backend be = resolve_backend(args.value("backend").value_or("auto"), true, "topk");
  const io::npy_header header = io::read_npy_header(in_path);
  if (header.dtype == io::npy_dtype::f4) {
    topk<float>(host, in_path, *k, order, be, out_path);
  } else if (header.dtype == io::npy_dtype::f8) {
    topk<double>(host, in_path, *k, order, be, out_path);
  } else {
    throw invalid_argument(
        detail::concat(in_path, ": topk reads float32 or float64 arrays, not ", header.descr));
  }
  return 0;
}

}  // namespace spira::cli
