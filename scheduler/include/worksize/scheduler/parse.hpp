// Parsing of the sizes and priorities given on the command line (strategies and local policies are
// parsed by their registries, strategy.hpp and local_policy.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "worksize/scheduler/types.hpp"

namespace worksize {

/// Parse "N" (N x N for 2-D kernels, N items for 1-D) or "WxH".
/// @throws InvalidArgument for 0, negative, non-numeric or overflowing sizes, and for sizes of
/// more than kMaxPlanItems (2^53) work-items, which no plan takes.
GlobalSize parse_size(const std::string& text, int dims);

Priority parse_priority(const std::string& s);

/// A decimal number that is the whole text ("2.5", "1e3", "-4", "+4", ".5"; subnormals such as
/// 1e-308 too, which std::stod refuses), read with std::from_chars; nullopt for anything else:
/// empty, spaces, trailing characters, hex, inf and nan, and values beyond a double's range
/// (1e400, 1e-400).
std::optional<double> parse_number(std::string_view text);

}  // namespace worksize
