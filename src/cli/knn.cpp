// spira knn INDEX [--query Q] -k K --metric M [--p P] [--exclude-self] [--backend ...] -o OUT.npz
// The exact k-NN graph: arrays `indices` (int64, n_q x k) and `distances` (float32, n_q x k), each
// row nearest first; with --graph MODE [--symmetrize] the n_q x n_index CSR matrix instead, as
// scipy.sparse.save_npz writes it, in the layout of sklearn.neighbors.kneighbors_graph.
// Progress on stderr when it is a terminal; a one-line summary at the end.
// --check-recall N recomputes N evenly spaced query rows by brute force and reports the recall.
#include "args.hpp"
#include "commands.hpp"
#include "limits.hpp"
#include "matrix_input.hpp"
#include "semirings/distances.hpp"

#include <spira/convert.hpp>
#include <spira/detail/knn_policy.hpp>
#include <spira/io.hpp>
#include <spira/knn.hpp>
#include <spira/ops.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace spira::cli {

namespace {

/// What -o receives: the arrays `indices` and `distances`, or (--graph) the graph as a CSR matrix.
struct knn_output {
  std::string path;
  std::optional<knn_graph_mode> graph;
  bool symmetrize = false;  ///< max(G, G^T) of the graph (the index against itself only)
};

/// `m` as scipy.sparse.save_npz(path, m, compressed=False) writes a csr_matrix: the members
/// indices, indptr, format (b"csr", a 0-d |S3 array), shape (int64) and data (float32), in scipy's
/// order. indices and indptr are int32 when the shape and nnz fit, as scipy chooses its index
/// dtype (scipy.sparse.load_npz reads either).
void write_csr_npz(const std::string& path, const csr_matrix<float, std::int64_t>& m)
{
  const auto nnz = static_cast<std::size_t>(m.nnz());
  const auto rows = static_cast<std::size_t>(m.rows());
  const std::int64_t shape[2] = {m.rows(), m.cols()};
  const std::span<const std::int64_t> idx(m.col_idx(), nnz);
  const std::span<const offset_t> ptr(m.row_ptr(), rows + 1);
  const auto write = [&](io::npz_entry indices, io::npz_entry indptr) {
    const io::npz_entry entries[] = {
        std::move(indices), std::move(indptr), io::npz_entry::of_bytes("format", "csr"),
        io::npz_entry::of("shape", std::span<const std::int64_t>(shape)),
        io::npz_entry::of("data", std::span<const float>(m.values(), nnz))};
    io::write_npz(path, entries);
  };
  const std::int64_t largest = std::max({m.rows(), m.cols(), m.nnz()});
  if (!detail::fits_index<std::int32_t>(largest)) {
    write(io::npz_entry::of("indices", idx), io::npz_entry::of("indptr", ptr));
    return;
  }
  const std::vector<std::int32_t> idx32(idx.begin(), idx.end());
  const std::vector<std::int32_t> ptr32(ptr.begin(), ptr.end());
  write(io::npz_entry::of("indices", std::span<const std::int32_t>(idx32)),
        io::npz_entry::of("indptr", std::span<const std::int32_t>(ptr32)));
}

/// Fraction of the neighbours of `sample` query rows that an independent brute force over every
/// index row confirms: each distance evaluated directly over the union of the two rows, in double
/// (spira::detail::pairwise_direct: no expansion, no NAMM correction, not the engine that built
/// the graph). A reported neighbour counts when its brute-force distance is at least as good as
/// the k-th best brute-force distance, so a neighbour that ties with the k-th (within float
/// rounding: 1e-6 relative) is as good as the one the brute force lists.
template <class ValueT, class IndexT>
double recall_on_sample(const host_resources& res, const csr_matrix<ValueT, IndexT>& index,
                        const csr_matrix<ValueT, IndexT>& queries, const knn_result& g,
                        const knn_params& params, std::int64_t sample, bool exclude_self)
{
  const std::int64_t n_q = queries.rows();
  const std::int64_t k = params.k;
  sample = std::min(sample, n_q);
  std::int64_t found = 0;
  std::vector<offset_t> ptr;
  for (std::int64_t s = 0; s < sample; ++s) {
    const std::int64_t row = s * n_q / sample;
    const csr_view<ValueT, IndexT> one = row_slice(queries.view(), row, row + 1, ptr);
    dense_matrix<ValueT> d(res, 1, index.rows());
    visit_metric(params.metric, params.p, [&](const auto& dist) {
      detail::pairwise_direct<std::decay_t<decltype(dist)>, double>(res, one, index.view(),
                                                                    d.view(), dist);
    });
    std::vector<std::int64_t> order(static_cast<std::size_t>(index.rows()));
    std::iota(order.begin(), order.end(), 0);
    const bool largest = is_similarity(params.metric);
    const ValueT* v = d.data();
    auto key = [&](std::int64_t j) {
      const double x = std::isnan(v[j]) ? INFINITY : (largest ? -v[j] : v[j]);
      return std::pair{x, j};
    };
    std::sort(order.begin(), order.end(), [&](auto x, auto y) { return key(x) < key(y); });
    if (exclude_self) {
      order.erase(std::find(order.begin(), order.end(), row));
    }
    const double kth = key(order[static_cast<std::size_t>(k - 1)]).first;
    const double bar = kth + 1e-6 * std::max(1.0, std::abs(kth));
    std::set<std::int64_t> seen;
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t idx = g.indices.view()(row, j);
      if (idx < 0 || idx >= index.rows() || (exclude_self && idx == row) ||
          !seen.insert(idx).second) {
        continue;
      }
      found += key(idx).first <= bar ? 1 : 0;
    }
  }
  return sample > 0 ? double(found) / double(sample * k) : 1.0;
}

