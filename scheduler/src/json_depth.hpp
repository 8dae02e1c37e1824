// Internal: the nesting limit of the JSON files the scheduler reads (profiles, the database, job
// files). nlohmann's parser is iterative, but copying, comparing and dumping a value recurse:
// a job file nested 84,000 levels deep overflowed the stack (found by tests/fuzz). The readers
// refuse a document nested deeper than this before parsing it; theirs need 6 levels.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace worksize {

inline constexpr std::size_t kMaxJsonDepth = 64;

/// The deepest nesting of [ and { outside strings in `text` (JSON or not).
inline std::size_t json_nesting(std::string_view text) {
    std::size_t depth = 0, deepest = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest) deepest = depth;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

/// "" when `text` is within kMaxJsonDepth, else why not: "nested deeper than 64 levels".
inline std::string json_depth_problem(std::string_view text) {
    if (json_nesting(text) <= kMaxJsonDepth) return {};
    return "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
}

}  // namespace worksize
