// The declaration `exceeds` (spira/accuracy.hpp) against finalize: for a pair the guard trusts,
// exceeds(dot, nx, ny, dim, bound) may hold only when finalize's value is above bound. The fused
// k-NN asks it with the value just above its list's last (the next float) and drops the pair when
// it holds, so the float it would have returned must be above the list's last: not even a tie.
// Pairs at every similarity and scale, and bounds on both sides of each pair's own value by a few
// units in the last place of float and of double.
#include <semirings/distances.hpp>
#include <spira/accuracy.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace spira::test {
namespace {

using distances::cosine;

/// A trusted pair of cosine: the dot product and the two squared norms.
template <class T>
struct cosine_pair {
  T dot;
  terms<T, 1> nx, ny;
};

/// Pairs with similarities over [-1, 1] (a third within 2^-18 of a few landmarks, where the root
/// and division round), squared norms from 2^-40 to 2^40; only those the guard trusts (the
/// kernel's guard: double, with the bounds of a float accumulator).
template <class T>
std::vector<cosine_pair<T>> trusted_pairs(std::uint32_t seed, int count)
{
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double landmarks[] = {-1.0, -0.5, 0.0, 0.25, 0.5, 0.75, 0.9, 0.99};
  std::vector<cosine_pair<T>> pairs;
  const accumulator_bounds bounds = accumulator_bounds_of<float>();
  while (int(pairs.size()) < count) {
    const double nx = std::exp2(80.0 * unit(rng) - 40.0);
    const double ny = std::exp2(80.0 * unit(rng) - 40.0);
    double sim = 2.0 * unit(rng) - 1.0;
    if (rng() % 3 == 0) {
      sim = landmarks[rng() % 8] + std::ldexp(2.0 * unit(rng) - 1.0, -18);
    }
    const cosine_pair<T> pair{T(sim * std::sqrt(nx * ny)), {T(nx)}, {T(ny)}};
    if (cosine{}.trusted<T>(pair.dot, pair.nx, pair.ny, 0, bounds)) {
      pairs.push_back(pair);
    }
  }
  return pairs;
}

/// Bounds around value v: v itself and its neighbours in T and in float, a few ulps apart, and
/// values well away on each side.
template <class T>
std::vector<T> bounds_around(T v)
{
  std::vector<T> out{v, T(0), T(0.5), T(1), T(1.5), T(2), v * T(0.9), v * T(1.1)};
  T below = v, above = v;
  float below_f = float(v), above_f = float(v);
  for (int step = 0; step < 4; ++step) {
    below = std::nextafter(below, -std::numeric_limits<T>::infinity());
    above = std::nextafter(above, std::numeric_limits<T>::infinity());
    below_f = std::nextafter(below_f, -std::numeric_limits<float>::infinity());
    above_f = std::nextafter(above_f, std::numeric_limits<float>::infinity());
    out.insert(out.end(), {below, above, T(below_f), T(above_f)});
  }
  return out;
}

/// exceeds in T never holds at a bound finalize's value does not pass, and holds at half the value
/// (value in [2^-8, 1.9]: far enough below for either margin).
template <class T>
void expect_exceeds_only_below(std::uint32_t seed)
{
  std::int64_t halves = 0;
  for (const cosine_pair<T>& p : trusted_pairs<T>(seed, 20000)) {
    const T value = cosine{}.finalize<T>(p.dot, p.nx, p.ny, 0);
    for (const T bound : bounds_around(value)) {
      if (cosine{}.exceeds<T>(p.dot, p.nx, p.ny, 0, bound)) {
        ASSERT_GT(value, bound) << "dot " << p.dot << " nx " << p.nx[0] << " ny " << p.ny[0];
      }
    }
    if (value >= T(0x1p-8) && value <= T(1.9)) {
      ++halves;
      ASSERT_TRUE(cosine{}.exceeds<T>(p.dot, p.nx, p.ny, 0, value / 2)) << "value " << value;
    }
  }
  EXPECT_GT(halves, 10000);
}

TEST(exceeds, cosine_holds_only_below_finalize_double)
{
  expect_exceeds_only_below<double>(7);
}

TEST(exceeds, cosine_holds_only_below_finalize_float)
{
  expect_exceeds_only_below<float>(8);
}

/// The fused k-NN's use: the list's last is a float; exceeds in double at the next float above it
/// must leave the pair's float value above the last (so it loses even a tie on the index).
TEST(exceeds, dropped_pairs_lose_to_the_list_even_on_ties)
{
  std::int64_t dropped = 0;
  for (const cosine_pair<double>& p : trusted_pairs<double>(9, 20000)) {
    const float value = float(cosine{}.finalize<double>(p.dot, p.nx, p.ny, 0));
    for (const double near : bounds_around(double(value))) {
      const float last = float(near);
      const double bound = double(std::nextafter(last, std::numeric_limits<float>::infinity()));
      if (cosine{}.exceeds<double>(p.dot, p.nx, p.ny, 0, bound)) {
        ++dropped;
        ASSERT_GT(value, last) << "dot " << p.dot << " nx " << p.nx[0] << " ny " << p.ny[0];
      }
    }
  }
  EXPECT_GT(dropped, 20000);  // at least about one bound a pair
}

TEST(exceeds, near_and_above_one_is_left_to_finalize)
{
  // A bound within 2^-20 of 1, or at or above it, is never decided by exceeds (finalize's value
  // lies in [0, 2] and the test's margin would not cover the rounding there).
  const terms<double, 1> n{1.0};
  for (const double bound : {1.0, 1.0 - 0x1p-22, 1.5, 2.0, 3.0}) {
    EXPECT_FALSE(cosine{}.exceeds<double>(-0.5, n, n, 0, bound)) << bound;
    EXPECT_FALSE(cosine{}.exceeds<double>(0.0, n, n, 0, bound)) << bound;
  }
  EXPECT_TRUE(cosine{}.exceeds<double>(0.0, n, n, 0, 0.5));   // value 1
  EXPECT_FALSE(cosine{}.exceeds<double>(0.5, n, n, 0, 0.5));  // value 0.5: a tie
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(cosine{}.exceeds<double>(0.0, n, n, 0, nan));
  EXPECT_FALSE(cosine{}.exceeds<double>(0.0, n, n, 0, std::numeric_limits<double>::infinity()));
}

TEST(exceeds, only_cosine_declares_it)
{
  static_assert(accuracy_traits<cosine, double>::has_exceeds);
  static_assert(!accuracy_traits<distances::manhattan, double>::has_exceeds);
  static_assert(!accuracy_traits<distances::euclidean, double>::has_exceeds);
  static_assert(!accuracy_traits<distances::correlation, double>::has_exceeds);
}

}  // namespace
}  // namespace spira::test
