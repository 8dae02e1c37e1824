// The instruction lists of data jobs (scheduler/instructions.hpp) without a device: the heat
// stencil's and a two-kernel reduction's lists on 3 ranks pinned as text (tests/golden/), and over
// many declarations and splits: every send meets a receive of the same rows and size in the same
// order, each step launches every slice's units exactly once per kernel, overlap moves the same
// halo rows as the plain schedule (and none that no launch reads), and the counters match
// data_layout().
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "declarations.hpp"
#include "instruction_jobs.hpp"
#include "source_dir.hpp"
#include "worksize/scheduler/instructions.hpp"
#include "worksize/scheduler/simulate.hpp"

namespace worksize {
namespace {

using test::access;
using test::Case;
using test::heat;
using test::random_case;
using test::three_ranks;
using test::two_kernels;
using test::plain;
using test::scalar;
using test::shared;
using test::slice;
using test::split;

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

// The JSON form has each rank's scatter, steps and gathers (the final one last), as compiled.
TEST(Instructions, JsonHasEachRanksScatterStepsAndGathers) {
    auto s = heat(30, 4);
    s.gather_every = 1;
    const auto layout = three_ranks(s);
    const auto j = instructions_to_json(s, layout, 2);
    ASSERT_EQ(j.at("ranks").size(), 3u);
    for (int r = 0; r < 3; ++r) {
        const auto& rank = j.at("ranks")[std::size_t(r)];
        StepCompiler c(s, layout, r);
        EXPECT_EQ(rank.at("scatter").size(), c.compile_scatter().size());
        EXPECT_EQ(rank.at("steps").size(), 2u);
        const auto& g = rank.at("gathers");
        ASSERT_EQ(g.size(), 3u) << "after steps 1 and 2, and the final one";
        EXPECT_EQ(g[0].at("after"), 1);
        EXPECT_EQ(g[2].at("final"), true);
        EXPECT_EQ(g[2].at("list").size(), c.compile_gather(4, true).size());
        for (const auto& in : g[2].at("list")) EXPECT_EQ(in.at("flow"), "gather");
    }
}

/// two_kernels with a host step after every step that rewrites a shared input 'scale' (4 floats).
DataJobSpec with_host_steps(std::uint64_t steps) {
    auto s = two_kernels(60, steps);
    s.buffers[2].output = true;  // the reduction's result comes back to rank 0
    s.buffers.push_back(shared("scale", 4));
    s.buffers.back().host_written = true;
    s.host_every = 1;
    return s;
}

// A host step's lists (compile_host_step): rank 0 takes the shared output 'total' (a download of
// its own slice's, or from the first worker when it has none), runs the step, and, unless it is
// after the last step, sends 'scale' to each worker (after a status word) and uploads it onto its
// own slices; each worker receives it once and uploads it onto each of its slices after the
// receive. Every send meets its receive. The text is pinned as golden.
TEST(Instructions, HostStepsTakeTheSharedOutputsAndSendTheRewrittenInputs) {
    const auto s = with_host_steps(3);
    const std::string text = format_instructions(s, three_ranks(s), 2);
    EXPECT_EQ(text, golden("instructions_host_steps.txt", text)) << "WORKSIZE_UPDATE_GOLDEN=1 rewrites the file";
    const int total = 2, scale = 3;
    for (const bool rank0_works : {true, false}) {
        SCOPED_TRACE(rank0_works ? "rank 0 with a slice" : "rank 0 without slices");
        const DataLayout layout =
            rank0_works ? three_ranks(s)
                        : data_layout(s, {slice(0, 1, 0, 20), slice(1, 1, 20, 20), slice(2, 2, 40, 20)});
        for (const std::uint64_t done : {std::uint64_t(1), s.steps}) {
            const auto zero = StepCompiler(s, layout, 0).compile_host_step(done);
            std::multiset<std::tuple<int, int, std::uint64_t>> sent, received;  // (to, buffer, bytes)
            int hosts = 0, uploads = 0;
            for (const auto& in : zero) {
                EXPECT_EQ(in.flow, Flow::host);
                if (in.kind == InstrKind::host) ++hosts;
                if (in.kind == InstrKind::send) sent.insert({in.peer, in.buffer, in.bytes});
                if (in.kind == InstrKind::upload) ++uploads;
                if (in.kind == InstrKind::download || in.kind == InstrKind::recv) {
                    EXPECT_EQ(in.buffer, total);
                    EXPECT_EQ(in.kind == InstrKind::recv, !rank0_works);
                    if (in.kind == InstrKind::recv) {
                        EXPECT_EQ(in.peer, 1) << "the first rank with slices";
                    }
                    EXPECT_EQ(hosts, 0) << "the shared output is there before the step runs";
                }
            }
            EXPECT_EQ(hosts, 1);
            EXPECT_EQ(uploads, done < s.steps && rank0_works ? 1 : 0);
            EXPECT_EQ(sent.size(), done < s.steps ? 2u : 0u);
            for (int r : {1, 2}) {
                int worker_uploads = 0, sends = 0;
                const auto list = StepCompiler(s, layout, r).compile_host_step(done);
                for (std::size_t i = 0; i < list.size(); ++i) {
                    const auto& in = list[i];
                    if (in.kind == InstrKind::recv) received.insert({r, in.buffer, in.bytes});
                    if (in.kind == InstrKind::send) {
                        ++sends;
                        EXPECT_EQ(in.buffer, total);
                    }
                    if (in.kind == InstrKind::upload) {
                        ++worker_uploads;
                        ASSERT_EQ(in.deps.size(), 1u);
                        EXPECT_EQ(list[std::size_t(in.deps[0])].kind, InstrKind::recv);
                        EXPECT_EQ(in.buffer, scale);
                    }
                }
                EXPECT_EQ(sends, !rank0_works && r == 1 ? 1 : 0);
                EXPECT_EQ(worker_uploads, done < s.steps ? int(std::count_if(layout.slices.begin(), layout.slices.end(),
                                                                             [r](const auto& x) { return x.rank == r; }))
                                                          : 0);
            }
            EXPECT_EQ(sent, received);
        }
    }
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

// The gathers (StepCompiler::compile_gather) over random jobs, splits and piece sizes, rank 0
// with slices or without (then the first worker sends the shared outputs): each worker's pieces
// meet rank 0's receives one for one (buffer, rows, bytes, in order); rank 0's downloads and
// receives fill every byte of every output exactly once; a worker reads into at most send_depth
// slots per slice, each read after the slot's last send and each send after its read; rank 0
// posts a piece after the one a window before it, and after the rank's status word.
TEST(Instructions, RandomGathersMeetTheirReceivesAndFillEveryOutputOnce) {
    std::mt19937 g(2027);
    for (int trial = 0; trial < 300; ++trial) {
        Case c = random_case(g);
        c.spec.buffers.push_back(shared("centre", 1 + g() % 40, false));
        c.spec.buffers.back().output = true;
        const bool rank0_idle = g() % 2;
        std::vector<Assignment> a;
        for (const auto& sl : c.layout.slices) a.push_back(slice(sl.device, sl.rank + (rank0_idle ? 1 : 0), sl.offset, sl.units));
        c.layout = data_layout(c.spec, a);
        ProgramOptions po;
        po.piece_bytes = 1 + g() % 200;
        po.send_depth = 1 + int(g() % 3);
        po.recv_window = 1 + int(g() % 4);
        const bool final = g() % 2;
        SCOPED_TRACE("trial " + std::to_string(trial) + " piece " + std::to_string(po.piece_bytes));
        using Msg = std::tuple<int, std::uint64_t, std::uint64_t, std::uint64_t>;  // buffer, first, rows, bytes
        std::map<int, std::vector<Msg>> sent, taken;
        std::map<int, std::vector<int>> filled;  // buffer -> times each byte was filled on rank 0
        for (std::size_t b = 0; b < c.spec.buffers.size(); ++b) {
            const auto& d = c.spec.buffers[b];
            filled[int(b)].assign(d.layout == BufferLayout::split ? c.spec.units * row_bytes(d) : d.count * elem_size(d.type), 0);
        }
        for (int r = 0; r <= c.ranks; ++r) {
            const auto list = StepCompiler(c.spec, c.layout, r, po).compile_gather(3, final);
            std::map<int, std::set<int>> slots;  // slice -> its slots
            std::map<int, std::vector<int>> pieces_from;  // rank 0: peer -> its piece receives
            for (std::size_t i = 0; i < list.size(); ++i) {
                const auto& in = list[i];
                ASSERT_EQ(in.flow, Flow::gather);
                for (int d : in.deps) ASSERT_LT(std::size_t(d), i);
                if (in.buffer < 0) continue;  // a status word
                const Msg m{in.buffer, in.first, in.rows, in.bytes};
                if (in.kind == InstrKind::send) {
                    sent[r].push_back(m);
                    ASSERT_EQ(in.deps.size(), 1u);
                    ASSERT_EQ(list[std::size_t(in.deps[0])].kind, InstrKind::read_rows);
                    ASSERT_EQ(list[std::size_t(in.deps[0])].staging, in.staging);
                }
                if (in.kind == InstrKind::read_rows) {
                    slots[in.slice].insert(in.staging);
                    int last = -1;  // the slot's last send before it: its dependency
                    for (std::size_t j = 0; j < i; ++j)
                        if (list[j].kind == InstrKind::send && list[j].buffer >= 0 && list[j].staging == in.staging) last = int(j);
                    if (last >= 0) {
                        ASSERT_EQ(in.deps, std::vector<int>{last});
                    } else {
                        ASSERT_TRUE(in.deps.empty());
                    }
                }
                if (in.kind == InstrKind::recv || in.kind == InstrKind::download) {
                    ASSERT_EQ(r, 0);
                    ASSERT_TRUE(in.host);
                    for (std::uint64_t k = in.at; k < in.at + in.bytes; ++k) ++filled[in.buffer].at(k);
                }
                if (in.kind == InstrKind::recv) {
                    taken[in.peer].push_back(m);
                    auto& mine = pieces_from[in.peer];
                    ASSERT_EQ(list[std::size_t(in.deps.at(0))].buffer, -1) << "after the rank's status word";
                    if (mine.size() >= std::size_t(po.recv_window)) {
                        ASSERT_EQ(in.deps.at(1), mine[mine.size() - std::size_t(po.recv_window)]);
                    }
                    mine.push_back(int(i));
                }
            }
            for (const auto& [sl, used] : slots) ASSERT_LE(used.size(), std::size_t(po.send_depth));
        }
        sent.erase(0);
        EXPECT_EQ(sent, taken) << "every piece a worker sends meets rank 0's receive";
        for (const auto& [b, times] : filled) {
            const auto& d = c.spec.buffers[std::size_t(b)];
            const int want = d.output && (d.layout == BufferLayout::split || final) ? 1 : 0;
            for (std::size_t k = 0; k < times.size(); ++k) ASSERT_EQ(times[k], want) << d.name << " byte " << k;
        }
    }
}

// The scatter (StepCompiler::compile_scatter) over random jobs, splits and piece sizes, rank 0
// with slices or without: rank 0's sends to each worker meet its receives one for one, in order;
// every slice gets each input row it holds (its own and its halos, input_rows()) and each shared
// input's element exactly once, by a write from a slot its receive filled (rank 0's own slices
// by an upload from the job's memory); a worker receives into two slots, each receive after the
// writes of the slot's last piece.
TEST(Instructions, RandomScattersMeetTheirReceivesAndFillEveryInputOnce) {
    std::mt19937 g(2028);
    for (int trial = 0; trial < 300; ++trial) {
        Case c = random_case(g);
        c.spec.buffers.push_back(shared("weights", 1 + g() % 40, true));
        const bool rank0_idle = g() % 2;
        std::vector<Assignment> a;
        for (const auto& sl : c.layout.slices)
            a.push_back(slice(sl.device, sl.rank + (rank0_idle ? 1 : 0), sl.offset, sl.units));
        c.layout = data_layout(c.spec, a);
        ProgramOptions po;
        po.piece_bytes = 1 + g() % 200;
        SCOPED_TRACE("trial " + std::to_string(trial) + " piece " + std::to_string(po.piece_bytes));
        using Msg =
            std::tuple<int, std::uint64_t, std::uint64_t, std::uint64_t>;  // buffer, first, rows, bytes
        std::map<int, std::vector<Msg>> sent, taken;
        std::map<std::pair<int, int>, std::map<std::uint64_t, int>> got;  // (slice, buffer) -> unit -> times
        for (int r = 0; r <= c.ranks; ++r) {
            const auto list = StepCompiler(c.spec, c.layout, r, po).compile_scatter();
            std::map<int, std::vector<int>> last_writes;  // slot -> the writes since its last receive
            for (std::size_t i = 0; i < list.size(); ++i) {
                const auto& in = list[i];
                ASSERT_EQ(in.flow, Flow::scatter);
                for (int d : in.deps) ASSERT_LT(std::size_t(d), i);
                const Msg m{in.buffer, in.first, in.rows, in.bytes};
                if (in.kind == InstrKind::send) {
                    ASSERT_EQ(r, 0);
                    ASSERT_TRUE(in.host);
                    sent[in.peer].push_back(m);
                } else if (in.kind == InstrKind::recv) {
                    taken[r].push_back(m);
                    ASSERT_LT(in.staging, 2);
                    auto w = last_writes[in.staging];
                    std::sort(w.begin(), w.end());
                    ASSERT_EQ(in.deps, w) << "a slot's receive after its last piece's writes";
                    last_writes[in.staging].clear();
                } else {
                    ASSERT_TRUE(in.kind == InstrKind::write_rows || in.kind == InstrKind::upload)
                        << to_string(in.kind);
                    ASSERT_EQ(c.layout.slices[std::size_t(in.slice)].rank, r);
                    if (in.kind == InstrKind::write_rows) {
                        const auto& from = list[std::size_t(in.deps.at(0))];
                        ASSERT_EQ(from.kind, InstrKind::recv);
                        ASSERT_EQ(Msg(from.buffer, from.first, from.rows, from.bytes), m);
                        ASSERT_EQ(from.staging, in.staging);
                        last_writes[in.staging].push_back(int(i));
                    }
                    for (std::uint64_t u = in.first; u < in.first + in.rows; ++u)
                        ++got[{in.slice, in.buffer}][u];
                }
            }
        }
        EXPECT_EQ(sent, taken) << "every piece rank 0 sends meets the worker's receive";
        for (std::size_t i = 0; i < c.layout.slices.size(); ++i)
            for (std::size_t b = 0; b < c.spec.buffers.size(); ++b) {
                const auto& d = c.spec.buffers[b];
                std::map<std::uint64_t, int> want;
                if (d.input && d.layout == BufferLayout::shared)
                    for (std::uint64_t u = 0; u < d.count; ++u) want[u] = 1;
                if (d.input && d.layout == BufferLayout::split) {
                    const auto [first, n] =
                        input_rows(c.spec, int(b), c.layout.slices[i].offset, c.layout.slices[i].units);
                    for (std::uint64_t u = first; u < first + n; ++u) want[u] = 1;
                }
                EXPECT_EQ(got[std::pair(int(i), int(b))], want) << "slice " << i << " buffer " << d.name;
            }
    }
}

}  // namespace
}  // namespace worksize
