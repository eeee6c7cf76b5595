// A deliberately naive top-k oracle for the selection tests: a full sort of every row by
// (value, index) with the comparison written out on doubles, independent of the library's keys.
// NaN is the worst value in both directions; -0.0 == +0.0; ties go to the smaller index.
#pragma once

#include <spira/memory.hpp>
#include <spira/resources.hpp>
#include <spira/select_k.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace spira::test {

inline double as_double(float v)
{
  return v;
}
inline double as_double(double v)
{
  return v;
}
inline double as_double(half v)
{
  return static_cast<float>(v);
}

template <class T>
T from_double(double v)
{
  if constexpr (std::is_same_v<T, half>) {
    return half(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

/// Expected output of one row: `k` entries (padded), best first when `sorted`, else by index.
template <class T>
struct oracle_row {
  std::vector<T> values;
  std::vector<std::int64_t> indices;
};

template <class T>
oracle_row<T> oracle_select(const std::vector<T>& row, const std::vector<std::int64_t>& reported,
                            std::int64_t k, bool largest, bool sorted)
{
  const auto n = static_cast<std::int64_t>(row.size());
  std::vector<std::int64_t> pos(n);
  for (std::int64_t i = 0; i < n; ++i) {
    pos[i] = i;
  }
  const auto before = [&](std::int64_t a, std::int64_t b) {
    const double x = as_double(row[a]);
    const double y = as_double(row[b]);
    const bool xn = std::isnan(x);
    const bool yn = std::isnan(y);
    if (xn != yn) {
      return yn;
    }  // a number ranks before NaN
    if (!xn && x != y) {
      return largest ? x > y : x < y;
    }
    return a < b;
  };
  std::sort(pos.begin(), pos.end(), before);
  const std::int64_t m = std::min(k, n);
  pos.resize(m);
  if (!sorted) {
    std::sort(pos.begin(), pos.end());
  }
  oracle_row<T> out;
  for (const auto p : pos) {
    out.values.push_back(row[p]);
    out.indices.push_back(reported.empty() ? p : reported[p]);
  }
  const double pad =
      largest ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  for (std::int64_t j = m; j < k; ++j) {
    out.values.push_back(from_double<T>(pad));
    out.indices.push_back(-1);
  }
  return out;
}

// ---- shared by the selection tests
// ---------------------------------------------------------------

/// Bitwise equality (the determinism promise is about bytes; NaN payloads included).
template <class T>
bool same_bits(const T& a, const T& b)
{
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

inline cuda_resources cuda_of(const host_resources&)
{
  return {};
}
inline cuda_resources cuda_of(const cuda_resources& r)
{
  return r;
}

/// A host or device copy of a host array.
template <class T, class Resources>
buffer<T> on(const Resources& res, const std::vector<T>& v)
{
  buffer<T> b(res, v.size(), "test input");
  copy(b.data(), b.space(), v.data(), memory_space::host, v.size(), cuda_of(res));
  return b;
}

template <class T, class IndexT>
struct result {
  std::vector<T> values;
  std::vector<IndexT> indices;
};

/// The oracle's rows x k output for the dense rows of `in` (n elements each, leading dimension ld).
template <class T, class IndexT>
result<T, IndexT> expected_rows(const std::vector<T>& in, std::int64_t rows, std::int64_t n,
                                std::int64_t ld, std::int64_t k, select_order order, bool sorted)
{
  result<T, IndexT> e;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::vector<T> row(in.begin() + r * ld, in.begin() + r * ld + n);
    auto o = oracle_select(row, {}, k, order == select_order::largest, sorted);
    e.values.insert(e.values.end(), o.values.begin(), o.values.end());
    for (auto i : o.indices) {
      e.indices.push_back(static_cast<IndexT>(i));
    }
  }
  return e;
}

/// Byte equality of two rows x k outputs, the first difference named by row and slot.
template <class T, class IndexT>
void expect_equal(const result<T, IndexT>& got, const result<T, IndexT>& want, std::int64_t k,
                  const std::string& what)
{
  ASSERT_EQ(got.values.size(), want.values.size()) << what;
  ASSERT_EQ(got.indices.size(), want.indices.size()) << what;
  for (std::size_t j = 0; j < want.values.size(); ++j) {
    ASSERT_EQ(got.indices[j], want.indices[j])
        << what << ": index at row " << j / k << ", slot " << j % k;
    ASSERT_TRUE(same_bits(got.values[j], want.values[j]))
        << what << ": value at row " << j / k << ", slot " << j % k << ": got "
        << as_double(got.values[j]) << ", want " << as_double(want.values[j]);
  }
}

}  // namespace spira::test
