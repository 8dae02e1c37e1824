// The fuzz targets of the three parsers (docs/testing.md, "Fuzzing"): the profile reader, the
// database (store) reader and the job-file reader. Each takes any bytes and answers whether the
// parser accepted them; a parser throwing its documented exception type is a rejection. Anything
// else escapes: a broken round trip or contract throws Broken, any other exception type (a
// nlohmann error leaking, a private error type) propagates as it is, and the sanitizers report
// crashes, overflows and undefined behaviour.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace worksize::fuzz {

enum class Parser { profile, store, job_file };
inline constexpr Parser kParsers[] = {Parser::profile, Parser::store, Parser::job_file};
const char* to_string(Parser p);
/// "profile", "store" or "job_file"; false for any other name.
bool parse_parser(std::string_view name, Parser* out);

/// A contract of a parser that an input broke (e.g. what it accepted does not read back).
struct Broken : std::logic_error {
    using std::logic_error::logic_error;
};

/// Where a job file's relative paths start (its kernel sources): examples/jobs of the source
/// tree unless set.
void set_job_dir(std::string dir);
const std::string& job_dir();

/// Runs one input through `p`'s parser and what consumes its result. true: accepted.
/// @throws Broken, or whatever unexpected the parser threw.
bool run_one(Parser p, std::string_view input);

}  // namespace worksize::fuzz
