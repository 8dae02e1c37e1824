// The instruction lists of data jobs (scheduler/instructions.hpp) without a device: the heat
// stencil's and a two-kernel reduction's lists on 3 ranks pinned as text (tests/golden/), and over
// many declarations and splits: every send meets a receive of the same rows and size in the same
// order, each step launches every slice's units exactly once per kernel, overlap moves the same
// halo rows as the plain schedule (and none that no launch reads), and the counters match
// data_layout().
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "declarations.hpp"
#include "source_dir.hpp"
#include "worksize/scheduler/instructions.hpp"

namespace worksize {
namespace {

using test::access;
using test::plain;
using test::scalar;
using test::shared;
using test::slice;
using test::split;

/// heat: t (halo 1) and power in, next out, t <-> next; `rows` rows of 8 columns.
DataJobSpec heat(std::uint64_t rows, std::uint64_t steps, std::uint64_t depth = 1) {
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
DataJobSpec two_kernels(std::uint64_t units, std::uint64_t steps) {
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

DataLayout three_ranks(const DataJobSpec& s) {
    const std::uint64_t third = s.units / 3;
    return data_layout(s, {slice(0, 0, 0, third), slice(1, 1, third, third), slice(2, 2, 2 * third, s.units - 2 * third)});
}

/// The golden file's text; WORKSIZE_UPDATE_GOLDEN=1 rewrites it with `actual` (then review the diff).
std::string golden(const std::string& name, const std::string& actual) {
    const std::string path = std::string(WORKSIZE_TEST_SOURCE_DIR) + "/tests/golden/" + name;
    if (const char* u = std::getenv("WORKSIZE_UPDATE_GOLDEN"); u && std::string(u) == "1") std::ofstream(path) << actual;
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TEST(Instructions, HeatOnThreeRanksMatchesTheGoldenList) {
    const auto s = heat(30, 3);
    const std::string text = format_instructions(s, three_ranks(s), 2);
    EXPECT_EQ(text, golden("instructions_heat.txt", text)) << "WORKSIZE_UPDATE_GOLDEN=1 rewrites the file";
}

TEST(Instructions, ReductionJobOnThreeRanksMatchesTheGoldenList) {
    const auto s = two_kernels(60, 2);
    const std::string text = format_instructions(s, three_ranks(s), 2);
    EXPECT_EQ(text, golden("instructions_two_kernels.txt", text)) << "WORKSIZE_UPDATE_GOLDEN=1 rewrites the file";
}

TEST(Instructions, OverlapSplitsTheHeatLaunchIntoBoundaryAndInterior) {
    const auto s = heat(30, 3);
    const auto layout = three_ranks(s);
    StepCompiler middle(s, layout, 1);
    const auto list = middle.compile_step(0);
    std::vector<std::tuple<LaunchPart, std::uint64_t, std::uint64_t>> launches;
    for (const auto& in : list)
        if (in.kind == InstrKind::launch) launches.emplace_back(in.part, in.first, in.rows);
    const std::vector<std::tuple<LaunchPart, std::uint64_t, std::uint64_t>> want = {
        {LaunchPart::top, 10, 1}, {LaunchPart::bottom, 19, 1}, {LaunchPart::interior, 11, 8}};
    EXPECT_EQ(launches, want);
    // The interior launch comes after the boundary rows' reads and before their sends.
    std::size_t interior = 0, first_read = list.size(), first_send = list.size();
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i].kind == InstrKind::launch && list[i].part == LaunchPart::interior) interior = i;
        if (list[i].kind == InstrKind::read_rows) first_read = std::min(first_read, i);
        if (list[i].kind == InstrKind::send) first_send = std::min(first_send, i);
    }
    EXPECT_LT(first_read, interior);
    EXPECT_LT(interior, first_send);
    EXPECT_TRUE(middle.splits(0));
    StepCompiler plain_schedule(s, layout, 1, ProgramOptions{false});
    EXPECT_FALSE(plain_schedule.splits(0));
}

TEST(Instructions, NothingMovesAfterTheLastStep) {
    const auto s = heat(30, 1);
    for (int r = 0; r < 3; ++r) {
        StepCompiler c(s, three_ranks(s), r);
        for (const auto& in : c.compile_step(0)) {
            EXPECT_EQ(in.kind, InstrKind::launch) << describe(in, s);
            EXPECT_EQ(in.part, LaunchPart::whole);
        }
    }
}

TEST(Instructions, GhostZonesAndReductionsAreNotSplit) {
    auto s = heat(60, 6, 1);
    s.exchange_every = 3;
    s.kernels[0].args[0].depth = 1;
    StepCompiler c(s, three_ranks(s), 1);
    for (std::uint64_t step = 0; step < s.steps; ++step)
        for (const auto& in : c.compile_step(step))
            if (in.kind == InstrKind::launch) {
                EXPECT_EQ(in.part, LaunchPart::whole);
            }
    const auto r = two_kernels(60, 2);
    StepCompiler d(r, three_ranks(r), 1);
    EXPECT_TRUE(d.splits(0));  // smooth's y is read with a halo by norm
    EXPECT_FALSE(d.splits(1));  // norm reduces
}

/// Random declarations and splits (1 to 4 ranks, 1 or 2 devices each): the invariants.
struct Case {
    DataJobSpec spec;
    DataLayout layout;
    int ranks = 0;
};

Case random_case(std::mt19937& g) {
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

TEST(Instructions, RandomJobsKeepTheInvariants) {
    std::mt19937 g(2026);
    for (int trial = 0; trial < 300; ++trial) {
        const Case c = random_case(g);
        SCOPED_TRACE("trial " + std::to_string(trial) + "\n" + format_instructions(c.spec, c.layout, 0));
        // (from, to) -> the sequence of (buffer, bytes) sent; the receiver's posted receives.
        std::map<std::pair<int, int>, std::vector<std::pair<int, std::uint64_t>>> sent, posted;
        std::map<bool, std::map<std::tuple<int, int, std::uint64_t>, int>> moved;  // overlap -> (slice, buffer, row) -> count
        for (bool overlap : {false, true})
            for (int r = 0; r < c.ranks; ++r) {
                StepCompiler comp(c.spec, c.layout, r, ProgramOptions{overlap});
                for (std::uint64_t step = 0; step < c.spec.steps; ++step) {
                    const auto list = comp.compile_step(step);
                    std::map<std::pair<int, int>, std::vector<std::uint64_t>> covered;  // (slice, kernel) -> units
                    for (std::size_t i = 0; i < list.size(); ++i) {
                        const auto& in = list[i];
                        for (int d : in.deps) ASSERT_LT(std::size_t(d), i) << "a dependency comes later";
                        if (in.kind == InstrKind::launch)
                            for (std::uint64_t u = in.first; u < in.first + in.rows; ++u)
                                covered[{in.slice, in.kernel}].push_back(u);
                        if (overlap && in.kind == InstrKind::send) sent[{r, in.peer}].emplace_back(in.buffer, in.bytes);
                        if (overlap && in.kind == InstrKind::recv) posted[{in.peer, r}].emplace_back(in.buffer, in.bytes);
                        if (in.kind == InstrKind::write_rows)
                            for (std::uint64_t u = in.first; u < in.first + in.rows; ++u) {
                                // A buffer's halo rows for a step, whichever name it has then.
                                ++moved[overlap][{in.slice, int(in.feeds_step), u}];
                            }
                    }
                    for (auto& [key, units] : covered) {
                        std::sort(units.begin(), units.end());
                        const auto& sl = c.layout.slices[std::size_t(key.first)];
                        ASSERT_EQ(units.size(), sl.units) << "slice " << key.first << " step " << step;
                        for (std::uint64_t u = 0; u < sl.units; ++u) ASSERT_EQ(units[u], sl.offset + u);
                    }
                }
            }
        EXPECT_EQ(sent, posted) << "every send meets a receive of the same buffer and size, in order";
        EXPECT_EQ(moved[true], moved[false]) << "overlap moves the rows the plain schedule moves";
    }
}

}  // namespace
}  // namespace worksize
