#include "support/backend.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace spira::test {
namespace {

template <class Resources>
class memory_test : public ::testing::Test {};
TYPED_TEST_SUITE(memory_test, backends, backend_names);

TYPED_TEST(memory_test, round_trip_through_backend_memory)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  std::vector<double> src(1000);
  std::iota(src.begin(), src.end(), 0.5);
  buffer<double> b(res, src.size());
  copy(b.data(), b.space(), src.data(), memory_space::host, src.size(), b.cuda());
  EXPECT_EQ(to_host_vector(b), src);
}

TYPED_TEST(memory_test, impossible_allocation_is_an_exception_with_sizes)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const std::size_t huge = std::size_t{1} << 52;  // 4 PiB of doubles: no machine has it
  try {
    buffer<double> b(res, huge, "test array");
    FAIL() << "allocation of 32 PiB succeeded";
  } catch (const out_of_memory& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("test array"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bytes"), std::string::npos) << msg;
  }
}

TEST(memory, element_count_overflow_is_reported)
{
  EXPECT_THROW(buffer<double>(host_resources{}, std::numeric_limits<std::size_t>::max()),
               out_of_memory);
}

TEST(memory, cuda_entry_points_fail_clearly_without_cuda)
{
  if (cuda_compiled() && cuda_device_count() > 0) {
    GTEST_SKIP() << "a CUDA device is present";
  }
  // Without the CUDA backend: not_compiled; with it but without a GPU: "no usable CUDA device",
  // never a runtime status naming a source file.
  const auto check = [](const char* what, auto&& call) {
    try {
      call();
      ADD_FAILURE() << what << " succeeded without a usable device";
    } catch (const error& e) {
      const std::string msg = e.what();
      if (cuda_compiled()) {
        EXPECT_NE(msg.find("no usable CUDA device"), std::string::npos) << what << ": " << msg;
        EXPECT_EQ(msg.find(".cuh:"), std::string::npos) << what << ": " << msg;
        EXPECT_EQ(msg.find(".cu:"), std::string::npos) << what << ": " << msg;
      } else {
        EXPECT_NE(dynamic_cast<const not_compiled*>(&e), nullptr) << what << ": " << msg;
      }
    }
  };
  check("a device buffer", [] { buffer<float> b(cuda_resources{}, 16); });
  check("synchronize", [] { synchronize(cuda_resources{}); });
  check("cuda_free_memory", [] { (void)cuda_free_memory(cuda_resources{}); });
}

