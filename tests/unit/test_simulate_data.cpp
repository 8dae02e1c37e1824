// The simulator of a data job's instruction lists (scheduler/simulate.hpp): one slice's step is
// its launches, a rate covers every kernel of a step, overlap hides a link faster than the
// interior, every random job finishes, the engine's recorded heat on two H200s within 15 %, and
// the scatter's and final gather's pieces keep the link busy.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "declarations.hpp"
#include "instruction_jobs.hpp"
#include "source_dir.hpp"
#include "worksize/scheduler/instructions.hpp"
#include "worksize/scheduler/simulate.hpp"

namespace worksize {
namespace {

using test::Case;
using test::heat;
using test::random_case;
using test::slice;
using test::two_kernels;

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

// The scatter and the final gather (simulate_data_transfers): heat with rows of 4 KiB on two
// ranks, rank 1's 2 MiB in pieces of 256 KiB over an MPI link slower than a device copy. With
// three slots the worker reads a piece while the ones before it move: the gather is one piece's
// read and then the link, never idle; with one slot each piece is read, then sent. The scatter
// likewise: the link, then the last piece's write. Rank 0 alone: its own copies only.
// (The expected times are worked out here from the links, not by the simulator's code.)
TEST(Simulate, TransfersInPiecesKeepTheLinkBusy) {
    DataJobSpec s = heat(1024, 2);
    s.width = 1024;
    for (auto& b : s.buffers) b.pitch = 1024;
    s.buffers[0].output = true;
    const auto layout = two_ranks(s);
    DataLinks l;  // the defaults: a copy at 12 GB/s and 10 us each way, MPI at 6.5 GB/s and 5 us beyond it
    const LinkCost copy{l.same_rank.byte_s / 2, l.same_rank.message_s / 2},
        mpi{l.between_ranks.byte_s - l.same_rank.byte_s, l.between_ranks.message_s - l.same_rank.message_s};
    const double piece = 256 * 1024, n = 8;
    ProgramOptions po;
    po.piece_bytes = std::uint64_t(piece);
    const auto three = simulate_data_transfers(s, layout, l, po);
    EXPECT_NEAR(three.gather_s, copy.time(piece) + n * mpi.time(piece), 1e-12);
    po.send_depth = 1;
    const auto one = simulate_data_transfers(s, layout, l, po);
    EXPECT_NEAR(one.gather_s, n * (copy.time(piece) + mpi.time(piece)), 1e-12);
    double link = 0, last = 0;
    for (const auto& in : StepCompiler(s, layout, 1, po).compile_scatter())
        if (in.kind == InstrKind::recv) {
            link += mpi.time(double(in.bytes));
            last = double(in.bytes);
        }
    // The link, then the last write; idle only once, behind t's last piece of one row (4 KiB),
    // which arrives before the write of the piece before it has freed the next slot.
    EXPECT_GE(three.scatter_s, link + copy.time(last) - 1e-12);
    EXPECT_LE(three.scatter_s, link + copy.time(last) + copy.time(piece));
    const auto alone = simulate_data_transfers(s, data_layout(s, {slice(0, 0, 0, 1024)}), l, po);
    EXPECT_NEAR(alone.gather_s, copy.time(1024.0 * 4096), 1e-12);
    EXPECT_NEAR(alone.scatter_s, 2 * copy.time(1024.0 * 4096), 1e-12);  // t and power
}

TEST(Simulate, RefusesASliceWithoutARate) {
    const auto s = heat(100, 2);
    EXPECT_THROW(simulate_data_steps(s, two_ranks(s), {{1e-6, 0.0}}), InvalidArgument);
}

}  // namespace
}  // namespace worksize
