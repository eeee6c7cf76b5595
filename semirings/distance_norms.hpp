// spira: the row norms the distance catalogue's structs declare (semirings/distances.hpp).
#pragma once

#include <spira/semiring.hpp>

namespace spira::distances {

using sum_of_squares = norm<square_map, plus_monoid>;
using row_sum = norm<identity_map, plus_monoid>;
using nonzero_count = norm<nonzero_map, plus_monoid>;

}  // namespace spira::distances
