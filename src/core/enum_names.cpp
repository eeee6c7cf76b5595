// The names of the enums of the k-NN and top-k APIs, and their reverse (both builds). Metric and
// pairwise strategy names live with their catalogues (src/host/metric.cpp,
// src/core/pairwise_strategy.cpp).
#include <spira/detail/enum_names.hpp>
#include <spira/knn.hpp>
#include <spira/select_k.hpp>

#include <array>

namespace spira {

const char* to_string(knn_algo a) noexcept
{
  switch (a) {
    case knn_algo::automatic: return "automatic";
    case knn_algo::fused: return "fused";
    case knn_algo::tiled: return "tiled";
  }
  return "unknown";
}

knn_algo knn_algo_from_string(std::string_view name)
{
  constexpr std::array all{knn_algo::automatic, knn_algo::fused, knn_algo::tiled};
  return detail::enum_from_string(name, all, "k-NN algorithm", "algorithms");
}

const char* to_string(knn_graph_mode m) noexcept
{
  switch (m) {
    case knn_graph_mode::distance: return "distance";
    case knn_graph_mode::connectivity: return "connectivity";
  }
  return "unknown";
}

knn_graph_mode knn_graph_mode_from_string(std::string_view name)
{
  constexpr std::array all{knn_graph_mode::distance, knn_graph_mode::connectivity};
  return detail::enum_from_string(name, all, "graph mode", "modes");
}

const char* to_string(select_order o) noexcept
{
  switch (o) {
    case select_order::smallest: return "smallest";
    case select_order::largest: return "largest";
  }
  return "unknown";
}

select_order select_order_from_string(std::string_view name)
{
  constexpr std::array all{select_order::smallest, select_order::largest};
  return detail::enum_from_string(name, all, "order", "orders");
}

const char* to_string(select_algo a) noexcept
{
  switch (a) {
    case select_algo::automatic: return "automatic";
    case select_algo::binary_search: return "binary_search";
    case select_algo::radix: return "radix";
    case select_algo::delegate: return "delegate";
  }
  return "unknown";
}

select_algo select_algo_from_string(std::string_view name)
{
  constexpr std::array all{select_algo::automatic, select_algo::binary_search,
                           select_algo::radix, select_algo::delegate};
  return detail::enum_from_string(name, all, "selection algorithm", "algorithms");
}

}  // namespace spira
