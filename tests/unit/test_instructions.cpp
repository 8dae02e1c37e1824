// The instruction lists of data jobs (scheduler/instructions.hpp) without a device: the heat
// stencil's and a two-kernel reduction's lists on 3 ranks pinned as text (tests/golden/), and over
// many declarations and splits: every send meets a receive of the same rows and size in the same
// order, each step launches every slice's units exactly once per kernel, overlap moves the same
// halo rows as the plain schedule (and none that no launch reads), and the counters match
// data_layout().
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "declarations.hpp"
#include "source_dir.hpp"
#include "worksize/scheduler/instructions.hpp"
#include "worksize/scheduler/simulate.hpp"

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

/// PolyBench's fdtd-2d as it is ported (examples/fdtd2d): three kernels of whole arrays in 8-row
/// work-groups, the first reading hz of the row above, the third ey of the row below, 72 rows of 8.
DataJobSpec fdtd(std::uint64_t rows, std::uint64_t steps) {
    DataJobSpec s;
    s.name = "fdtd2d";
    s.source = "__kernel void fdtd_kernel1() {}";
    s.dims = 2;
    s.width = 8;
    s.units = rows;
    s.steps = steps;
    s.buffers = {shared("_fict_", steps), split("ex", 8, true, true), split("ey", 8, true, true), split("hz", 8, true, true)};
    KernelDecl k1, k2, k3;
    k1.name = "fdtd_kernel1";
    k1.args = {access(ArgKind::all, 0), access(ArgKind::read, 1), access(ArgKind::read_write, 2), access(ArgKind::halo, 3, 1),
               plain(ArgKind::step)};
    k2.name = "fdtd_kernel2";
    k2.args = {access(ArgKind::read_write, 1), access(ArgKind::read, 2), access(ArgKind::read, 3)};
    k3.name = "fdtd_kernel3";
    k3.args = {access(ArgKind::read, 1), access(ArgKind::halo, 2, 1), access(ArgKind::read_write, 3)};
    for (KernelDecl* k : {&k1, &k2, &k3}) {
        k->whole_arrays = true;
        k->required_local = {8, 8};
    }
    s.kernels = {k1, k2, k3};
    return s;
}

