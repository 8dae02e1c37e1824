// The interp tests' cases and their job options (test_interp.cpp, test_interp_job.cpp): a size
// with kernel parameters, and the options of the pixels-per-work-item (vw), rows-per-work-item
// (ry) and staged variants.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "worksize/runtime/kernel_job.hpp"

namespace worksize::interp_test {

struct Case {
    std::uint64_t w, h;
    nlohmann::json params;
    const char* name;
};

inline JobOptions options(const Case& c, std::uint64_t iterations = 1) {
    JobOptions o;
    o.size = {c.w, c.h};
    o.iterations = iterations;
    o.seed = 7;
    o.params = c.params;
    return o;
}

inline JobOptions with_vw(const Case& c, std::uint64_t vw) {
    JobOptions o = options(c);
    o.params["vw"] = vw;
    return o;
}

inline JobOptions with_blocks(const Case& c, std::uint64_t vw, std::uint64_t ry) {
    JobOptions o = with_vw(c, vw);
    o.params["ry"] = ry;
    return o;
}

inline JobOptions staged(const Case& c, std::uint64_t vw, std::uint64_t ry) {
    JobOptions o = with_blocks(c, vw, ry);
    o.params["stage"] = 1;
    return o;
}

}  // namespace worksize::interp_test
