// The Google tests' main (unit_tests, opencl_tests): the test tiers of docs/testing.md.
// WORKSIZE_TEST_TIER selects them: unset or "default" leaves out the cases whose suite or
// instantiation name starts with "Full" (the long sweeps); "full" runs every case. CTest runs
// these binaries in groups (tests/CMakeLists.txt, worksize_gtest_groups): a group given
// --worksize-require-tests fails when its filter selects no case, so that a renamed suite cannot
// quietly leave a group empty.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace {

/// The tier's filter: `filter` with the Full* cases left out unless the tier is "full".
std::string tier_filter(const std::string& filter, const std::string& tier) {
    if (tier == "full") return filter;
    const std::string full = "Full*:*/Full*";
    return filter + (filter.find('-') == std::string::npos ? "-" : ":") + full;
}

}  // namespace

int main(int argc, char** argv) {
    bool require_tests = false;
    int kept = 1;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--worksize-require-tests") == 0)
            require_tests = true;
        else
            argv[kept++] = argv[i];
    }
    argc = kept;
    ::testing::InitGoogleTest(&argc, argv);
    const char* env = std::getenv("WORKSIZE_TEST_TIER");
    const std::string tier = env && *env ? env : "default";
    if (tier != "default" && tier != "full") {
        std::cerr << "WORKSIZE_TEST_TIER must be default or full, not '" << tier << "'\n";
        return 2;
    }
    GTEST_FLAG_SET(filter, tier_filter(GTEST_FLAG_GET(filter), tier));
    const int rc = RUN_ALL_TESTS();
#if defined(__SANITIZE_ADDRESS__)
    // The leak check now, while PoCL's threads are idle: at exit, LeakSanitizer's tracer could
    // crash ("Tracer caught signal 11") while they were torn down, twice in a row under load.
    // After this call the end-of-process check does not run; leaks still fail the process.
    __lsan_do_leak_check();
#endif
    if (require_tests && ::testing::UnitTest::GetInstance()->test_to_run_count() == 0) {
        std::cerr << "no test matches --gtest_filter=" << GTEST_FLAG_GET(filter) << " (tier " << tier << ")\n";
        return 1;
    }
    return rc;
}
