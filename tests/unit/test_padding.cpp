// Unit tests of padded NDRanges (issue 14, deliverable 4): the pad quantum, the paper's rule on
// the padded slice, the launch geometry, the "done when" sizes on the H200 profiles (every GPU
// slice whole warps and at least 64 work-items, every CPU slice at least 8), and the model's
// kernel time on the padded geometry.
#include <gtest/gtest.h>

#include "source_dir.hpp"
#include "worksize/scheduler/model.hpp"
#include "worksize/scheduler/planner.hpp"
#include "worksize/scheduler/profile.hpp"

using namespace worksize;

namespace {

DeviceInfo device(DeviceType type, std::uint32_t pes, std::uint64_t wg) {
    DeviceInfo d;
    d.name = "dev";
    d.type = type;
    d.compute_units = 4;
    d.pes_per_cu = pes;
    d.max_work_group_size = wg;
    d.max_work_item_sizes = {wg, wg, 64};
    return d;
}

std::vector<DeviceInfo> profile(const char* file) {
    return load_profile((test::source_dir() / "docs" / "profiles" / file).string());
}

KernelDescriptor one_d(const char* name) {
    return {.name = name, .dims = 1, .default_priority = Priority::x, .ops_per_item = 10.0};
}

/// The awkward sizes: sort 3,000,017 (a prime), quad 12,345,679 (37 x 333,667) and
/// matmul 1531 (prime; its NDRange is (N, ceil(M / 4)) = (1531, 383), 383 prime too).
struct Case {
    KernelDescriptor kernel;
    GlobalSize global;
};
std::vector<Case> awkward_cases() {
    KernelDescriptor mm{.name = "matmul", .dims = 2, .default_priority = Priority::x,
                        .ops_per_item = 3.0 * 1531 * 4};
    return {{one_d("sort"), {3000017, 1}}, {one_d("quad"), {12345679, 1}}, {mm, {1531, 383}}};
}

}  // namespace

TEST(PadQuantum, SmallestPowerOfTwoAtLeastPesWithinTheLimits) {
    EXPECT_EQ(pad_quantum(device(DeviceType::gpu, 128, 1024)), 128u);
    EXPECT_EQ(pad_quantum(device(DeviceType::gpu, 192, 1024)), 256u);
    EXPECT_EQ(pad_quantum(device(DeviceType::cpu, 8, 4096)), 8u);
    EXPECT_EQ(pad_quantum(device(DeviceType::gpu, 128, 64)), 64u);   // the work-group limit caps it
    EXPECT_EQ(pad_quantum(device(DeviceType::other, 0, 0)), 1u);     // nothing known: no padding
    EXPECT_EQ(pad_quantum(device(DeviceType::gpu, 100, 96)), 64u);   // a power of two within 96
}

TEST(PaddedRule, APrimeSliceGetsTheRuleOfItsPaddedNDRange) {
    const std::vector<DeviceInfo> h200 = profile("h200.json");
    PlanRequest req;
    req.pad_ndrange = true;  // the sample kernels guard their index
    req.kernel = one_d("sort");
    req.global = {3000017, 1};
    const Plan p = make_plan(h200, req);
    ASSERT_EQ(p.assignments.size(), 1u);
    const Assignment& a = p.assignments[0];
    EXPECT_TRUE(p.padded);
    EXPECT_EQ(a.global, (GlobalSize{3000017, 1}));
    EXPECT_EQ(a.padded_global, (GlobalSize{3000064, 1}));  // 23438 x 128
    EXPECT_EQ(a.local, (LocalSize{128, 1}));
    EXPECT_EQ(a.local_rule, "paper-1d: smallest divisor >= PEs/CU (128)");
    // Without padding (the paper's own rule on the slice): the fallback to 1 the issue measured.
    req.pad_ndrange = false;
    const Plan q = make_plan(h200, req);
    EXPECT_FALSE(q.padded);
    EXPECT_EQ(q.assignments[0].local, (LocalSize{1, 1}));
    EXPECT_EQ(q.assignments[0].padded_global, q.assignments[0].global);
    EXPECT_NE(q.assignments[0].local_rule.find("fallback"), std::string::npos);
}

TEST(PaddedRule, AlignedSlicesAreNotPadded) {
    PlanRequest req;
    req.pad_ndrange = true;  // the sample kernels guard their index
    req.kernel = one_d("sort");
    req.global = {1u << 20, 1};
    const Plan p = make_plan(profile("h200-cpu16.json"), req);
    for (const auto& a : p.assignments) {
        EXPECT_EQ(a.padded_global, a.global) << a.device_name;
        EXPECT_EQ(a.global.x % a.local.x, 0u);
    }
}

