// The CUDA backend's own contract: work follows the resources handle (device, stream, pool),
// temporaries come from the given stream-ordered pool and are all returned, failures become spira
// exceptions with useful messages, and edge shapes convert correctly. Skips with the reason when
// the build has no CUDA or the machine no device.
#include "support/backend.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace spira::test {
namespace {

void cuda_check(cudaError_t st, const char* what)
{
  if (st != cudaSuccess) {
    throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(st));
  }
}
#define TEST_CUDA(call) cuda_check((call), #call)

class cuda_backend : public ::testing::Test {
 protected:
  void SetUp() override { SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources); }
};

/// A non-blocking stream, destroyed at scope exit.
struct owned_stream {
  cudaStream_t stream{};
  owned_stream() { TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); }
  ~owned_stream() { cudaStreamDestroy(stream); }
  owned_stream(const owned_stream&) = delete;
  owned_stream& operator=(const owned_stream&) = delete;
};

/// A device memory pool of device 0, optionally capped at max_bytes.
struct owned_pool {
  cudaMemPool_t pool{};
  explicit owned_pool(std::size_t max_bytes = 0)
  {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    props.maxSize = max_bytes;
    TEST_CUDA(cudaMemPoolCreate(&pool, &props));
  }
  ~owned_pool() { cudaMemPoolDestroy(pool); }
  owned_pool(const owned_pool&) = delete;
  owned_pool& operator=(const owned_pool&) = delete;

  std::uint64_t attribute(cudaMemPoolAttr a) const
  {
    std::uint64_t v = 0;
    TEST_CUDA(cudaMemPoolGetAttribute(pool, a, &v));
    return v;
  }
};

template <class V, class I>
coo_matrix<V, I> random_coo(std::int64_t rows, std::int64_t cols, std::int64_t n,
                            std::uint64_t seed)
{
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> r(0, rows - 1);
  std::uniform_int_distribution<std::int64_t> c(0, cols - 1);
  std::uniform_real_distribution<double> v(-1.0, 1.0);
  coo_matrix<V, I> m(host_resources{}, rows, cols, n);
  for (std::int64_t k = 0; k < n; ++k) {
    m.row_idx()[k] = I(r(rng));
    m.col_idx()[k] = I(c(rng) % 64 == 0 ? 0 : c(rng));  // column 0 collects duplicates
    m.values()[k] = V(v(rng));
  }
  return m;
}

template <class V, class I>
coo_matrix<V, I> coo_to(const cuda_resources& res, const coo_matrix<V, I>& h)
{
  coo_matrix<V, I> d(res, h.rows(), h.cols(), h.nnz());
  copy(d.row_idx(), d.space(), h.row_idx(), memory_space::host, h.nnz(), res);
  copy(d.col_idx(), d.space(), h.col_idx(), memory_space::host, h.nnz(), res);
  copy(d.values(), d.space(), h.values(), memory_space::host, h.nnz(), res);
  return d;
}

template <class V, class I>
void expect_identical(const csr_matrix<V, I>& got_any_space, const csr_matrix<V, I>& want)
{
  const auto got = host_copy(got_any_space);
  ASSERT_EQ(got.rows(), want.rows());
  ASSERT_EQ(got.cols(), want.cols());
  ASSERT_EQ(got.nnz(), want.nnz());
  EXPECT_EQ(0, std::memcmp(got.row_ptr(), want.row_ptr(), (want.rows() + 1) * sizeof(offset_t)));
  EXPECT_EQ(0, std::memcmp(got.col_idx(), want.col_idx(), want.nnz() * sizeof(I)));
  EXPECT_EQ(0, std::memcmp(got.values(), want.values(), want.nnz() * sizeof(V)));
}

