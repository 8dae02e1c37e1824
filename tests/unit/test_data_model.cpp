// The step cost of a data job and the split minimising it (scheduler/data_model.hpp), against
// figures computed by hand in the comments.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "worksize/scheduler/data_model.hpp"
#include "worksize/scheduler/planner.hpp"
#include "declarations.hpp"

namespace worksize {
namespace {

using test::access;
using test::slice;
using test::split;


/// Heat's shape: 8 float columns (32 bytes a row), t read with a halo of 1, next written, swapped.
DataJobSpec heat(std::uint64_t units, std::uint64_t every = 1) {
    DataJobSpec s;
    s.name = "heat";
    s.dims = 2;
    s.width = 8;
    s.units = units;
    s.buffers = {split("t", 8, true, true), split("next", 8)};
    KernelDecl k;
    k.name = "heat_step";
    k.args = {access(ArgKind::halo, 0, 1), access(ArgKind::origin, 0), access(ArgKind::write, 1),
              access(ArgKind::origin, 1)};
    s.kernels = {k};
    s.swaps = {{0, 1}};
    s.steps = 10;
    s.exchange_every = every;
    return s;
}

/// A 1-D job without halos: y = f(x).
DataJobSpec copy(std::uint64_t units) {
    DataJobSpec s;
    s.name = "copy";
    s.units = units;
    s.buffers = {split("x", 1, true), split("y", 1, false, true)};
    KernelDecl k;
    k.name = "k";
    k.args = {access(ArgKind::read, 0), access(ArgKind::write, 1)};
    s.kernels = {k};
    return s;
}


DataLinks links(LinkCost same, LinkCost between) {
    DataLinks l;
    l.same_rank = same;
    l.between_ranks = between;
    return l;
}

TEST(DataModel, HaloTrafficFollowsTheLayout) {
    const auto t = halo_traffic(heat(30));
    EXPECT_EQ(t.bytes, 32u);  // one row of t per neighbour and step
    EXPECT_EQ(t.messages, 1u);
    EXPECT_EQ(t.every, 1u);
    const auto layout = data_layout(heat(30), {slice(0, 0, 0, 10), slice(1, 0, 10, 10), slice(2, 1, 20, 10)});
    EXPECT_EQ(layout.halo_bytes_per_step[1], 2 * t.bytes);
    // Ghost zones of 3 steps: 3 rows per exchange, one exchange every 3 steps; the launches
    // cover 2, 1, 0 extra rows a side: 1 on average.
    const auto g = halo_traffic(heat(30, 3));
    EXPECT_EQ(g.bytes, 96u);
    EXPECT_EQ(g.every, 3u);
    EXPECT_DOUBLE_EQ(mean_ghost_rows(heat(30, 3)), 1.0);
    EXPECT_EQ(halo_traffic(copy(10)).messages, 0u);
}

TEST(DataModel, PredictsEachSliceAndTheSlowest) {
    // Slices of 10 rows on devices 0, 1 (rank 0) and 2 (rank 1); a 32-byte row per neighbour.
    const std::vector<DataDeviceRate> rates = {{1e-3, 1e-4}, {2e-3, 0}, {1e-3, 0}};
    const auto l = links({1e-6, 1e-4}, {1e-5, 1e-3});
    const auto p =
        predict_data_step(heat(30), {slice(0, 0, 0, 10), slice(1, 0, 10, 10), slice(2, 1, 20, 10)}, rates, l);
    ASSERT_EQ(p.slices.size(), 3u);
    // 0: 10·1e-3 + 1e-4 compute, 1e-4 + 32·1e-6 to its neighbour on the rank.
    EXPECT_NEAR(p.slices[0].compute_s, 0.0101, 1e-12);
    EXPECT_NEAR(p.slices[0].halo_s, 1.32e-4, 1e-12);
    EXPECT_NEAR(p.slices[0].step_s, 0.010232, 1e-12);
    // 1: 10·2e-3 compute; 1.32e-4 left, 1e-3 + 32·1e-5 right (another rank).
    EXPECT_NEAR(p.slices[1].halo_s, 1.452e-3, 1e-12);
    EXPECT_NEAR(p.slices[1].step_s, 0.021452, 1e-12);
    EXPECT_NEAR(p.slices[2].step_s, 0.01132, 1e-12);
    EXPECT_NEAR(p.step_s, 0.021452, 1e-12);
    EXPECT_EQ(p.slowest, 1);
}

TEST(DataModel, GhostRowsAndAmortisedExchanges) {
    // k = 3: the middle slice launches 10 + 2·1 rows a step; its two exchanges of 96 bytes
    // (1e-3 + 96·1e-5 each) happen every third step.
    const std::vector<DataDeviceRate> rates = {{1e-3, 0}, {1e-3, 0}, {1e-3, 0}};
    const auto l = links({0, 0}, {1e-5, 1e-3});
    const auto p = predict_data_step(
        heat(30, 3), {slice(0, 0, 0, 10), slice(1, 1, 10, 10), slice(2, 2, 20, 10)}, rates, l);
    EXPECT_DOUBLE_EQ(p.slices[1].launched, 12.0);
    EXPECT_DOUBLE_EQ(p.slices[0].launched, 11.0);
    EXPECT_NEAR(p.slices[1].halo_s, 2 * (1e-3 + 96e-5) / 3, 1e-12);
    EXPECT_NEAR(p.step_s, 12e-3 + 2 * 1.96e-3 / 3, 1e-12);
}

TEST(DataModel, RefusesASliceWithoutARate) {
    EXPECT_THROW(predict_data_step(copy(10), {slice(0, 0, 0, 5), slice(1, 0, 5, 5)}, {{1e-3, 0}, {}}),
                 InvalidArgument);
}

TEST(DataModel, IdenticalDevicesWithoutHaloSplitEvenly) {
    for (std::uint64_t granule : {1u, 4u}) {
        for (std::size_t n : {2u, 3u, 10u}) {
            const std::vector<DataDeviceRate> rates(n, {2e-6, 1e-5});
            const std::vector<int> ranks(n, 0);
            const auto s = plan_data_split(copy(1003), ranks, rates, {}, granule);
            EXPECT_EQ(s.units, round_to_units(std::vector<double>(n, 1.0), 1003, granule)) << n << " devices";
            for (const auto& r : s.left_out) EXPECT_EQ(r, "");
        }
        // Heat on one rank with free copies: the same.
        const auto h = plan_data_split(heat(301), {0, 0, 0}, std::vector<DataDeviceRate>(3, {1e-3, 0}),
                                       links({0, 0}, {0, 0}), granule);
        EXPECT_EQ(h.units, round_to_units({1, 1, 1}, 301, granule));
    }
}

TEST(DataModel, HeterogeneousRatesSplitByInverseRate) {
    // 1e-3 and 3e-3 s a unit: 75 and 25 of 100 finish together, at 0.075 s.
    const auto s = plan_data_split(copy(100), {0, 1}, {{1e-3, 0}, {3e-3, 0}});
    EXPECT_EQ(s.units, (std::vector<std::uint64_t>{75, 25}));
    EXPECT_NEAR(s.weights[0], 0.75, 1e-12);
    EXPECT_NEAR(s.step_s, 0.075, 1e-12);
    // A fixed 0.01 s a step on the fast one: T = (100 + 10) / (1000 + 333.3) = 0.0825 s,
    // u0 = 72.5, u1 = 27.5.
    const auto f = plan_data_split(copy(100), {0, 1}, {{1e-3, 0.01}, {3e-3, 0}});
    EXPECT_NEAR(f.weights[0], 0.725, 1e-12);
}

TEST(DataModel, AnExpensiveLinkMovesRowsToTheEnds) {
    // Three equal devices on three ranks, 5 ms per message between ranks: the middle slice pays
    // two exchanges, the ends one. T = (300 + (5 + 10 + 5)) / 3 = 106.67 ms, so the ends get
    // 101.67 units and the middle 96.67 (rounded: two of the three remainders of 0.67 win a unit).
    const std::vector<DataDeviceRate> rates(3, {1e-3, 0});
    const auto l = links({0, 0}, {0, 5e-3});
    const auto s = plan_data_split(heat(300), {0, 1, 2}, rates, l);
    EXPECT_NEAR(s.weights[0] * 300, 101.0 + 2.0 / 3, 1e-9);
    EXPECT_NEAR(s.weights[1] * 300, 96.0 + 2.0 / 3, 1e-9);
    EXPECT_EQ(s.units[0] + s.units[1] + s.units[2], 300u);
    EXPECT_LT(s.units[1], s.units[0]);
    EXPECT_LT(s.units[1], s.units[2]);
    EXPECT_NEAR(s.step_s, 0.107, 1e-12);  // the worst of 102 + 5 and 97 + 10 ms (or 96 + 10)
    // The two first on one rank (free copies): the third, alone beyond the link, pays 5 ms and
    // the second 5 ms; the first nothing. T = (300 + 10) / 3, u = 103.3, 98.3, 98.3.
    const auto m = plan_data_split(heat(300), {0, 0, 1}, rates, l);
    EXPECT_NEAR(m.weights[0] * 300, 103.0 + 1.0 / 3, 1e-9);
    EXPECT_NEAR(m.weights[2] * 300, 98.0 + 1.0 / 3, 1e-9);
}

TEST(DataModel, LeavesOutADeviceWhoseExchangesCostMoreThanItsRows) {
    // 1 s a message to the second rank: alone the first takes 300 ms a step; with the second,
    // each pays 1 s: T = (300 + 2·1000) / 2 ms = 1.15 s.
    const auto s = plan_data_split(heat(300), {0, 1}, std::vector<DataDeviceRate>(2, {1e-3, 0}),
                                   links({0, 0}, {0, 1.0}));
    EXPECT_EQ(s.units, (std::vector<std::uint64_t>{300, 0}));
    EXPECT_EQ(s.left_out[0], "");
    EXPECT_EQ(s.left_out[1],
              "left out: with it the predicted step is 1.15 s against 0.3 s without it (its halo "
              "exchanges and fixed costs outweigh the units it would take)");
    EXPECT_NEAR(s.step_s, 0.3, 1e-12);
    // A device without a rate is left out; none at all is refused.
    const auto u = plan_data_split(copy(100), {0, 1}, {{1e-3, 0}, {}});
    EXPECT_EQ(u.units, (std::vector<std::uint64_t>{100, 0}));
    EXPECT_EQ(u.left_out[1], "left out: no measured rate");
    EXPECT_THROW(plan_data_split(copy(100), {0, 1}, {{}, {}}), InvalidArgument);
}

TEST(DataModel, GhostZonesGiveInteriorSlicesFewerRows) {
    // k = 3, h = 1: one redundant row a step per neighbour, free links. u_end = T/r − 1,
    // u_mid = T/r − 2, Σ = 300: T/r = 101.33; 100.33, 99.33, 100.33 rounded 101, 99, 100.
    const auto s = plan_data_split(heat(300, 3), {0, 0, 0}, std::vector<DataDeviceRate>(3, {1e-3, 0}),
                                   links({0, 0}, {0, 0}));
    EXPECT_EQ(s.units, (std::vector<std::uint64_t>{101, 99, 100}));
    EXPECT_NEAR(s.weights[0] / s.weights[1], (100.0 + 1.0 / 3) / (99.0 + 1.0 / 3), 1e-12);
    EXPECT_NEAR(s.step_s, 0.102, 1e-12);  // slice 0: 101 + 1 rows; slice 1: 99 + 2
}

}  // namespace
}  // namespace worksize