TEST(Instructions, FdtdOnThreeRanksMatchesTheGoldenList) {
    const auto s = fdtd(72, 3);
    ASSERT_NO_THROW(validate(s));
    const auto layout = data_layout(s, {slice(0, 0, 0, 24), slice(1, 1, 24, 24), slice(2, 2, 48, 24)});
    const std::string text = format_instructions(s, layout, 2);
    EXPECT_EQ(text, golden("instructions_fdtd2d.txt", text)) << "WORKSIZE_UPDATE_GOLDEN=1 rewrites the file";
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

// A kernel that requires a work-group of 8 rows launches its boundary rows in whole groups: 8
// rows at each edge with a neighbour, not the halo's 1, the interior between; a slice of no more
// than two groups' rows launches whole.
TEST(Instructions, ARequiredWorkGroupLaunchesWholeGroupsAtTheEdges) {
    auto s = heat(72, 3);
    s.kernels[0].required_local = {8, 8};
    auto launches_of = [&](const DataLayout& layout, int rank) {
        StepCompiler c(s, layout, rank);
        std::vector<std::tuple<LaunchPart, std::uint64_t, std::uint64_t>> v;
        for (const auto& in : c.compile_step(0))
            if (in.kind == InstrKind::launch) v.emplace_back(in.part, in.first, in.rows);
        return v;
    };
    using L = std::vector<std::tuple<LaunchPart, std::uint64_t, std::uint64_t>>;
    const auto even = data_layout(s, {slice(0, 0, 0, 24), slice(1, 1, 24, 24), slice(2, 2, 48, 24)});
    EXPECT_EQ(launches_of(even, 1), (L{{LaunchPart::top, 24, 8}, {LaunchPart::bottom, 40, 8}, {LaunchPart::interior, 32, 8}}));
    EXPECT_EQ(launches_of(even, 2), (L{{LaunchPart::top, 48, 8}, {LaunchPart::interior, 56, 16}}));
    const auto narrow = data_layout(s, {slice(0, 0, 0, 32), slice(1, 1, 32, 16), slice(2, 2, 48, 24)});
    EXPECT_EQ(launches_of(narrow, 1), (L{{LaunchPart::whole, 32, 16}}));
}

// A kernel of the first step only launches in step 0 alone; one of every 2nd step in steps 1, 3.
TEST(Instructions, KernelsLaunchOnlyInTheirSteps) {
    auto s = two_kernels(60, 4);
    s.kernels[1].args.erase(s.kernels[1].args.begin() + 2);  // no reduction
    s.buffers.pop_back();
    s.kernels[0].runs = KernelRuns::first_step;
    s.kernels[1].every = 2;
    StepCompiler c(s, three_ranks(s), 1);
    std::vector<std::vector<int>> per_step;
    for (std::uint64_t step = 0; step < 4; ++step) {
        per_step.emplace_back();
        for (const auto& in : c.compile_step(step))
            if (in.kind == InstrKind::launch && (per_step.back().empty() || per_step.back().back() != in.kernel))
                per_step.back().push_back(in.kernel);
    }
    EXPECT_EQ(per_step, (std::vector<std::vector<int>>{{0}, {1}, {}, {1}}));
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

// The simulator of the lists (simulate.hpp).

DataLayout two_ranks(const DataJobSpec& s) {
    return data_layout(s, {slice(0, 0, 0, s.units / 2), slice(1, 1, s.units / 2, s.units - s.units / 2)});
}
DataLinks links(double mpi_message_s) {
    DataLinks l;
    l.same_rank = {0.0, 2e-6};                   // a read or write: 1 us
    l.between_ranks = {0.0, 2e-6 + mpi_message_s};  // plus MPI
    return l;
}

TEST(Simulate, OneSliceIsItsLaunches) {
    const auto s = heat(1000, 10);
    const auto sim = simulate_data_steps(s, data_layout(s, {slice(0, 0, 0, 1000)}), {{1e-6, 5e-6}}, links(1e-5));
    EXPECT_NEAR(sim.step_s, 1000 * 1e-6 + 5e-6, 1e-12);
}

TEST(Simulate, ARateCoversEveryKernelOfAStep) {
    // Two kernels, one slice: the step is the device's rate times its units plus its fixed cost,
    // not twice that (k-means on an H200 was predicted 56.7 ms against 28.7 ms measured).
    const auto s = two_kernels(600, 4);
    const auto sim = simulate_data_steps(s, data_layout(s, {slice(0, 0, 0, 600)}), {{1e-6, 4e-6}}, links(1e-5));
    EXPECT_NEAR(sim.step_s, 600 * 1e-6 + 4e-6 + 1e-6 /* the records read back: one way of same_rank */, 1e-12);
}

TEST(Simulate, OverlapHidesALinkFasterThanTheInterior) {
    const auto s = heat(1000, 10);
    const std::vector<DataDeviceRate> rates = {{1e-6, 5e-6}, {1e-6, 5e-6}};
    // 500 rows each: interior 499 us; the link (1 us read + 50 us MPI + 1 us write) hides behind it.
    const auto on = simulate_data_steps(s, two_ranks(s), rates, links(50e-6));
    const auto off = simulate_data_steps(s, two_ranks(s), rates, links(50e-6), ProgramOptions{false});
    EXPECT_NEAR(on.step_s, 500e-6 + 2 * 5e-6, 1e-9);            // both parts' launch costs, nothing waits
    EXPECT_NEAR(off.step_s, 500e-6 + 5e-6 + 52e-6, 1e-9);       // the exchange before each launch
    // A link slower than the interior: the step is the link's round, overlap or not.
    const auto slow_on = simulate_data_steps(s, two_ranks(s), rates, links(2e-3));
    EXPECT_GT(slow_on.step_s, 2e-3);
    EXPECT_LT(slow_on.step_s, 2e-3 + 520e-6);
}

TEST(Simulate, EveryRandomJobFinishesWithoutWaitingForever) {
    std::mt19937 g(7);
    for (int trial = 0; trial < 200; ++trial) {
        const Case c = random_case(g);
        std::vector<DataDeviceRate> rates(c.layout.slices.size() + 8, {1e-6, 2e-6});
        for (bool overlap : {false, true}) {
            const auto sim = simulate_data_steps(c.spec, c.layout, rates, {}, ProgramOptions{overlap});
            EXPECT_GT(sim.step_s, 0.0) << "trial " << trial;
            EXPECT_EQ(sim.rank_end.size(), std::size_t(c.ranks));
        }
    }
}

/// Column `name` of the CSV rows that match `want` (column -> value): their median.
double median_of(const std::string& path, const std::map<std::string, std::string>& want, const std::string& name) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    std::vector<std::string> head;
    for (std::stringstream ss(line); std::getline(ss, line, ',');) head.push_back(line);
    std::vector<double> v;
    while (std::getline(in, line)) {
        std::map<std::string, std::string> row;
        std::stringstream ss(line);
        for (const auto& h : head) std::getline(ss, row[h], ',');
        bool match = row["rep"] != "0";
        for (const auto& [k, x] : want) match = match && row[k] == x;
        if (match) v.push_back(std::stod(row[name]));
    }
    if (v.empty()) return -1;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The simulator against the engine's measured heat on two H200s (docs/results/engine-h200-x2/,
// recorded, not timed here): a launch's fixed cost and the time per element fitted from the two
// one-GPU sizes, MPI at the rate cluster/mpi-bw.c measured in that call, device copies at the
// model's defaults. The two-GPU steps with overlap (the default) come within 15 %.
TEST(Simulate, RecordedTwoH200HeatStepsWithin15Percent) {
    const std::string csv = std::string(WORKSIZE_TEST_SOURCE_DIR) + "/docs/results/engine-h200-x2/heat.csv";
    const double t8 = median_of(csv, {{"size", "8192x8192x2000"}, {"config", "1gpu"}}, "steps_s") / 2000;
    const double t16 = median_of(csv, {{"size", "16384x16384x500"}, {"config", "1gpu"}}, "steps_s") / 500;
    ASSERT_GT(t8, 0);
    ASSERT_GT(t16, 0);
    const double e8 = 8192.0 * 8192, e16 = 16384.0 * 16384;
    const double per_element = (t16 - t8) / (e16 - e8), fixed = t8 - e8 * per_element;
    DataLinks l;
    l.between_ranks = {l.same_rank.byte_s + 1.0 / 4.4e9, l.same_rank.message_s + 5e-6};  // mpi-bw: 4.34-4.45 GB/s
    for (const auto& [n, steps] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{{8192, 2000}, {16384, 500}}) {
        DataJobSpec s = heat(n, steps);
        s.width = n;
        for (auto& b : s.buffers) b.pitch = n;
        const std::vector<DataDeviceRate> rates(2, {per_element * double(n), fixed});
        const std::string size = std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(steps);
        for (const auto& [config, layout] :
             {std::pair{std::string("2ranks"), two_ranks(s)},
              std::pair{std::string("1rank2gpus"), data_layout(s, {slice(0, 0, 0, n / 2), slice(1, 0, n / 2, n / 2)})}})
            for (bool overlap : {true, false}) {
                const double predicted = simulate_data_steps(s, layout, rates, l, ProgramOptions{overlap}).step_s;
                const double measured =
                    median_of(csv, {{"size", size}, {"config", config}, {"overlap", overlap ? "on" : "off"}}, "steps_s") /
                    double(steps);
                std::cout << "heat " << size << ' ' << config << " overlap " << (overlap ? "on" : "off")
                          << ": predicted " << predicted * 1e6 << " us, measured " << measured * 1e6
                          << " us per step (" << predicted / measured << ")\n";
                if (overlap) {
                    EXPECT_NEAR(predicted / measured, 1.0, 0.15) << size << ' ' << config;
                }
            }
    }
}

TEST(Simulate, RefusesASliceWithoutARate) {
    const auto s = heat(100, 2);
    EXPECT_THROW(simulate_data_steps(s, two_ranks(s), {{1e-6, 0.0}}), InvalidArgument);
}

}  // namespace
}  // namespace worksize
