// The matmul job on the OpenCL test device (PoCL's CPU device on CI): the master/worker round
// trip generate → slice_spec (through its JSON wire format) / slice_input → execute →
// accept_output → finish → verify, for awkward sizes, 1–3 uneven slices and every kind of local
// size the planner may choose, plus checks that verify() can fail and that limits are reported.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "pocl_device.hpp"
#include "slice_harness_2d.hpp"
#include "worksize/runtime/kernel_job.hpp"
#include "worksize/scheduler/planner.hpp"

namespace worksize {
namespace {

using namespace test;  // the 2-D slice harness

struct Shape {
    std::uint64_t n, m, k;
};

JobOptions options(const Shape& s, std::uint64_t iterations = 1) {
    JobOptions o;
    o.size = {s.n, s.m};
    o.iterations = iterations;
    o.seed = 42;
    o.params = {{"k", s.k}};
    return o;
}

// Awkward shapes: 1, 17, a prime width, a prime height with partial row units and partial
// k-tiles, K = 1.
const Shape kShapes[] = {{1, 1, 1}, {17, 17, 17}, {509, 17, 23}, {7, 509, 509}, {48, 30, 1}};

constexpr LocalKind kLocalKinds[] = {LocalKind::null, LocalKind::square, LocalKind::npot,
                                     LocalKind::wide, LocalKind::tall, LocalKind::padded};

// One test per (size, slice count) covers every local kind: a process per test costs PoCL
// start-up time, so ctest stays quick.
class MatmulSplit : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(MatmulSplit, RoundTripVerifies) {
    const auto [shape, slices] = GetParam();
    const auto& f = kernel_job("matmul");
    for (const LocalKind kind : kLocalKinds) {
        SCOPED_TRACE(std::string("local size kind ") + to_string(kind));
        auto job = f.make(options(kShapes[shape]));
        const Verdict v = round_trip(*job, f, slices, kind);
        EXPECT_TRUE(v.ok) << v.detail;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatmulSplit,
    ::testing::Combine(::testing::Range(0, int(std::size(kShapes))), ::testing::Values(1, 2, 3)),
    [](const auto& info) {
        const Shape& s = kShapes[std::get<0>(info.param)];
        std::string name = "N";  // appends, not operator+ chains: GCC 12 -Wrestrict false positive
        name += std::to_string(s.n);
        name += "_M";
        name += std::to_string(s.m);
        name += "_K";
        name += std::to_string(s.k);
        name += "_";
        name += std::to_string(std::get<1>(info.param));
        name += "slices";
        return name;
    });

// The paper's size, once each with tiles and with the NULL path (PoCL on 2 cores is slow).
struct LargeCase {
    Shape shape;
    int slices;
    LocalKind kind;
};
class MatmulLarge : public ::testing::TestWithParam<LargeCase> {};

TEST_P(MatmulLarge, RoundTripVerifies) {
    const auto& p = GetParam();
    const auto& f = kernel_job("matmul");
    auto job = f.make(options(p.shape));
    const Verdict v = round_trip(*job, f, p.slices, p.kind);
    EXPECT_TRUE(v.ok) << v.detail;
    EXPECT_NE(v.detail.find(" of " + std::to_string(p.shape.m) + " rows"), std::string::npos) << v.detail;  // how many it checked
}

std::string large_name(const ::testing::TestParamInfo<LargeCase>& info) {
    std::string name = "N";
    name += std::to_string(info.param.shape.n);
    name += "_";
    name += to_string(info.param.kind);
    return name;
}
INSTANTIATE_TEST_SUITE_P(Paper, MatmulLarge, ::testing::Values(LargeCase{{1000, 1000, 1000}, 3, LocalKind::square}),
                         large_name);
// A second paper-scale product (15 s under the sanitizers): the full tier.
INSTANTIATE_TEST_SUITE_P(FullPaper, MatmulLarge, ::testing::Values(LargeCase{{1023, 1023, 1023}, 2, LocalKind::null}),
                         large_name);

TEST(Matmul, SquareDescriptorIsWhatPlansUse) {
    // The paper's matmul, 1024^2 with K = 1024: 256 row units of 4 rows, each work-item 4
    // outputs of 1024 (mul, add, compare) steps.
    JobOptions o;
    o.size = {1024, 1024};
    const auto job = kernel_job("matmul").make(o);
    EXPECT_EQ(job->problem(), (GlobalSize{1024, 256}));
    const auto d = job->descriptor();
    EXPECT_EQ(d.name, "matmul");
    EXPECT_DOUBLE_EQ(d.ops_per_item, 3.0 * 1024 * 4);
    EXPECT_DOUBLE_EQ(d.bytes_in_per_item, 16.0);
    EXPECT_DOUBLE_EQ(d.bytes_in_fixed, 4.0 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(d.bytes_out_per_item, 16.0);
    // Medium by an honest count over 10 iterations (3.2e10), not the paper's 8e11: its paper
    // case passes the paper's figure as --ops.
    EXPECT_EQ(classify(d.ops_per_item * double(job->problem().items()) * 10), ComputeClass::medium);
}

TEST(Matmul, GeometryAndDescriptor) {
    auto job = kernel_job("matmul").make(options({1000, 509, 300}));
    EXPECT_EQ(job->problem(), (GlobalSize{1000, 128}));  // ceil(509 / 4) row units
    const auto d = job->descriptor();
    EXPECT_EQ(d.dims, 2);
    EXPECT_EQ(d.default_priority, Priority::x);
    EXPECT_DOUBLE_EQ(d.ops_per_item, 3.0 * 300 * 4);
    EXPECT_DOUBLE_EQ(d.bytes_in_fixed, 300.0 * 1000 * 4);
    EXPECT_DOUBLE_EQ(d.bytes_in_per_item, 4.0 * 300 * 4 / 1000);  // 4 rows of A per row unit
    EXPECT_DOUBLE_EQ(d.bytes_out_per_item, 4.0 * 4);
    EXPECT_EQ(job->summary(), "C = A(509x300)·B(300x1000), kernel tiled");
    EXPECT_TRUE(job->required_local().is_null());
    // K defaults to N.
    JobOptions o;
    o.size = {12, 5};
    EXPECT_EQ(kernel_job("matmul").make(o)->summary(), "C = A(5x12)·B(12x12), kernel tiled");
}

// --- The register-tiled variant (matmul_reg) -----------------------------------------------------

JobOptions reg_options(const Shape& s, const nlohmann::json& tiles, std::uint64_t iterations = 1) {
    JobOptions o = options(s, iterations);
    for (const auto& [key, value] : tiles.items()) o.params[key] = value;
    return o;
}

// Parameter sets: the GPU default (8x8 per work-item, float4), small tiles a CPU runs, scalar
// loads, 2-wide vectors with non-square blocks, a block of one row per work-item, deep and
// shallow k-tiles.
const char* const kRegSets[] = {
    R"({"variant":"reg"})",
    R"({"bm":16,"bn":16,"bk":8,"tm":4,"tn":4,"vw":4})",
    R"({"bm":32,"bn":16,"bk":4,"tm":2,"tn":4,"vw":1})",
    R"({"bm":16,"bn":32,"bk":16,"tm":8,"tn":2,"vw":2})",
    R"({"bm":8,"bn":64,"bk":32,"tm":1,"tn":8,"vw":4})",
};
// Awkward shapes: 1, below one tile, primes, N and K not multiples of the vector width, an
// exact multiple of the tiles (the vector path on whole tiles), K = 1.
const Shape kRegShapes[] = {{1, 1, 1}, {5, 3, 7}, {131, 67, 37}, {66, 129, 130}, {128, 128, 64}, {48, 30, 1}};

class MatmulReg : public ::testing::TestWithParam<int> {};

TEST_P(MatmulReg, RoundTripVerifiesAtAwkwardSizes) {
    const auto& f = kernel_job("matmul");
    const auto tiles = nlohmann::json::parse(kRegSets[GetParam()]);
    for (const Shape& shape : kRegShapes)
        for (const int slices : {1, 3}) {
            SCOPED_TRACE("N " + std::to_string(shape.n) + " M " + std::to_string(shape.m) + " K " +
                         std::to_string(shape.k) + ", " + std::to_string(slices) + " slice(s)");
            auto job = f.make(reg_options(shape, tiles));
            EXPECT_FALSE(job->required_local().is_null());
            const Verdict v = round_trip(*job, f, slices, LocalKind::padded);
            EXPECT_TRUE(v.ok) << v.detail;
        }
}

INSTANTIATE_TEST_SUITE_P(Tiles, MatmulReg, ::testing::Range(0, int(std::size(kRegSets))));

TEST(MatmulReg, GeometryFollowsTheParameters) {
    auto job = kernel_job("matmul").make(reg_options({1000, 509, 300}, {{"bm", 64}, {"bn", 32}, {"bk", 8},
                                                                         {"tm", 8}, {"tn", 4}, {"vw", 4}}));
    EXPECT_EQ(job->problem(), (GlobalSize{250, 64}));        // ceil(1000/4), ceil(509/8)
    EXPECT_EQ(job->required_local(), (LocalSize{8, 8}));     // (bn/tn, bm/tm)
    EXPECT_DOUBLE_EQ(job->descriptor().ops_per_item, 3.0 * 300 * 32);
    EXPECT_EQ(job->summary(), "C = A(509x300)·B(300x1000), kernel reg bm=64 bn=32 bk=8 tm=8 tn=4 vw=4");
    // Missing parameters take the defaults; the slice carries them all.
    auto d = kernel_job("matmul").make(reg_options({64, 64, 64}, {{"variant", "reg"}}));
    EXPECT_EQ(d->required_local(), (LocalSize{16, 16}));
    Assignment a;
    a.units = 8;
    a.global = {8, 8};
    const SliceSpec s = d->slice_spec(a);
    EXPECT_EQ(s.params.at("bm"), 128);
    EXPECT_EQ(s.params.at("vw"), 4);
    EXPECT_EQ(s.params.at("wpt"), 8);
    // The tuning key is the variant's own no more: both variants share their entries.
    EXPECT_EQ(d->tuning_key(), kernel_job("matmul").make(options({64, 64, 64}))->tuning_key());
}

TEST(MatmulReg, InvalidParametersAreRefusedWithTheValidValues) {
    const auto& f = kernel_job("matmul");
    auto refused = [&](const nlohmann::json& tiles, const std::string& what) {
        try {
            f.make(reg_options({16, 16, 16}, tiles));
            ADD_FAILURE() << "accepted " << tiles.dump();
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
    };
    refused({{"tm", 3}}, "tm and tn must be 1, 2, 4 or 8");
    refused({{"vw", 8}}, "vw must be 1, 2 or 4");
    // Zero, however given (--param bm=0 reaches here as an unsigned number): refused, not a
    // division by zero (bm = 0 made the work-group empty) nor a kernel that never ends (bk = 0).
    for (const char* key : {"bm", "bn", "bk", "tm", "vw"}) {
        refused({{key, std::uint64_t{0}}}, "must be a positive integer, got 0");
        refused({{key, "0"}}, "must be a positive integer, got \"0\"");
    }
    refused({{"bm", 100}, {"tm", 8}}, "bm must be a multiple of tm");
    refused({{"bm", 512}, {"bn", 512}, {"tm", 1}, {"tn", 1}}, "exceeds 1024 work-items");
    refused({{"bm", 64}, {"bn", 64}, {"bk", 4}, {"tm", 4}, {"tn", 4}, {"vw", 4}}, "evenly");
    refused({{"variant", "fast"}}, "must be tiled or reg");
    refused({{"variant", "tiled"}, {"bm", 64}}, "belong to variant reg");
}

TEST(MatmulReg, TilesBeyondTheDeviceAreAClearError) {
    auto& dev = test::first_device();
    DeviceInfo info = dev.info();
    info.local_mem_bytes = 1024;  // 128x128x8 tiles need 8.25 KiB
    DeviceContext small(dev.device(), info);
    const auto& f = kernel_job("matmul");
    auto job = f.make(reg_options({64, 64, 64}, {{"variant", "reg"}}));
    job->generate();
    Assignment a;
    a.units = 8;
    a.global = {8, 8};
    a.local = job->required_local();
    Bytes out;
    try {
        f.execute(small, job->slice_spec(a), job->slice_input(a), out);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.reason(), ErrorReason::device_limit);
        EXPECT_NE(std::string(e.what()).find("local memory"), std::string::npos) << e.what();
    }
}

TEST(Matmul, IterationsRepeatTheSameResult) {
    const auto& f = kernel_job("matmul");
    auto job = f.make(options({33, 21, 19}, 3));
    const Verdict v = round_trip(*job, f, 2, LocalKind::square);
    EXPECT_TRUE(v.ok) << v.detail;
}

TEST(Matmul, VerifyCatchesACorruptedElement) {
    const auto& f = kernel_job("matmul");
    auto job = f.make(options({17, 17, 17}));
    const Verdict v = round_trip(*job, f, 2, LocalKind::square, [](Bytes& out) {
        float x;
        std::memcpy(&x, out.data() + 5 * sizeof(float), sizeof x);
        x += 1e-3f;
        std::memcpy(out.data() + 5 * sizeof(float), &x, sizeof x);
    });
    EXPECT_FALSE(v.ok);
    EXPECT_NE(v.detail.find("C[0][5]"), std::string::npos) << v.detail;
}

TEST(Matmul, VerifyCatchesAMissingSlice) {
    const auto& f = kernel_job("matmul");
    auto job = f.make(options({17, 17, 17}));
    const Verdict v = round_trip(*job, f, 3, LocalKind::null, {}, 1);
    EXPECT_FALSE(v.ok) << v.detail;
}

TEST(Matmul, EmptySliceReturnsNothing) {
    const auto& f = kernel_job("matmul");
    auto job = f.make(options({8, 8, 8}));
    job->generate();
    Assignment a;
    a.offset = 2;
    a.units = 0;
    a.global = {8, 0};
    Bytes out{std::byte{1}};
    const SliceTimes t =
        f.execute(test::first_device(), job->slice_spec(a), job->slice_input(a), out);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(t.kernel, 0.0);
}

TEST(Matmul, SliceOverMaxAllocationIsAClearError) {
    auto& dev = test::first_device();
    DeviceInfo info = dev.info();
    info.max_alloc_bytes = 1024;  // B of a 64x64 problem needs 16 KiB
    DeviceContext small(dev.device(), info);
    const auto& f = kernel_job("matmul");
    auto job = f.make(options({64, 64, 64}));
    job->generate();
    Assignment a;
    a.units = 16;
    a.global = {64, 16};
    a.local = {16, 16};
    Bytes out;
    try {
        f.execute(small, job->slice_spec(a), job->slice_input(a), out);
        FAIL() << "no error";
    } catch (const Error& e) {
        // A's 16 row units of 4 rows of 64 floats come first in the declaration.
        EXPECT_EQ(std::string(e.what()),
                  "job 'matmul': a slice of 16 units needs 16.0 KiB for buffer 'A', more than the 1.0 KiB "
                  "CL_DEVICE_MAX_MEM_ALLOC_SIZE of " +
                      info.name);
    }
}

TEST(Matmul, ALocalSizeTheDeviceRefusesNamesKernelDeviceAndLocal) {
    const auto& f = kernel_job("matmul");
    auto job = f.make(options({64, 512, 8}));
    job->generate();
    const auto& info = test::first_device().info();
    ASSERT_GT(info.max_work_group_size, 0u);
    Assignment a;
    a.units = 128;
    a.local = {64, 2 * info.max_work_group_size / 64};  // twice the device's largest work-group
    a.global = {64, a.local.y};
    Bytes out;
    try {
        f.execute(test::first_device(), job->slice_spec(a), job->slice_input(a), out);
        FAIL() << "no error";
    } catch (const ClError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("matmul"), std::string::npos) << what;
        EXPECT_NE(what.find("local (64," + std::to_string(a.local.y) + ")"), std::string::npos) << what;
        EXPECT_NE(what.find(info.name), std::string::npos) << what;
    }
}

}  // namespace
}  // namespace worksize
