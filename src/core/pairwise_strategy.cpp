// The CUDA pairwise strategies: names and which metric each can evaluate (both builds).
#include <spira/detail/enum_names.hpp>
#include <spira/distance.hpp>

#include <array>

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
  return detail::enum_from_string(name, strategies, "pairwise strategy", "strategies");
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
