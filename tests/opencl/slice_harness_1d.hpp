// Test harness shared by the 1-D kernel tests (sort, quad): local sizes of every kind the
// planner may choose and uneven planned slices.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "worksize/scheduler/types.hpp"

namespace worksize::test {

/// padded: 64 work-items (within the device) whatever the slice, the NDRange padded to whole
/// groups as the planner pads it (Assignment::padded_global): primes, 1 and slices below one
/// work-group included.
enum class LocalChoice { null, div8, non_pow2, one, padded };

inline const char* name(LocalChoice c) {
    switch (c) {
        case LocalChoice::null: return "null";
        case LocalChoice::div8: return "div8";
        case LocalChoice::non_pow2: return "nonpow2";
        case LocalChoice::padded: return "padded";
        default: return "one";
    }
}

/// A round-trip case's name: "n<items>_s<slices>_<local choice>".
inline std::string case_name(std::uint64_t items, int slices, LocalChoice c) {
    std::string s = "n";  // appended piecewise: GCC 12 warns falsely on "lit" + string&&
    s += std::to_string(items);
    s += "_s";
    s += std::to_string(slices);
    s += "_";
    s += name(c);
    return s;
}

/// A local size of kind `c` for a slice of `units` items (a divisor of it, within `max_wg`).
inline std::uint64_t pick_local(LocalChoice c, std::uint64_t units, std::uint64_t max_wg) {
    if (units == 0 || c == LocalChoice::null) return 0;
    if (c == LocalChoice::one) return 1;
    if (c == LocalChoice::padded) return std::min<std::uint64_t>(64, max_wg);
    std::uint64_t best = 1;
    for (std::uint64_t d = 1; d <= std::min(units, max_wg); ++d) {
        if (units % d) continue;
        if (c == LocalChoice::div8 && d >= 8) return d;
        if (c == LocalChoice::non_pow2 && !std::has_single_bit(d)) best = d;
        if (c == LocalChoice::div8) best = d;
    }
    return best;
}

/// Uneven planned slices: 1 -> 100 %, 2 -> 30/70 %, 3 -> 15/35/50 %.
inline std::vector<Assignment> plan(std::uint64_t n, int slices, LocalChoice c, std::uint64_t max_wg) {
    static const std::vector<std::vector<double>> shares = {{1.0}, {0.3, 0.7}, {0.15, 0.35, 0.5}};
    std::vector<Assignment> as;
    std::uint64_t off = 0;
    for (int i = 0; i < slices; ++i) {
        Assignment a;
        a.device = i;
        a.offset = off;
        a.units = i + 1 == slices ? n - off : std::uint64_t(shares[slices - 1][i] * double(n));
        a.share = double(a.units) / double(n);
        a.global = {a.units, 1};
        const std::uint64_t lx = pick_local(c, a.units, max_wg);
        a.local = {lx, lx ? 1u : 0u};
        a.padded_global = a.global;
        if (lx) a.padded_global.x = (a.units + lx - 1) / lx * lx;
        off += a.units;
        as.push_back(a);
    }
    return as;
}

}  // namespace worksize::test
