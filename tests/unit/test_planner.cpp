// Unit tests of the planner: compute classes, the paper's split rule (two devices, chained over
// three), rounding, and the local-size rules and their fallbacks; make_plan is
// test_planner_plans.cpp. The expected numbers are the founding paper's (METHOD.md section 1)
// where it gives them.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <tuple>

#include "worksize/scheduler/planner.hpp"
#include "worksize/scheduler/strategy.hpp"
#include "planner_fixtures.hpp"

using namespace worksize;

using test::gpu;
using test::gts;
using test::k20;
using test::kernel2d;
using test::quadro;

namespace {

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
    return std::accumulate(v.begin(), v.end(), std::uint64_t{0});
}

}  // namespace

// ---- compute class and k ------------------------------------------------------------------

class ClassifyTest : public ::testing::TestWithParam<std::tuple<double, ComputeClass, double>> {};

TEST_P(ClassifyTest, ThresholdsAndK) {
    const auto [ops, cls, k] = GetParam();
    EXPECT_EQ(classify(ops), cls) << ops;
    EXPECT_DOUBLE_EQ(correction_k(classify(ops)), k);
}

INSTANTIATE_TEST_SUITE_P(
    Paper, ClassifyTest,
    ::testing::Values(std::tuple{0.0, ComputeClass::small, 1.25},
                      std::tuple{4e8, ComputeClass::small, 1.25},
                      std::tuple{4e8 + 1.0, ComputeClass::medium, 0.75},
                      std::tuple{5e11, ComputeClass::medium, 0.75},
                      std::tuple{8e11 - 1.0, ComputeClass::medium, 0.75},
                      std::tuple{8e11, ComputeClass::large, 0.25},
                      std::tuple{1e15, ComputeClass::large, 0.25}));

TEST(ToString, CliSpellings) {
    EXPECT_EQ(parse_strategy("pe_ratio"), "pe-ratio");
    EXPECT_EQ(find_strategy("paper").name(), "paper");
    EXPECT_STREQ(to_string(LocalPolicy::null), "null");
    EXPECT_STREQ(to_string(Priority::y), "y");
    EXPECT_STREQ(to_string(ComputeClass::medium), "medium");
    EXPECT_STREQ(to_string(DeviceType::accelerator), "accelerator");
    EXPECT_STREQ(to_string(PeSource::profile), "profile");
}

// ---- the pair rule --------------------------------------------------------------------------

TEST(PaperPairShare, TwoToThreeUsesK) {
    // 128 : 192 is exactly 2:3, where k was fit: 0.4 x k.
    EXPECT_NEAR(paper_pair_share(128, 192, 0.25), 0.10, 1e-12);
    EXPECT_NEAR(paper_pair_share(128, 192, 0.75), 0.30, 1e-12);
    EXPECT_NEAR(paper_pair_share(128, 192, 1.25), 0.50, 1e-12);
}

TEST(PaperPairShare, CloserThanTwoToThreeIsEven) {
    EXPECT_DOUBLE_EQ(paper_pair_share(129, 192, 0.25), 0.5);  // 3*129 > 2*192
    EXPECT_DOUBLE_EQ(paper_pair_share(192, 192, 0.25), 0.5);
    EXPECT_DOUBLE_EQ(paper_pair_share(1000, 1001, 1.25), 0.5);
}

TEST(PaperPairShare, OrderOfArgumentsAndClamp) {
    // The first argument's share, whichever is smaller.
    EXPECT_NEAR(paper_pair_share(192, 128, 0.25), 0.90, 1e-12);
    // The smaller device never gets more than the larger (decision, docs/method.md).
    EXPECT_DOUBLE_EQ(paper_pair_share(128, 192, 2.0), 0.5);
    EXPECT_DOUBLE_EQ(paper_pair_share(0, 192, 0.25), 0.0);
}

// The paper's measured optimum on its 2:3 pair (Quadro 2000D : 8800GTS): the smaller device gets
// 10 %, 30 %, 50 % for large, medium and small compute, at 1024x1024 (split along rows).
class PaperPairSplit
    : public ::testing::TestWithParam<std::tuple<double, ComputeClass, double, std::uint64_t>> {};

