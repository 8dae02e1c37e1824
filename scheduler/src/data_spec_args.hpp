// Internal: how messages about a data job's declaration name a kernel's argument, shared by
// data_spec.cpp (the slices' checks) and data_spec_checks.cpp (validate()).
#pragma once

#include <cstddef>
#include <string>

#include "worksize/scheduler/data_spec.hpp"

namespace worksize::detail {

/// "kernel 'K', argument I ('BUFFER')", the buffer's name where the argument names a declared one.
inline std::string arg_name(const DataJobSpec& s, const KernelDecl& k, std::size_t i) {
    std::string n = "kernel '" + k.name + "', argument " + std::to_string(i);
    const int b = k.args[i].buffer;
    if (b >= 0 && static_cast<std::size_t>(b) < s.buffers.size()) n += " ('" + s.buffers[std::size_t(b)].name + "')";
    return n;
}

}  // namespace worksize::detail
