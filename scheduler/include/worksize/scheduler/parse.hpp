// Parsing of the sizes, strategies, local policies and priorities given on the command line.
#pragma once

#include <string>

#include "worksize/scheduler/types.hpp"

namespace worksize {

/// Parse "N" (N x N for 2-D kernels, N items for 1-D) or "WxH".
/// @throws InvalidArgument for 0, negative, non-numeric or overflowing sizes.
GlobalSize parse_size(const std::string& text, int dims);

Strategy parse_strategy(const std::string& s);
LocalPolicy parse_local_policy(const std::string& s);
Priority parse_priority(const std::string& s);

}  // namespace worksize
