// Text for numbers in messages, shared by the scheduler and the runtime. Pure C++.
#pragma once

#include <string>

namespace worksize {

/// `s` with `precision` significant digits (the stream's default notation) and " s":
/// format_seconds(0.0123456, 3) is "0.0123 s".
std::string format_seconds(double s, int precision);

}  // namespace worksize