TEST_P(PaperPairSplit, ReproducesTheMeasuredOptimum) {
    const auto [ops, cls, share, rows] = GetParam();
    const std::vector<DeviceInfo> devs{quadro(), gts()};
    const auto w = split_weights(devs, "paper", cls);
    ASSERT_EQ(w.size(), 2u);
    EXPECT_NEAR(w[1], share, 1e-12);
    EXPECT_NEAR(w[0] + w[1], 1.0, 1e-12);

    PlanRequest req;
    req.kernel = kernel2d();
    req.global = {1024, 1024};
    req.ops = ops;
    const Plan plan = make_plan(devs, req);
    EXPECT_EQ(plan.compute_class, cls);
    EXPECT_DOUBLE_EQ(plan.k, correction_k(cls));
    ASSERT_EQ(plan.assignments.size(), 2u);
    const auto& small = plan.assignments[1];
    EXPECT_EQ(small.device_name, "GeForce 8800GTS");
    EXPECT_EQ(small.units, rows);
    // Within one row of the paper's floor(share x rows).
    EXPECT_LE(std::llabs(static_cast<long long>(small.units) -
                         static_cast<long long>(std::floor(share * 1024))),
              1);
    EXPECT_EQ(small.global, (GlobalSize{1024, rows}));
    EXPECT_DOUBLE_EQ(small.share, double(rows) / 1024.0);
    EXPECT_EQ(plan.assignments[0].units + small.units, 1024u);
    EXPECT_EQ(plan.assignments[0].offset, 0u);
    EXPECT_EQ(small.offset, plan.assignments[0].units);
}

INSTANTIATE_TEST_SUITE_P(
    Paper, PaperPairSplit,
    ::testing::Values(std::tuple{8e11, ComputeClass::large, 0.10, std::uint64_t{102}},
                      std::tuple{5e11, ComputeClass::medium, 0.30, std::uint64_t{307}},
                      std::tuple{4e8, ComputeClass::small, 0.50, std::uint64_t{512}}));

TEST(SplitWeights, ThreeDeviceChainOfMethodExample) {
    // PEs 2496, 192, 128 given out of order: weights come back in the original order.
    const std::vector<DeviceInfo> devs{k20(), quadro(), gts()};
    const auto w = split_weights(devs, "paper", ComputeClass::large);
    ASSERT_EQ(w.size(), 3u);
    // 1 : 9 (pair 1), 9 : 9 * 0.98214/0.017857 = 495 (pair 2); total 505.
    EXPECT_NEAR(w[2], 1.0 / 505.0, 1e-12);
    EXPECT_NEAR(w[1], 9.0 / 505.0, 1e-12);
    EXPECT_NEAR(w[0], 495.0 / 505.0, 1e-12);
    EXPECT_NEAR(w[2] * 100, 0.2, 0.01);
    EXPECT_NEAR(w[1] * 100, 1.8, 0.05);
    EXPECT_NEAR(w[0] * 100, 98.0, 0.05);
}

TEST(SplitWeights, EqualPesAreEqualAndStable) {
    const std::vector<DeviceInfo> devs{quadro(), quadro(), quadro()};
    for (auto cls : {ComputeClass::small, ComputeClass::medium, ComputeClass::large}) {
        const auto w = split_weights(devs, "paper", cls);
        for (double x : w) EXPECT_NEAR(x, 1.0 / 3.0, 1e-12);
    }
}

TEST(SplitWeights, CloserThanTwoToThreeIsEvenInAChain) {
    // 150 : 192 (> 2/3) is equal; 192 : 2496 follows the k rule.
    auto a = gpu("a", 1, 150, 1024, 1024, 1024);
    const std::vector<DeviceInfo> devs{a, quadro()};
    const auto w = split_weights(devs, "paper", ComputeClass::large);
    EXPECT_DOUBLE_EQ(w[0], 0.5);
    EXPECT_DOUBLE_EQ(w[1], 0.5);
}

TEST(SplitWeights, EvenAndPeRatio) {
    const std::vector<DeviceInfo> devs{k20(), quadro(), gts()};
    const auto e = split_weights(devs, "even", ComputeClass::large);
    for (double x : e) EXPECT_DOUBLE_EQ(x, 1.0 / 3.0);
    const auto p = split_weights(devs, "pe-ratio", ComputeClass::large);
    EXPECT_NEAR(p[0], 2496.0 / 2816.0, 1e-12);
    EXPECT_NEAR(p[1], 192.0 / 2816.0, 1e-12);
    EXPECT_NEAR(p[2], 128.0 / 2816.0, 1e-12);
}