TEST_F(cuda_backend, work_uses_the_callers_stream_and_pool_and_returns_every_byte)
{
  owned_stream s;
  owned_pool p;
  cudaMemPool_t default_pool{};
  TEST_CUDA(cudaDeviceGetDefaultMemPool(&default_pool, 0));
  TEST_CUDA(cudaDeviceSynchronize());
  std::uint64_t zero = 0;
  TEST_CUDA(cudaMemPoolSetAttribute(default_pool, cudaMemPoolAttrUsedMemHigh, &zero));
  const cuda_resources res{0, s.stream, p.pool};

  const auto h = random_coo<float, std::int32_t>(5000, 3000, 200'000, 11);
  const auto want = coo_to_csr(host_resources{}, h.view());
  {
    const auto d = coo_to(res, h);
    const auto csr = coo_to_csr(res, d.view());
    expect_identical(csr, want);
    expect_identical(transpose(res, csr.view()), transpose(host_resources{}, want.view()));
    expect_identical(canonicalize(res, csr.view(), {.drop_zeros = true}),
                     canonicalize(host_resources{}, want.view(), {.drop_zeros = true}));
    validate(res, csr.view(), csr_check::canonical, "csr");
    synchronize(res);
    EXPECT_GT(p.attribute(cudaMemPoolAttrUsedMemCurrent), 0u) << "results live in the pool";
  }
  synchronize(res);
  EXPECT_GE(p.attribute(cudaMemPoolAttrUsedMemHigh), 200'000u * 8) << "temporaries in the pool";
  EXPECT_EQ(p.attribute(cudaMemPoolAttrUsedMemCurrent), 0u) << "every allocation was returned";
  std::uint64_t default_high = 0;
  TEST_CUDA(cudaMemPoolGetAttribute(default_pool, cudaMemPoolAttrUsedMemHigh, &default_high));
  EXPECT_EQ(default_high, 0u) << "nothing was allocated outside the given pool";
}

TEST_F(cuda_backend, out_of_memory_inside_a_conversion_names_the_sizes_and_leaks_nothing)
{
  owned_stream s;
  owned_pool small(std::size_t{8} << 20);  // 8 MiB: less than the sort's temporaries
  const cuda_resources input_res{0, s.stream, nullptr};
  const cuda_resources res{0, s.stream, small.pool};
  const auto h = random_coo<float, std::int32_t>(100'000, 100'000, 1'000'000, 12);
  const auto d = coo_to(input_res, h);
  try {
    auto csr = coo_to_csr(res, d.view());
    FAIL() << "a conversion needing more than 8 MiB of temporaries succeeded in an 8 MiB pool";
  } catch (const out_of_memory& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("out of device memory allocating "), std::string::npos) << msg;
    EXPECT_NE(msg.find(" bytes ("), std::string::npos) << msg;
    EXPECT_NE(msg.find("requested on device 0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("MiB free of"), std::string::npos) << msg;
  }
  synchronize(res);
  EXPECT_EQ(small.attribute(cudaMemPoolAttrUsedMemCurrent), 0u) << "temporaries freed on unwind";
}

TEST_F(cuda_backend, impossible_device_allocation_states_request_and_free_memory)
{
  const std::size_t huge = std::size_t{1} << 47;  // 128 TiB
  try {
    buffer<std::byte> b(cuda_resources{}, huge, "huge workspace");
    FAIL() << "a 128 TiB device allocation succeeded";
  } catch (const out_of_memory& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("huge workspace: " + std::to_string(huge) + " bytes"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("MiB free of"), std::string::npos) << msg;
  }
}

TEST_F(cuda_backend, a_bad_device_number_is_an_invalid_argument_and_the_current_device_is_kept)
{
  int before = -1;
  TEST_CUDA(cudaGetDevice(&before));
  const cuda_resources res{cuda_device_count() + 7, nullptr, nullptr};
  try {
    buffer<float> b(res, 16);
    FAIL() << "allocation on a device that does not exist succeeded";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cuda_resources::device = " +
                                         std::to_string(cuda_device_count() + 7)),
              std::string::npos)
        << e.what();
  }
  int after = -1;
  TEST_CUDA(cudaGetDevice(&after));
  EXPECT_EQ(after, before);
}

TEST_F(cuda_backend, work_goes_to_the_resources_device_not_the_current_one)
{
  if (cuda_device_count() < 2) {
    GTEST_SKIP() << "needs two CUDA devices";
  }
  TEST_CUDA(cudaSetDevice(0));
  const cuda_resources res{1, nullptr, nullptr};
  const auto h = random_coo<double, std::int64_t>(3000, 4000, 50'000, 13);
  const auto csr = coo_to_csr(res, coo_to(res, h).view());
  int current = -1;
  TEST_CUDA(cudaGetDevice(&current));
  EXPECT_EQ(current, 0) << "the caller's current device is restored";
  cudaPointerAttributes attr{};
  TEST_CUDA(cudaPointerGetAttributes(&attr, csr.values()));
  EXPECT_EQ(attr.device, 1);
  expect_identical(csr, coo_to_csr(host_resources{}, h.view()));
}

TEST_F(cuda_backend, host_inputs_are_refused_by_conversions_but_validated_on_the_host)
{
  const cuda_resources res{};
  const auto h = random_coo<float, std::int32_t>(10, 10, 30, 14);
  try {
    auto csr = coo_to_csr(res, h.view());
    FAIL() << "a host COO was accepted by the CUDA coo_to_csr";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("input is in host memory"), std::string::npos) << e.what();
  }
  const auto csr = coo_to_csr(host_resources{}, h.view());
  EXPECT_NO_THROW(validate(res, csr.view(), csr_check::canonical, "host csr"));
  EXPECT_THROW(transpose(res, csr.view()), invalid_argument);
  EXPECT_THROW(csr_to_coo(res, csr.view()), invalid_argument);
  EXPECT_THROW(canonicalize(res, csr.view()), invalid_argument);
}

TEST_F(cuda_backend, empty_shapes_convert)
{
  const cuda_resources res{};
  for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{0, 0}, {5, 0}, {0, 3}, {4, 6}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
    coo_matrix<float, std::int32_t> empty(res, rows, cols, 0);
    const auto csr = coo_to_csr(res, empty.view());
    const auto h = host_copy(csr);
    EXPECT_EQ(h.nnz(), 0);
    EXPECT_EQ(std::vector<offset_t>(h.row_ptr(), h.row_ptr() + rows + 1),
              std::vector<offset_t>(rows + 1, 0));
    const auto t = host_copy(transpose(res, csr.view()));
    EXPECT_EQ(t.rows(), cols);
    EXPECT_EQ(std::vector<offset_t>(t.row_ptr(), t.row_ptr() + cols + 1),
              std::vector<offset_t>(cols + 1, 0));
    EXPECT_EQ(canonicalize(res, csr.view(), {.drop_zeros = true}).nnz(), 0);
    EXPECT_EQ(csr_to_coo(res, csr.view()).nnz(), 0);
  }
}

