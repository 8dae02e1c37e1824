// Data-job declarations for the instruction-list tests (test_instructions.cpp) and the list
// simulator's (test_simulate_data.cpp): heat on a stencil of one halo row, two kernels with a
// reduction, three ranks' even split, and random declarations and splits.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "declarations.hpp"
#include "worksize/scheduler/instructions.hpp"

namespace worksize::test {

/// heat: t (halo 1) and power in, next out, t <-> next; `rows` rows of 8 columns.
inline DataJobSpec heat(std::uint64_t rows, std::uint64_t steps, std::uint64_t depth = 1) {
    DataJobSpec s;
    s.name = "heat";
    s.source = "__kernel void heat_step() {}";
    s.dims = 2;
    s.width = 8;
    s.units = rows;
    s.buffers = {split("t", 8, true, true), split("next", 8), split("power", 8, true)};
    KernelDecl k;
    k.name = "heat_step";
    k.args = {access(ArgKind::halo, 0, depth), access(ArgKind::origin, 0), access(ArgKind::read, 2),
              access(ArgKind::write, 1), plain(ArgKind::end)};
    s.kernels = {k};
    s.swaps = {{0, 1}};
    s.steps = steps;
    return s;
}

/// Two kernels: 'smooth' reads x with a halo of 2 and writes y; 'norm' reads y with a halo of 1,
/// writes x and sums into 'total' (a reduction: never split).
inline DataJobSpec two_kernels(std::uint64_t units, std::uint64_t steps) {
    DataJobSpec s;
    s.name = "two";
    s.source = "__kernel void smooth() {} __kernel void norm() {}";
    s.dims = 1;
    s.units = units;
    s.buffers = {split("x", 1, true, true), split("y", 1), shared("total", 1, false)};
    KernelDecl a;
    a.name = "smooth";
    a.args = {access(ArgKind::halo, 0, 2), access(ArgKind::write, 1), plain(ArgKind::end)};
    KernelDecl b;
    b.name = "norm";
    ArgDecl r = access(ArgKind::reduce, 2);
    b.args = {access(ArgKind::halo, 1, 1), access(ArgKind::write, 0), r, plain(ArgKind::end)};
    s.kernels = {a, b};
    s.steps = steps;
    return s;
}

inline DataLayout three_ranks(const DataJobSpec& s) {
    const std::uint64_t third = s.units / 3;
    return data_layout(s, {slice(0, 0, 0, third), slice(1, 1, third, third), slice(2, 2, 2 * third, s.units - 2 * third)});
}

/// Random declarations and splits (1 to 4 ranks, 1 or 2 devices each): the invariants.
struct Case {
    DataJobSpec spec;
    DataLayout layout;
    int ranks = 0;
};

inline Case random_case(std::mt19937& g) {
    std::uniform_int_distribution<int> coin(0, 1), depth(1, 3), ndev(1, 2), nranks(1, 4);
    Case c;
    c.spec = coin(g) ? heat(0, 1 + g() % 4, std::uint64_t(depth(g))) : two_kernels(0, 1 + g() % 4);
    if (c.spec.kernels.size() == 2) c.spec.kernels[0].args[0].depth = std::uint64_t(depth(g));
    c.ranks = nranks(g);
    std::vector<Assignment> a;
    std::uint64_t at = 0;
    int device = 0;
    for (int r = 0; r < c.ranks; ++r)
        for (int d = ndev(g); d > 0; --d) {
            const std::uint64_t units = 7 + g() % 20;
            a.push_back(slice(device++, r, at, units));
            at += units;
        }
    c.spec.units = at;
    c.layout = data_layout(c.spec, a);
    return c;
}

}  // namespace worksize::test