TEST(SplitWeights, ErrorsAndZeroPeDevices) {
    const std::vector<DeviceInfo> devs{quadro(), gts()};
    EXPECT_THROW(split_weights(devs, "model", ComputeClass::large), InvalidArgument);
    EXPECT_THROW(split_weights(devs, "oracle", ComputeClass::large), InvalidArgument);
    EXPECT_THROW(split_weights({}, "even", ComputeClass::large), InvalidArgument);
    try {
        split_weights(devs, "model", ComputeClass::large);
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("needs measurements"), std::string::npos);
    }
    auto none = gpu("unknown", 0, 0, 1024, 1024, 1024);
    const auto w = split_weights({none, quadro()}, "paper", ComputeClass::small);
    EXPECT_DOUBLE_EQ(w[0], 0.0);
    EXPECT_DOUBLE_EQ(w[1], 1.0);
    EXPECT_THROW(split_weights({none, none}, "pe-ratio", ComputeClass::small),
                 InvalidArgument);
}

// ---- rounding -----------------------------------------------------------------------------

TEST(RoundToUnits, LargestRemainderSumsExactly) {
    EXPECT_EQ(round_to_units({0.1, 0.9}, 1024), (std::vector<std::uint64_t>{102, 922}));
    EXPECT_EQ(round_to_units({1, 1, 1}, 10), (std::vector<std::uint64_t>{4, 3, 3}));
    EXPECT_EQ(round_to_units({0.0, 1.0}, 7), (std::vector<std::uint64_t>{0, 7}));
    EXPECT_EQ(round_to_units({0.5, 0.5}, 1), (std::vector<std::uint64_t>{1, 0}));
}

TEST(RoundToUnits, GranulesAndThePartialGranule) {
    // 1000 rows in granules of 16: 62 whole granules and 8 rows left for the largest weight.
    const auto u = round_to_units({0.25, 0.75}, 1000, 16);
    EXPECT_EQ(sum(u), 1000u);
    EXPECT_EQ(u[0] % 16, 0u);
    EXPECT_EQ(u[1] % 16, 8u);
    // Fewer units than one granule: all to the largest weight.
    EXPECT_EQ(round_to_units({0.6, 0.4}, 5, 16), (std::vector<std::uint64_t>{5, 0}));
}

TEST(RoundToUnitMultiples, EachDeviceItsOwnMultiple) {
    // The H200 matmul 512 case: 128 rows, 127 and 1 by the paper split. With the GPU's tuned
    // y = 8 its rows become the nearest multiple, 128; the CPU's row goes (not 7 more to it).
    EXPECT_EQ(round_to_unit_multiples({127.0 / 128, 1.0 / 128}, 128, {8, 1}), (std::vector<std::uint64_t>{128, 0}));
    EXPECT_EQ(round_to_unit_multiples({0.9, 0.1}, 128, {8, 1}), (std::vector<std::uint64_t>{112, 16}));
    // Both constrained: 1000 rows at 30/70 with multiples 16 and 8: nearest 304 + 704 = 1008;
    // 8 too many come off the device furthest above its quota whose multiple fits (the second).
    EXPECT_EQ(round_to_unit_multiples({0.3, 0.7}, 1000, {16, 8}), (std::vector<std::uint64_t>{304, 696}));
    // A rest smaller than every multiple goes to the largest weight, which alone is unaligned.
    const auto r = round_to_unit_multiples({0.5, 0.5}, 1001, {8, 8});
    EXPECT_EQ(sum(r), 1001u);
    EXPECT_EQ((r[0] % 8) + (r[1] % 8), 1u);
    // A share under half its multiple may get nothing; a zero weight gets nothing.
    EXPECT_EQ(round_to_unit_multiples({0.01, 0.99}, 100, {64, 1}), (std::vector<std::uint64_t>{0, 100}));
    EXPECT_EQ(round_to_unit_multiples({0.0, 1.0}, 64, {1, 1}), (std::vector<std::uint64_t>{0, 64}));
    // All multiples 1: plain largest remainder.
    EXPECT_EQ(round_to_unit_multiples({1, 1, 1}, 10, {1, 1, 1}), round_to_units({1, 1, 1}, 10));
    EXPECT_THROW(round_to_unit_multiples({1.0, 1.0}, 10, {1}), InvalidArgument);
    EXPECT_THROW(round_to_unit_multiples({1.0, 1.0}, 10, {1, 0}), InvalidArgument);
    EXPECT_THROW(round_to_unit_multiples({0.0, 0.0}, 10, {1, 1}), InvalidArgument);
}

