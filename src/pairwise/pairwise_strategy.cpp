// The CUDA pairwise strategies: names and which metric each can evaluate (both builds).
#include <spira/detail/enum_names.hpp>
#include <spira/distance.hpp>

#include <array>
#include <utility>

namespace spira {

namespace {
constexpr std::array strategy_names{std::pair{pairwise_strategy::automatic, "automatic"},
                                    std::pair{pairwise_strategy::intersection, "intersection"},
                                    std::pair{pairwise_strategy::hybrid, "hybrid"},
                                    std::pair{pairwise_strategy::dense, "dense"}};
}  // namespace

const char* to_string(pairwise_strategy s) noexcept
{
  return detail::enum_name(strategy_names, s);
}

pairwise_strategy pairwise_strategy_from_string(std::string_view name)
{
  return detail::enum_value(strategy_names, name, "pairwise strategy", "strategies");
}

bool supports_strategy(metric m, pairwise_strategy s) noexcept
{
  switch (s) {
    case pairwise_strategy::automatic:
    case pairwise_strategy::intersection:
    case pairwise_strategy::hybrid:
      return true;
    case pairwise_strategy::dense:
      return m == metric::cosine || m == metric::euclidean || m == metric::sqeuclidean ||
             m == metric::correlation || m == metric::inner_product || m == metric::dice ||
             m == metric::russellrao || m == metric::hellinger;
  }
  return false;
}

}  // namespace spira
