#include "args.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <sys/stat.h>
#include <unistd.h>

namespace spira::cli {

namespace {

/// How messages spell an option: "-k" for a one-letter name, "--metric" otherwise.
std::string spelled(const std::string& name)
{
  return (name.size() == 1 ? "-" : "--") + name;
}

}  // namespace

arguments::arguments(int argc, char** argv, int first, const std::vector<option_spec>& specs)
{
  auto find = [&](const std::string& arg) -> const option_spec* {
    for (const auto& s : specs) {
      if (arg == "--" + s.name || (s.short_name != 0 && arg == std::string{'-', s.short_name})) {
        return &s;
      }
    }
    return nullptr;
  };
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() > 1 && arg[0] == '-' && !(arg.size() > 1 && (std::isdigit(arg[1]) != 0))) {
      std::string inline_value;
      bool has_inline = false;
      if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
        inline_value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        has_inline = true;
      }
      const option_spec* spec = find(arg);
      if (spec == nullptr && arg.size() > 2 && arg[1] != '-') {
        // A short option with its value attached, as in -k15.
        spec = find(arg.substr(0, 2));
        if (spec != nullptr && spec->takes_value) {
          inline_value = arg.substr(2);
          arg = arg.substr(0, 2);
          has_inline = true;
        } else {
          spec = nullptr;
        }
      }
      if (spec == nullptr) {
        throw usage_error("unknown option '" + arg + "'");
      }
      if (!spec->takes_value) {
        if (has_inline) {
          throw usage_error("option '" + arg + "' takes no value");
        }
        flags_.insert(spec->name);
        continue;
      }
      if (!has_inline) {
        if (i + 1 >= argc) {
          throw usage_error("option '" + arg + "' needs a value");
        }
        inline_value = argv[++i];
      }
      if (values_.count(spec->name) != 0) {
        throw usage_error("option '" + spelled(spec->name) + "' given twice");
      }
      values_[spec->name] = inline_value;
    } else {
      positional_.push_back(arg);
    }
  }
}

std::optional<std::string> arguments::value(const std::string& name) const
{
  auto it = values_.find(name);
  if (it == values_.end()) {
    return std::nullopt;
  }
  return it->second;
}

std::string arguments::required(const std::string& name) const
{
  auto v = value(name);
  if (!v) {
    throw usage_error("missing required option '" + spelled(name) + "'");
  }
  return *v;
}

std::string arguments::output_path(const std::string& name, const std::string& extension) const
{
  const std::string path = required(name);
  namespace fs = std::filesystem;
  const std::string option = "option '" + spelled(name) + "'";
  if (path.empty()) {
    throw usage_error(option + ": the file name is empty");
  }
  std::error_code ec;
  if (path.back() == '/' || fs::is_directory(path, ec)) {
    throw usage_error(option + ": '" + path + "' is a directory, not a file name");
  }
  const bool special = fs::exists(path, ec) && !fs::is_regular_file(path, ec);
  std::string lower = path;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (!special && !lower.ends_with(extension)) {
    throw usage_error(option + ": '" + path + "' does not end in " + extension + "; this command " +
                      "writes a " + extension + " file");
  }
  const fs::path parent = fs::path(path).parent_path();
  const std::string dir = parent.empty() ? std::string(".") : parent.string();
  if (!fs::is_directory(dir, ec)) {
    throw usage_error(option + ": the directory of '" + path + "' does not exist");
  }
  if (!special) {
    // The writers create a temporary file beside the output and rename it: try that now (access()
    // says yes to root on a read-only file system).
    std::string probe = (fs::path(dir) / ".spira-probe-XXXXXX").string();
    const int fd = mkstemp(probe.data());
    if (fd < 0) {
      throw usage_error(option + ": cannot create files in the directory of '" + path +
                        "': " + std::strerror(errno));
    }
    close(fd);
    unlink(probe.c_str());
  }
  return path;
}

metric parse_metric(const arguments& args)
{
  try {
    return metric_from_string(args.required("metric"));
  } catch (const usage_error&) {
    throw;
  } catch (const invalid_argument& e) {
    throw usage_error(std::string("option '--metric': ") + e.what());
  }
}

pairwise_strategy parse_strategy(const std::string& name)
{
  try {
    return pairwise_strategy_from_string(name);
  } catch (const invalid_argument& e) {
    throw usage_error(std::string("option '--strategy': ") + e.what());
  }
}

host_resources host_resources_of(const arguments& args)
{
  const auto threads = args.integer("threads", 0, 1 << 16).value_or(0);
  return host_resources{.threads = static_cast<int>(threads)};
}

std::FILE* summary_stream(const std::string& out_path)
{
  struct stat out {};
  struct stat std_out {};
  const bool same = stat(out_path.c_str(), &out) == 0 && fstat(STDOUT_FILENO, &std_out) == 0 &&
                    out.st_dev == std_out.st_dev && out.st_ino == std_out.st_ino;
  return same ? stderr : stdout;
}

double minkowski_p(const arguments& args, metric m)
{
  const auto p = args.real("p");
  if (!p) {
    return distance_params{}.p;
  }
  if (m != metric::minkowski) {
    throw usage_error("option '--p' applies to --metric minkowski only");
  }
  if (!valid_minkowski_p(*p)) {
    throw usage_error(detail::concat("option '--p': minkowski needs a finite p >= 1, got ", *p));
  }
  return *p;
}

std::optional<long long> arguments::integer(const std::string& name, long long lo, long long hi,
                                            const std::string& range) const
{
  auto v = value(name);
  if (!v) {
    return std::nullopt;
  }
  long long x = 0;
  const char* b = v->data();
  const char* e = b + v->size();
  auto [p, ec] = std::from_chars(b, e, x);
  if (ec != std::errc{} || p != e) {
    throw usage_error("option '" + spelled(name) + "': '" + *v + "' is not an integer");
  }
  if ((x < lo || x > hi) && !range.empty()) {
    throw usage_error(detail::concat("option '", spelled(name), "': ", x, " is outside the valid ",
                                     "range, ", range));
  }
  if (x < lo) {
    throw usage_error(detail::concat("option '", spelled(name), "': ", x, " is too small; it must ",
                                     "be at least ", lo));
  }
  if (x > hi) {
    throw usage_error(detail::concat("option '", spelled(name), "': ", x, " is too large; it must ",
                                     "be between ", lo, " and ", hi));
  }
  return x;
}

std::optional<double> arguments::real(const std::string& name) const
{
  auto v = value(name);
  if (!v) {
    return std::nullopt;
  }
  double x = 0;
  const char* b = v->data();
  const char* e = b + v->size();
  auto [p, ec] = std::from_chars(b, e, x);
  if (ec != std::errc{} || p != e || !std::isfinite(x)) {
    throw usage_error("option '" + spelled(name) + "': '" + *v + "' is not a finite number");
  }
  return x;
}

}  // namespace spira::cli
