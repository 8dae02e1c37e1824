// Text for numbers in messages, shared by the scheduler and the runtime. Pure C++.
#pragma once

#include <string>

namespace worksize {

/// `s` with `precision` significant digits (the stream's default notation) and " s":
/// format_seconds(0.0123456, 3) is "0.0123 s".
std::string format_seconds(double s, int precision);

/// Whether `text` is valid UTF-8: what the JSON documents (reports, the database) can hold.
bool valid_utf8(const std::string& text);
/// `text` for a message: each byte that is not valid UTF-8 as U+FFFD, control characters escaped.
std::string printable(const std::string& text);

}  // namespace worksize