/// The progress callback for a terminal: queries done, elapsed time and, once some are done, an
/// estimate of the rest (the elapsed time scaled by the queries left), on one rewritten line.
std::function<void(std::int64_t, std::int64_t)> progress_line(
    std::chrono::steady_clock::time_point t0)
{
  return [t0](std::int64_t done, std::int64_t total) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "\rspira knn: %lld / %lld queries (%3.0f%%), %.1f s elapsed",
                 (long long)done, (long long)total,
                 100.0 * double(done) / double(std::max<std::int64_t>(total, 1)), elapsed);
    if (done > 0 && done < total) {
      std::fprintf(stderr, ", about %.1f s left   ", elapsed * double(total - done) / double(done));
    } else {
      std::fputs("                  ", stderr);
    }
    std::fflush(stderr);
  };
}

template <class ValueT, class IndexT>
int knn(const host_resources& res, backend be, const csr_matrix<ValueT, IndexT>& index,
        const std::optional<csr_matrix<ValueT, IndexT>>& queries, knn_params params,
        const knn_output& out, std::int64_t check, const char* metric)
{
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto t0 = std::chrono::steady_clock::now();
  if (tty) {
    params.progress = progress_line(t0);
  }
  std::optional<csr_view<ValueT, IndexT>> qv;
  if (queries) {
    qv = queries->view();
  }
  const auto run = [&] {
    if (be == backend::host) {
      return knn_graph(res, index.view(), qv, params);
    }
    try {
      return knn_graph(cuda_resources{}, index.view(), qv, params);
    } catch (const out_of_memory& e) {
      // The CUDA tiles are planned inside the library (the device budget depends on what the
      // index takes there); its message names the C++ field, the CLI names the option.
      const bool budget = std::string(e.what()).find("memory_budget") != std::string::npos;
      if (params.memory_budget > 0 && budget) {
        throw usage_error(
            detail::concat("option '--memory-budget-mb': ", params.memory_budget >> 20,
                           " MiB is too small for the top-", params.k,
                           " lists of one query on the GPU; raise it"));
      }
      throw;
    }
  };
  const knn_result g = run();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (tty) {
    std::fputc('\n', stderr);
  }
  if (out.graph) {
    // scikit-learn's layout: each row's entries nearest first (symmetrize: columns increasing).
    auto csr = to_csr_graph(g, index.rows(), *out.graph, knn_graph_order::nearest_first);
    if (out.symmetrize) {
      csr = symmetrize(csr.view());
    }
    write_csr_npz(out.path, csr);
  } else {
    const io::npz_entry entries[] = {
        io::npz_entry::of("indices", dense_view<const std::int64_t>(g.indices.view())),
        io::npz_entry::of("distances", dense_view<const float>(g.distances.view()))};
    io::write_npz(out.path, entries);
  }
  std::FILE* summary = summary_stream(out.path);
  std::fprintf(summary, "spira knn: %lld queries x %lld index rows, k = %lld, %s, %s, %.3f s -> %s",
               (long long)g.indices.rows(), (long long)index.rows(), (long long)params.k, metric,
               be == backend::cuda ? "cuda" : "host", seconds, out.path.c_str());
  if (out.graph) {
    std::fprintf(summary, " (CSR graph, %s%s)", to_string(*out.graph),
                 out.symmetrize ? ", symmetrized" : "");
  }
  if (check > 0) {
    const double recall = recall_on_sample(res, index, queries ? *queries : index, g, params, check,
                                           params.exclude_self);
    std::fprintf(summary, ", recall vs brute force on %lld rows: %.4f",
                 (long long)std::min(check, g.indices.rows()), recall);
  }
  std::fputc('\n', summary);
  return 0;
}

