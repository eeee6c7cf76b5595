// spira: owning memory in host or device space.
//
// `buffer<T>` is a move-only array of trivially copyable T that lives either in host memory or in
// device memory of one CUDA device. Device buffers are allocated stream-ordered from the resources'
// memory pool and freed on the same stream. Allocation failure throws spira::out_of_memory with the
// sizes involved; no allocation failure aborts the process.
#pragma once

#include <spira/error.hpp>
#include <spira/resources.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace spira {

/// Where the elements of a buffer, matrix or view live.
enum class memory_space { host, device };

[[nodiscard]] constexpr const char* to_string(memory_space s) noexcept
{
  return s == memory_space::host ? "host" : "device";
}

namespace detail {

// Implemented in the compiled library (src/core/memory.cpp and src/cuda/memory.cu). The `what`
// string names the object being allocated in out-of-memory messages.
void* host_allocate(std::size_t bytes, const char* what);
void host_deallocate(void* p) noexcept;
void* device_allocate(std::size_t bytes, const cuda_resources& res, const char* what);
void device_deallocate(void* p, const cuda_resources& res) noexcept;
/// Copies `bytes` between any two spaces; device copies are ordered on `res.stream` and this call
/// returns after the copy completed when either side is host memory.
void copy_bytes(void* dst, memory_space dst_space, const void* src, memory_space src_space,
                std::size_t bytes, const cuda_resources& res);
void fill_zero_bytes(void* dst, memory_space space, std::size_t bytes, const cuda_resources& res);
/// x = double(float(x)) for the rows x cols elements (leading dimension ld) of a device matrix:
/// the k-NN graph ranks double distances as the floats it returns.
void round_to_float_in_place(double* data, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                             const cuda_resources& res);

}  // namespace detail

/// What the machine (or the container) this process runs in lets it allocate on the host.
struct host_memory_info {
  std::uint64_t physical = 0;  ///< MemTotal (or the page count from sysconf), bytes
  /// MemAvailable: bytes free without swapping (physical if unknown)
  std::uint64_t available = 0;
  /// The tightest memory limit of the process' cgroup and its ancestors (v2 memory.max, v1
  /// memory.limit_in_bytes); empty when there is none (or it exceeds physical memory).
  std::optional<std::uint64_t> cgroup_limit;
  /// What the cgroup already uses (memory.current / memory.usage_in_bytes) less its inactive file
  /// cache (reclaimable); empty without a limit.
  std::optional<std::uint64_t> cgroup_usage;

  /// Bytes this process can still allocate: MemAvailable, and at most the cgroup's limit minus
  /// its usage.
  [[nodiscard]] std::uint64_t headroom() const noexcept;
};

/// Reads /proc/meminfo, /proc/self/cgroup and the cgroup's files (cgroup v2 under
/// /sys/fs/cgroup, v1 under /sys/fs/cgroup/memory). `root` prefixes every path (tests point it at
/// a directory tree that mimics those files). Missing or unreadable files give the fallbacks above.
[[nodiscard]] host_memory_info read_host_memory(const std::filesystem::path& root = "/");

/// The default host memory budget of every operation that tiles its work (knn_graph's
/// memory_budget = 0, the CLI's --memory-budget-mb): half of the headroom (the other half is left
/// for the inputs' copies, the outputs and the allocator), at most a quarter of physical memory,
/// at least 16 MiB. See docs/knn.md.
[[nodiscard]] std::size_t default_host_memory_budget(const host_memory_info& info);
/// The same for the machine this process runs on (read_host_memory()).
[[nodiscard]] std::size_t default_host_memory_budget();

template <class T>
class buffer {
  static_assert(std::is_trivially_copyable_v<T>, "spira::buffer holds trivially copyable types");

 public:
  using value_type = T;

  buffer() = default;

  /// Uninitialised host buffer of n elements.
  buffer(const host_resources&, std::size_t n, const char* what = "buffer")
      : size_(n), space_(memory_space::host)
  {
    if (n > 0) {
      data_ = static_cast<T*>(detail::host_allocate(bytes_of(n, what), what));
    }
  }

  /// Uninitialised device buffer of n elements, allocated on res.stream from res.memory_pool.
  buffer(const cuda_resources& res, std::size_t n, const char* what = "buffer")
      : size_(n), space_(memory_space::device), cuda_(res)
  {
    if (n > 0) {
      data_ = static_cast<T*>(detail::device_allocate(bytes_of(n, what), res, what));
    }
  }

  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  buffer(buffer&& o) noexcept { swap(o); }
  buffer& operator=(buffer&& o) noexcept
  {
    if (this != &o) {
      buffer tmp(std::move(o));
      swap(tmp);
    }
    return *this;
  }
  ~buffer() { release(); }

  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] memory_space space() const noexcept { return space_; }
  /// The CUDA resources a device buffer was allocated with (default-constructed for host buffers).
  [[nodiscard]] const cuda_resources& cuda() const noexcept { return cuda_; }

  /// Host-only element access.
  [[nodiscard]] std::span<T> host_span()
  {
    detail::expects(space_ == memory_space::host, "buffer::host_span: buffer is in device memory");
    return {data_, size_};
  }
  [[nodiscard]] std::span<const T> host_span() const
  {
    detail::expects(space_ == memory_space::host, "buffer::host_span: buffer is in device memory");
    return {data_, size_};
  }

  /// Keeps the first n elements (n <= size()) in place; the allocation is released whole.
  void shrink(std::size_t n)
  {
    detail::expects(n <= size_, "buffer::shrink: ", n, " elements is more than the ", size_,
                    " it holds");
    size_ = n;
  }

  void swap(buffer& o) noexcept
  {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(space_, o.space_);
    std::swap(cuda_, o.cuda_);
  }

 private:
  static std::size_t bytes_of(std::size_t n, const char* what)
  {
    detail::expects<out_of_memory>(n <= static_cast<std::size_t>(-1) / sizeof(T),
                                   "cannot allocate ", what, ": ", n, " elements of ", sizeof(T),
                                   " bytes overflow size_t");
    return n * sizeof(T);
  }

  void release() noexcept
  {
    if (data_ == nullptr) {
      return;
    }
    if (space_ == memory_space::host) {
      detail::host_deallocate(data_);
    } else {
      detail::device_deallocate(data_, cuda_);
    }
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  memory_space space_ = memory_space::host;
  cuda_resources cuda_{};
};

/// Copies `n` elements between spaces (see detail::copy_bytes for ordering).
template <class T>
void copy(T* dst, memory_space dst_space, const T* src, memory_space src_space, std::size_t n,
          const cuda_resources& res = {})
{
  if (n > 0) {
    detail::copy_bytes(dst, dst_space, src, src_space, n * sizeof(T), res);
  }
}

/// A host buffer holding a copy of `v`.
template <class T>
buffer<T> to_buffer(const host_resources& res, std::span<const T> v, const char* what = "buffer")
{
  buffer<T> b(res, v.size(), what);
  if (!v.empty()) {
    copy(b.data(), memory_space::host, v.data(), memory_space::host, v.size());
  }
  return b;
}

/// Copies a buffer of either space into a std::vector on the host.
template <class T>
std::vector<T> to_host_vector(const buffer<T>& b)
{
  std::vector<T> out(b.size());
  copy(out.data(), memory_space::host, b.data(), b.space(), b.size(), b.cuda());
  return out;
}

}  // namespace spira
