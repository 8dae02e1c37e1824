// The "quad" job's master/worker round trip on the PoCL device: slice specs (through their JSON
// wire format), trapezoid records per work-group (a declared per-group reduction), the slices'
// double sums added by DeclaredJob::finish, verify against the exact
// integral within the derived bound; for awkward sizes, uneven slices, local sizes NULL / a
// divisor >= 8 / a non-power-of-two divisor / 1, every integrand; plus verify()'s negative cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "pocl_device.hpp"
#include "slice_harness_1d.hpp"
#include "worksize/runtime/kernel_job.hpp"
#include "worksize/runtime/opencl.hpp"

namespace worksize {
namespace {

using namespace test;  // the 1-D slice harness

std::unique_ptr<KernelJob> make_job(std::uint64_t n, const std::string& integrand,
                                    std::uint64_t iterations = 1) {
    JobOptions o;
    o.size = {n, 1};
    o.iterations = iterations;
    o.params = {{"integrand", integrand}};
    return kernel_job("quad").make(o);
}

/// Runs every slice; `tamper(i, spec, out)` may change slice i's spec before it runs (a shifted
/// offset) or its output before the master accepts it.
template <class Tamper>
void run_slices(KernelJob& job, std::vector<Assignment> as, Tamper tamper) {
    job.generate();
    job.partition(as);
    for (std::size_t i = 0; i < as.size(); ++i) {
        SliceSpec spec = slice_spec_from_json(to_json(job.slice_spec(as[i])));
        Bytes out;
        tamper(i, spec, out, true);
        kernel_job("quad").execute(test::first_device(), spec, job.slice_input(as[i]), out);
        tamper(i, spec, out, false);
        job.accept_output(as[i], out);
    }
    job.finish();
}
void run_slices(KernelJob& job, std::vector<Assignment> as) {
    run_slices(job, std::move(as), [](std::size_t, SliceSpec&, Bytes&, bool) {});
}

const char* const kIntegrands[] = {"sin", "exp", "poly", "runge"};

using RoundTripParam = std::tuple<std::uint64_t, int, LocalChoice>;
class QuadRoundTrip : public ::testing::TestWithParam<RoundTripParam> {};

TEST_P(QuadRoundTrip, SlicesSumToTheIntegral) {
    const auto [n, slices, choice] = GetParam();
    // Spread the integrands over the cases deterministically.
    const std::string f = kIntegrands[(n + std::uint64_t(slices) + std::uint64_t(choice)) % 4];
    auto job = make_job(n, f, 2);
    const auto as = plan(n, slices, choice, test::first_device().info().max_work_group_size);
    run_slices(*job, as);
    const Verdict v = job->verify();
    EXPECT_TRUE(v.ok) << f << ": " << v.detail;
}

std::string round_trip_name(const ::testing::TestParamInfo<std::tuple<std::uint64_t, int, LocalChoice>>& info) {
    return case_name(std::get<0>(info.param), std::get<1>(info.param), std::get<2>(info.param));
}
const auto kLocalChoices = ::testing::Values(LocalChoice::null, LocalChoice::div8, LocalChoice::non_pow2,
                                             LocalChoice::one, LocalChoice::padded);
// The default tier: one item, a prime and a power of two, in one and three slices, every local
// choice; the full tier adds 17, 1000 and 1023 items and two slices.
INSTANTIATE_TEST_SUITE_P(Sizes, QuadRoundTrip,
                         ::testing::Combine(::testing::Values<std::uint64_t>(1, 509, 65536), ::testing::Values(1, 3),
                                            kLocalChoices),
                         round_trip_name);
INSTANTIATE_TEST_SUITE_P(FullSizes, QuadRoundTrip,
                         ::testing::Combine(::testing::Values<std::uint64_t>(17, 1000, 1023),
                                            ::testing::Values(1, 2, 3), kLocalChoices),
                         round_trip_name);
INSTANTIATE_TEST_SUITE_P(FullSlices, QuadRoundTrip,
                         ::testing::Combine(::testing::Values<std::uint64_t>(1, 509, 65536), ::testing::Values(2),
                                            kLocalChoices),
                         round_trip_name);

using IntegrandParam = std::tuple<std::string, LocalChoice, std::uint64_t>;
class QuadIntegrand : public ::testing::TestWithParam<IntegrandParam> {};

TEST_P(QuadIntegrand, EveryIntegrandWithinItsBound) {
    const auto [f, choice, n] = GetParam();
    auto job = make_job(n, f);
    run_slices(*job, plan(n, 3, choice, test::first_device().info().max_work_group_size));
    const Verdict v = job->verify();
    EXPECT_TRUE(v.ok) << v.detail;
}

INSTANTIATE_TEST_SUITE_P(
    All, QuadIntegrand,
    ::testing::Combine(::testing::Values("sin", "exp", "poly", "runge"),
                       ::testing::Values(LocalChoice::null, LocalChoice::div8),
                       ::testing::Values<std::uint64_t>(1000, 262144)),
    [](const auto& info) {
        std::string s = std::get<0>(info.param);
        s += "_";
        s += name(std::get<1>(info.param));
        s += "_n";
        s += std::to_string(std::get<2>(info.param));
        return s;
    });

TEST(Quad, DescriptorIsWhatPlansUse) {
    JobOptions o;
    o.size = {1u << 18, 1};
    auto d = kernel_job("quad").make(o)->descriptor();  // sin
    EXPECT_EQ(d.name, "quad");
    EXPECT_EQ(d.dims, 1);
    // Per interval: 4 (two x) + 2 evaluations of 15 + 4 (add, two muls, the reduction add).
    EXPECT_DOUBLE_EQ(d.ops_per_item, 38.0);
    EXPECT_DOUBLE_EQ(d.bytes_in_per_item + d.bytes_out_per_item, 0.0);
    o.params = {{"integrand", "runge"}};
    EXPECT_DOUBLE_EQ(kernel_job("quad").make(o)->descriptor().ops_per_item, 4.0 + 2 * 3.0 + 4.0);
}

TEST(Quad, CustomIntervalAndIterationsAgree) {
    JobOptions o;
    o.size = {4096, 1};
    o.params = {{"integrand", "poly"}, {"a", -2.0}, {"b", 3.0}};
    o.iterations = 1;
    auto one = kernel_job("quad").make(o);
    o.iterations = 5;
    auto five = kernel_job("quad").make(o);
    const auto as = plan(4096, 2, LocalChoice::div8, 4096);
    run_slices(*one, as);
    run_slices(*five, as);
    EXPECT_TRUE(one->verify().ok) << one->verify().detail;
    EXPECT_EQ(one->summary(), five->summary());
}

class QuadNegative : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(QuadNegative, DroppedSlicePartialsFail) {
    auto job = make_job(GetParam(), "exp");
    run_slices(*job, plan(GetParam(), 3, LocalChoice::div8, 4096),
               [](std::size_t i, SliceSpec&, Bytes& out, bool before) {
                   // The slice's combined record (one double) read back as zero: its
                   // intervals' contribution lost.
                   if (!before && i == 0) std::fill(out.begin(), out.end(), std::byte{0});
               });
    EXPECT_FALSE(job->verify().ok) << job->verify().detail;
}

TEST_P(QuadNegative, AbscissaeShiftedByOneIntervalFail) {
    for (const char* f : {"exp", "runge", "poly"}) {
        auto job = make_job(GetParam(), f);
        run_slices(*job, plan(GetParam(), 3, LocalChoice::null, 4096),
                   [](std::size_t i, SliceSpec& spec, Bytes&, bool before) {
                       if (before && i == 1) spec.offset += 1;
                   });
        const Verdict v = job->verify();
        EXPECT_FALSE(v.ok) << f << ": " << v.detail;
    }
}

TEST_P(QuadNegative, MissingSliceFails) {
    auto job = make_job(GetParam(), "sin");
    job->generate();
    const auto as = plan(GetParam(), 3, LocalChoice::div8, 4096);
    for (std::size_t i = 0; i < as.size(); ++i) {
        if (i == 2) continue;
        Bytes out;
        kernel_job("quad").execute(test::first_device(), job->slice_spec(as[i]), {}, out);
        job->accept_output(as[i], out);
    }
    job->finish();
    const Verdict v = job->verify();
    EXPECT_FALSE(v.ok);
    EXPECT_NE(v.detail.find("missing"), std::string::npos) << v.detail;
}

TEST_P(QuadNegative, SliceCountedTwiceFails) {
    auto job = make_job(GetParam(), "sin");
    job->generate();
    const auto as = plan(GetParam(), 3, LocalChoice::div8, 4096);
    for (std::size_t i = 0; i < as.size(); ++i) {
        Bytes out;
        kernel_job("quad").execute(test::first_device(), job->slice_spec(as[i]), {}, out);
        job->accept_output(as[i], out);
        if (i == 0) job->accept_output(as[i], out);
    }
    job->finish();
    const Verdict v = job->verify();
    EXPECT_FALSE(v.ok);
    EXPECT_EQ(v.detail, "intervals [0, " + std::to_string(as[0].units) + ") counted twice");
}

// Shifts are first-order (h * (f(end) - f(start)) of the slice), so they are caught while that
// exceeds the FP32 bound: up to about n = 10^4 here.
INSTANTIATE_TEST_SUITE_P(Sizes, QuadNegative, ::testing::Values<std::uint64_t>(509, 1000, 1023));

TEST(Quad, EmptySliceLaunchesNothing) {
    auto job = make_job(10, "sin");
    Assignment a;
    a.offset = 10;
    a.units = 0;
    a.global = {0, 1};
    Bytes out{std::byte{1}};
    const SliceTimes t = kernel_job("quad").execute(test::first_device(), job->slice_spec(a), {}, out);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(t.kernel, 0.0);
}

TEST(Quad, TermsOverMaxAllocIsOneClearError) {
    auto& dev = test::first_device();
    DeviceInfo info = dev.info();
    info.max_alloc_bytes = 64;
    DeviceContext small(dev.device(), info);
    auto job = make_job(1000, "sin");
    Assignment a;
    a.units = 1000;
    a.global = {1000, 1};  // NULL local: room for 1000 terms
    Bytes out;
    try {
        kernel_job("quad").execute(small, job->slice_spec(a), {}, out);
        FAIL() << "no error";
    } catch (const Error& e) {
        const std::string w = e.what();
        EXPECT_NE(w.find("buffer 'terms'"), std::string::npos) << w;
        EXPECT_NE(w.find("CL_DEVICE_MAX_MEM_ALLOC_SIZE"), std::string::npos) << w;
    }
}

TEST(Quad, RejectedLocalSizeNamesKernelDeviceAndLocal) {
    auto& dev = test::first_device();
    const std::uint64_t too_big = dev.info().max_work_group_size * 2;
    auto job = make_job(100, "sin");
    Assignment a;
    a.units = 100;
    a.global = {too_big, 1};
    a.local = {too_big, 1};
    Bytes out;
    try {
        kernel_job("quad").execute(dev, job->slice_spec(a), {}, out);
        FAIL() << "no error";
    } catch (const ClError& e) {
        const std::string w = e.what();
        EXPECT_NE(w.find("kernel 'trapezoid' of job 'quad'"), std::string::npos) << w;
        EXPECT_NE(w.find(dev.info().name), std::string::npos) << w;
        EXPECT_NE(w.find("local (" + std::to_string(too_big) + ")"), std::string::npos) << w;
    }
}

/// Slices beyond 2^31 intervals: their end and origin are long (quad.cl), and each slice's sum
/// matches the kernel's own float terms, recomputed here, for the intervals it covers and no
/// others (a wrapped index would move the abscissae; an end that is not a long would let the
/// padding's work-items add terms). A whole run at this size is too slow for a test.
class QuadBeyond2To31 : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(QuadBeyond2To31, SliceSumsTheTermsOfItsOwnIntervals) {
    const std::uint64_t n = 3'000'000'000, local = GetParam(), units = 5000;  // 5000: not a multiple of 64
    JobOptions o;
    o.size = {n, 1};
    o.params = {{"integrand", "poly"}, {"a", 0.0}, {"b", 3.0}};
    auto job = kernel_job("quad").make(o);  // validate() accepts 3e9 intervals: the indexes are long
    const float af = 0.0f, hf = float(3.0 / double(n));
    auto f = [](float x) { return std::fma(std::fma(3.0f, x, 2.0f), x, 1.0f); };  // quad.cl's poly
    for (const std::uint64_t offset : {(std::uint64_t(1) << 31) + 1000, n - units}) {
        Assignment a;
        a.offset = offset;
        a.units = units;
        a.local = {local, local ? 1u : 0u};
        a.global = {local ? (units + local - 1) / local * local : units, 1};
        Bytes out;
        kernel_job("quad").execute(test::first_device(), job->slice_spec(a), {}, out);
        ASSERT_EQ(out.size(), sizeof(double));
        double got = 0;
        std::memcpy(&got, out.data(), sizeof got);
        double want = 0;
        for (std::uint64_t g = offset; g < offset + units; ++g) {
            const float x0 = std::fma(float(g), hf, af), x1 = std::fma(float(g + 1), hf, af);
            want += double(0.5f * hf * (f(x0) + f(x1)));
        }
        // The device sums in float trees of depth <= 13 (5000 items): relative error <= 13 * 2^-24.
        EXPECT_NEAR(got, want, 1e-5 * want) << "slice [" << offset << ", +" << units << "), local " << local;
    }
}

INSTANTIATE_TEST_SUITE_P(Locals, QuadBeyond2To31, ::testing::Values<std::uint64_t>(0, 64),
                         [](const auto& info) { return info.param ? std::string("local64") : std::string("null"); });

TEST(Quad, UnknownIntegrandIsInvalidArgument) {
    EXPECT_THROW(make_job(10, "tan"), InvalidArgument);
}

TEST(Quad, SliceOutsideTheIntervalsIsOneClearError) {
    auto job = make_job(10, "sin");
    Assignment a;
    a.offset = 6;
    a.units = 4;
    a.global = {4, 1};
    SliceSpec spec = job->slice_spec(a);
    // The job checks each assignment, the executor the spec it is given: both one past the end.
    a.offset = spec.offset = 8;
    try {
        job->accept_output(a, {});
        FAIL() << "no error";
    } catch (const InvalidArgument& e) {
        EXPECT_STREQ(e.what(), "quad: slice [8, +4) outside the 10 intervals");
    }
    try {
        Bytes out;
        kernel_job("quad").execute(test::first_device(), spec, {}, out);
        FAIL() << "no error";
    } catch (const InvalidArgument& e) {
        EXPECT_STREQ(e.what(), "quad: slice [8, +4) outside the 10 intervals");
    }
}

}  // namespace
}  // namespace worksize
