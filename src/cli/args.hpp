// spira CLI: a small, strict argument parser. Every command declares the options it accepts;
// anything else is an error naming the option.
#pragma once

#include <spira/distance.hpp>
#include <spira/error.hpp>
#include <spira/resources.hpp>

#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace spira::cli {

/// A usage error: printed as one line, exit status 2.
class usage_error : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
};

struct option_spec {
  std::string name;         ///< long name without dashes, e.g. "metric"
  char short_name = 0;      ///< e.g. 'k', or 0
  bool takes_value = true;  ///< false for flags
};

class arguments {
 public:
  /// Parses argv[first..argc) against `specs`; throws usage_error on anything unexpected.
  arguments(int argc, char** argv, int first, const std::vector<option_spec>& specs);

  [[nodiscard]] const std::vector<std::string>& positional() const { return positional_; }
  [[nodiscard]] bool flag(const std::string& name) const { return flags_.count(name) > 0; }
  [[nodiscard]] std::optional<std::string> value(const std::string& name) const;
  /// The value of a required option, or usage_error naming it.
  [[nodiscard]] std::string required(const std::string& name) const;
  /// An integer option in [lo, hi], or usage_error naming the option, the bad value and the valid
  /// range (`range` in words when given, e.g. "1 to the rows of INDEX").
  [[nodiscard]] std::optional<long long> integer(const std::string& name, long long lo,
                                                 long long hi, const std::string& range = {}) const;
  [[nodiscard]] std::optional<double> real(const std::string& name) const;
  /// The value of the required output option `name`, checked before any work is done: a file name
  /// (not empty, not a directory) ending in `extension` (".npy"), in an existing directory where a
  /// file can be created (usage_error naming the option and the path otherwise). A device or pipe
  /// that exists (/dev/stdout) is accepted as it is.
  [[nodiscard]] std::string output_path(const std::string& name,
                                        const std::string& extension) const;

 private:
  std::vector<std::string> positional_;
  std::map<std::string, std::string> values_;
  std::set<std::string> flags_;
};

/// The --metric option (required); an unknown name is a usage_error naming the option.
metric parse_metric(const arguments& args);
/// The value of --strategy; an unknown name is a usage_error naming the option.
pairwise_strategy parse_strategy(const std::string& name);

/// The host resources of a command: --threads N worker threads (0, the default: OpenMP's default,
/// OMP_NUM_THREADS when it is set, else one per core).
host_resources host_resources_of(const arguments& args);

/// Where the one-line summary of a command goes: stdout, or stderr when the output file is stdout
/// itself (-o /dev/stdout), so that the summary does not land in the data.
std::FILE* summary_stream(const std::string& out_path);

/// The --p option of a metric: minkowski's p (>= 1; the library's default when absent), a
/// usage_error for any other metric or a p below 1.
double minkowski_p(const arguments& args, metric m);

}  // namespace spira::cli