TEST(MakePlan, UnitMultiplesAlignEachDevicesRows) {
    PlanRequest req;
    req.kernel = kernel2d();
    req.global = {512, 128};
    req.weights = std::vector<double>{0.9, 0.1};
    req.unit_multiples = {16, 4};
    const Plan plan = make_plan({k20(), gts()}, req);
    EXPECT_EQ(plan.assignments[0].units, 112u);
    EXPECT_EQ(plan.assignments[1].units, 16u);
    EXPECT_EQ(plan.assignments[1].offset, 112u);
    req.unit_multiples = {16};
    EXPECT_THROW(make_plan({k20(), gts()}, req), InvalidArgument);
}

class RoundSums : public ::testing::TestWithParam<std::uint64_t> {};
TEST_P(RoundSums, AnyWeightsAnyTotal) {
    const std::uint64_t total = GetParam();
    const std::vector<std::vector<double>> ws{
        {1.0 / 505, 9.0 / 505, 495.0 / 505}, {0.3, 0.3, 0.4}, {1e-9, 1.0}, {2, 3, 5, 7, 11}};
    for (const auto& w : ws)
        for (std::uint64_t g : {1u, 3u, 16u}) {
            const auto u = round_to_units(w, total, g);
            EXPECT_EQ(sum(u), total);
            EXPECT_EQ(u, round_to_units(w, total, g));  // deterministic
        }
}
INSTANTIATE_TEST_SUITE_P(Totals, RoundSums, ::testing::Values(0, 1, 2, 17, 1000, 1024, 262144));

TEST(RoundToUnits, Errors) {
    EXPECT_THROW(round_to_units({}, 10), InvalidArgument);
    EXPECT_THROW(round_to_units({0.0, 0.0}, 10), InvalidArgument);
    EXPECT_THROW(round_to_units({-1.0, 2.0}, 10), InvalidArgument);
    EXPECT_THROW(round_to_units({1.0}, 10, 0), InvalidArgument);
}

// ---- local sizes --------------------------------------------------------------------------

TEST(DivisorsWithin, Basics) {
    EXPECT_EQ(divisors_within(12, 5), (std::vector<std::uint64_t>{1, 2, 3, 4}));
    EXPECT_EQ(divisors_within(1021, 1024), (std::vector<std::uint64_t>{1, 1021}));
    EXPECT_EQ(divisors_within(7, 100), (std::vector<std::uint64_t>{1, 7}));
    EXPECT_TRUE(divisors_within(0, 100).empty());
    const auto big = divisors_within(1ull << 40, 1ull << 39);
    EXPECT_EQ(big.size(), 40u);
    EXPECT_EQ(big.back(), 1ull << 39);
    const auto wide = divisors_within(1000000007ull * 6, ~0ull);  // sqrt path
    EXPECT_EQ(wide, (std::vector<std::uint64_t>{1, 2, 3, 6, 1000000007ull, 2000000014ull,
                                                3000000021ull, 6000000042ull}));
}

TEST(PaperLocal1d, SmallestDivisorAtLeastPesPerCu) {
    std::string rule;
    EXPECT_EQ(paper_local_1d(k20(), 1u << 18, &rule), (LocalSize{256, 1}));
    EXPECT_EQ(rule, "paper-1d: smallest divisor >= PEs/CU (192)");
    EXPECT_EQ(paper_local_1d(quadro(), 1u << 18), (LocalSize{64, 1}));
    EXPECT_EQ(paper_local_1d(gts(), 1u << 18), (LocalSize{8, 1}));
    EXPECT_EQ(paper_local_1d(k20(), 192 * 5), (LocalSize{192, 1}));
    // A prime global within the limit is its own local size.
    EXPECT_EQ(paper_local_1d(k20(), 1021), (LocalSize{1021, 1}));
}

TEST(PaperLocal1d, FallbackLargestDivisor) {
    std::string rule;
    EXPECT_EQ(paper_local_1d(k20(), 100, &rule), (LocalSize{100, 1}));
    EXPECT_NE(rule.find("paper-1d fallback: largest divisor"), std::string::npos) << rule;
    // Prime above the limit: only 1 is settable.
    EXPECT_EQ(paper_local_1d(k20(), 2053, &rule), (LocalSize{1, 1}));
    EXPECT_NE(rule.find("fallback"), std::string::npos);
    // PEs per CU beyond the device's max WG (512): largest divisor within the limit.
    auto odd = gts();
    odd.pes_per_cu = 600;
    EXPECT_EQ(paper_local_1d(odd, 1024, &rule), (LocalSize{512, 1}));
    EXPECT_NE(rule.find("fallback"), std::string::npos);
    // max_work_item_sizes[0] limits too.
    auto narrow = k20();
    narrow.max_work_item_sizes[0] = 128;
    EXPECT_EQ(paper_local_1d(narrow, 1u << 18), (LocalSize{128, 1}));
}

