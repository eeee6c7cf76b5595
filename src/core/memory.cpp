// Host memory, version and host resources: the parts of the core that never need CUDA.
#include <spira/config.hpp>
#include <spira/error.hpp>
#include <spira/memory.hpp>
#include <spira/resources.hpp>

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace spira {

const char* version() noexcept
{
  return "0.1.0";
}

int host_resources::num_threads() const noexcept
{
  if (threads > 0) {
    return threads;
  }
  return std::max(1, omp_get_max_threads());
}

namespace detail {

namespace {
constexpr std::align_val_t host_alignment{64};  // one cache line; also satisfies AVX-512 loads
}

void* host_allocate(std::size_t bytes, const char* what)
{
  void* p = ::operator new(bytes, host_alignment, std::nothrow);
  expects<out_of_memory>(p != nullptr, "out of host memory allocating ", what, ": ", bytes,
                         " bytes (", bytes >> 20, " MiB)");
  return p;
}

void host_deallocate(void* p) noexcept
{
  ::operator delete(p, host_alignment);
}

}  // namespace detail

namespace {

std::optional<std::string> read_text(const std::filesystem::path& path)
{
  std::ifstream f(path);
  if (!f) {
    return std::nullopt;
  }
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::optional<std::uint64_t> parse_u64(std::string_view s)
{
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) {
    return std::nullopt;
  }
  return v;
}

/// The value of `key` in a "key value [unit]" file (/proc/meminfo, memory.stat); `scale` multiplies
/// it (1024 for meminfo's kB).
std::optional<std::uint64_t> keyed_value(const std::string& text, std::string_view key,
                                         std::uint64_t scale)
{
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string k;
    std::uint64_t v = 0;
    if (!(words >> k >> v)) {
      continue;
    }
    if (!k.empty() && k.back() == ':') {
      k.pop_back();
    }
    if (k == key) {
      return v * scale;
    }
  }
  return std::nullopt;
}

struct cgroup_location {
  std::filesystem::path mount;  ///< where the hierarchy is mounted
  std::string path;             ///< the process' cgroup inside it ("/..."), from /proc/self/cgroup
  bool v1 = false;
};

/// The memory hierarchy of the process: a v1 line naming the memory controller wins over the v2
/// line ("0::/path"); both mounted at the standard places below `root`.
std::optional<cgroup_location> find_cgroup(const std::filesystem::path& root)
{
  const auto text = read_text(root / "proc/self/cgroup");
  if (!text) {
    return std::nullopt;
  }
  std::optional<cgroup_location> v2;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    const auto c1 = line.find(':');
    const auto c2 = c1 == std::string::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string::npos) {
      continue;
    }
    const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1);
    const std::string path = line.substr(c2 + 1);
    if (controllers.empty() && line.substr(0, c1) == "0") {
      v2 = cgroup_location{root / "sys/fs/cgroup", path, false};
      continue;
    }
    std::istringstream names(controllers);
    std::string name;
    while (std::getline(names, name, ',')) {
      if (name == "memory") {
        return cgroup_location{root / "sys/fs/cgroup/memory", path, true};
      }
    }
  }
  return v2;
}

}  // namespace

std::uint64_t host_memory_info::headroom() const noexcept
{
  std::uint64_t h = available;
  if (cgroup_limit) {
    const std::uint64_t used = cgroup_usage.value_or(0);
    h = std::min(h, *cgroup_limit > used ? *cgroup_limit - used : 0);
  }
  return h;
}

host_memory_info read_host_memory(const std::filesystem::path& root)
{
  host_memory_info info;
  if (const auto meminfo = read_text(root / "proc/meminfo")) {
    info.physical = keyed_value(*meminfo, "MemTotal", 1024).value_or(0);
    info.available = keyed_value(*meminfo, "MemAvailable", 1024).value_or(0);
  }
  if (info.physical == 0 && root == "/") {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0) {
      info.physical = std::uint64_t(pages) * std::uint64_t(page);
    }
  }
  if (info.available == 0) {
    info.available = info.physical;
  }
  const auto where = find_cgroup(root);
  if (!where) {
    return info;
  }
  // The process' own directory; inside a container's cgroup namespace /proc/self/cgroup may name
  // a path of the host's hierarchy that is not visible: then the mount itself is the cgroup.
  std::filesystem::path dir = where->mount;
  std::filesystem::path rel = std::filesystem::path(where->path).relative_path();
  std::error_code ec;
  if (!rel.empty() && std::filesystem::is_directory(where->mount / rel, ec)) {
    dir = where->mount / rel;
  } else {
    rel.clear();
  }
  const char* limit_file = where->v1 ? "memory.limit_in_bytes" : "memory.max";
  const char* usage_file = where->v1 ? "memory.usage_in_bytes" : "memory.current";
  const char* inactive_key = where->v1 ? "total_inactive_file" : "inactive_file";
  // The tightest level from the process' cgroup up to the root of the hierarchy: each level's
  // headroom is its limit less its own usage (which includes its descendants').
  std::vector<std::filesystem::path> levels{dir};
  for (auto up = rel; !up.empty() && up.has_parent_path() && up != up.parent_path();) {
    up = up.parent_path();
    levels.push_back(up.empty() ? where->mount : where->mount / up);
  }
  if (levels.back() != where->mount) {
    levels.push_back(where->mount);
  }
  std::optional<std::uint64_t> best_headroom;
  for (const auto& level : levels) {
    const auto limit_text = read_text(level / limit_file);
    const auto limit = limit_text ? parse_u64(*limit_text) : std::nullopt;  // "max": none
    if (!limit || (info.physical > 0 && *limit >= info.physical)) {
      continue;
    }
    std::uint64_t used = 0;
    if (const auto u = read_text(level / usage_file)) {
      used = parse_u64(*u).value_or(0);
    }
    if (const auto stat = read_text(level / "memory.stat")) {
      used -= std::min(used, keyed_value(*stat, inactive_key, 1).value_or(0));
    }
    const std::uint64_t h = *limit > used ? *limit - used : 0;
    if (!best_headroom || h < *best_headroom) {
      best_headroom = h;
      info.cgroup_limit = *limit;
      info.cgroup_usage = used;
    }
  }
  return info;
}

std::size_t default_host_memory_budget(const host_memory_info& info)
{
  constexpr std::uint64_t floor = std::uint64_t{16} << 20;
  std::uint64_t budget = info.headroom() / 2;
  if (info.physical > 0) {
    budget = std::min(budget, info.physical / 4);
  }
  if (info.physical == 0 && info.available == 0 && !info.cgroup_limit) {
    budget = std::uint64_t{1} << 30;  // nothing known: the former fallback
  }
  return static_cast<std::size_t>(std::max(budget, floor));
}

std::size_t default_host_memory_budget()
{
  return default_host_memory_budget(read_host_memory());
}

}  // namespace spira
