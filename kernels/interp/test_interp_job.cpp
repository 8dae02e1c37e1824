// The interp job on the OpenCL test device (PoCL's CPU device on CI), besides its round trips
// (test_interp.cpp): the staged variant's parameter and work-group, the descriptor plans use,
// the geometry, NDRanges that do not cover a slice, the input rows a slice carries, and checks
// that verify() can fail and that limits are reported.
#include <gtest/gtest.h>

#include <cstring>
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

TEST(Interp, StageParameterAndItsWorkGroup) {
    const auto& f = kernel_job("interp");
    auto plain = f.make(options({64, 64, {}, ""}));
    EXPECT_TRUE(plain->required_local().is_null());
    EXPECT_FALSE(plain->tuning_key().contains("stage"));
    auto job = f.make(staged({64, 64, {}, ""}, 4, 4));
    EXPECT_EQ(job->tuning_key().at("stage"), 1);
    EXPECT_NE(job->summary().find("input staged in local memory"), std::string::npos) << job->summary();
    for (const nlohmann::json& bad : {nlohmann::json(2), nlohmann::json(0.5), nlohmann::json("yes")})
        EXPECT_THROW(f.make(options({8, 8, {{"stage", bad}}, ""})), InvalidArgument) << bad.dump();
    for (const nlohmann::json& bad : {nlohmann::json(16), nlohmann::json(48), nlohmann::json(256), nlohmann::json("x")})
        EXPECT_THROW(f.make(options({8, 8, {{"stage", 1}, {"stage_x", bad}}, ""})), InvalidArgument) << bad.dump();
    // stage_x joins the key where it is not the default 32.
    EXPECT_FALSE(job->tuning_key().contains("stage_x"));
    JobOptions wide = staged({64, 64, {}, ""}, 4, 4);
    wide.params["stage_x"] = "64";
    auto wide_job = f.make(wide);
    EXPECT_EQ(wide_job->required_local(), (LocalSize{64, 2}));
    EXPECT_EQ(wide_job->tuning_key().at("stage_x"), 64);
    EXPECT_NE(wide_job->summary().find("by 64x2 work-groups"), std::string::npos) << wide_job->summary();
    // The tuner's view: the required group and its tile's local memory, (127/2 -> 63) + 3 + 6 =
    // 72 floats by (15/2 -> 7) + 3 = 10 rows for vw 4, ry 4 at scale 2.
    DeviceInfo gpu = test::first_device().info();
    gpu.max_work_group_size = 1024;
    gpu.local_mem_bytes = 48 * 1024;
    ParamCandidate c = f.make(staged({8192, 8192, {}, ""}, 4, 4))->param_candidate(gpu);
    EXPECT_TRUE(c.invalid.empty()) << c.invalid;
    EXPECT_EQ(c.group, (LocalSize{32, 4}));
    EXPECT_EQ(c.params.at("stage"), 1);
    EXPECT_EQ(c.local_mem_bytes, 72u * 10 * sizeof(float));
    // 16 x 8 pixels per work-item at scale 0.8: neither tile fits 32 KiB, the smaller one (for a
    // scale of 1) is (511 + 3 + 6 = 520) x (31 + 3 = 34) floats; a device too small for the group.
    c = f.make(staged({8192, 8192, {{"scale", 0.8}}, ""}, 16, 8))->param_candidate(gpu);
    EXPECT_EQ(c.invalid, "its local tile for vw=16 ry=8 needs 70720 bytes of local memory, more than the 32768 allowed");
    gpu.max_work_group_size = 64;
    c = job->param_candidate(gpu);
    EXPECT_EQ(c.invalid, "its work-group of 128 work-items exceeds the device's 64");
}

/// The message with which executing `a`'s slice of `job` on `ctx` is refused ("" if it is not).
std::string refusal(KernelJob& job, const Assignment& a, DeviceContext& ctx = test::first_device()) {
    Bytes out;
    try {
        kernel_job("interp").execute(ctx, job.slice_spec(a), job.slice_input(a), out);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

TEST(Interp, StageRefusesAnotherLocalSize) {
    const auto& f = kernel_job("interp");
    auto job = f.make(staged({64, 8, {}, ""}, 4, 1));
    job->generate();
    Assignment a;
    a.units = 8;
    a.global = {16, 8};
    a.local = {16, 8};
    a.padded_global = a.global;
    EXPECT_EQ(refusal(*job, a), "interp: stage=1 runs with local size (32,4), not (16,8)");
}

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
    EXPECT_EQ(refusal(*job, a), "interp: slice NDRange (7,4) does not cover (8,4)");
}

TEST(Interp, RowGroupNDRangeThatDoesNotCoverTheSliceIsRefused) {
    const auto& f = kernel_job("interp");
    auto job = f.make(with_blocks({30, 9, {{"scale", 2.0}}, ""}, 4, 4));  // (8, 3) work-items
    job->generate();
    Assignment a;
    a.units = 3;
    a.global = {8, 2};
    a.padded_global = a.global;
    EXPECT_EQ(refusal(*job, a), "interp: slice NDRange (8,2) does not cover (8,3)");
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
    const Bytes in = job->slice_input(a);
    ASSERT_EQ(in.size(), 12u * 32 * sizeof(float));
    // Those rows of the input: the whole image is the input of a slice of every row.
    a.offset = 0;
    a.units = 100;
    const Bytes all = job->slice_input(a);
    ASSERT_EQ(all.size(), 50u * 32 * sizeof(float));
    EXPECT_TRUE(std::equal(in.begin(), in.end(), all.begin() + 19 * 32 * sizeof(float)));
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
    EXPECT_EQ(refusal(*job, a, small), "interp slice needs 64.0 KiB for its input rows, more than the 1.0 KiB "
                                       "CL_DEVICE_MAX_MEM_ALLOC_SIZE of " +
                                           info.name);
}

}  // namespace
}  // namespace worksize
