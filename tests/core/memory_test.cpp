#include "support/backend.hpp"

#include <limits>
#include <numeric>
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
  if (cuda_compiled() && cuda_device_count() > 0) { GTEST_SKIP() << "a CUDA device is present"; }
  try {
    buffer<float> b(cuda_resources{}, 16);
    FAIL() << "device allocation succeeded without a usable device";
  } catch (const error& e) {
    SUCCEED() << e.what();
  }
}

}  // namespace
}  // namespace spira::test
