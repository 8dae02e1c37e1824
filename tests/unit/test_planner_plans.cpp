// Unit tests of the planner's make_plan (the slices, their local sizes, the sizes it plans or
// refuses, a kernel's required work-group) and of the oversubscription warnings; the rules it
// applies are test_planner.cpp. The expected numbers are the founding paper's (METHOD.md
// section 1) where it gives them.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "worksize/scheduler/planner.hpp"
#include "worksize/scheduler/strategy.hpp"
#include "planner_fixtures.hpp"

using namespace worksize;

using test::gts;
using test::k20;
using test::kernel2d;
using test::quadro;

namespace {

/// Bitonic sort of 2^18 floats: 18 x 19 / 2 = 171 compare stages per item.
const KernelDescriptor kSort2pow18{.name = "sort", .dims = 1, .default_priority = Priority::x,
                                   .ops_per_item = 18.0 * 19.0 / 2.0, .bytes_in_per_item = 4.0,
                                   .bytes_out_per_item = 4.0};

}  // namespace

// ---- make_plan ----------------------------------------------------------------------------

TEST(MakePlan, ThreePaperGpusSliceByRows) {
    PlanRequest req;
    // The paper's interp (bilinear 2x up-scaling) at 1024 x 1024: 20 operations per pixel.
    req.kernel = KernelDescriptor{.name = "interp", .dims = 2, .default_priority = Priority::y,
                                  .ops_per_item = 20.0, .bytes_in_per_item = 1.0,
                                  .bytes_out_per_item = 4.0};
    req.global = {1024, 1024};
    req.iterations = 10000;
    const std::vector<DeviceInfo> devs{k20(), quadro(), gts()};
    const Plan plan = make_plan(devs, req);
    EXPECT_EQ(plan.kernel, "interp");
    EXPECT_EQ(plan.dims, 2);
    EXPECT_EQ(plan.priority, Priority::y);
    EXPECT_DOUBLE_EQ(plan.ops, 20.0 * 1024 * 1024 * 10000);
    EXPECT_EQ(plan.compute_class, ComputeClass::medium);
    ASSERT_EQ(plan.assignments.size(), 3u);
    std::uint64_t offset = 0;
    double share = 0;
    for (std::size_t i = 0; i < 3; ++i) {
        const auto& a = plan.assignments[i];
        EXPECT_EQ(a.device, int(i));
        EXPECT_EQ(a.offset, offset);
        EXPECT_EQ(a.global.x, 1024u);
        EXPECT_EQ(a.global.y, a.units);
        offset += a.units;
        share += a.share;
        if (a.units > 0) {
            EXPECT_EQ(a.global.y % a.local.y, 0u);
            EXPECT_LE(a.local.x * a.local.y, devs[i].max_work_group_size);
        }
    }
    EXPECT_EQ(offset, 1024u);
    EXPECT_DOUBLE_EQ(share, 1.0);
}

TEST(MakePlan, ZeroUnitDeviceAndLocalPolicies) {
    PlanRequest req;
    req.kernel = kernel2d();
    req.global = {1024, 1024};
    req.weights = std::vector<double>{1.0, 0.0};
    Plan plan = make_plan({k20(), gts()}, req);
    EXPECT_EQ(plan.assignments[0].units, 1024u);
    EXPECT_EQ(plan.assignments[0].local, (LocalSize{512, 1}));
    const auto& idle = plan.assignments[1];
    EXPECT_EQ(idle.units, 0u);
    EXPECT_EQ(idle.global, (GlobalSize{1024, 0}));
    EXPECT_TRUE(idle.local.is_null());
    EXPECT_EQ(idle.note, "no work: the given split gives it none");
    EXPECT_EQ(idle.offset, 1024u);

    req.weights.reset();
    req.local_policy = LocalPolicy::null;
    plan = make_plan({k20(), gts()}, req);
    for (const auto& a : plan.assignments) EXPECT_TRUE(a.local.is_null());

    req.local_policy = LocalPolicy::tuned;
    plan = make_plan({k20(), gts()}, req);
    for (const auto& a : plan.assignments) {
        EXPECT_EQ(a.local_rule.rfind("paper (no tuned entry)", 0), 0u) << a.local_rule;
        EXPECT_FALSE(a.local.is_null());
    }
}

TEST(MakePlan, OneDimensionalSortSplitsItems) {
    PlanRequest req;
    req.kernel = kSort2pow18;
    req.global = {1u << 18, 1};
    req.strategy = "pe-ratio";
    req.align_1d_to_groups = false;  // the paper's rounding: whole items
    req.pad_ndrange = false;         // and its rule on the slice itself
    const Plan plan = make_plan({quadro(), gts()}, req);
    ASSERT_EQ(plan.assignments.size(), 2u);
    EXPECT_EQ(plan.assignments[0].units + plan.assignments[1].units, 1u << 18);
    EXPECT_EQ(plan.assignments[0].global.y, 1u);
    EXPECT_EQ(plan.assignments[0].units, 157286u);  // 0.6 x 262144 = 157286.4
    EXPECT_DOUBLE_EQ(plan.k, 1.0);
    EXPECT_EQ(plan.assignments[1].global.x % plan.assignments[1].local.x, 0u);
}

