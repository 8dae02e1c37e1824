// The interp job on the OpenCL test device (PoCL's CPU device on CI): the master/worker round
// trip generate → slice_spec (through its JSON wire format) / slice_input → execute →
// accept_output → finish → verify (bit-exact against the CPU reference) for odd sizes, scales up
// and down, 1–3 uneven slices and every kind of local size the planner may choose (the job's
// parameters and geometry, and the checks that verify() can fail, that slices carry only their
// input rows and that limits are reported: test_interp_job.cpp).
// Every pixels-per-work-item variant (vw = 1..16) runs the same round trip at awkward sizes:
// width 1, primes, widths that are no multiple of vw, one-row slices, scales up and down; so do
// the rows-per-work-item variants (ry = 1, 2, 4 with vw = 1, 4, 16): one row, fewer rows than
// ry, heights that are no multiple of ry, one row group per slice. The staged variant (stage = 1:
// input in local memory, 32x4 work-groups) runs them too, with groups that fall back to global
// loads where their span exceeds the tile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "pocl_device.hpp"
#include "slice_harness_2d.hpp"
#include "worksize/runtime/kernel_job.hpp"
#include "interp_test_cases.hpp"

namespace worksize {
namespace {

using namespace test;  // the 2-D slice harness
using interp_test::Case;
using interp_test::options;
using interp_test::staged;
using interp_test::with_blocks;
using interp_test::with_vw;

// The last case (seconds a slice on PoCL) runs in the full tier only.
const Case kCases[] = {
    {1, 1, {{"scale", 2.0}}, "1x1_up2"},
    {17, 17, nlohmann::json::object(), "17x17_default"},
    {509, 17, {{"scale", 3.3}}, "509x17_up3_3"},
    {1000, 1000, {{"scale", 2.0}}, "1000x1000_up2"},
    {40, 7, {{"in_w", 3}, {"in_h", 1000}}, "40x7_from3x1000"},
    {1023, 509, {{"scale", 0.37}}, "1023x509_down0_37"},
};
constexpr int kFullCases = 1;

constexpr LocalKind kLocalKinds[] = {LocalKind::null, LocalKind::square, LocalKind::npot,
                                     LocalKind::wide, LocalKind::tall, LocalKind::padded};

// One test per (size, slice count) covers every local kind: a process per test costs PoCL
// start-up time, so ctest stays quick.
class InterpSplit : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(InterpSplit, RoundTripIsBitExact) {
    const auto [c, slices] = GetParam();
    const auto& f = kernel_job("interp");
    for (const LocalKind kind : kLocalKinds) {
        SCOPED_TRACE(std::string("local size kind ") + to_string(kind));
        auto job = f.make(options(kCases[c]));
        const Verdict v = round_trip(*job, f, slices, kind);
        EXPECT_TRUE(v.ok) << v.detail;
    }
}

std::string split_case_name(const ::testing::TestParamInfo<std::tuple<int, int>>& info) {
    return std::string(kCases[std::get<0>(info.param)].name) + "_" + std::to_string(std::get<1>(info.param)) +
           "slices";
}
constexpr int kDefaultCases = int(std::size(kCases)) - kFullCases;
INSTANTIATE_TEST_SUITE_P(Sizes, InterpSplit,
                         ::testing::Combine(::testing::Range(0, kDefaultCases), ::testing::Values(1, 2, 3)),
                         split_case_name);
INSTANTIATE_TEST_SUITE_P(FullSizes, InterpSplit,
                         ::testing::Combine(::testing::Range(kDefaultCases, int(std::size(kCases))),
                                            ::testing::Values(1, 2, 3)),
                         split_case_name);

// The pixels-per-work-item variants at awkward sizes: width 1, primes, widths that are no
// multiple of vw (a partial last work-item per row), a width every vw divides (the aligned
// vector store), scales up and down, a tall input squeezed into a few rows.
const Case kAwkward[] = {
    {1, 5, {{"scale", 2.0}}, "w1_up2"},
    {13, 7, {{"scale", 2.5}}, "13x7_up2_5"},
    {509, 3, {{"scale", 0.37}}, "509x3_down0_37"},
    {64, 9, {{"scale", 2.0}}, "64x9_up2"},
    {1000, 17, {{"in_w", 1999}, {"in_h", 5}}, "1000x17_from1999x5"},
    {37, 11, {{"in_w", 3}, {"in_h", 100}}, "37x11_from3x100"},
};
constexpr std::uint64_t kVws[] = {1, 2, 4, 8, 16};

class InterpVectorWidth : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(InterpVectorWidth, RoundTripIsBitExactAtAwkwardSizes) {
    const std::uint64_t vw = GetParam();
    const auto& f = kernel_job("interp");
    for (const Case& c : kAwkward)
        for (const int slices : {1, 3})
            for (const LocalKind kind : kLocalKinds) {
                SCOPED_TRACE(std::string(c.name) + ", " + std::to_string(slices) +
                             " slices, local size kind " + to_string(kind));
                auto job = f.make(with_vw(c, vw));
                EXPECT_EQ(job->problem(), (GlobalSize{(c.w + vw - 1) / vw, c.h}));
                const Verdict v = round_trip(*job, f, slices, kind);
                EXPECT_TRUE(v.ok) << v.detail;
            }
}

// Every row its own slice (a one-row NDRange), with a padded (16,4) group and with NULL.
TEST_P(InterpVectorWidth, OneRowSlicesAreBitExact) {
    const std::uint64_t vw = GetParam();
    const auto& f = kernel_job("interp");
    for (const LocalKind kind : {LocalKind::padded, LocalKind::null}) {
        SCOPED_TRACE(to_string(kind));
        auto job = f.make(with_vw({29, 6, {{"scale", 0.8}}, ""}, vw));
        job->generate();
        const GlobalSize g = job->problem();
        for (std::uint64_t row = 0; row < g.y; ++row) {
            Assignment a;
            a.offset = row;
            a.units = 1;
            a.global = {g.x, 1};
            a.local = pick_local(kind, a.global);
            a.padded_global = a.global;
            if (!a.local.is_null())
                a.padded_global = {(g.x + a.local.x - 1) / a.local.x * a.local.x, a.local.y};
            Bytes out;
            f.execute(test::first_device(), slice_spec_from_json(to_json(job->slice_spec(a))),
                      job->slice_input(a), out);
            ASSERT_EQ(out.size(), 29u * sizeof(float));
            job->accept_output(a, out);
        }
        const Verdict v = job->verify();
        EXPECT_TRUE(v.ok) << v.detail;
    }
}

INSTANTIATE_TEST_SUITE_P(Vw, InterpVectorWidth, ::testing::ValuesIn(kVws),
                         [](const auto& info) { return "vw" + std::to_string(info.param); });

// Rows per work-item: heights of 1, fewer rows than ry, primes and no multiple of ry (a partial
// last row group), with widths that are no multiple of vw; the scale factors of kAwkward.
const Case kRowBlocks[] = {
    {7, 1, {{"scale", 2.0}}, "7x1_up2"},
    {13, 3, {{"scale", 2.5}}, "13x3_up2_5"},
    {509, 2, {{"scale", 0.37}}, "509x2_down0_37"},
    {64, 9, {{"scale", 2.0}}, "64x9_up2"},
    {31, 37, {{"scale", 1.7}}, "31x37_up1_7"},
    {1000, 17, {{"in_w", 1999}, {"in_h", 5}}, "1000x17_from1999x5"},
    {37, 11, {{"in_w", 3}, {"in_h", 100}}, "37x11_from3x100"},
};

class InterpRowBlock : public ::testing::TestWithParam<std::tuple<std::uint64_t, std::uint64_t>> {};

TEST_P(InterpRowBlock, RoundTripIsBitExactAtAwkwardSizes) {
    const auto [vw, ry] = GetParam();
    const auto& f = kernel_job("interp");
    for (const Case& c : kRowBlocks)
        for (const int slices : {2, 3})
            for (const LocalKind kind : kLocalKinds) {
                SCOPED_TRACE(std::string(c.name) + ", " + std::to_string(slices) +
                             " slices, local size kind " + to_string(kind));
                auto job = f.make(with_blocks(c, vw, ry));
                // A unit is a row group of ry output rows, the last one partial.
                EXPECT_EQ(job->problem(), (GlobalSize{(c.w + vw - 1) / vw, (c.h + ry - 1) / ry}));
                const Verdict v = round_trip(*job, f, slices, kind);
                EXPECT_TRUE(v.ok) << v.detail;
            }
}

// Every row group its own slice (the last one partial where ry does not divide the height), with
// a padded (16,4) group and with NULL; each slice returns exactly its own rows.
TEST_P(InterpRowBlock, OneGroupSlicesAreBitExact) {
    const auto [vw, ry] = GetParam();
    const auto& f = kernel_job("interp");
    constexpr std::uint64_t w = 29, h = 7;
    for (const LocalKind kind : {LocalKind::padded, LocalKind::null}) {
        SCOPED_TRACE(to_string(kind));
        auto job = f.make(with_blocks({w, h, {{"scale", 0.8}}, ""}, vw, ry));
        job->generate();
        const GlobalSize g = job->problem();
        ASSERT_EQ(g.y, (h + ry - 1) / ry);
        for (std::uint64_t group = 0; group < g.y; ++group) {
            Assignment a;
            a.offset = group;
            a.units = 1;
            a.global = {g.x, 1};
            a.local = pick_local(kind, a.global);
            a.padded_global = a.global;
            if (!a.local.is_null())
                a.padded_global = {(g.x + a.local.x - 1) / a.local.x * a.local.x, a.local.y};
            Bytes out;
            f.execute(test::first_device(), slice_spec_from_json(to_json(job->slice_spec(a))),
                      job->slice_input(a), out);
            const std::uint64_t rows = std::min(ry, h - group * ry);
            ASSERT_EQ(out.size(), rows * w * sizeof(float)) << "row group " << group;
            job->accept_output(a, out);
        }
        const Verdict v = job->verify();
        EXPECT_TRUE(v.ok) << v.detail;
    }
}

INSTANTIATE_TEST_SUITE_P(VwRy, InterpRowBlock,
                         ::testing::Combine(::testing::Values(1u, 4u, 16u), ::testing::Values(1u, 2u, 4u)),
                         [](const auto& info) {
                             return "vw" + std::to_string(std::get<0>(info.param)) + "_ry" +
                                    std::to_string(std::get<1>(info.param));
                         });
// Eight rows per work-item, with the GPU's default pixels per work-item only (PoCL compiles a
// program per local size: each combination costs seconds).
INSTANTIATE_TEST_SUITE_P(Ry8, InterpRowBlock, ::testing::Values(std::make_tuple(std::uint64_t{4}, std::uint64_t{8})),
                         [](const auto& info) {
                             return "vw" + std::to_string(std::get<0>(info.param)) + "_ry" +
                                    std::to_string(std::get<1>(info.param));
                         });

// stage = 1: each work-group copies its input span into local memory and requires 32x4
// work-groups (the round trip gives every slice that shape, as the planner does). Awkward sizes:
// one row, widths below a group's block and no multiple of vw, an input width that is a
// multiple of 4 (the float4 copy) and ones that are not (the scalar copy); scales 2, 3 and 0.8
// (tiles sized for them) and 0.37 (a span wider than the tile the budget allows: every group
// reads its taps from global memory instead); 1-3 slices, so that groups start at a slice's
// first input row.
const Case kStaged[] = {
    {7, 1, {{"scale", 2.0}}, "7x1_up2"},
    {64, 9, {{"scale", 2.0}}, "64x9_up2"},
    {509, 37, {{"scale", 2.0}}, "509x37_up2"},
    {13, 3, {{"scale", 3.0}}, "13x3_up3"},
    {301, 23, {{"scale", 3.0}}, "301x23_up3"},
    {1000, 17, {{"scale", 0.8}}, "1000x17_down0_8"},
    {1023, 41, {{"scale", 0.37}}, "1023x41_down0_37"},
    {37, 11, {{"in_w", 3}, {"in_h", 100}}, "37x11_from3x100"},
};

class InterpStage : public ::testing::TestWithParam<std::tuple<std::uint64_t, std::uint64_t>> {};

/// Every staged case on `slices` slices, bit-exact against the CPU.
void staged_round_trips(std::uint64_t vw, std::uint64_t ry, std::initializer_list<int> slice_counts) {
    const auto& f = kernel_job("interp");
    for (const Case& c : kStaged)
        for (const int slices : slice_counts) {
            SCOPED_TRACE(std::string(c.name) + ", " + std::to_string(slices) + " slices");
            auto job = f.make(staged(c, vw, ry));
            EXPECT_EQ(job->required_local(), (LocalSize{32, 4}));
            EXPECT_EQ(job->problem(), (GlobalSize{(c.w + vw - 1) / vw, (c.h + ry - 1) / ry}));
            const Verdict v = round_trip(*job, f, slices, LocalKind::null);
            EXPECT_TRUE(v.ok) << v.detail;
        }
}

// The default tier: one slice and three unequal ones (two slices: FullInterpStageSlices).
TEST_P(InterpStage, RoundTripIsBitExactAtAwkwardSizes) {
    const auto [vw, ry] = GetParam();
    staged_round_trips(vw, ry, {1, 3});
}

// Every row group its own slice, so each slice's input starts at its own first tap row.
TEST_P(InterpStage, OneGroupSlicesAreBitExact) {
    const auto [vw, ry] = GetParam();
    const auto& f = kernel_job("interp");
    for (const double scale : {0.8, 2.0}) {
        SCOPED_TRACE("scale " + std::to_string(scale));
        constexpr std::uint64_t w = 131, h = 9;
        auto job = f.make(staged({w, h, {{"scale", scale}}, ""}, vw, ry));
        job->generate();
        const GlobalSize g = job->problem();
        for (std::uint64_t group = 0; group < g.y; ++group) {
            Assignment a;
            a.offset = group;
            a.units = 1;
            a.global = {g.x, 1};
            a.local = job->required_local();
            a.padded_global = {(g.x + 31) / 32 * 32, 4};
            Bytes out;
            f.execute(test::first_device(), slice_spec_from_json(to_json(job->slice_spec(a))),
                      job->slice_input(a), out);
            ASSERT_EQ(out.size(), std::min(ry, h - group * ry) * w * sizeof(float)) << "row group " << group;
            job->accept_output(a, out);
        }
        const Verdict v = job->verify();
        EXPECT_TRUE(v.ok) << v.detail;
    }
}

std::string block_name(const ::testing::TestParamInfo<std::tuple<std::uint64_t, std::uint64_t>>& info) {
    return "vw" + std::to_string(std::get<0>(info.param)) + "_ry" + std::to_string(std::get<1>(info.param));
}
INSTANTIATE_TEST_SUITE_P(VwRy, InterpStage,
                         ::testing::Values(std::make_tuple(std::uint64_t{4}, std::uint64_t{4}),
                                           std::make_tuple(std::uint64_t{1}, std::uint64_t{1})),
                         block_name);
// 16 pixels by 2 rows a work-item: tens of seconds on PoCL (a program per local size).
INSTANTIATE_TEST_SUITE_P(FullVwRy, InterpStage,
                         ::testing::Values(std::make_tuple(std::uint64_t{16}, std::uint64_t{2})), block_name);

// The other work-group shapes (stage_x 64: 64x2, 128: 128x1) at a few of the sizes above.
/// A staged case with a stage_x of `sx`, on `slices` slices: the group's shape follows stage_x.
void stage_shape_round_trip(std::uint64_t sx, const Case& c, int slices) {
    SCOPED_TRACE(std::string(c.name) + ", stage_x " + std::to_string(sx) + ", " + std::to_string(slices) + " slices");
    const auto& f = kernel_job("interp");
    JobOptions o = staged(c, 4, 4);
    o.params["stage_x"] = sx;
    auto job = f.make(o);
    EXPECT_EQ(job->required_local(), (LocalSize{sx, 128 / sx}));
    const Verdict v = round_trip(*job, f, slices, LocalKind::null);
    EXPECT_TRUE(v.ok) << v.detail;
}

// The default tier: each stage_x with two of the cases, one on 1 slice and one on 3 (the whole
// grid: FullInterpStageShape).
TEST(InterpStageShape, RoundTripIsBitExact) {
    stage_shape_round_trip(64, kStaged[0], 3);
    stage_shape_round_trip(64, kStaged[5], 1);
    stage_shape_round_trip(128, kStaged[2], 1);
    stage_shape_round_trip(128, kStaged[6], 3);
}

TEST(FullInterpStageShape, RoundTripIsBitExact) {
    for (const std::uint64_t sx : {64u, 128u})
        for (const Case& c : {kStaged[0], kStaged[2], kStaged[5], kStaged[6]})
            for (const int slices : {1, 3}) stage_shape_round_trip(sx, c, slices);
}

TEST(FullInterpStageSlices, TwoSlicesAreBitExact) {
    staged_round_trips(1, 1, {2});
    staged_round_trips(4, 4, {2});
}

// With a local-memory budget too small for the job's scale factor (here 3300 bytes), the tile
// is sized for a scale of 1: 136 columns (127 + 3, widened by 6 for float4s) by 6 rows. At 1.05
// input pixels per output pixel a group's 128 columns span 134-135 input columns, 136 or 140 when
// widened to whole float4s (the input width 1680 is a multiple of 4), so some groups are staged
// and the others read from global memory in the same launch. The check below counts both kinds
// of groups from the taps, as interp.cl computes them.
TEST(InterpStageFallback, MixedStagedAndGlobalGroupsAreBitExact) {
    auto& dev = test::first_device();
    DeviceInfo info = dev.info();
    info.local_mem_bytes = 3300;
    DeviceContext small(dev.device(), info);
    const auto& f = kernel_job("interp");
    auto job = f.make(staged({1600, 24, {{"in_w", 1680}, {"in_h", 25}}, ""}, 4, 1));
    job->generate();
    const float sx = 1680.0f / 1600.0f;
    const auto first = [&](int x) {  // the left tap of output column x
        const float t = float(x) + 0.5f;
        const float u = t * sx;
        const float fx = std::fmin(std::fmax(u - 0.5f, 0.0f), 1679.0f);
        return int(std::floor(fx));
    };
    int fit = 0, wide = 0;
    for (int g0 = 0; g0 < 1600; g0 += 128) {
        const int c0 = first(g0) & ~3, c1 = std::min(first(g0 + 127) + 1, 1679) | 3;
        (c1 - c0 + 1 <= 136 ? fit : wide) += 1;
    }
    EXPECT_GT(fit, 0);
    EXPECT_GT(wide, 0);
    for (const int slices : {1, 3}) {
        auto assignments = split(job->problem(), slices, LocalKind::null);
        for (auto& a : assignments) {
            a.local = job->required_local();
            a.padded_global = {(a.global.x + 31) / 32 * 32, (a.global.y + 3) / 4 * 4};
            Bytes out;
            f.execute(small, slice_spec_from_json(to_json(job->slice_spec(a))), job->slice_input(a), out);
            job->accept_output(a, out);
        }
        const Verdict v = job->verify();
        EXPECT_TRUE(v.ok) << slices << " slices: " << v.detail;
    }
}

}  // namespace
}  // namespace worksize