/// A directory tree that mimics /proc and /sys/fs/cgroup for read_host_memory(root).
class fake_root {
 public:
  fake_root()
  {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = std::filesystem::temp_directory_path() /
            (std::string("spira_memory_") + info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  fake_root(const fake_root&) = delete;
  fake_root& operator=(const fake_root&) = delete;
  ~fake_root() { std::filesystem::remove_all(root_); }

  void file(const std::string& rel, const std::string& text) const
  {
    const auto p = root_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  /// 16 GiB of RAM, `available_gib` of it available.
  void meminfo(std::uint64_t available_gib) const
  {
    file("proc/meminfo", "MemTotal:       16777216 kB\nMemFree:         1000 kB\nMemAvailable:   " +
                             std::to_string(available_gib << 20) + " kB\n");
  }
  [[nodiscard]] const std::filesystem::path& path() const { return root_; }

 private:
  std::filesystem::path root_;
};

constexpr std::uint64_t gib = std::uint64_t{1} << 30;
constexpr std::uint64_t mib = std::uint64_t{1} << 20;

TEST(host_memory, no_cgroup_gives_meminfo)
{
  fake_root r;
  r.meminfo(12);
  const host_memory_info m = read_host_memory(r.path());
  EXPECT_EQ(m.physical, 16 * gib);
  EXPECT_EQ(m.available, 12 * gib);
  EXPECT_FALSE(m.cgroup_limit.has_value());
  EXPECT_EQ(m.headroom(), 12 * gib);
  // Half the headroom (6 GiB), at most a quarter of RAM (4 GiB).
  EXPECT_EQ(default_host_memory_budget(m), 4 * gib);
}

TEST(host_memory, memory_in_use_lowers_the_budget)
{
  fake_root r;
  r.meminfo(2);
  EXPECT_EQ(default_host_memory_budget(read_host_memory(r.path())), 1 * gib);
}

TEST(host_memory, cgroup_v2_limit_less_usage_without_inactive_cache)
{
  fake_root r;
  r.meminfo(12);
  r.file("proc/self/cgroup", "0::/kubepods/pod1/ctr\n");
  r.file("sys/fs/cgroup/kubepods/pod1/ctr/memory.max", "2147483648\n");
  r.file("sys/fs/cgroup/kubepods/pod1/ctr/memory.current", std::to_string(900 * mib) + "\n");
  r.file("sys/fs/cgroup/kubepods/pod1/ctr/memory.stat",
         "anon 1000\nfile 2000\ninactive_file " + std::to_string(100 * mib) + "\nactive_file 5\n");
  const host_memory_info m = read_host_memory(r.path());
  ASSERT_TRUE(m.cgroup_limit.has_value());
  EXPECT_EQ(*m.cgroup_limit, 2 * gib);
  EXPECT_EQ(m.cgroup_usage.value_or(0), 800 * mib);
  EXPECT_EQ(m.headroom(), 2 * gib - 800 * mib);
  EXPECT_EQ(default_host_memory_budget(m), (2 * gib - 800 * mib) / 2);
}

TEST(host_memory, cgroup_v2_the_tightest_ancestor_wins_and_max_is_no_limit)
{
  fake_root r;
  r.meminfo(12);
  r.file("proc/self/cgroup", "0::/a/b\n");
  r.file("sys/fs/cgroup/a/b/memory.max", "max\n");
  r.file("sys/fs/cgroup/a/b/memory.current", "0\n");
  r.file("sys/fs/cgroup/a/memory.max", std::to_string(gib) + "\n");
  r.file("sys/fs/cgroup/a/memory.current", std::to_string(256 * mib) + "\n");
  const host_memory_info m = read_host_memory(r.path());
  EXPECT_EQ(m.cgroup_limit.value_or(0), gib);
  EXPECT_EQ(m.headroom(), 768 * mib);
  EXPECT_EQ(default_host_memory_budget(m), 384 * mib);
}

TEST(host_memory, cgroup_v2_namespace_root_when_the_path_is_not_visible)
{
  // Inside a container's cgroup namespace /proc/self/cgroup may name the host's path while the
  // container's own cgroup is mounted at /sys/fs/cgroup.
  fake_root r;
  r.meminfo(12);
  r.file("proc/self/cgroup", "0::/system.slice/docker-1234.scope\n");
  r.file("sys/fs/cgroup/memory.max", std::to_string(512 * mib) + "\n");
  r.file("sys/fs/cgroup/memory.current", std::to_string(12 * mib) + "\n");
  const host_memory_info m = read_host_memory(r.path());
  EXPECT_EQ(m.cgroup_limit.value_or(0), 512 * mib);
  EXPECT_EQ(m.headroom(), 500 * mib);
}

TEST(host_memory, cgroup_v1_memory_controller)
{
  fake_root r;
  r.meminfo(12);
  r.file("proc/self/cgroup", "9:name=systemd:/\n4:cpu,cpuacct:/\n3:memory:/slurm/job_42\n0::/\n");
  r.file("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");  // unlimited
  r.file("sys/fs/cgroup/memory/slurm/job_42/memory.limit_in_bytes", std::to_string(3 * gib) + "\n");
  r.file("sys/fs/cgroup/memory/slurm/job_42/memory.usage_in_bytes", std::to_string(gib) + "\n");
  r.file("sys/fs/cgroup/memory/slurm/job_42/memory.stat",
         "cache 5\ninactive_file 7\ntotal_inactive_file " + std::to_string(512 * mib) + "\n");
  const host_memory_info m = read_host_memory(r.path());
  EXPECT_EQ(m.cgroup_limit.value_or(0), 3 * gib);
  EXPECT_EQ(m.cgroup_usage.value_or(0), 512 * mib);
  EXPECT_EQ(m.headroom(), 3 * gib - 512 * mib);
}

TEST(host_memory, a_cgroup_over_its_limit_leaves_the_floor)
{
  fake_root r;
  r.meminfo(12);
  r.file("proc/self/cgroup", "0::/\n");
  r.file("sys/fs/cgroup/memory.max", std::to_string(100 * mib) + "\n");
  r.file("sys/fs/cgroup/memory.current", std::to_string(200 * mib) + "\n");
  const host_memory_info m = read_host_memory(r.path());
  EXPECT_EQ(m.headroom(), 0u);
  EXPECT_EQ(default_host_memory_budget(m), 16 * mib);
}

TEST(host_memory, this_machine_gives_a_positive_budget_within_its_ram)
{
  const host_memory_info m = read_host_memory();
  EXPECT_GT(m.physical, 0u);
  EXPECT_GT(default_host_memory_budget(), 0u);
  EXPECT_LE(default_host_memory_budget(), std::max<std::uint64_t>(m.physical / 4, 16 * mib));
}

}  // namespace
}  // namespace spira::test
