// Kernels of whole arrays (DataJob::whole_arrays): an application's kernels that index whole
// arrays by global ids, update in place and stop only at the problem's end, over three in-process
// ranks: every buffer they touch held whole on each device, each launch exactly its rows (a row
// computed twice would be updated twice), halos exchanged; the result exact against the CPU, with
// and without the overlapped launches; an output-only buffer gathered into the job's memory.
#include <gtest/gtest.h>

#include "local_cluster.hpp"
#include "worksize/runtime/data_job.hpp"
#include "../../runtime/src/jobs/data_kernels.hpp"

namespace worksize {
namespace {

const char* kSource = R"CL(
__kernel void spread(__global const int* a, __global int* b, const int n, const int t) {
    const int i = get_global_id(0);
    if (i >= n) return;
    const int l = i > 0 ? a[i - 1] : 0, r = i + 1 < n ? a[i + 1] : 0;
    b[i] = (l + r + t) % 1000;
}
__kernel void accumulate(__global int* a, __global const int* b, const int n) {
    const int i = get_global_id(0);
    if (i < n) a[i] = (a[i] * 3 + b[i]) % 1000003;
}
__kernel void seed(__global int* a, const int n) {
    const int i = get_global_id(0);
    if (i < n) a[i] = a[i] * 7 + 5;
}
)CL";

struct Fields {
    std::vector<std::int32_t> a, b;
};

/// `seeded`: seed runs in the first step, before spread; accumulate then runs every `every` steps.
Fields reference(std::vector<std::int32_t> a, int steps, bool seeded = false, int every = 1) {
    const int n = int(a.size());
    std::vector<std::int32_t> b(a.size());
    for (int t = 0; t < steps; ++t) {
        if (seeded && t == 0)
            for (auto& v : a) v = v * 7 + 5;
        for (int i = 0; i < n; ++i)
            b[std::size_t(i)] = ((i > 0 ? a[std::size_t(i - 1)] : 0) + (i + 1 < n ? a[std::size_t(i + 1)] : 0) + t) % 1000;
        if ((t + 1) % every == 0)
            for (int i = 0; i < n; ++i) a[std::size_t(i)] = (a[std::size_t(i)] * 3 + b[std::size_t(i)]) % 1000003;
    }
    return {a, b};
}

void check_whole_arrays(int n, int steps, bool overlap) {
    std::vector<std::int32_t> start(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) start[std::size_t(i)] = (i * 7919) % 1001;
    const Fields want = reference(start, steps);
    DeviceSelection sel;
    sel.spec = "all";
    const auto out = test::run_local(3, sel, [&](Cluster& c) {
        std::vector<std::int32_t> a = start;
        DataJob job("relax", kSource, std::uint64_t(n));
        const auto ba = job.split("a", 1, a), bb = job.split<std::int32_t>("b", 1);
        job.kernel("spread", {arg::halo(ba, 1), arg::out(bb), arg::value<int>(n), arg::step()}).whole_arrays();
        job.kernel("accumulate", {arg::inout(ba), arg::in(bb), arg::value<int>(n)}).whole_arrays();
        job.steps(std::uint64_t(steps)).gather(ba).gather(bb);  // b: an output only
        DataRunOptions o;
        o.strategy = "even";
        o.overlap = overlap;
        const DataRunResult r = run(c, job, o);
        EXPECT_EQ(a, want.a);
        const auto b = job.result<std::int32_t>(bb);
        EXPECT_EQ(std::vector<std::int32_t>(b.begin(), b.end()), want.b);
        EXPECT_EQ(r.ranks.size(), 3u);
        for (const auto& as : r.plan.assignments)
            if (as.units > 0 && as.offset + as.units < std::uint64_t(n)) {
                EXPECT_EQ(as.units % kWholeArraysAlignment1D, 0u) << "slices start on the alignment";
            }
        EXPECT_EQ(r.held_bytes.size(), r.plan.assignments.size());
        for (std::size_t i = 0; i < r.held_bytes.size() && i < r.plan.assignments.size(); ++i)
            if (r.plan.assignments[i].units > 0) {
                EXPECT_EQ(r.held_bytes[i], 2u * std::uint64_t(n) * 4u) << "both whole";
            }
        return 0;
    });
    for (const auto& o : out) EXPECT_EQ(o.code, 0) << o.error;
}

TEST(WholeArrays, InPlaceKernelsOverThreeRanksMatchTheCpu) { check_whole_arrays(3001, 7, true); }
TEST(WholeArrays, InPlaceKernelsWithoutOverlapMatchTheCpu) { check_whole_arrays(1500, 5, false); }

// A kernel of the first step only (seed, declared first) and one of every 3rd step
// (accumulate): the halos move only after the steps that wrote them.
TEST(WholeArrays, KernelsOfTheFirstStepAndOfEveryThirdStep) {
    const int n = 2000, steps = 7;
    std::vector<std::int32_t> start(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) start[std::size_t(i)] = (i * 31) % 997;
    const Fields want = reference(start, steps, true, 3);
    DeviceSelection sel;
    sel.spec = "all";
    const auto out = test::run_local(3, sel, [&](Cluster& c) {
        std::vector<std::int32_t> a = start;
        DataJob job("phases", kSource, std::uint64_t(n));
        const auto ba = job.split("a", 1, a), bb = job.split<std::int32_t>("b", 1);
        job.kernel("seed", {arg::inout(ba), arg::value<int>(n)}).whole_arrays().first_step_only();
        job.kernel("spread", {arg::halo(ba, 1), arg::out(bb), arg::value<int>(n), arg::step()}).whole_arrays();
        job.kernel("accumulate", {arg::inout(ba), arg::in(bb), arg::value<int>(n)}).whole_arrays().every(3);
        job.steps(std::uint64_t(steps)).gather(ba);
        DataRunOptions o;
        o.strategy = "even";
        run(c, job, o);
        EXPECT_EQ(a, want.a);
        return 0;
    });
    for (const auto& o : out) EXPECT_EQ(o.code, 0) << o.error;
}

// --check-bounds: the same kernels declared for slices (without whole_arrays) write past their
// slice buffers; the guard zones catch it and the run ends naming the kernel and the buffer. With
// whole_arrays() the checked run verifies.
TEST(WholeArrays, CheckBoundsFindsAKernelOfWholeArraysDeclaredForSlices) {
    const int n = 1500, steps = 2;
    std::vector<std::int32_t> start(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) start[std::size_t(i)] = (i * 7919) % 1001;
    const Fields want = reference(start, steps);
    for (const bool whole : {false, true}) {
        DeviceSelection sel;
        sel.spec = "all";
        const auto out = test::run_local(3, sel, [&](Cluster& c) {
            std::vector<std::int32_t> a = start;
            DataJob job("relax", kSource, std::uint64_t(n));
            const auto ba = job.split("a", 1, a), bb = job.split<std::int32_t>("b", 1);
            job.kernel("spread", {arg::halo(ba, 1), arg::out(bb), arg::value<int>(n), arg::step()});
            if (whole) job.whole_arrays();
            job.kernel("accumulate", {arg::inout(ba), arg::in(bb), arg::value<int>(n)});
            if (whole) job.whole_arrays();
            job.steps(std::uint64_t(steps)).gather(ba);
            DataRunOptions o;
            o.strategy = "even";
            o.check_bounds = true;
            if (whole) {
                run(c, job, o);
                EXPECT_EQ(a, want.a);
                return 0;
            }
            try {
                run(c, job, o);
                ADD_FAILURE() << "a kernel of whole arrays declared for slices passed --check-bounds";
            } catch (const Error& e) {
                const std::string m = e.what();
                EXPECT_NE(m.find("kernel 'spread' on device"), std::string::npos) << m;
                EXPECT_NE(m.find("wrote outside buffer 'b', at"), std::string::npos) << m;
                EXPECT_NE(m.find("needs whole_arrays()"), std::string::npos) << m;
            }
            return 0;
        });
        for (const auto& o : out) EXPECT_EQ(o.code, 0) << o.error;
    }
}

TEST(WholeArrays, ALaunchBeforeTheEndIsNotPadded) {
    EXPECT_EQ(data::exact_local({256, 1}, 1, 768, false).x, 256u) << "divides: unchanged";
    EXPECT_EQ(data::exact_local({256, 1}, 1, 100, false).x, 4u) << "the largest power of two dividing 100";
    EXPECT_EQ(data::exact_local({256, 1}, 1, 100, true).x, 256u) << "at the end: padded, the kernel stops there";
    const LocalSize l = data::exact_local({32, 8}, 2, 12, false);
    EXPECT_EQ(l.x, 32u);
    EXPECT_EQ(l.y, 4u);
}

TEST(WholeArrays, ResultOfABufferRankZeroDoesNotGetIsRefused) {
    std::vector<float> x(10);
    DataJob job("j", kSource, 10);
    const auto bx = job.split("x", 1, x), dev = job.split<float>("d", 1);
    EXPECT_NO_THROW(job.result<float>(bx));
    try {
        job.result<float>(dev);
        ADD_FAILURE() << "a device-only buffer has a result";
    } catch (const InvalidArgument& e) {
        EXPECT_STREQ(e.what(), "result(): buffer 'd' of data job 'j' stays on the devices; gather() it to get it back");
    }
    EXPECT_THROW(job.result<std::int32_t>(bx), InvalidArgument);
}

}  // namespace
}  // namespace worksize
