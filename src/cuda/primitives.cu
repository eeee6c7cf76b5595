// CUDA backend: the CUB instantiations behind primitives.cuh (see there for the contracts).
#include <spira/cuda/device.cuh>
#include "primitives.cuh"

#include <spira/cuda/error.cuh>
#include <spira/memory.hpp>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <cstddef>

namespace spira::detail {

namespace {

/// Queries the workspace of a CUB call, allocates it from the resources' pool and runs the call.
/// CUB treats a null workspace as a size query, so the workspace is never empty.
template <class Call>
void run_with_workspace(const cuda_resources& res, const char* what, Call&& call)
{
  std::size_t bytes = 0;
  SPIRA_CUDA_TRY(call(nullptr, bytes));
  buffer<std::byte> workspace(res, bytes > 0 ? bytes : 1, what);
  SPIRA_CUDA_TRY(call(workspace.data(), bytes));
}

template <class K>
void sort_pairs(const cuda_resources& res, ping_pong<K>& keys, ping_pong<offset_t>& values,
                std::int64_t n, int end_bit)
{
  if (n <= 1 || end_bit <= 0) {
    return;
  }
  device_guard guard(res.device);
  cub::DoubleBuffer<K> k(keys.current, keys.alternate);
  cub::DoubleBuffer<offset_t> v(values.current, values.alternate);
  run_with_workspace(res, "radix sort workspace", [&](void* storage, std::size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(storage, bytes, k, v, n, 0, end_bit, res.stream);
  });
  keys = {k.Current(), k.Alternate()};
  values = {v.Current(), v.Alternate()};
}

}  // namespace

void stable_sort_pairs(const cuda_resources& res, ping_pong<std::uint32_t>& keys,
                       ping_pong<offset_t>& values, std::int64_t n, int end_bit)
{
  sort_pairs(res, keys, values, n, end_bit);
}

void stable_sort_pairs(const cuda_resources& res, ping_pong<std::uint64_t>& keys,
                       ping_pong<offset_t>& values, std::int64_t n, int end_bit)
{
  sort_pairs(res, keys, values, n, end_bit);
}

void exclusive_sum_in_place(const cuda_resources& res, offset_t* data, std::int64_t n)
{
  if (n <= 0) {
    return;
  }
  device_guard guard(res.device);
  run_with_workspace(res, "prefix sum workspace", [&](void* storage, std::size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(storage, bytes, data, n, res.stream);
  });
}

}  // namespace spira::detail
