// The "sort" job's master/worker round trip on the PoCL device: generate, splitter partition,
// slice specs (through their JSON wire format), bitonic sort per slice, gather, verify; for awkward
// sizes, uneven slices and local sizes NULL / a divisor >= 8 / a non-power-of-two divisor / 1;
// plus the executor alone on odd geometries and verify()'s negative cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "pocl_device.hpp"
#include "slice_harness_1d.hpp"
#include "worksize/runtime/kernel_job.hpp"
#include "worksize/runtime/opencl.hpp"

namespace worksize {
namespace {

using namespace test;  // the 1-D slice harness

std::vector<float> as_floats(const Bytes& b) {
    std::vector<float> v(b.size() / sizeof(float));
    if (!v.empty()) std::memcpy(v.data(), b.data(), b.size());
    return v;
}
Bytes as_bytes(const std::vector<float>& v) {
    Bytes b(v.size() * sizeof(float));
    if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
    return b;
}

/// Runs every slice of `as` on the test device and hands the outputs to `job`; `tamper` may
/// change a slice's output before it is accepted.
template <class Tamper>
void run_slices(KernelJob& job, const std::vector<Assignment>& as, Tamper tamper) {
    const auto& f = kernel_job("sort");
    for (std::size_t i = 0; i < as.size(); ++i) {
        const SliceSpec spec = slice_spec_from_json(to_json(job.slice_spec(as[i])));
        const Bytes in = job.slice_input(as[i]);
        Bytes out;
        f.execute(test::first_device(), spec, in, out);
        tamper(i, out);
        job.accept_output(as[i], out);
    }
    job.finish();
}
void run_slices(KernelJob& job, const std::vector<Assignment>& as) {
    run_slices(job, as, [](std::size_t, Bytes&) {});
}

std::unique_ptr<KernelJob> make_job(std::uint64_t n, std::uint64_t iterations = 1,
                                    const std::string& dist = "mixed", std::uint64_t seed = 7,
                                    nlohmann::json extra = nlohmann::json::object()) {
    JobOptions o;
    o.size = {n, 1};
    o.iterations = iterations;
    o.seed = seed;
    o.params = {{"distribution", dist}};
    o.params.update(extra);
    return kernel_job("sort").make(o);
}

using RoundTripParam = std::tuple<std::uint64_t, int, LocalChoice, std::string>;
class SortRoundTrip : public ::testing::TestWithParam<RoundTripParam> {};

TEST_P(SortRoundTrip, PartitionSortGatherVerify) {
    const auto [n, slices, choice, algo] = GetParam();
    auto& ctx = test::first_device();
    auto job = make_job(n, n <= 1023 ? 2 : 1, "mixed", 7, {{"algo", algo}});
    job->generate();
    auto as = plan(n, slices, choice, ctx.info().max_work_group_size);
    const auto planned = as;
    job->partition(as);
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < as.size(); ++i) {
        total += as[i].units;
        EXPECT_EQ(as[i].global.x, as[i].units);
        EXPECT_GE(as[i].padded_global.x, as[i].units);
        if (!as[i].local.is_null()) {
            EXPECT_EQ(as[i].padded_global.x % as[i].local.x, 0u);
            EXPECT_LT(as[i].padded_global.x - as[i].units, as[i].local.x);
        }
        EXPECT_EQ(as[i].local, planned[i].local);  // the planner's local size is kept
    }
    EXPECT_EQ(total, n);
    run_slices(*job, as);
    const Verdict v = job->verify();
    EXPECT_TRUE(v.ok) << v.detail;
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, SortRoundTrip,
    ::testing::Combine(::testing::Values<std::uint64_t>(1, 17, 1000, 1023, 509, 65536),
                       ::testing::Values(1, 2, 3),
                       ::testing::Values(LocalChoice::null, LocalChoice::div8, LocalChoice::non_pow2,
                                         LocalChoice::one, LocalChoice::padded),
                       ::testing::Values("radix", "bitonic")),
    [](const auto& info) {
        std::string s = case_name(std::get<0>(info.param), std::get<1>(info.param), std::get<2>(info.param));
        s += "_";
        s += std::get<3>(info.param);
        return s;
    });

/// The executor alone on one slice of `units` items with NDRange `global` and local size `local`.
struct Geometry {
    std::uint64_t units, global, local;
};
class SortGeometry : public ::testing::TestWithParam<std::tuple<Geometry, std::string>> {};

TEST_P(SortGeometry, SortsAnySliceGeometry) {
    const auto [g, algo] = GetParam();
    auto job = make_job(g.units, 1, "mixed", 11, {{"algo", algo}});
    job->generate();
    Assignment a;
    a.units = g.units;
    a.global = {g.global, 1};
    a.local = {g.local, g.local ? 1u : 0u};
    SliceSpec spec = job->slice_spec(a);
    const Bytes in = job->slice_input(a);
    Bytes out;
    const SliceTimes t = kernel_job("sort").execute(test::first_device(), spec, in, out);
    auto ref = as_floats(in);
    std::sort(ref.begin(), ref.end());
    const auto got = as_floats(out);
    ASSERT_EQ(got.size(), ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) ASSERT_EQ(got[i], ref[i]) << "item " << i;
    // One item is a bitonic network of no stage; the radix sort still makes its passes.
    if (g.units > 1 || algo == "radix") {
        EXPECT_GT(t.kernel, 0.0);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Executor, SortGeometry,
    ::testing::Combine(
        ::testing::Values(Geometry{1000, 1000, 125}, Geometry{17, 17, 17}, Geometry{509, 509, 1},
                          Geometry{1000, 1000, 0}, Geometry{1024, 1024, 256}, Geometry{1000, 1000, 8},
                          Geometry{1000, 1024, 256}, Geometry{2, 2, 2}, Geometry{3, 3, 3},
                          Geometry{65536, 65536, 64}, Geometry{40000, 40000, 1000},
                          Geometry{4096, 64, 32}, Geometry{1, 1, 0}, Geometry{1, 64, 64}),
        ::testing::Values("radix", "bitonic")),
    [](const auto& info) {
        const Geometry& g = std::get<0>(info.param);
        std::string s = "u";
        s += std::to_string(g.units);
        s += "_g";
        s += std::to_string(g.global);
        s += "_l";
        s += std::to_string(g.local);
        s += "_";
        s += std::get<1>(info.param);
        return s;
    });

class SortDistribution : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(SortDistribution, ThreeSlicesVerify) {
    const auto [dist, algo] = GetParam();
    auto job = make_job(5000, 1, dist, 7, {{"algo", algo}});
    job->generate();
    auto as = plan(5000, 3, LocalChoice::div8, test::first_device().info().max_work_group_size);
    job->partition(as);
    run_slices(*job, as);
    const Verdict v = job->verify();
    EXPECT_TRUE(v.ok) << v.detail;
}
INSTANTIATE_TEST_SUITE_P(
    Inputs, SortDistribution,
    ::testing::Combine(::testing::Values("mixed", "uniform", "duplicates", "sorted", "reversed"),
                       ::testing::Values("radix", "bitonic")),
    [](const auto& info) {
        std::string s = std::get<0>(info.param);
        s += "_";
        s += std::get<1>(info.param);
        return s;
    });

TEST(Sort, DescriptorIsWhatPlansUse) {
    JobOptions o;
    o.size = {1u << 18, 1};
    // The radix sort (auto): 32 / 8 passes of 8 + 2 counted operations per item; 6 passes of 8
    // with 6-bit digits.
    EXPECT_DOUBLE_EQ(kernel_job("sort").make(o)->descriptor().ops_per_item, 4 * 10.0);
    o.params = {{"algo", "radix"}, {"radix_bits", 6}};
    EXPECT_DOUBLE_EQ(kernel_job("sort").make(o)->descriptor().ops_per_item, 6 * 8.0);
    o.params = {{"algo", "bitonic"}};
    const auto d = kernel_job("sort").make(o)->descriptor();
    EXPECT_EQ(d.name, "sort");
    EXPECT_EQ(d.dims, 1);
    EXPECT_EQ(d.default_priority, Priority::x);
    // 18 x 19 / 2 stages of the bitonic network, 1.5 counted operations per item and stage.
    EXPECT_DOUBLE_EQ(d.ops_per_item, 1.5 * 18 * 19 / 2);
    EXPECT_DOUBLE_EQ(d.bytes_in_per_item, 4.0);
    EXPECT_DOUBLE_EQ(d.bytes_out_per_item, 4.0);
    // Not a power of two: the network's size is rounded up (1000 -> 1024, p = 10).
    o.size = {1000, 1};
    EXPECT_DOUBLE_EQ(kernel_job("sort").make(o)->descriptor().ops_per_item, 1.5 * 10 * 11 / 2);
}

TEST(Sort, BucketsStayNearTheirPlannedShares) {
    for (const std::string dist : {"mixed", "duplicates", "uniform"}) {
        const std::uint64_t n = 200000;
        auto job = make_job(n, 1, dist);
        job->generate();
        auto as = plan(n, 3, LocalChoice::null, 1);
        const auto planned = as;
        job->partition(as);
        for (std::size_t i = 0; i < as.size(); ++i)
            EXPECT_NEAR(double(as[i].units), double(planned[i].units), 0.03 * double(n))
                << dist << " bucket " << i;
    }
}

TEST(Sort, WithoutPartitionFinishMergesSortedRuns) {
    auto job = make_job(1000);
    job->generate();
    auto as = plan(1000, 3, LocalChoice::non_pow2, 4096);
    run_slices(*job, as);
    const Verdict v = job->verify();
    EXPECT_TRUE(v.ok) << v.detail;
}

class SortNegative : public ::testing::Test {
protected:
    void SetUp() override {
        job = make_job(1000);
        job->generate();
        as = plan(1000, 3, LocalChoice::div8, 4096);
        job->partition(as);
    }
    std::unique_ptr<KernelJob> job;
    std::vector<Assignment> as;
};

TEST_F(SortNegative, UnsortedSliceFails) {
    run_slices(*job, as, [](std::size_t i, Bytes& out) {
        if (i != 1) return;
        auto v = as_floats(out);
        std::reverse(v.begin(), v.end());
        out = as_bytes(v);
    });
    EXPECT_FALSE(job->verify().ok);
}

TEST_F(SortNegative, ChangedValueFails) {
    run_slices(*job, as, [](std::size_t i, Bytes& out) {
        if (i != 2) return;
        auto v = as_floats(out);
        v.back() = std::nextafter(v.back(), INFINITY);  // still sorted, not the input
        out = as_bytes(v);
    });
    const Verdict v = job->verify();
    EXPECT_FALSE(v.ok);
    EXPECT_NE(v.detail.find("permutation"), std::string::npos) << v.detail;
}

TEST_F(SortNegative, FlippedZeroSignFails) {
    bool flipped = false;
    run_slices(*job, as, [&](std::size_t, Bytes& out) {
        auto v = as_floats(out);
        for (auto& x : v)
            if (!flipped && x == 0.0f && std::signbit(x)) {
                x = 0.0f;
                flipped = true;
            }
        out = as_bytes(v);
    });
    ASSERT_TRUE(flipped);
    EXPECT_FALSE(job->verify().ok);
}

TEST_F(SortNegative, MissingSliceFails) {
    const auto& f = kernel_job("sort");
    for (std::size_t i = 0; i < as.size(); ++i) {
        if (i == 1) continue;
        Bytes out;
        f.execute(test::first_device(), job->slice_spec(as[i]), job->slice_input(as[i]), out);
        job->accept_output(as[i], out);
    }
    job->finish();
    const Verdict v = job->verify();
    EXPECT_FALSE(v.ok);
    EXPECT_NE(v.detail.find("missing"), std::string::npos) << v.detail;
}

TEST(Sort, SliceOutsideTheItemsIsOneClearError) {
    auto job = make_job(10);
    Assignment a;
    a.offset = 8;
    a.units = 4;
    try {
        job->slice_input(a);
        FAIL() << "no error";
    } catch (const InvalidArgument& e) {
        EXPECT_STREQ(e.what(), "sort: slice [8, +4) outside the 10 items");
    }
}

TEST(Sort, EmptySliceLaunchesNothing) {
    auto job = make_job(10);
    Assignment a;
    a.offset = 10;
    a.units = 0;
    a.global = {0, 1};
    Bytes out{std::byte{1}};
    const SliceTimes t = kernel_job("sort").execute(test::first_device(), job->slice_spec(a), {}, out);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(t.kernel, 0.0);
}

TEST(Sort, SliceOverMaxAllocIsOneClearError) {
    auto& dev = test::first_device();
    DeviceInfo info = dev.info();
    info.max_alloc_bytes = 1024;
    DeviceContext small(dev.device(), info);
    auto job = make_job(1000);
    job->generate();
    Assignment a;
    a.units = 1000;
    a.global = {1000, 1};
    Bytes out;
    try {
        kernel_job("sort").execute(small, job->slice_spec(a), job->slice_input(a), out);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("largest allocation"), std::string::npos) << e.what();
    }
}

TEST(Sort, RejectedLocalSizeNamesKernelDeviceAndLocal) {
    auto& dev = test::first_device();
    const std::uint64_t too_big = dev.info().max_work_group_size * 2;
    // The bitonic sort launches the planned local size; the radix sort takes it only where it
    // fits the device (else its default).
    auto job = make_job(100, 1, "mixed", 7, {{"algo", "bitonic"}});
    job->generate();
    Assignment a;
    a.units = 100;
    a.global = {too_big, 1};
    a.local = {too_big, 1};
    Bytes out;
    try {
        kernel_job("sort").execute(dev, job->slice_spec(a), job->slice_input(a), out);
        FAIL() << "no error";
    } catch (const ClError& e) {
        const std::string w = e.what();
        EXPECT_NE(w.find("sort.cl"), std::string::npos) << w;
        EXPECT_NE(w.find(dev.info().name), std::string::npos) << w;
        EXPECT_NE(w.find("local " + std::to_string(too_big)), std::string::npos) << w;
    }
}


// A device planned to get nothing keeps nothing, and one device with all the work gets the raw
// input (no partition pass on rank 0); the in-place views equal the packed payload.
TEST(Sort, ZeroShareDevicesStayEmptyAndOneDeviceSkipsThePartition) {
    const std::uint64_t n = 100000;
    auto job = make_job(n);
    job->generate();
    auto as = plan(n, 3, LocalChoice::null, 1);
    as[0].units = 0;
    as[1].offset = 0;
    as[1].units = n;
    as[2].units = 0;
    as[2].offset = n;
    job->partition(as);
    EXPECT_EQ(as[0].units, 0u);
    EXPECT_EQ(as[2].units, 0u);
    EXPECT_EQ(as[1].units, n);
    const Bytes packed = job->slice_input(as[1]);
    const auto parts = job->input_parts(as[1]);
    ASSERT_EQ(parts.size(), 1u);
    ASSERT_EQ(parts[0].size(), packed.size());
    EXPECT_TRUE(std::equal(parts[0].begin(), parts[0].end(), packed.begin()));
    EXPECT_TRUE(job->input_parts(as[0]).empty());
    EXPECT_EQ(job->output_target(as[1]).size(), n * sizeof(float));
    run_slices(*job, {as[1]});
    EXPECT_TRUE(job->verify().ok);

    // Two working devices out of three: two buckets, the zero-share device still empty.
    auto job2 = make_job(n);
    job2->generate();
    auto bs = plan(n, 3, LocalChoice::null, 1);
    bs[1].units += bs[2].units;
    bs[2].units = 0;
    bs[2].offset = n;
    job2->partition(bs);
    EXPECT_EQ(bs[2].units, 0u);
    EXPECT_EQ(bs[0].units + bs[1].units, n);
    for (const auto& a : {bs[0], bs[1]}) {
        const Bytes p = job2->slice_input(a);
        const auto v = job2->input_parts(a);
        ASSERT_EQ(v.size(), 1u);
        EXPECT_TRUE(std::equal(v[0].begin(), v[0].end(), p.begin(), p.end()));
    }
    run_slices(*job2, {bs[0], bs[1]});
    EXPECT_TRUE(job2->verify().ok) << job2->verify().detail;
}

/// The order-preserving key of the radix sort: a float's place in the total order that puts
/// -0.0 just below +0.0.
std::uint32_t order_key(float x) {
    std::uint32_t b = 0;
    std::memcpy(&b, &x, sizeof b);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

/// The radix executor for its build options (bits, keys per work-item, the work-group size
/// from the local size, bits per local split) at awkward sizes and every distribution, against a
/// CPU sort by the same key: equal bit for bit, -0.0 before +0.0.
struct RadixCase {
    std::uint64_t units, local, bits, items;
    const char* dist;
    std::uint64_t split = 0;
};
class SortRadix : public ::testing::TestWithParam<RadixCase> {};

TEST_P(SortRadix, EqualsTheCpuSortBitForBit) {
    const auto c = GetParam();
    nlohmann::json extra = {{"algo", "radix"}};
    if (c.bits) extra["radix_bits"] = c.bits;
    if (c.items) extra["radix_items"] = c.items;
    if (c.split) extra["radix_split"] = c.split;
    auto job = make_job(c.units, 2, c.dist, 13, extra);
    job->generate();
    Assignment a;
    a.units = c.units;
    a.global = {c.units, 1};
    a.local = {c.local, c.local ? 1u : 0u};
    const SliceSpec spec = slice_spec_from_json(to_json(job->slice_spec(a)));
    EXPECT_EQ(spec.params.at("algo"), "radix");
    const Bytes in = job->slice_input(a);
    Bytes out;
    const SliceTimes t = kernel_job("sort").execute(test::first_device(), spec, in, out);
    auto ref = as_floats(in);
    std::stable_sort(ref.begin(), ref.end(), [](float x, float y) { return order_key(x) < order_key(y); });
    const auto got = as_floats(out);
    ASSERT_EQ(got.size(), ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i)
        ASSERT_EQ(order_key(got[i]), order_key(ref[i])) << "item " << i << ": " << got[i] << " vs " << ref[i];
    EXPECT_GT(t.kernel, 0.0);
}

// The default tier: every bits value 1-8 once, both local splits, items 1-16, the generator's
// distributions, sizes of one item and of a partial last tile.
const RadixCase kRadixCases[] = {
    RadixCase{1, 0, 0, 0, "mixed"},           RadixCase{17, 64, 8, 16, "mixed"},
    RadixCase{509, 32, 3, 4, "mixed"},        RadixCase{2, 0, 0, 0, "mixed", 2},
    RadixCase{7919, 16, 1, 4, "mixed", 2},    RadixCase{12007, 32, 2, 8, "mixed", 1},
    RadixCase{30011, 128, 4, 4, "mixed", 2},  RadixCase{40009, 64, 5, 4, "mixed", 1},
    RadixCase{65537, 128, 6, 8, "duplicates", 1}, RadixCase{65537, 32, 7, 16, "uniform", 1},
    RadixCase{40009, 128, 4, 16, "sorted"},   RadixCase{20011, 128, 3, 4, "reversed", 1}};
// The full tier: the rest of the sweep (each bits value with both splits, 3,000,017 items).
const RadixCase kFullRadixCases[] = {
    RadixCase{2, 0, 0, 0, "mixed"}, RadixCase{3, 16, 4, 1, "mixed"},
    RadixCase{65537, 64, 5, 8, "mixed"}, RadixCase{65537, 256, 8, 8, "duplicates"},
    RadixCase{40009, 0, 7, 2, "reversed"}, RadixCase{40009, 64, 1, 32, "uniform"},
    RadixCase{100003, 0, 0, 0, "duplicates"}, RadixCase{3000017, 0, 0, 0, "mixed"},
    RadixCase{1, 0, 0, 0, "mixed", 1}, RadixCase{7919, 16, 1, 8, "mixed", 1},
    RadixCase{12007, 32, 2, 16, "duplicates", 2}, RadixCase{20011, 64, 3, 8, "mixed", 2},
    RadixCase{30011, 256, 4, 16, "mixed", 1}, RadixCase{40009, 128, 5, 16, "sorted", 2},
    RadixCase{65537, 128, 6, 8, "mixed", 2}, RadixCase{65537, 256, 7, 8, "mixed", 2},
    RadixCase{99991, 1024, 8, 4, "mixed", 2}, RadixCase{99991, 128, 8, 8, "reversed", 1}};

std::string radix_case_name(const ::testing::TestParamInfo<RadixCase>& info) {
    const RadixCase& c = info.param;
    std::string s = "n";
    s += std::to_string(c.units);
    s += "_l";
    s += std::to_string(c.local);
    s += "_b";
    s += std::to_string(c.bits);
    s += "_i";
    s += std::to_string(c.items);
    s += "_s";
    s += std::to_string(c.split);
    s += "_";
    s += c.dist;
    return s;
}

INSTANTIATE_TEST_SUITE_P(Options, SortRadix, ::testing::ValuesIn(kRadixCases), radix_case_name);
INSTANTIATE_TEST_SUITE_P(FullOptions, SortRadix, ::testing::ValuesIn(kFullRadixCases), radix_case_name);

// NaNs of both signs, infinities, zeros of both signs and subnormals (inputs the generator does
// not make) through both local splits, over several tiles: each lands at its key's place, bit
// for bit (a negative NaN below -inf, a positive one above +inf), equal keys in input order.
TEST(Sort, RadixPlacesNaNInfAndZerosByTheirKeys) {
    const float specials[] = {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                              0.0f, -0.0f, 1e-41f, -1e-41f, 1.0f, -1.0f};
    std::vector<float> v(5003);
    std::mt19937 rng(11);
    for (auto& x : v) x = (rng() % 3) ? specials[rng() % std::size(specials)] : float(int(rng() % 2001) - 1000);
    Bytes in(v.size() * sizeof(float));
    std::memcpy(in.data(), v.data(), in.size());
    auto ref = v;
    std::stable_sort(ref.begin(), ref.end(), [](float x, float y) { return order_key(x) < order_key(y); });
    for (const int split : {1, 2}) {
        auto job = make_job(v.size(), 1, "mixed", 3, {{"algo", "radix"}, {"radix_bits", 5}, {"radix_items", 4}, {"radix_split", split}});
        Assignment a;
        a.units = v.size();
        a.global = {v.size(), 1};
        a.local = {64, 1};
        const SliceSpec spec = slice_spec_from_json(to_json(job->slice_spec(a)));
        Bytes out;
        kernel_job("sort").execute(test::first_device(), spec, in, out);
        const auto got = as_floats(out);
        ASSERT_EQ(got.size(), ref.size());
        for (std::size_t i = 0; i < ref.size(); ++i)
            ASSERT_EQ(order_key(got[i]), order_key(ref[i])) << "split " << split << ", item " << i;
    }
}

TEST(Sort, BadAlgorithmParamsAreOneClearError) {
    auto expect_error = [](nlohmann::json extra, const std::string& what) {
        try {
            make_job(100, 1, "mixed", 7, extra);
            FAIL() << extra.dump() << ": no error";
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
    };
    expect_error({{"algo", "quick"}}, "unknown algo 'quick'");
    expect_error({{"radix_bits", 0}}, "radix_bits must be an integer from 1 to 8");
    expect_error({{"radix_bits", 9}}, "radix_bits");
    expect_error({{"radix_items", "x"}}, "radix_items");
    expect_error({{"radix_items", 2.5}}, "radix_items");
    expect_error({{"radix_split", 3}}, "radix_split must be an integer from 1 to 2");
    expect_error({{"radix_split", 0}}, "radix_split");
    expect_error({{"partition_threads", 0}}, "partition_threads");
    EXPECT_NO_THROW(make_job(100, 1, "mixed", 7, {{"algo", "bitonic"}, {"radix_bits", 4}}));
}

// The partition's threads each bucket a contiguous chunk: any number of them gives the buckets
// of one thread, item for item, and every input item lands in exactly one bucket, the buckets
// in value order.
TEST(Sort, ParallelPartitionEqualsTheSerialOne) {
    for (const std::string dist : {"mixed", "duplicates", "sorted"}) {
        const std::uint64_t n = 300007;
        auto buckets = [&](std::uint64_t threads, std::vector<Assignment>& as) {
            auto job = make_job(n, 1, dist, 5, {{"partition_threads", threads}});
            job->generate();
            as = plan(n, 3, LocalChoice::null, 1);
            job->partition(as);
            std::vector<std::vector<float>> b;
            for (const auto& a : as) b.push_back(as_floats(job->slice_input(a)));
            return b;
        };
        std::vector<Assignment> as1;
        const auto serial = buckets(1, as1);
        std::vector<float> all, input;
        for (std::size_t i = 0; i < serial.size(); ++i) {
            all.insert(all.end(), serial[i].begin(), serial[i].end());
            if (i > 0 && !serial[i].empty() && !serial[i - 1].empty()) {
                EXPECT_LE(*std::max_element(serial[i - 1].begin(), serial[i - 1].end()),
                          *std::min_element(serial[i].begin(), serial[i].end()))
                    << dist << " bucket " << i;
            }
        }
        auto job = make_job(n, 1, dist, 5);
        job->generate();
        Assignment whole;
        whole.units = n;
        input = as_floats(job->slice_input(whole));
        auto key_sort = [](std::vector<float>& v) {
            std::sort(v.begin(), v.end(), [](float x, float y) { return order_key(x) < order_key(y); });
        };
        key_sort(all);
        key_sort(input);
        ASSERT_EQ(all.size(), input.size()) << dist;
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(order_key(all[i]), order_key(input[i])) << dist << " item " << i;
        for (std::uint64_t threads : {2, 3, 5}) {
            std::vector<Assignment> asT;
            const auto par = buckets(threads, asT);
            ASSERT_EQ(par.size(), serial.size());
            for (std::size_t i = 0; i < par.size(); ++i) {
                EXPECT_EQ(asT[i].offset, as1[i].offset) << dist << " threads " << threads;
                EXPECT_EQ(asT[i].units, as1[i].units) << dist << " threads " << threads;
                ASSERT_EQ(par[i].size(), serial[i].size());
                for (std::size_t j = 0; j < par[i].size(); ++j)
                    ASSERT_EQ(order_key(par[i][j]), order_key(serial[i][j]))
                        << dist << " threads " << threads << " bucket " << i << " item " << j;
            }
        }
    }
}

}  // namespace
}  // namespace worksize
