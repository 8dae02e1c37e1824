// Parsing of the sizes and priorities given on the command line (strategies and local policies are
// parsed by their registries, strategy.hpp and local_policy.hpp).
#pragma once

#include <string>

#include "worksize/scheduler/types.hpp"

namespace worksize {

/// Parse "N" (N x N for 2-D kernels, N items for 1-D) or "WxH".
/// @throws InvalidArgument for 0, negative, non-numeric or overflowing sizes, and for sizes of
/// more than kMaxPlanItems (2^53) work-items, which no plan takes.
GlobalSize parse_size(const std::string& text, int dims);

Priority parse_priority(const std::string& s);

}  // namespace worksize