// Sizes over the whole uint64 range: up to 2^53 work-items every plan's units add up to the
// size (each slice's padded NDRange no smaller than its items); above, one refusal naming the
// limit, at once (2^64 - 1 used to spin in the rounding of the shares).
TEST(MakePlan, SizesOverTheWholeRangeArePlannedOrRefused) {
    KernelDescriptor k = kSort2pow18;
    k.bytes_in_per_item = k.bytes_out_per_item = k.bytes_in_fixed = 0;  // no memory limit here
    std::vector<std::uint64_t> sizes = {1, 1000, kMaxPlanItems - 1, kMaxPlanItems, kMaxPlanItems + 1,
                                        std::uint64_t{1} << 63, ~std::uint64_t{0}};
    std::mt19937_64 rng(5);
    for (int i = 0; i < 64; ++i) sizes.push_back(rng() >> (rng() % 64));
    for (const std::uint64_t n : sizes) {
        for (const std::string strategy : {"even", "pe-ratio", "paper"}) {
            PlanRequest req;
            req.kernel = k;
            req.global = {n, 1};
            req.strategy = strategy;
            if (n == 0) {
                EXPECT_THROW(make_plan({quadro(), gts()}, req), InvalidArgument);
                continue;
            }
            if (n > kMaxPlanItems) {
                try {
                    make_plan({quadro(), gts()}, req);
                    ADD_FAILURE() << n << " planned";
                } catch (const InvalidArgument& e) {
                    EXPECT_NE(std::string(e.what()).find("more than 2^53"), std::string::npos) << e.what();
                }
                continue;
            }
            const Plan plan = make_plan({quadro(), gts()}, req);
            std::uint64_t total = 0;
            for (const auto& a : plan.assignments) {
                total += a.units;
                EXPECT_GE(a.padded_global.x, a.global.x) << n;
            }
            EXPECT_EQ(total, n) << strategy;
        }
    }
}

TEST(MakePlan, OneDimensionalSharesAlignToWorkGroups) {
    // Slices of whole work-groups: every slice gets a local size >= its PEs per CU, where
    // whole-item rounding (157286 = 2 x 78643) leaves the paper's rule a local size of 2.
    PlanRequest req;
    req.kernel = kSort2pow18;
    req.global = {1u << 18, 1};
    req.strategy = "pe-ratio";
    EXPECT_EQ(split_granule({quadro(), gts()}, req), 64u);  // power of two >= 48 PEs/CU
    const std::vector<DeviceInfo> devs{quadro(), gts()};
    const Plan plan = make_plan(devs, req);
    ASSERT_EQ(plan.assignments.size(), 2u);
    EXPECT_EQ(plan.assignments[0].units + plan.assignments[1].units, 1u << 18);
    for (const auto& a : plan.assignments) {
        EXPECT_EQ(a.units % 64, 0u);
        EXPECT_GE(a.local.x, devs[std::size_t(a.device)].pes_per_cu);
        EXPECT_EQ(a.global.x % a.local.x, 0u);
    }
    EXPECT_NEAR(plan.assignments[0].share, 0.6, 64.0 / (1u << 18));
    req.local_policy = LocalPolicy::null;  // NULL: nothing to align to
    EXPECT_EQ(split_granule({quadro(), gts()}, req), 1u);
    req.local_policy = LocalPolicy::paper;
    req.global = {100, 1};  // too small to align
    EXPECT_EQ(split_granule({quadro(), gts()}, req), 1u);
}

TEST(MakePlan, Errors) {
    PlanRequest req;
    req.kernel = kernel2d();
    req.global = {1024, 1024};
    EXPECT_THROW(make_plan({}, req), InvalidArgument);
    req.global = {0, 1024};
    EXPECT_THROW(make_plan({k20()}, req), InvalidArgument);
    req.global = {1024, 1024};
    req.strategy = "model";
    EXPECT_THROW(make_plan({k20()}, req), InvalidArgument);
    req.strategy = "paper";
    req.weights = std::vector<double>{1.0};
    EXPECT_THROW(make_plan({k20(), gts()}, req), InvalidArgument);
    req.weights.reset();
    req.iterations = 0;
    EXPECT_THROW(make_plan({k20()}, req), InvalidArgument);
}