TEST(PaddedRule, LaunchGlobal) {
    const DeviceInfo gpu = device(DeviceType::gpu, 128, 1024);
    EXPECT_EQ(launch_global(gpu, {1000, 1}, {256, 1}, 1, true), (GlobalSize{1024, 1}));
    EXPECT_EQ(launch_global(gpu, {1000, 1}, {}, 1, true), (GlobalSize{1024, 1}));  // NULL: the quantum
    EXPECT_EQ(launch_global(gpu, {1000, 1}, {200, 1}, 1, false), (GlobalSize{1000, 1}));
    EXPECT_EQ(launch_global(gpu, {1531, 383}, {768, 1}, 2, true), (GlobalSize{1536, 383}));
    EXPECT_EQ(launch_global(gpu, {1531, 383}, {16, 8}, 2, true), (GlobalSize{1536, 384}));
    EXPECT_EQ(launch_global(gpu, {0, 1}, {128, 1}, 1, true), (GlobalSize{0, 1}));
    EXPECT_EQ(rule_global(gpu, {1531, 383}, true), (GlobalSize{1536, 383}));  // rows are not padded
    EXPECT_EQ(rule_global(gpu, {1531, 383}, false), (GlobalSize{1531, 383}));
}

// The "done when": for sort 3,000,017, quad 12,345,679 and matmul 1531, planned offline
// for the H200 profile alone and beside a 16-core CPU, every GPU slice gets a local size of whole
// warps (a multiple of 32, at least 64 work-items) and every CPU slice at least 8; the launch is
// the slice padded by less than one work-group in each dimension.
TEST(PaddedRule, AwkwardSizesGetWholeWarpsOnTheH200AndAtLeast8OnTheCpu) {
    for (const char* file : {"h200.json", "h200-cpu16.json"}) {
        const auto devs = profile(file);
        for (const Case& c : awkward_cases()) {
            for (const char* strategy : {"paper", "even", "pe-ratio"}) {
                for (LocalPolicy policy : {LocalPolicy::paper, LocalPolicy::tuned}) {
                    PlanRequest req;
                    req.pad_ndrange = true;  // the sample kernels guard their index
                    req.kernel = c.kernel;
                    req.global = c.global;
                    req.strategy = strategy;
                    req.local_policy = policy;
                    const Plan p = make_plan(devs, req);
                    std::uint64_t units = 0;
                    for (const auto& a : p.assignments) {
                        units += a.units;
                        if (a.units == 0) continue;
                        const std::string where = std::string(file) + " " + c.kernel.name + " " + strategy + " " +
                                                  to_string(policy) + " " + a.device_name + " slice " +
                                                  std::to_string(a.global.x) + "x" + std::to_string(a.global.y);
                        const std::uint64_t items = a.local.x * a.local.y;
                        const DeviceInfo& d = devs.at(std::size_t(a.device));
                        if (d.type == DeviceType::gpu) {
                            EXPECT_EQ(items % 32, 0u) << where << " local " << a.local.x << "x" << a.local.y;
                            EXPECT_GE(items, 64u) << where;
                        } else {
                            EXPECT_GE(items, 8u) << where;
                        }
                        EXPECT_EQ(a.padded_global.x % a.local.x, 0u) << where;
                        EXPECT_EQ(a.padded_global.y % a.local.y, 0u) << where;
                        EXPECT_GE(a.padded_global.x, a.global.x) << where;
                        EXPECT_LT(a.padded_global.x - a.global.x, a.local.x) << where;
                        EXPECT_LT(a.padded_global.y - a.global.y, a.local.y) << where;
                        EXPECT_EQ(a.local_rule.find("fallback: largest"), std::string::npos) << where << ": " << a.local_rule;
                    }
                    EXPECT_EQ(units, c.kernel.dims == 2 ? c.global.y : c.global.x);
                }
            }
        }
    }
}

TEST(PaddedRule, SlicesBelowOneWorkGroupAndOfOneItem) {
    const auto devs = profile("h200-cpu16.json");
    for (std::uint64_t n : {1u, 7u, 100u, 127u, 129u}) {
        PlanRequest req;
        req.pad_ndrange = true;  // the sample kernels guard their index
        req.kernel = one_d("quad");
        req.global = {n, 1};
        const Plan p = make_plan(devs, req);
        std::uint64_t units = 0;
        for (const auto& a : p.assignments) {
            units += a.units;
            if (a.units == 0) continue;
            EXPECT_GE(a.local.x, devs.at(std::size_t(a.device)).pes_per_cu) << n;
            EXPECT_EQ(a.padded_global.x % a.local.x, 0u) << n;
            EXPECT_LT(a.padded_global.x - a.global.x, a.local.x) << n;
        }
        EXPECT_EQ(units, n);
    }
}

TEST(PaddedModel, TheKernelPhaseIsPredictedOnThePaddedGeometry) {
    CostModel m;
    m.kernel.per_x_s = 1e-9;  // 1 ns per operation
    SplitJob job;
    job.total_units = 1000;
    job.ops_per_unit = 1.0;
    const double plain = evaluate_split({m}, job, {1000}).predicted.at(0).kernel_s;
    EXPECT_NEAR(plain, 1000e-9, 1e-15);
    job.padding = {split_padding(device(DeviceType::gpu, 128, 1024), 1, {1000, 1})};
    EXPECT_EQ(job.padding[0].pad_units, 128u);
    EXPECT_NEAR(evaluate_split({m}, job, {1000}).predicted.at(0).kernel_s, 1024e-9, 1e-15);
    // 2-D: the width is padded, every row costs 1536 / 1531 as much.
    const SplitJob::Padding p2 = split_padding(device(DeviceType::gpu, 128, 1024), 2, {1531, 383});
    EXPECT_EQ(p2.pad_units, 1u);
    EXPECT_DOUBLE_EQ(p2.pad_scale, 1536.0 / 1531.0);
}
