// Test harness shared by the 2-D kernel tests (matmul, interp): local sizes of every kind the
// planner may choose, uneven row splits, and the master/worker round trip on the test device.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "pocl_device.hpp"
#include "worksize/runtime/kernel_job.hpp"

namespace worksize::test {

/// padded: (16, 4) (within the device) whatever the slice, the NDRange padded to whole groups as
/// the planner pads it (Assignment::padded_global).
enum class LocalKind { null, square, npot, wide, tall, padded };

inline const char* to_string(LocalKind k) {
    switch (k) {
        case LocalKind::null: return "null";
        case LocalKind::square: return "square16";
        case LocalKind::npot: return "npot";
        case LocalKind::wide: return "wide";
        case LocalKind::tall: return "tall";
        case LocalKind::padded: return "padded";
    }
    return "?";
}

inline std::uint64_t largest_divisor(std::uint64_t n, std::uint64_t cap) {
    for (std::uint64_t d = std::min(n, cap); d > 1; --d)
        if (n % d == 0) return d;
    return 1;
}

/// Largest divisor of n in [3, cap] that is not a power of two; 1 if none.
inline std::uint64_t npot_divisor(std::uint64_t n, std::uint64_t cap) {
    for (std::uint64_t d = std::min(n, cap); d >= 3; --d)
        if (n % d == 0 && (d & (d - 1)) != 0) return d;
    return 1;
}

/// A local size of the given kind for NDRange g, kept within the test device's limits (as the
/// planner would: wide and tall groups become the largest settable divisor).
inline LocalSize pick_local(LocalKind kind, GlobalSize g) {
    const auto& info = first_device().info();
    const std::uint64_t max_x = std::min(info.max_work_item_sizes[0], info.max_work_group_size);
    const std::uint64_t max_y = std::min(info.max_work_item_sizes[1], info.max_work_group_size);
    switch (kind) {
        case LocalKind::null: return {0, 0};
        case LocalKind::square: return {largest_divisor(g.x, 16), largest_divisor(g.y, 16)};
        case LocalKind::npot: return {npot_divisor(g.x, 24), npot_divisor(g.y, 12)};
        case LocalKind::wide: return {largest_divisor(g.x, max_x), 1};
        case LocalKind::tall: return {1, largest_divisor(g.y, max_y)};
        case LocalKind::padded: return {std::min<std::uint64_t>(16, max_x), std::min<std::uint64_t>(4, max_y)};
    }
    return {0, 0};
}

/// Uneven row split of `problem` into `slices` assignments (some may be empty for tiny problems).
inline std::vector<Assignment> split(GlobalSize problem, int slices, LocalKind kind) {
    static const std::vector<std::vector<double>> fractions = {
        {1.0}, {0.7, 0.3}, {0.15, 0.5, 0.35}};
    std::vector<Assignment> out;
    std::uint64_t offset = 0;
    for (int i = 0; i < slices; ++i) {
        const auto& f = fractions.at(std::size_t(slices - 1));
        const std::uint64_t left = problem.y - offset;
        const std::uint64_t units =
            i + 1 == slices ? left
                            : std::min<std::uint64_t>(
                                  left, std::uint64_t(f[std::size_t(i)] * double(problem.y)));
        Assignment a;
        a.device = i;
        a.rank = i;
        a.share = double(units) / double(problem.y);
        a.offset = offset;
        a.units = units;
        a.global = {problem.x, units};
        a.local = units ? pick_local(kind, a.global) : LocalSize{0, 0};
        a.padded_global = a.global;
        if (!a.local.is_null())
            a.padded_global = {(a.global.x + a.local.x - 1) / a.local.x * a.local.x,
                               (a.global.y + a.local.y - 1) / a.local.y * a.local.y};
        out.push_back(a);
        offset += units;
    }
    return out;
}

/// The master/worker round trip on the test device; `mutate` may corrupt the first non-empty
/// slice output, `skip` drops a slice's output altogether.
inline Verdict round_trip(KernelJob& job, const KernelJobFactory& f, int slices, LocalKind kind,
                   const std::function<void(Bytes&)>& mutate = {}, int skip = -1) {
    auto& ctx = first_device();
    job.generate();
    auto assignments = split(job.problem(), slices, kind);
    // A kernel that requires its local size gets it on every slice, as the planner gives it.
    if (const LocalSize r = job.required_local(); !r.is_null())
        for (auto& a : assignments)
            if (a.units > 0) {
                a.local = r;
                a.padded_global = {(a.global.x + r.x - 1) / r.x * r.x, (a.global.y + r.y - 1) / r.y * r.y};
            }
    job.partition(assignments);
    bool mutated = false;
    for (std::size_t i = 0; i < assignments.size(); ++i) {
        const auto& a = assignments[i];
        const SliceSpec spec = slice_spec_from_json(to_json(job.slice_spec(a)));
        const Bytes in = job.slice_input(a);
        // The in-place views (what rank 0 sends without packing) are the same bytes.
        const auto parts = job.input_parts(a);
        if (!parts.empty()) {
            Bytes joined;
            for (const auto& part : parts) joined.insert(joined.end(), part.begin(), part.end());
            EXPECT_TRUE(joined == in) << "input_parts differ from slice_input for slice " << i;
        }
        Bytes out;
        const SliceTimes t = f.execute(ctx, spec, in, out);
        EXPECT_GE(t.kernel, 0.0);
        if (a.units == 0) {
            EXPECT_TRUE(out.empty());
        }
        if (mutate && !mutated && !out.empty()) {
            mutate(out);
            mutated = true;
        }
        if (int(i) == skip) continue;
        // As rank 0 receives it: straight into the job's output when the job says where.
        const auto target = job.output_target(a);
        if (!target.empty() && target.size() == out.size()) {
            std::copy(out.begin(), out.end(), target.begin());
            job.accept_output(a, target);
        } else {
            job.accept_output(a, out);
        }
    }
    job.finish();
    return job.verify();
}

}  // namespace worksize::test