TEST(MakePlan, SizeBeyondEveryDevice) {
    PlanRequest req;
    // Square matmul 65536: K = 65536, all of B (16 GiB) on every device.
    req.kernel = KernelDescriptor{.name = "matmul", .dims = 2, .default_priority = Priority::x,
                                  .ops_per_item = 3.0 * 65536, .bytes_in_per_item = 4.0,
                                  .bytes_out_per_item = 4.0, .bytes_in_fixed = 4.0 * 65536 * 65536};
    req.global = {1u << 16, 1u << 16};
    // 2^32 items x 8 bytes + 16 GiB of B: beyond 6.5 GiB together.
    try {
        make_plan({k20(), quadro(), gts()}, req);
        FAIL() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("GiB"), std::string::npos) << what;
        EXPECT_NE(what.find("65536x65536"), std::string::npos) << what;
    }
    // Width 40000: all of B is 5.96 GiB, which fits the three K20s together (15 GiB) but
    // none of them alone (5 GiB).
    req.kernel = KernelDescriptor{.name = "matmul", .dims = 2, .default_priority = Priority::x,
                                  .ops_per_item = 3.0 * 40000, .bytes_in_per_item = 4.0,
                                  .bytes_out_per_item = 4.0, .bytes_in_fixed = 4.0 * 40000 * 40000};
    req.global = {40000, 1};
    try {
        make_plan({k20(), k20(), k20()}, req);
        FAIL() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("width 40000"), std::string::npos) << e.what();
    }
    // Unknown memory (0) disables the check.
    auto unknown = k20();
    unknown.global_mem_bytes = 0;
    EXPECT_NO_THROW(make_plan({unknown, k20()}, req));
}

// Issue 16: ranks of one node whose CPU devices have more compute units than the node's cores.
TEST(Oversubscription, WarnsPerNodeOnlyWhenComputeUnitsExceedCores) {
    const auto w = oversubscribed_nodes({{"a", 2, 2}, {"a", 2, 2}, {"a", 2, 2}, {"b", 8, 4}, {"b", 8, 4}});
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0],
              "node a: 3 ranks drive CPU devices with 6 compute units in all on 2 cores; timings will interfere "
              "(set POCL_MAX_PTHREAD_COUNT / POCL_CPU_MAX_CU_NUM per rank)");
    // Exactly the cores; a rank with no CPU device (a master or a GPU rank); unknown cores.
    EXPECT_TRUE(oversubscribed_nodes({{"a", 2, 0}, {"a", 2, 1}, {"a", 2, 1}}).empty());
    EXPECT_TRUE(oversubscribed_nodes({{"a", 0, 8}, {"a", 0, 8}}).empty());
}

// A CPU device using every core of its node beside a rank that drives a GPU (k-means on an H100's
// node: 21 % faster with the CPU device at 14 of 16 cores).
TEST(Oversubscription, WarnsWhenCpuDevicesLeaveNoCoreToAGpuRank) {
    const auto w = oversubscribed_nodes({{"g", 16, 0, 1}, {"g", 16, 16, 0}});
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0],
              "node g: CPU devices with 16 compute units in all on 16 cores beside 1 rank that drives a GPU; the CPU "
              "devices will run slower than alone (set POCL_MAX_PTHREAD_COUNT / POCL_CPU_MAX_CU_NUM to leave a core "
              "to each such rank)");
    // A core left to each GPU rank; no CPU device; GPU ranks on another node.
    EXPECT_TRUE(oversubscribed_nodes({{"g", 16, 0, 1}, {"g", 16, 0, 1}, {"g", 16, 14, 0}}).empty());
    EXPECT_TRUE(oversubscribed_nodes({{"g", 16, 0, 2}, {"g", 16, 0, 0}}).empty());
    EXPECT_TRUE(oversubscribed_nodes({{"g", 16, 0, 1}, {"c", 16, 16, 0}}).empty());
    // One rank driving the GPU and the CPU device: not this warning.
    EXPECT_TRUE(oversubscribed_nodes({{"g", 16, 16, 1}}).empty());
    // Both: more compute units than cores is the first warning alone.
    const auto both = oversubscribed_nodes({{"g", 16, 0, 1}, {"g", 16, 32, 0}});
    ASSERT_EQ(both.size(), 1u);
    EXPECT_NE(both[0].find("timings will interfere"), std::string::npos);
}

namespace {
// A kernel's required work-group size (issue 12): every device with work gets it, whatever the
// local policy, under the rule tuned entries never replace; a device too small is refused.
TEST(RequiredLocal, EveryDeviceGetsItWhateverThePolicy) {
    for (const LocalPolicy policy : {LocalPolicy::paper, LocalPolicy::null}) {
        PlanRequest r;
        r.kernel = kernel2d();
        r.global = {2048, 2048};
        r.granule = 16;
        r.local_policy = policy;
        r.required_local = {16, 16};
        const Plan p = make_plan({k20(), quadro(), gts()}, r);
        for (const auto& a : p.assignments) {
            ASSERT_GT(a.units, 0u);
            EXPECT_EQ(a.local, (LocalSize{16, 16})) << a.device_name;
            EXPECT_EQ(a.local_rule, kRequiredLocalRule);
        }
    }
}

TEST(RequiredLocal, ADeviceWithSmallerGroupsIsRefusedByName) {
    PlanRequest r;
    r.kernel = kernel2d();
    r.global = {2048, 2048};
    r.required_local = {32, 32};  // 1024 items; the 8800GTS allows 512
    try {
        (void)make_plan({k20(), gts()}, r);
        FAIL() << "a required work-group larger than a device's limit was planned";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("requires work-groups of 1024 items"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("GeForce 8800GTS"), std::string::npos) << e.what();
    }
}
}  // namespace
