// The declarations the data-job declaration's tests share (test_data_spec.cpp,
// test_data_spec_checks.cpp): the heat example's, a 1-D copy job's, and EXPECT_HAS.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "declarations.hpp"
#include "worksize/scheduler/data_spec.hpp"

namespace worksize::test {

/// The heat example's buffers.
inline constexpr int kT = 0, kNext = 1, kPower = 2;

/// The heat example's declaration: a 5-point stencil over 8 columns and 30 rows, t read with a
/// halo of 1, power read, next written, then t and next swapped.
inline DataJobSpec heat_spec() {
    DataJobSpec s;
    s.name = "heat";
    s.source = "__kernel void heat_step() {}";
    s.build_options = "-cl-mad-enable";
    s.dims = 2;
    s.width = 8;
    s.units = 30;
    s.buffers = {split("t", 8, true, true), split("next", 8), split("power", 8, true)};
    KernelDecl k;
    k.name = "heat_step";
    k.args = {access(ArgKind::halo, kT, 1),   access(ArgKind::origin, kT),    access(ArgKind::read, kPower),
              access(ArgKind::origin, kPower), access(ArgKind::write, kNext),  access(ArgKind::origin, kNext),
              scalar(ElemType::i32, 8),        scalar(ElemType::i32, 30),      plain(ArgKind::end),
              scalar(ElemType::f32, 0.125)};
    s.kernels = {k};
    s.swaps = {{kT, kNext}};
    s.steps = 50;
    s.gather_every = 10;
    s.ops_per_unit = 96;
    return s;
}

/// A 1-D job of `units` items: kernel 'k' reads 'x' and writes 'y'.
inline DataJobSpec copy_spec(std::uint64_t units = 100) {
    DataJobSpec s;
    s.name = "copy";
    s.source = "__kernel void k() {}";
    s.dims = 1;
    s.units = units;
    s.buffers = {split("x", 1, true), split("y", 1, false, true)};
    KernelDecl k;
    k.name = "k";
    k.args = {access(ArgKind::read, 0), access(ArgKind::write, 1), plain(ArgKind::end)};
    s.kernels = {k};
    return s;
}

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace worksize::test

#define EXPECT_HAS(text, part) EXPECT_PRED2(::worksize::test::has, text, part)