TEST_F(cuda_backend, everything_cancels)
{
  // Every entry has a partner of opposite sign: with drop_zeros nothing is left, in every row.
  const cuda_resources res{};
  coo_matrix<double, std::int32_t> h(host_resources{}, 3, 2, 6);
  const std::int32_t r[] = {2, 0, 2, 0, 1, 1};
  const std::int32_t c[] = {1, 0, 1, 0, 1, 1};
  const double v[] = {0.25, -3.5, -0.25, 3.5, 1e300, -1e300};
  std::copy(r, r + 6, h.row_idx());
  std::copy(c, c + 6, h.col_idx());
  std::copy(v, v + 6, h.values());
  const auto kept = host_copy(coo_to_csr(res, coo_to(res, h).view()));
  EXPECT_EQ(std::vector<offset_t>(kept.row_ptr(), kept.row_ptr() + 4),
            (std::vector<offset_t>{0, 1, 2, 3}));
  EXPECT_EQ(std::vector<double>(kept.values(), kept.values() + 3), (std::vector<double>{0, 0, 0}));
  const auto dropped =
      host_copy(canonicalize(res, to_device(res, kept.view()).view(), {.drop_zeros = true}));
  EXPECT_EQ(dropped.nnz(), 0);
  EXPECT_EQ(std::vector<offset_t>(dropped.row_ptr(), dropped.row_ptr() + 4),
            (std::vector<offset_t>(4, 0)));
}

TEST_F(cuda_backend, dense_to_device_packs_a_leading_dimension)
{
  const cuda_resources res{};
  std::vector<double> src(5 * 7);
  std::iota(src.begin(), src.end(), 1.0);
  const dense_view<const double> strided{5, 4, 7, src.data(), memory_space::host};
  const auto d = to_device(res, strided);
  EXPECT_EQ(d.space(), memory_space::device);
  const auto back = to_host(d.view(), res);
  ASSERT_EQ(back.rows(), 5);
  ASSERT_EQ(back.cols(), 4);
  for (std::int64_t i = 0; i < 5; ++i) {
    for (std::int64_t j = 0; j < 4; ++j) {
      EXPECT_EQ(back.data()[i * 4 + j], src[i * 7 + j]);
    }
  }
  // Device to device, again with a stride: rows 1..3, columns 1..2 of the packed copy.
  const dense_view<const double> window{3, 2, 4, d.data() + 4 + 1, memory_space::device};
  const auto packed = to_device(res, window);
  const auto w = to_host(packed.view(), res);
  for (std::int64_t i = 0; i < 3; ++i) {
    for (std::int64_t j = 0; j < 2; ++j) {
      EXPECT_EQ(w.data()[i * 2 + j], src[(i + 1) * 7 + j + 1]);
    }
  }
  EXPECT_THROW(to_device(res, dense_view<const double>{2, 4, 3, src.data(), memory_space::host}),
               invalid_argument);
}

}  // namespace
}  // namespace spira::test
