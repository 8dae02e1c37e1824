// The interp job on the OpenCL test device (PoCL's CPU device on CI): the master/worker round
// trip generate → slice_spec (through its JSON wire format) / slice_input → execute →
// accept_output → finish → verify (bit-exact against the CPU reference) for odd sizes, scales up
// and down, 1–3 uneven slices and every kind of local size the planner may choose, plus checks
// that verify() can fail, that slices carry only their input rows, and that limits are reported.
// Every pixels-per-work-item variant (vw = 1..16) runs the same round trip at awkward sizes:
// width 1, primes, widths that are no multiple of vw, one-row slices, scales up and down; so do
// the rows-per-work-item variants (ry = 1, 2, 4 with vw = 1, 4, 16): one row, fewer rows than
// ry, heights that are no multiple of ry, one row group per slice.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "pocl_device.hpp"
#include "slice_harness_2d.hpp"
#include "worksize/runtime/kernel_job.hpp"

namespace worksize {
namespace {

using namespace test;  // the 2-D slice harness

struct Case {
    std::uint64_t w, h;
    nlohmann::json params;
    const char* name;
};

JobOptions options(const Case& c, std::uint64_t iterations = 1) {
    JobOptions o;
    o.size = {c.w, c.h};
    o.iterations = iterations;
    o.seed = 7;
    o.params = c.params;
    return o;
}

const Case kCases[] = {
    {1, 1, {{"scale", 2.0}}, "1x1_up2"},
    {17, 17, nlohmann::json::object(), "17x17_default"},
    {509, 17, {{"scale", 3.3}}, "509x17_up3_3"},
    {1023, 509, {{"scale", 0.37}}, "1023x509_down0_37"},
    {1000, 1000, {{"scale", 2.0}}, "1000x1000_up2"},
    {40, 7, {{"in_w", 3}, {"in_h", 1000}}, "40x7_from3x1000"},
};

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

INSTANTIATE_TEST_SUITE_P(Sizes, InterpSplit,
                         ::testing::Combine(::testing::Range(0, int(std::size(kCases))),
                                            ::testing::Values(1, 2, 3)),
                         [](const auto& info) {
                             return std::string(kCases[std::get<0>(info.param)].name) + "_" +
                                    std::to_string(std::get<1>(info.param)) + "slices";
                         });

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

JobOptions with_vw(const Case& c, std::uint64_t vw) {
    JobOptions o = options(c);
    o.params["vw"] = vw;
    return o;
}

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

JobOptions with_blocks(const Case& c, std::uint64_t vw, std::uint64_t ry) {
    JobOptions o = with_vw(c, vw);
    o.params["ry"] = ry;
    return o;
}

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

TEST(Interp, SquareDescriptorIsWhatPlansUse) {
    // 1024^2 output from 512^2 input (scale 2), 4 pixels per work-item (the default): 256 x 1024
    // work-items of 17 x 4 + 10 operations, each reading one input float's worth (the input
    // once) and writing 4 output floats.
    const auto job = kernel_job("interp").make(options({1024, 1024, nlohmann::json::object(), ""}));
    EXPECT_EQ(job->problem(), (GlobalSize{256, 1024}));
    const auto d = job->descriptor();
    EXPECT_EQ(d.name, "interp");
    EXPECT_EQ(d.dims, 2);
    EXPECT_EQ(d.default_priority, Priority::y);
    EXPECT_DOUBLE_EQ(d.ops_per_item, 78.0);
    EXPECT_DOUBLE_EQ(d.bytes_in_per_item, 4.0);
    EXPECT_DOUBLE_EQ(d.bytes_out_per_item, 16.0);
    EXPECT_DOUBLE_EQ(d.bytes_in_fixed, 0.0);
    // One pixel per work-item: the scalar kernel's geometry and counts.
    const auto d1 = kernel_job("interp").make(with_vw({1024, 1024, {}, ""}, 1))->descriptor();
    EXPECT_DOUBLE_EQ(d1.ops_per_item, 27.0);
    EXPECT_DOUBLE_EQ(d1.bytes_in_per_item, 1.0);
    EXPECT_DOUBLE_EQ(d1.bytes_out_per_item, 4.0);
    // 4 x 2 pixels per work-item: 256 x 512 work-items, the column taps once for both rows
    // (9·8 + 8·4 + 8·2 + 2 operations), twice the bytes of each.
    const auto j2 = kernel_job("interp").make(with_vw({1024, 1024, {{"ry", 2}}, ""}, 4));
    EXPECT_EQ(j2->problem(), (GlobalSize{256, 512}));
    const auto d2 = j2->descriptor();
    EXPECT_DOUBLE_EQ(d2.ops_per_item, 122.0);
    EXPECT_DOUBLE_EQ(d2.bytes_in_per_item, 8.0);
    EXPECT_DOUBLE_EQ(d2.bytes_out_per_item, 32.0);
}

TEST(Interp, GeometryAndDescriptor) {
    auto job = kernel_job("interp").make(with_vw({1000, 509, {{"scale", 2.0}}, ""}, 8));
    EXPECT_EQ(job->problem(), (GlobalSize{125, 509}));
    const auto d = job->descriptor();
    EXPECT_EQ(d.dims, 2);
    EXPECT_EQ(d.default_priority, Priority::y);
    // Input 500 x 255 (509 / 2 = 254.5 rounds up), counted once over the 125 x 509 work-items.
    EXPECT_DOUBLE_EQ(d.bytes_in_per_item, 500.0 * 255 * 4 / (125.0 * 509));
    EXPECT_DOUBLE_EQ(d.bytes_out_per_item, 8.0 * 4);
    EXPECT_EQ(job->summary().rfind("out(1000x509) = bilinear(in(500x255))", 0), 0u)
        << job->summary();
    // A partial last work-item per row: 1001 pixels in 126 work-items; the totals stay exact.
    auto odd = kernel_job("interp").make(with_vw({1001, 509, {{"scale", 2.0}}, ""}, 8));
    EXPECT_EQ(odd->problem(), (GlobalSize{126, 509}));
    const auto od = odd->descriptor();
    EXPECT_DOUBLE_EQ(od.bytes_out_per_item * 126 * 509, 1001.0 * 509 * 4);
    EXPECT_DOUBLE_EQ(od.bytes_in_per_item * 126 * 509, 501.0 * 255 * 4);
    EXPECT_THROW(kernel_job("interp").make(options({8, 8, {{"scale", 0.0}}, ""})), InvalidArgument);
    EXPECT_THROW(kernel_job("interp").make(options({8, 8, {{"in_w", -3}}, ""})), InvalidArgument);
    for (const nlohmann::json& bad : {nlohmann::json(3), nlohmann::json(0), nlohmann::json(32),
                                     nlohmann::json(2.5), nlohmann::json(-4), nlohmann::json("x")})
        EXPECT_THROW(kernel_job("interp").make(options({8, 8, {{"vw", bad}}, ""})), InvalidArgument)
            << bad.dump();
    EXPECT_EQ(kernel_job("interp").make(options({8, 8, {{"vw", "16"}}, ""}))->problem(),
              (GlobalSize{1, 8}));
    for (const nlohmann::json& bad : {nlohmann::json(3), nlohmann::json(0), nlohmann::json(16),
                                     nlohmann::json(1.5), nlohmann::json(-1), nlohmann::json("y")})
        EXPECT_THROW(kernel_job("interp").make(options({8, 8, {{"ry", bad}}, ""})), InvalidArgument)
            << bad.dump();
    // 9 rows in row groups of 4: the last group holds one row.
    auto tall = kernel_job("interp").make(options({8, 9, {{"ry", "4"}}, ""}));
    EXPECT_EQ(tall->problem(), (GlobalSize{2, 3}));
    EXPECT_NE(tall->summary().find("4 pixels per work-item in each of 4 rows"), std::string::npos)
        << tall->summary();
    // ry joins the tuning key only where it is not 1 (the entries from before it keep theirs).
    EXPECT_FALSE(kernel_job("interp").make(options({8, 8, {}, ""}))->tuning_key().contains("ry"));
    EXPECT_EQ(tall->tuning_key().at("ry"), 4);
}

TEST(Interp, NDRangeThatDoesNotCoverTheVectorGeometryIsRefused) {
    const auto& f = kernel_job("interp");
    auto job = f.make(with_vw({30, 4, {{"scale", 2.0}}, ""}, 4));  // 8 work-items per row
    job->generate();
    Assignment a;
    a.units = 4;
    a.global = {7, 4};
    a.padded_global = a.global;
    Bytes out;
    try {
        f.execute(test::first_device(), job->slice_spec(a), job->slice_input(a), out);
        FAIL() << "no error";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(std::string(e.what()), "interp: slice NDRange (7,4) does not cover (8,4)");
    }
}

TEST(Interp, RowGroupNDRangeThatDoesNotCoverTheSliceIsRefused) {
    const auto& f = kernel_job("interp");
    auto job = f.make(with_blocks({30, 9, {{"scale", 2.0}}, ""}, 4, 4));  // (8, 3) work-items
    job->generate();
    Assignment a;
    a.units = 3;
    a.global = {8, 2};
    a.padded_global = a.global;
    Bytes out;
    try {
        f.execute(test::first_device(), job->slice_spec(a), job->slice_input(a), out);
        FAIL() << "no error";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(std::string(e.what()), "interp: slice NDRange (8,2) does not cover (8,3)");
    }
}

TEST(Interp, RowGroupSliceCarriesOnlyTheInputRowsItTouches) {
    // 4 rows per work-item: row groups 10..14 are output rows 40..59, as in the test below.
    auto job = kernel_job("interp").make(with_blocks({64, 100, {{"scale", 2.0}}, ""}, 4, 4));
    job->generate();
    Assignment a;
    a.offset = 10;
    a.units = 5;
    a.global = {16, 5};
    const SliceSpec s = job->slice_spec(a);
    EXPECT_EQ(s.params.at("src_row0").get<int>(), 19);
    EXPECT_EQ(s.params.at("src_rows").get<int>(), 12);
    EXPECT_EQ(s.params.at("ry").get<int>(), 4);
    EXPECT_EQ(job->slice_input(a).size(), 12u * 32 * sizeof(float));
    EXPECT_EQ(job->output_target(a).size(), 20u * 64 * sizeof(float));
    // The last group of 25 holds rows 96..99; past it, nothing.
    a.offset = 24;
    a.units = 1;
    EXPECT_EQ(job->output_target(a).size(), 4u * 64 * sizeof(float));
    a.offset = 25;
    EXPECT_TRUE(job->output_target(a).empty());
}

TEST(Interp, SliceCarriesOnlyTheInputRowsItTouches) {
    auto job = kernel_job("interp").make(options({64, 100, {{"scale", 2.0}}, ""}));  // in 32 x 50
    job->generate();
    Assignment a;
    a.offset = 40;
    a.units = 20;  // output rows 40..59 -> source y 19.75 .. 29.25 -> input rows 19..30
    a.global = {16, 20};
    const SliceSpec s = job->slice_spec(a);
    EXPECT_EQ(s.params.at("src_row0").get<int>(), 19);
    EXPECT_EQ(s.params.at("src_rows").get<int>(), 12);
    EXPECT_EQ(job->slice_input(a).size(), 12u * 32 * sizeof(float));
}

TEST(Interp, IterationsRepeatTheSameResult) {
    const auto& f = kernel_job("interp");
    auto job = f.make(options({33, 21, {{"scale", 1.7}}, ""}, 3));
    const Verdict v = round_trip(*job, f, 2, LocalKind::tall);
    EXPECT_TRUE(v.ok) << v.detail;
}

TEST(Interp, VerifyCatchesAOneUlpError) {
    const auto& f = kernel_job("interp");
    auto job = f.make(options({17, 17, {{"scale", 2.0}}, ""}));
    const Verdict v = round_trip(*job, f, 2, LocalKind::square, [](Bytes& out) {
        std::uint32_t bits;
        std::memcpy(&bits, out.data() + 3 * sizeof(float), sizeof bits);
        bits ^= 1u;  // flip the last mantissa bit of pixel (3, 0)
        std::memcpy(out.data() + 3 * sizeof(float), &bits, sizeof bits);
    });
    EXPECT_FALSE(v.ok);
    EXPECT_NE(v.detail.find("x=3 y=0"), std::string::npos) << v.detail;
}

TEST(Interp, VerifyCatchesAMissingSlice) {
    const auto& f = kernel_job("interp");
    auto job = f.make(options({17, 17, {{"scale", 2.0}}, ""}));
    const Verdict v = round_trip(*job, f, 3, LocalKind::null, {}, 2);
    EXPECT_FALSE(v.ok) << v.detail;
}

TEST(Interp, EmptySliceReturnsNothing) {
    const auto& f = kernel_job("interp");
    auto job = f.make(options({8, 8, {{"scale", 2.0}}, ""}));
    job->generate();
    Assignment a;
    a.offset = 8;
    a.units = 0;
    a.global = {2, 0};
    Bytes out{std::byte{1}};
    const SliceTimes t =
        f.execute(test::first_device(), job->slice_spec(a), job->slice_input(a), out);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(t.kernel, 0.0);
}

TEST(Interp, SliceOverMaxAllocationIsAClearError) {
    auto& dev = test::first_device();
    DeviceInfo info = dev.info();
    info.max_alloc_bytes = 1024;
    DeviceContext small(dev.device(), info);
    const auto& f = kernel_job("interp");
    auto job = f.make(options({64, 64, {{"scale", 0.5}}, ""}));  // input 128 x 128
    job->generate();
    Assignment a;
    a.units = 64;
    a.global = {16, 64};
    Bytes out;
    try {
        f.execute(small, job->slice_spec(a), job->slice_input(a), out);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "interp slice needs 64.0 KiB for its input rows, more than the 1.0 KiB "
                  "CL_DEVICE_MAX_MEM_ALLOC_SIZE of " +
                      info.name);
    }
}

}  // namespace
}  // namespace worksize
