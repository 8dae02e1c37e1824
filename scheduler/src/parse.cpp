// Parsing of the sizes and priorities the command line accepts (strategies and local policies: their registries).
#include "worksize/scheduler/parse.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include "worksize/scheduler/planner.hpp"

namespace worksize {

namespace {

[[noreturn]] void bad_size(const std::string& text, const std::string& why) {
    throw InvalidArgument("invalid size '" + text + "': " + why);
}

/// Refuse a size the planner cannot take (its shares and padding are exact up to 2^53
/// work-items), here where it is parsed: what computes with it later need not overflow.
GlobalSize within_plan(const std::string& text, GlobalSize g) {
    if (g.x > kMaxPlanItems / g.y)
        bad_size(text, "more than 2^53 (" + std::to_string(kMaxPlanItems) + ") work-items, the most a plan takes");
    return g;
}

/// Parse a positive decimal integer that is the whole of `s`; nullopt-like false on failure.
bool parse_positive(std::string_view s, std::uint64_t& out, bool& overflow) {
    overflow = false;
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec == std::errc::result_out_of_range) {
        overflow = true;
        return false;
    }
    return ec == std::errc{} && p == s.data() + s.size() && out > 0;
}

}  // namespace

GlobalSize parse_size(const std::string& text, int dims) {
    if (dims != 1 && dims != 2)
        throw InvalidArgument("invalid size '" + text + "': only 1-D and 2-D kernels have sizes");
    const std::string expected = dims == 2
                                     ? "expected N or WxH with positive integers"
                                     : "expected N, a positive integer (1-D kernel)";
    const auto sep = text.find_first_of("xX");
    std::uint64_t w = 0, h = 0;
    bool overflow = false;
    if (sep == std::string::npos) {
        if (!parse_positive(text, w, overflow))
            bad_size(text, overflow ? "too large" : expected);
        if (dims == 1) return within_plan(text, {w, 1});
        if (w > std::numeric_limits<std::uint64_t>::max() / w) bad_size(text, "too large");
        return within_plan(text, {w, w});
    }
    if (dims == 1) bad_size(text, "a 1-D kernel takes one number N, not WxH");
    const std::string_view all(text);
    if (!parse_positive(all.substr(0, sep), w, overflow))
        bad_size(text, overflow ? "too large" : expected);
    if (!parse_positive(all.substr(sep + 1), h, overflow))
        bad_size(text, overflow ? "too large" : expected);
    if (h > std::numeric_limits<std::uint64_t>::max() / w) bad_size(text, "too large");
    return within_plan(text, {w, h});
}

Priority parse_priority(const std::string& s) {
    if (s == "x") return Priority::x;
    if (s == "y") return Priority::y;
    throw InvalidArgument("unknown priority '" + s + "' (valid: x, y)");
}

std::optional<double> parse_number(std::string_view text) {
    // from_chars takes no '+', but people write it ("+4", "1e+3" it takes).
    if (text.size() > 1 && text[0] == '+' && text[1] != '-' && text[1] != '+') text.remove_prefix(1);
    double v = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, v);
    if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(v)) return std::nullopt;
    return v;
}

}  // namespace worksize
