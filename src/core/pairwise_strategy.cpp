// The CUDA pairwise strategies: names and which metric each can evaluate (both builds).
#include <spira/distance.hpp>
#include <spira/error.hpp>

#include <array>
#include <string>

namespace spira {

namespace {
constexpr std::array<pairwise_strategy, 4> strategies{
  pairwise_strategy::automatic, pairwise_strategy::intersection, pairwise_strategy::hybrid,
  pairwise_strategy::dense};
}  // namespace

const char* to_string(pairwise_strategy s) noexcept
{
  switch (s) {
    case pairwise_strategy::automatic: return "automatic";
    case pairwise_strategy::intersection: return "intersection";
    case pairwise_strategy::hybrid: return "hybrid";
    case pairwise_strategy::dense: return "dense";
  }
  return "unknown";
}

pairwise_strategy pairwise_strategy_from_string(std::string_view name)
{
  for (const pairwise_strategy s : strategies) {
    if (name == to_string(s)) { return s; }
  }
  std::string valid;
  for (const pairwise_strategy s : strategies) {
    if (!valid.empty()) { valid += ", "; }
    valid += to_string(s);
  }
  throw invalid_argument(
    detail::concat("unknown pairwise strategy '", name, "'; valid strategies are: ", valid));
}

bool supports_strategy(metric m, pairwise_strategy s) noexcept
{
  switch (s) {
    case pairwise_strategy::automatic:
    case pairwise_strategy::intersection:
    case pairwise_strategy::hybrid: return true;
    case pairwise_strategy::dense:
      return m == metric::cosine || m == metric::euclidean || m == metric::sqeuclidean ||
             m == metric::correlation || m == metric::inner_product || m == metric::dice ||
             m == metric::russellrao || m == metric::hellinger;
  }
  return false;
}

}  // namespace spira
