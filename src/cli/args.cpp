#include "args.hpp"

#include <charconv>
#include <cmath>
#include <cctype>
#include <cstring>
#include <filesystem>

#include <unistd.h>

namespace spira::cli {

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
      if (spec == nullptr) { throw usage_error("unknown option '" + arg + "'"); }
      if (!spec->takes_value) {
        if (has_inline) { throw usage_error("option '" + arg + "' takes no value"); }
        flags_.insert(spec->name);
        continue;
      }
      if (!has_inline) {
        if (i + 1 >= argc) { throw usage_error("option '" + arg + "' needs a value"); }
        inline_value = argv[++i];
      }
      if (values_.count(spec->name) != 0) {
        throw usage_error("option '--" + spec->name + "' given twice");
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
  if (it == values_.end()) { return std::nullopt; }
  return it->second;
}

std::string arguments::required(const std::string& name) const
{
  auto v = value(name);
  if (!v) { throw usage_error("missing required option '--" + name + "'"); }
  return *v;
}

std::string arguments::output_path(const std::string& name) const
{
  const std::string path = required(name);
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    throw usage_error("option '--" + name + "': '" + path + "' is a directory");
  }
  const fs::path parent = fs::path(path).parent_path();
  const std::string dir = parent.empty() ? std::string(".") : parent.string();
  if (!fs::is_directory(dir, ec)) {
    throw usage_error("option '--" + name + "': the directory of '" + path + "' does not exist");
  }
  if (access(dir.c_str(), W_OK) != 0) {
    throw usage_error("option '--" + name + "': cannot write to the directory of '" + path + "'");
  }
  return path;
}

std::optional<long long> arguments::integer(const std::string& name, long long lo,
                                            long long hi) const
{
  auto v = value(name);
  if (!v) { return std::nullopt; }
  long long x = 0;
  const char* b = v->data();
  const char* e = b + v->size();
  auto [p, ec] = std::from_chars(b, e, x);
  if (ec != std::errc{} || p != e) {
    throw usage_error("option '--" + name + "': '" + *v + "' is not an integer");
  }
  if (x < lo || x > hi) {
    throw usage_error(detail::concat("option '--", name, "': ", x, " is outside [", lo, ", ", hi,
                                     "]"));
  }
  return x;
}

std::optional<double> arguments::real(const std::string& name) const
{
  auto v = value(name);
  if (!v) { return std::nullopt; }
  double x = 0;
  const char* b = v->data();
  const char* e = b + v->size();
  auto [p, ec] = std::from_chars(b, e, x);
  if (ec != std::errc{} || p != e || !std::isfinite(x)) {
    throw usage_error("option '--" + name + "': '" + *v + "' is not a finite number");
  }
  return x;
}

}  // namespace spira::cli
