// A declared kernel job's slices as instruction lists (scheduler/slice_program.hpp) without a
// device: a slice's uploads cover its input exactly, in the order it travels, in pieces of whole
// rows; its launches are the kernels `iterations` times; its downloads and reductions fill its
// output exactly; and across ranks every piece rank 0 sends meets a receive of the same size in
// the same order, each upload waiting for the pieces that hold its bytes.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "declarations.hpp"
#include "worksize/scheduler/slice_program.hpp"

namespace worksize {
namespace {

using test::access;
using test::plain;
using test::shared;
using test::split;

/// matmul's shape: A split (rows of `k` floats) with a halo of `halo`, B shared, C split out, and
/// (with `sum`) a reduction into a shared 'total'.
DataJobSpec job(std::uint64_t units, std::uint64_t k, std::uint64_t halo, bool sum) {
    DataJobSpec s;
    s.name = "mm";
    s.source = "__kernel void mm() {}";
    s.dims = 2;
    s.width = 16;
    s.units = units;
    s.buffers = {split("A", k, true), shared("B", k * 16), split("C", 16, false, true)};
    KernelDecl kd;
    kd.name = "mm";
    kd.args = {halo ? access(ArgKind::halo, 0, halo) : access(ArgKind::read, 0), access(ArgKind::all, 1),
               access(ArgKind::write, 2), plain(ArgKind::end)};
    if (sum) {
        s.buffers.push_back(shared("total", 2, false));
        kd.args.push_back(access(ArgKind::reduce, 3));
    }
    s.kernels = {kd};
    return s;
}

std::uint64_t input_bytes(const DataJobSpec& s, std::uint64_t offset, std::uint64_t units) {
    std::uint64_t n = 0;
    for (const auto& p : slice_input_parts(s, offset, units)) n += p.bytes;
    return n;
}

/// The invariants of one slice's list.
void check_slice(const DataJobSpec& s, std::uint64_t offset, std::uint64_t units, std::uint64_t iterations,
                 std::uint64_t piece) {
    SCOPED_TRACE("slice [" + std::to_string(offset) + ", +" + std::to_string(units) + ") piece " + std::to_string(piece));
    const auto list = compile_slice(s, offset, units, {3, iterations, piece});
    std::uint64_t in = 0, out = 0, launches = 0;
    std::map<int, std::uint64_t> next_row;  // per split input: the next row its uploads must start at
    for (std::size_t i = 0; i < list.size(); ++i) {
        const Instruction& x = list[i];
        EXPECT_EQ(x.slice, 3);
        for (int d : x.deps) EXPECT_LT(d, int(i)) << describe(x, s);
        switch (x.kind) {
            case InstrKind::upload: {
                EXPECT_EQ(x.at, in) << "uploads follow the input's order: " << describe(x, s);
                in += x.bytes;
                const auto& bd = s.buffers[std::size_t(x.buffer)];
                if (bd.layout == BufferLayout::split) {
                    EXPECT_EQ(x.bytes, x.rows * row_bytes(bd));
                    if (piece) {
                        EXPECT_TRUE(x.bytes <= piece || x.rows == 1) << describe(x, s);
                    }
                    const auto [first, n] = input_rows(s, x.buffer, offset, units);
                    if (!next_row.count(x.buffer)) next_row[x.buffer] = first;
                    EXPECT_EQ(x.first, next_row[x.buffer]);
                    next_row[x.buffer] = x.first + x.rows;
                    EXPECT_LE(x.first + x.rows, first + n);
                } else if (piece) {
                    EXPECT_LE(x.bytes, piece);
                }
                break;
            }
            case InstrKind::launch:
                ++launches;
                EXPECT_EQ(x.first, offset);
                EXPECT_EQ(x.rows, units);
                EXPECT_FALSE(x.deps.empty());
                break;
            case InstrKind::download:
            case InstrKind::reduce:
                EXPECT_EQ(x.at, out) << describe(x, s);
                out += x.bytes;
                EXPECT_EQ(list[std::size_t(x.deps.at(0))].kind, InstrKind::launch);
                break;
            default: break;
        }
    }
    EXPECT_EQ(in, input_bytes(s, offset, units));
    EXPECT_EQ(out, slice_output_bytes(s, offset, units));
    EXPECT_EQ(launches, std::max<std::uint64_t>(iterations, 1) * s.kernels.size());
}

TEST(SliceProgram, ASliceUploadsItsInputAndDownloadsItsOutputExactly) {
    std::mt19937_64 rng(7);
    for (int t = 0; t < 200; ++t) {
        const std::uint64_t units = 1 + rng() % 50, k = 1 + rng() % 9, halo = rng() % 3;
        const DataJobSpec s = job(units, k, halo, rng() % 2);
        const std::uint64_t offset = rng() % units, n = 1 + rng() % (units - offset);
        const std::uint64_t piece = std::uint64_t(std::vector<int>{0, 1, 4, 40, 100, 1000}[rng() % 6]);
        check_slice(s, offset, n, rng() % 4, piece);
    }
}

TEST(SliceProgram, UploadsInPiecesOfWholeRows) {
    const DataJobSpec s = job(64, 8, 0, false);  // A: 32-byte rows
    const auto list = compile_slice(s, 16, 32, {0, 1, 100});
    std::vector<std::uint64_t> a_rows;
    for (const auto& x : list)
        if (x.kind == InstrKind::upload && x.buffer == 0) a_rows.push_back(x.rows);
    // 100-byte pieces hold 3 rows of 32 bytes: 32 rows in 10 of 3 and one of 2.
    ASSERT_EQ(a_rows.size(), 11u);
    EXPECT_EQ(a_rows.back(), 2u);
}

TEST(SliceProgram, EveryPieceRankZeroSendsMeetsAReceiveInOrder) {
    std::mt19937_64 rng(11);
    for (int t = 0; t < 100; ++t) {
        const std::uint64_t units = 6 + rng() % 60;
        const DataJobSpec s = job(units, 1 + rng() % 5, rng() % 2, rng() % 2);
        std::vector<KernelSliceDecl> slices;
        const std::uint64_t a = 1 + rng() % (units / 3), b = 1 + rng() % (units / 3);
        slices.push_back({s, 0, 0, a});
        slices.push_back({s, 1, a, b});
        slices.push_back({s, 2, a + b, units - a - b});
        if (rng() % 2) std::swap(slices[0].rank, slices[1].rank);  // rank 0 without a slice of its own first
        KernelProgramOptions o;
        o.piece_bytes = 1 + rng() % 64;
        o.iterations = 1 + rng() % 3;
        const auto lists = kernel_job_lists(slices, o);
        std::map<std::pair<int, int>, std::vector<std::uint64_t>> sent, received;  // (from, to) -> sizes
        for (const auto& [rank, list] : lists)
            for (std::size_t i = 0; i < list.size(); ++i) {
                const auto& x = list[i];
                for (int d : x.deps) EXPECT_LT(d, int(i));
                if (x.kind == InstrKind::send) sent[{rank, x.peer}].push_back(x.bytes);
                if (x.kind == InstrKind::recv) received[{x.peer, rank}].push_back(x.bytes);
                if (x.kind == InstrKind::upload && rank != 0) {
                    // It waits for every piece that holds one of its bytes.
                    std::uint64_t covered = 0;
                    for (int d : x.deps)
                        if (list[std::size_t(d)].kind == InstrKind::recv) {
                            const auto& r = list[std::size_t(d)];
                            EXPECT_TRUE(r.at < x.at + x.bytes && r.at + r.bytes > x.at);
                            covered += std::min(r.at + r.bytes, x.at + x.bytes) - std::max(r.at, x.at);
                        }
                    EXPECT_EQ(covered, x.bytes) << describe(x, s);
                }
            }
        EXPECT_EQ(sent, received);
        std::uint64_t to_workers = 0, expected = 0;
        for (const auto& [key, v] : sent)
            if (key.first == 0)
                for (auto n : v) to_workers += n;
        for (const auto& sl : slices)
            if (sl.rank != 0) expected += input_bytes(s, sl.offset, sl.units);
        EXPECT_EQ(to_workers, expected);
    }
}

TEST(SliceProgram, RankLocalInputsMoveNothing) {
    const DataJobSpec s = job(30, 4, 1, true);
    KernelProgramOptions o;
    o.local_inputs = true;
    for (const auto& [rank, list] : kernel_job_lists({{s, 0, 0, 10}, {s, 1, 10, 10}, {s, 2, 20, 10}}, o))
        for (const auto& x : list) EXPECT_NE(x.kind, InstrKind::send) << rank << ": " << describe(x, s);
}

TEST(SliceProgram, DescribesEachKind) {
    const DataJobSpec s = job(8, 2, 0, true);
    const auto text = format_kernel_instructions({{s, 0, 0, 4}, {s, 1, 4, 4}});
    for (const char* want : {"alloc A slice 0", "upload A slice 1 rows [4, 8) from input [0, 32) 32 B",
                             "upload B slice 1 bytes [0, 128) from input [32, 160) 128 B", "launch mm slice 0 units [0, 4)",
                             "download C slice 1 rows [4, 8) into output [0, 256) 256 B",
                             "reduce mm argument 4 into total slice 0, output [256, 272)",
                             "send input of slice 1 to rank 1 [0, 32) 32 B",
                             "recv output of slice 1 from rank 1 [0, 272) 272 B"})
        EXPECT_NE(text.find(want), std::string::npos) << want << " in\n" << text;
    const auto json = kernel_instructions_to_json({{s, 0, 0, 4}, {s, 1, 4, 4}});
    EXPECT_EQ(json.at("ranks").size(), 2u);
    EXPECT_EQ(json.at("ranks").at(1).at("list").at(0).at("stream"), "input");
}

}  // namespace
}  // namespace worksize
