// The parsers' fuzz targets (targets.hpp) for libFuzzer (clang, -fsanitize=fuzzer): one
// executable for the three, the parser named by WORKSIZE_FUZZ_PARSER (profile, store or
// job_file; docs/testing.md). A broken contract or an unexpected exception escapes and aborts,
// which libFuzzer reports as a crash with the input saved.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "targets.hpp"

namespace {
worksize::fuzz::Parser g_parser = worksize::fuzz::Parser::profile;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    const char* name = std::getenv("WORKSIZE_FUZZ_PARSER");
    if (!name || !worksize::fuzz::parse_parser(name, &g_parser)) {
        std::fprintf(stderr, "worksize_libfuzzer: set WORKSIZE_FUZZ_PARSER to profile, store or job_file\n");
        std::exit(2);
    }
    if (const char* dir = std::getenv("WORKSIZE_FUZZ_JOB_DIR")) worksize::fuzz::set_job_dir(dir);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    (void)worksize::fuzz::run_one(g_parser, std::string_view(reinterpret_cast<const char*>(data), size));
    return 0;
}