/// The host's tiles under `budget` (what knn_graph will plan): a usage_error naming
/// --memory-budget-mb when not even one query's top-k lists fit, the warning when the tiles are so
/// small that the job would take much longer (limits.hpp).
void check_host_budget(const csr_matrix<double, std::int64_t>& index,
                       const std::optional<csr_matrix<double, std::int64_t>>& queries,
                       const knn_params& params, std::size_t budget)
{
  const csr_matrix<double, std::int64_t>& q = queries ? *queries : index;
  detail::knn_tiling t{};
  try {
    t = detail::plan_knn_tiles(budget, q.rows(), index.rows(), params.k, sizeof(double), params);
  } catch (const out_of_memory&) {
    throw usage_error(detail::concat("option '--memory-budget-mb': ", budget >> 20,
                                     " MiB cannot hold the top-", params.k,
                                     " lists of one query (about ",
                                     (3 * params.k * 16 + (1 << 20) - 1) >> 20, " MiB); raise it"));
  }
  warn_if_budget_slows("knn",
                       {.query_rows = q.rows(),
                        .index_rows = index.rows(),
                        .cols = index.cols(),
                        .query_nnz = q.nnz(),
                        .index_nnz = index.nnz(),
                        .query_tile = t.queries,
                        .index_tile = t.index},
                       budget);
}

}  // namespace

