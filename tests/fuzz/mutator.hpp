// The mutations of the fuzz driver (driver.cpp): from a seed corpus, byte flips, inserts,
// deletes, copies and splices; JSON tokens swapped (numbers for huge, negative, fractional,
// out-of-range ones, strings for keywords, empty, long ones, nesting); and, where the input is
// JSON, edits of its tree (values replaced, keys removed, added and duplicated, nodes wrapped,
// grafted from another file). A seeded generator makes them: the same seed, the same inputs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace worksize::fuzz {

class Mutator {
public:
    /// `keys` and `strings`: the words it inserts (object keys and string values).
    Mutator(std::uint64_t seed, std::vector<std::string> keys, std::vector<std::string> strings);
    ~Mutator();
    Mutator(const Mutator&) = delete;
    Mutator& operator=(const Mutator&) = delete;

    /// A mutant of `base`; `pool` (never empty) gives splices and grafts.
    std::string mutate(const std::string& base, const std::vector<std::string>& pool);

private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

/// The string values every parser's inputs get, whatever the corpus: keywords of the formats,
/// awkward expressions and paths, escapes, invalid UTF-8.
std::vector<std::string> builtin_strings();

/// Adds `j`'s object keys to `keys` and its short string values to `strings`.
void words_of(const nlohmann::json& j, std::vector<std::string>& keys, std::vector<std::string>& strings);

/// Sorts `v` and drops its duplicates.
void unique(std::vector<std::string>& v);

}  // namespace worksize::fuzz
