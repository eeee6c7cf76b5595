// spira CLI: the one table of help texts (docs/cli.md quotes them; see help.hpp).
#include "help.hpp"

#include <spira/distance.hpp>

#include <array>

namespace spira::cli {

namespace {

struct command_help {
  std::string_view name;
  std::string_view text;  ///< "@METRICS@" stands for the metric list (metric_list)
};

constexpr std::string_view inputs =
    "Matrix files: Matrix Market (.mtx, .mtx.gz), svmlight (.svm, .svmlight, .libsvm),\n"
    "scipy CSR or CSC (.npz), NumPy (.npy), edge lists (.txt, .txt.gz).\n";

constexpr std::array<command_help, 5> table{{
    {"", R"(usage: spira <command> [options]

commands:
  info FILE          shape, nonzeros, density and row degrees of a matrix file
  distance A [B]     dense float32 distances between the rows of A and of B (B = A)
  topk IN.npy        the K largest (or smallest) entries of every row
  knn INDEX          exact k-nearest-neighbour graph
  --version          print the version
  --help, -h         print this help

spira <command> --help prints the options of a command, their defaults and the output format.

)"},
    {"info", R"(usage: spira info FILE

Prints the format, rows, cols, nnz (after symmetric expansion; the file's own count when it
differs), density, min / median / max row degree and empty rows of a matrix file.

options:
  -h, --help               print this help and exit

)"},
    {"distance", R"(usage: spira distance A [B] --metric M -o OUT.npy [options]

Dense distances between the rows of A and the rows of B (B defaults to A), computed in blocks
of rows of A that fit the memory budget.

options:
  -m, --metric M           the metric (required; see below)
  --p P                    minkowski's exponent, P >= 1 (default 2; minkowski only)
  -o, --output OUT.npy     the output file (required)
  --backend B              auto, host or cuda (default auto: cuda when built, a GPU is present)
  --strategy S             automatic, intersection, hybrid or dense (default automatic; CUDA only)
  --memory-budget-mb MB    memory for the blocks of rows (default: the library's host budget)
  --threads N              host threads (default 0: OMP_NUM_THREADS when set, else every core)
  -h, --help               print this help and exit

metrics:
@METRICS@

output: OUT.npy, float32, rows(A) x rows(B) (on the host computed in float64 and rounded once);
a one-line summary on stdout.

)"},
    {"topk", R"(usage: spira topk IN.npy -k K -o OUT.npz [options]

The K largest (or smallest) values of every row of a float32 or float64 array IN.npy.

options:
  -k K                     values per row, 1 <= K <= the row length (required)
  --smallest               keep the smallest values (default: the largest)
  -o, --output OUT.npz     the output file (required)
  --backend B              auto, host or cuda (default auto: cuda when built, a GPU is present)
  --threads N              host threads (default 0: OMP_NUM_THREADS when set, else every core)
  -h, --help               print this help and exit

output: OUT.npz with indices (int64) and values (the input's dtype), rows x K, each row best
first (ties: the smaller index first; NaN never outranks a number); a one-line summary on stdout.

)"},
    {"knn", R"(usage: spira knn INDEX -k K --metric M -o OUT.npz [options]

The exact k-nearest-neighbour graph of the rows of INDEX (or of the rows of --query Q).

options:
  -k K                     neighbours per query, 1 <= K <= rows of INDEX (required)
  -m, --metric M           the metric (required; see below)
  --p P                    minkowski's exponent, P >= 1 (default 2; minkowski only)
  -q, --query Q            query rows from the file Q (default: INDEX against itself)
  --exclude-self           leave each row out of its own neighbours (not with --query)
  -o, --output OUT.npz     the output file (required)
  --graph MODE             write the graph as a scipy.sparse CSR matrix, MODE distance or
                           connectivity (default: the arrays indices and distances)
  --symmetrize             with --graph: max(G, G^T), an edge where either end lists the other
                           (not with --query)
  --backend B              auto, host or cuda (default auto: cuda when built, a GPU is present)
  --algo A                 auto, fused or tiled (default auto; CUDA only)
  --strategy S             automatic, intersection, hybrid or dense (default automatic; CUDA only)
  --memory-budget-mb MB    memory for distance tiles and top-k lists (default: the library's
                           host budget; on CUDA half the free device memory)
  --check-recall N         check N evenly spaced rows by brute force, print the recall (default 0)
  --threads N              host threads (default 0: OMP_NUM_THREADS when set, else every core)
  -h, --help               print this help and exit

metrics:
@METRICS@

output: OUT.npz with indices (int64) and distances (float32), n_q x K, each row nearest first;
with --graph, the n_q x rows(INDEX) CSR matrix (scipy.sparse.load_npz reads it) with K entries
per row, nearest first as sklearn.neighbors.kneighbors_graph stores them (columns increasing
with --symmetrize), values the distances (float32) or 1; a one-line summary on stdout; progress
on stderr when it is a terminal.

)"},
}};

/// The metric names and aliases, wrapped at 100 columns, two spaces in.
std::string metric_list()
{
  std::string out, line = " ";
  auto add = [&](const std::string& word) {
    if (line.size() + 1 + word.size() > 98) {
      out += line + "\n";
      line = " ";
    }
    line += " " + word;
  };
  const auto metrics = all_metrics();
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    add(std::string(to_string(metrics[i])) + (i + 1 < metrics.size() ? "," : ""));
  }
  out += line + "\n  aliases:";
  const auto aliases = metric_aliases();
  for (std::size_t i = 0; i < aliases.size(); ++i) {
    out += std::string(" ") + aliases[i].name + " (" + to_string(aliases[i].target) + ")" +
           (i + 1 < aliases.size() ? "," : "");
  }
  return out + "\n";
}

}  // namespace

std::optional<std::string> help_text(std::string_view command)
{
  for (const command_help& c : table) {
    if (c.name != command) {
      continue;
    }
    std::string text(c.text);
    if (auto at = text.find("@METRICS@\n"); at != std::string::npos) {
      text.replace(at, 10, metric_list());
    }
    return text + std::string(inputs);
  }
  return std::nullopt;
}

}  // namespace spira::cli