int run_knn(int argc, char** argv)
{
  const arguments args(argc, argv, 2,
                       {{"query", 'q'},
                        {"k", 'k'},
                        {"metric", 'm'},
                        {"p", 0},
                        {"exclude-self", 0, false},
                        {"backend", 0},
                        {"algo", 0},
                        {"strategy", 0},
                        {"memory-budget-mb", 0},
                        {"check-recall", 0},
                        {"threads", 0},
                        {"graph", 0},
                        {"symmetrize", 0, false},
                        {"output", 'o'}});
  if (args.positional().size() != 1) {
    throw usage_error("expects one INDEX file (usage: spira knn INDEX -k K --metric M -o OUT.npz)");
  }
  knn_params params;
  const auto k = args.integer("k", 1, std::int64_t{1} << 40, "1 to the rows of INDEX");
  if (!k) {
    throw usage_error("missing required option '-k'");
  }
  params.k = *k;
  const std::string metric_name = args.required("metric");
  params.metric = parse_metric(args);
  params.p = minkowski_p(args, params.metric);
  params.exclude_self = args.flag("exclude-self");
  if (params.exclude_self && args.value("query")) {
    throw usage_error(
        "--exclude-self applies when the index is queried against itself; it "
        "cannot be combined with --query");
  }
  // The budget given, or 0: the library's default (on the host the same as memory_budget(args),
  // on CUDA half the free device memory).
  params.memory_budget = args.value("memory-budget-mb") ? memory_budget(args) : 0;
  const std::int64_t check = args.integer("check-recall", 0, std::int64_t{1} << 30).value_or(0);
  const host_resources res = host_resources_of(args);
  knn_output out;
  out.path = args.output_path("output", ".npz");
  if (auto mode = args.value("graph")) {
    try {
      out.graph = knn_graph_mode_from_string(*mode);
    } catch (const invalid_argument& e) {
      throw usage_error(std::string("option '--graph': ") + e.what());
    }
  }
  out.symmetrize = args.flag("symmetrize");
  if (out.symmetrize && !out.graph) {
    throw usage_error(
        "option '--symmetrize' applies to the sparse graph: add --graph distance or "
        "--graph connectivity");
  }
  if (out.symmetrize && args.value("query")) {
    throw usage_error(
        "option '--symmetrize' needs the square graph of the index against itself; "
        "it cannot be combined with --query");
  }
  const backend be = resolve_backend(args.value("backend").value_or("auto"), true, "knn");
  for (const char* option : {"algo", "strategy"}) {
    if (args.value(option) && be != backend::cuda) {
      throw usage_error(detail::concat("option '--", option,
                                       "' selects how the CUDA backend works; it needs the CUDA "
                                       "backend"));
    }
  }
  if (auto a = args.value("algo")) {
    try {
      params.algo = *a == "auto" ? knn_algo::automatic : knn_algo_from_string(*a);
    } catch (const invalid_argument& e) {
      throw usage_error(std::string("option '--algo': ") + e.what());
    }
  }
  if (auto s = args.value("strategy")) {
    params.strategy = parse_strategy(*s);
    check_strategy(params.metric, params.strategy);
  }

  auto index = io::read_matrix<double, std::int64_t>(args.positional()[0]);
  std::optional<csr_matrix<double, std::int64_t>> queries;
  if (auto q = args.value("query")) {
    queries = io::read_matrix<double, std::int64_t>(*q);
    if (queries->cols() != index.cols()) {
      throw dimension_mismatch(detail::concat("--query ", *q, " has ", queries->cols(),
                                              " columns but the index has ", index.cols()));
    }
  }
  if (params.k > index.rows() - (params.exclude_self ? 1 : 0)) {
    throw usage_error(detail::concat("option '-k': ", params.k, " exceeds the ",
                                     index.rows() - (params.exclude_self ? 1 : 0),
                                     " available neighbours of ", args.positional()[0]));
  }
  // The .npz: two members of n_q x k (int64 and float32), headers and directory under 1 KiB; the
  // CSR graph at most as much (indices and data) plus n_q + 1 row pointers, twice the entries when
  // symmetrised.
  const std::uint64_t n_q = std::uint64_t(queries ? queries->rows() : index.rows());
  const std::uint64_t entries = n_q * std::uint64_t(params.k) * (out.symmetrize ? 2 : 1);
  check_free_space(out.path, 1024 + entries * 12 + (out.graph ? (n_q + 1) * 8 : 0));
  check_values_for_metric(index, args.positional()[0], params.metric);
  if (queries) {
    check_values_for_metric(*queries, *args.value("query"), params.metric);
  }
  if (be == backend::host) {
    check_host_budget(index, queries, params, memory_budget(args));
  }
  // The host computes in double; the GPU in float (its native precision for this engine) when every
  // value is exactly a float32, else in double (rounding the data would change the answer).
  auto run_as = [&]<class ValueT>(std::type_identity<ValueT>) {
    std::optional<csr_matrix<ValueT, std::int64_t>> qv;
    if (queries) {
      qv = cast_values<ValueT>(res, queries->view());
    }
    const auto iv = cast_values<ValueT>(res, index.view());
    if (detail::fits_index<std::int32_t>(index.cols())) {
      std::optional<csr_matrix<ValueT, std::int32_t>> q32;
      if (qv) {
        q32 = cast_indices<std::int32_t>(res, qv->view());
      }
      return knn(res, be, cast_indices<std::int32_t>(res, iv.view()), q32, params, out, check,
                 metric_name.c_str());
    }
    return knn(res, be, iv, qv, params, out, check, metric_name.c_str());
  };
  const bool float_exact =
      values_fit_float(index.view()) && (!queries || values_fit_float(queries->view()));
  return be == backend::cuda && float_exact ? run_as(std::type_identity<float>{})
                                            : run_as(std::type_identity<double>{});
}

}  // namespace spira::cli
