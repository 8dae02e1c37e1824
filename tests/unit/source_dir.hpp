// The source tree's root, for tests that read committed files (profiles, measured results):
// $WORKSIZE_SOURCE_DIR, else the path CMake compiled in (robust to compiler launchers such as
// ccache that rewrite __FILE__ into a relative path).
#pragma once

#include <cstdlib>
#include <filesystem>

namespace worksize::test {

inline std::filesystem::path source_dir() {
    if (const char* env = std::getenv("WORKSIZE_SOURCE_DIR")) return env;
    return WORKSIZE_TEST_SOURCE_DIR;
}

}  // namespace worksize::test