TEST(PaperLocal2d, TeslaK20BothPriorities) {
    std::string rule;
    // x*y < 1024 rules out 1024; the largest x is 512, which only pairs with y = 1.
    EXPECT_EQ(paper_local_2d(k20(), {1024, 1024}, Priority::x, &rule), (LocalSize{512, 1}));
    EXPECT_NE(rule.find("x-priority"), std::string::npos);
    EXPECT_EQ(paper_local_2d(k20(), {1024, 1024}, Priority::y, &rule), (LocalSize{1, 512}));
    EXPECT_NE(rule.find("y-priority"), std::string::npos);
}

TEST(PaperLocal2d, SliceShapesAndLimits) {
    // 102 rows of a 1024-wide y-priority job: y = 102 needs 8 | x; 8 x 102 = 816 < 1024 fits
    // the Quadro, but not the 8800GTS's max WG of 512, which gets y = 34 (8 x 34 = 272).
    EXPECT_EQ(paper_local_2d(quadro(), {1024, 102}, Priority::y), (LocalSize{8, 102}));
    EXPECT_EQ(paper_local_2d(gts(), {1024, 102}, Priority::y), (LocalSize{8, 34}));
    EXPECT_EQ(paper_local_2d(gts(), {1024, 1024}, Priority::x), (LocalSize{512, 1}));
    // max WG 64: x-priority takes x = 64, y = 1.
    auto small = gpu("small", 1, 16, 64, 64, 64);
    EXPECT_EQ(paper_local_2d(small, {1024, 1024}, Priority::x), (LocalSize{64, 1}));
    // y limited to 4 by max_work_item_sizes[1].
    auto flat = gpu("flat", 1, 16, 1024, 1024, 4);
    EXPECT_EQ(paper_local_2d(flat, {1024, 1024}, Priority::y), (LocalSize{128, 4}));
}

TEST(PaperLocal2d, FallbacksWhenNoPairPasses) {
    std::string rule;
    EXPECT_EQ(paper_local_2d(k20(), {7, 7}, Priority::x, &rule), (LocalSize{7, 1}));
    EXPECT_NE(rule.find("paper-2d fallback"), std::string::npos);
    EXPECT_EQ(paper_local_2d(k20(), {7, 7}, Priority::y, &rule), (LocalSize{1, 7}));
    EXPECT_NE(rule.find("(1, largest settable y)"), std::string::npos);
    // Primes above the limits: only 1 settable.
    EXPECT_EQ(paper_local_2d(gts(), {1031, 2053}, Priority::x), (LocalSize{1, 1}));
}

// Whatever the size, the paper's local sizes divide the global size and respect the limits.
class LocalSizeProperties
    : public ::testing::TestWithParam<std::tuple<std::uint64_t, std::uint64_t>> {};
TEST_P(LocalSizeProperties, DivideAndFit) {
    const auto [gx, gy] = GetParam();
    for (const auto& dev : {k20(), quadro(), gts()}) {
        for (auto p : {Priority::x, Priority::y}) {
            const auto l = paper_local_2d(dev, {gx, gy}, p);
            EXPECT_EQ(gx % l.x, 0u);
            EXPECT_EQ(gy % l.y, 0u);
            EXPECT_LE(l.x * l.y, dev.max_work_group_size);
            EXPECT_LE(l.x, dev.max_work_item_sizes[0]);
            EXPECT_LE(l.y, dev.max_work_item_sizes[1]);
        }
        const auto l1 = paper_local_1d(dev, gx * gy);
        EXPECT_EQ((gx * gy) % l1.x, 0u);
        EXPECT_LE(l1.x, dev.max_work_group_size);
    }
}
INSTANTIATE_TEST_SUITE_P(Sizes, LocalSizeProperties,
                         ::testing::Values(std::tuple{1024u, 1024u}, std::tuple{1000u, 999u},
                                           std::tuple{4096u, 102u}, std::tuple{1u, 1u},
                                           std::tuple{3u, 1021u}, std::tuple{2048u, 3u}));
