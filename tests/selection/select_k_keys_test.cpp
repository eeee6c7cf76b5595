// The order-preserving keys select_k's radix and binary search work on (selection/keys.hpp): half
// conversions for every 16-bit pattern, the bits radix_narrow keeps, and every key map inverted
// (NaN set apart, signed zeros and infinities in place), for each value type.
#include "selection/keys.hpp"
#include "selection/select_k_support.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace spira::test {
namespace {

TEST(select_k, half_conversion_round_trips)
{
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const auto h = half::from_bits(static_cast<std::uint16_t>(b));
    const float f = static_cast<float>(h);
    if (std::isnan(f)) {
      continue;
    }
    EXPECT_EQ(half(f).bits, h.bits) << b;
  }
  EXPECT_EQ(half(1.0f).bits, 0x3c00);
  EXPECT_EQ(half(65504.0f).bits, 0x7bff);
  EXPECT_EQ(half(65520.0f).bits, 0x7c00);            // rounds to infinity
  EXPECT_EQ(half(1.0f + 1.0f / 2048).bits, 0x3c00);  // tie to even
  EXPECT_EQ(half(1.0f + 3.0f / 2048).bits, 0x3c02);
  EXPECT_TRUE(std::isnan(static_cast<float>(half(std::numeric_limits<float>::quiet_NaN()))));
}

/// key_traits<T>::from_key inverts to_key bit for bit, except for the keys that several values
/// share (zero's, for -0 and +0, and the worst, for every NaN), which exact_key reports; and
/// number_key, the map without the NaN rule, puts a value inside number_key_range iff it is a
/// number, where it agrees with to_key.
template <class T, class Bits>
void expect_keys_invert(Bits bits, bool largest)
{
  using traits = selection::key_traits<T>;
  const T v = std::bit_cast<T>(bits);
  double d = 0;
  if constexpr (std::is_same_v<T, half>) {
    d = static_cast<float>(v);
  } else {
    d = static_cast<double>(v);
  }
  const auto key = traits::to_key(v, largest);
  const auto number = traits::number_key(v, largest);
  ASSERT_EQ(selection::number_key_range<T>(largest).contains(number), !std::isnan(d))
      << type_name<T>() << " bits " << bits;
  if (!std::isnan(d)) {
    ASSERT_EQ(number, key) << type_name<T>() << " bits " << bits;
  }
  const bool shared = std::isnan(d) || d == 0;
  ASSERT_EQ(traits::exact_key(key, largest), !shared) << type_name<T>() << " bits " << bits;
  if (!shared) {
    EXPECT_EQ(std::bit_cast<Bits>(traits::from_key(key, largest)), bits) << type_name<T>();
  } else if (d == 0) {
    EXPECT_EQ(std::bit_cast<Bits>(traits::from_key(key, largest)), Bits{0}) << type_name<T>();
  }
}

TEST(select_k, radix_narrow_keeps_the_bits_the_keys_in_question_share)
{
  using selection::radix_narrow;
  // Chosen bin 0x12 of the top 8 bits; the row's keys span [0x12345600, 0x123456ff]: the next
  // digit is the lowest 8 bits.
  std::uint32_t prefix = 0x12000000u;
  EXPECT_EQ(radix_narrow(prefix, 24, 0x12345600u, 0x123456ffu), 8);
  EXPECT_EQ(prefix, 0x12345600u);
  // The extremes lie outside the bin: the bin's own ends bound the keys in question.
  prefix = 0x12000000u;
  EXPECT_EQ(radix_narrow(prefix, 24, 0x00000001u, 0xfffffff0u), 24);
  EXPECT_EQ(prefix, 0x12000000u);
  // Only the row's smallest key can be in the bin's upper part: [0x12ff0000, 0x12ffffff].
  prefix = 0x12000000u;
  EXPECT_EQ(radix_narrow(prefix, 24, 0x12ff0000u, 0xffffffffu), 16);
  EXPECT_EQ(prefix, 0x12ff0000u);
  // One key value in question: 0 bits left, prefix is that key.
  prefix = 0x12000000u;
  EXPECT_EQ(radix_narrow(prefix, 24, 0x12abcdefu, 0x12abcdefu), 0);
  EXPECT_EQ(prefix, 0x12abcdefu);
  // The last digit (shift 0) always leaves one key.
  prefix = 0x123456aau;
  EXPECT_EQ(radix_narrow(prefix, 0, 0x0u, 0xffffffffu), 0);
  EXPECT_EQ(prefix, 0x123456aau);
  // 64-bit keys: extremes 2^40 and 3 * 2^40 in bin 0 differ from bit 41 down.
  std::uint64_t wide = 0;
  EXPECT_EQ(radix_narrow(wide, 56, std::uint64_t{1} << 40, std::uint64_t{3} << 40), 42);
  EXPECT_EQ(wide, 0u);
  wide = std::uint64_t{0x7f} << 56;
  EXPECT_EQ(radix_narrow(wide, 56, wide | 5u, wide | 7u), 2);
  EXPECT_EQ(wide, (std::uint64_t{0x7f} << 56) | 4u);
}

TEST(select_k, key_maps_invert_and_set_nan_apart)
{
  for (const bool largest : {false, true}) {
    for (std::uint32_t b = 0; b < 0x10000u; ++b) {
      expect_keys_invert<half>(static_cast<std::uint16_t>(b), largest);
    }
    // Every float exponent and sign with a spread of mantissas, and the neighbours of the
    // special values.
    for (std::uint64_t b = 0; b < (1ull << 32); b += 65521) {
      expect_keys_invert<float>(static_cast<std::uint32_t>(b), largest);
    }
    for (const std::uint32_t b : {0x0u, 0x80000000u, 0x1u, 0x80000001u, 0x7f7fffffu, 0x7f800000u,
                                  0xff800000u, 0x7f800001u, 0xffc00000u, 0x7fffffffu}) {
      expect_keys_invert<float>(b, largest);
    }
    std::mt19937_64 gen(7);
    for (int i = 0; i < 200000; ++i) {
      expect_keys_invert<double>(gen(), largest);
    }
    for (const std::uint64_t b : {0x0ull, 0x8000000000000000ull, 0x1ull, 0x7ff0000000000000ull,
                                  0xfff0000000000000ull, 0x7ff0000000000001ull}) {
      expect_keys_invert<double>(b, largest);
    }
  }
}

}  // namespace
}  // namespace spira::test
