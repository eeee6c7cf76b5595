// spira selection: several device arrays carved out of one allocation.
//
// A call that needs a dozen temporary arrays would otherwise make a dozen stream-ordered
// allocations before its first kernel, and the device waits for all of them. Reserve every array
// first, allocate once, then take the pointers.
#pragma once

#include <spira/error.hpp>
#include <spira/memory.hpp>
#include <spira/resources.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>

namespace spira::selection {

class workspace {
 public:
  /// Every array starts at a multiple of this many bytes.
  static constexpr std::size_t alignment = 256;

  /// A reserved array of T: its place in the allocation.
  template <class T>
  struct slot {
    std::size_t offset = 0;
  };

  /// Reserves n elements of T (n >= 0).
  template <class T>
  slot<T> reserve(std::int64_t n, const char* what)
  {
    const std::size_t at = (bytes_ + alignment - 1) / alignment * alignment;
    detail::expects<out_of_memory>(
        n >= 0 && static_cast<std::uint64_t>(n) <=
                      (std::numeric_limits<std::size_t>::max() - at) / sizeof(T),
        "select_k workspace: ", what, " needs ", n, " elements of ", sizeof(T),
        " bytes, more than an allocation holds");
    bytes_ = at + static_cast<std::size_t>(n) * sizeof(T);
    return slot<T>{at};
  }

  /// One device allocation for everything reserved so far.
  void allocate(const cuda_resources& res, const char* what)
  {
    memory_ = buffer<unsigned char>(res, bytes_ > 0 ? bytes_ : 1, what);
  }

  template <class T>
  T* operator[](slot<T> s) noexcept
  {
    return reinterpret_cast<T*>(memory_.data() + s.offset);
  }

 private:
  std::size_t bytes_ = 0;
  buffer<unsigned char> memory_;
};

}  // namespace spira::selection
