// Builders of data-job declarations for the unit tests (test_data_spec.cpp, test_data_model.cpp):
// buffers, argument accesses and a slice of a plan, as plain structs.
#pragma once

#include <cstdint>
#include <string>

#include "worksize/scheduler/data_spec.hpp"

namespace worksize::test {

inline ArgDecl access(ArgKind kind, int buffer, std::uint64_t depth = 0) {
    ArgDecl a;
    a.kind = kind;
    a.buffer = buffer;
    a.depth = depth;
    return a;
}
inline ArgDecl scalar(ElemType type, double value) {
    ArgDecl a;
    a.kind = ArgKind::scalar;
    a.scalar_type = type;
    a.value = value;
    return a;
}
inline ArgDecl plain(ArgKind kind) {
    ArgDecl a;
    a.kind = kind;
    return a;
}

inline BufferDecl split(const std::string& name, std::uint64_t pitch, bool input = false, bool output = false) {
    BufferDecl b;
    b.name = name;
    b.layout = BufferLayout::split;
    b.pitch = pitch;
    b.input = input;
    b.output = output;
    return b;
}
inline BufferDecl shared(const std::string& name, std::uint64_t count, bool input = true) {
    BufferDecl b;
    b.name = name;
    b.layout = BufferLayout::shared;
    b.count = count;
    b.input = input;
    return b;
}

/// A slice of a plan: `units` units from `offset` on `device` of `rank`.
inline Assignment slice(int device, int rank, std::uint64_t offset, std::uint64_t units) {
    Assignment a;
    a.device = device;
    a.rank = rank;
    a.offset = offset;
    a.units = units;
    return a;
}

/// validate()'s message for `s`, or "" if it accepts it.
inline std::string refusal(const DataJobSpec& s) {
    try {
        validate(s);
    } catch (const InvalidArgument& e) {
        return e.what();
    }
    return "";
}

}  // namespace worksize::test
