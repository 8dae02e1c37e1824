// Host steps (DataJob::host_step) over three in-process ranks: after every step rank 0 reads the
// step's reduction result, computes the next step's shared input and the engine sends it to every
// device; with rank 0 driving a slice and without (the first worker then sends the result). A
// callback that throws ends the job with its message on every rank.
#include <gtest/gtest.h>

#include <numeric>

#include "local_cluster.hpp"
#include "worksize/runtime/data_job.hpp"

namespace worksize {
namespace {

const char* kSource = R"CL(
__kernel void add(__global int* a, const int ao, __global const int* off, const int end) {
    const int i = get_global_id(0);
    if (i < end) a[i - ao] = (a[i - ao] + off[0]) % 1000;
}
__kernel void total(__global const int* a, const int ao, __global int* rec, const int begin, const int end) {
    const int i = get_global_id(0);
    if (i < end) rec[i - begin] = a[i - ao];
}
)CL";

struct Want {
    std::vector<std::int32_t> a;
    std::int32_t total = 0;
    std::vector<std::uint64_t> calls;
};

Want reference(std::vector<std::int32_t> a, int steps) {
    Want w;
    std::int32_t off = 3;
    for (int t = 0; t < steps; ++t) {
        for (auto& v : a) v = (v + off) % 1000;
        w.total = std::accumulate(a.begin(), a.end(), 0);
        off = w.total % 17 + (t + 1);
        w.calls.push_back(std::uint64_t(t + 1));
    }
    w.a = a;
    return w;
}

void check_host_steps(const char* select, bool throws = false) {
    const int n = 3001, steps = 5;
    std::vector<std::int32_t> start(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) start[std::size_t(i)] = (i * 13) % 101;
    const Want want = reference(start, steps);
    DeviceSelection sel;
    sel.spec = select;
    const auto out = test::run_local(3, sel, [&](Cluster& c) {
        std::vector<std::int32_t> a = start, total{0}, off{3};
        std::vector<std::uint64_t> calls;
        DataJob job("host-steps", kSource, std::uint64_t(n));
        const auto ba = job.split("a", 1, a), bt = job.shared("total", total), bo = job.shared("off", off);
        job.kernel("add", {arg::inout(ba), arg::origin(ba), arg::all(bo), arg::end()});
        job.kernel("total", {arg::in(ba), arg::origin(ba), arg::reduce(bt), arg::begin(), arg::end()});
        job.steps(steps).gather(ba).host_step(1, {bo}, [&](std::uint64_t done) {
            if (throws && done == 2) throw Error("centres diverged");
            calls.push_back(done);
            off[0] = total[0] % 17 + std::int32_t(done);
        });
        DataRunOptions o;
        o.strategy = "even";
        if (throws) {
            try {
                run(c, job, o);
                ADD_FAILURE() << "a host step that throws ended the job normally";
            } catch (const Error& e) {
                EXPECT_NE(std::string(e.what()).find("the host step after step 2: centres diverged"), std::string::npos)
                    << e.what();
            }
            return 0;
        }
        run(c, job, o);
        EXPECT_EQ(a, want.a);
        EXPECT_EQ(total[0], want.total);
        EXPECT_EQ(calls, want.calls) << "after every step, the last too";
        return 0;
    });
    for (const auto& o : out) EXPECT_EQ(o.code, 0) << o.error;
}

TEST(HostSteps, RankZeroWithASliceUpdatesTheDevicesEveryStep) { check_host_steps("all"); }

// Inputs made on every rank (register_generator): a split buffer's rows (halos included) and a
// shared buffer, nothing sent from rank 0; a generator a rank lacks ends the job with one line.
const char* kGenSource = R"CL(
__kernel void blend(__global const int* a, const int ao, __global const int* w, __global int* b, const int bo,
                  const int end, const int n) {
    const int i = get_global_id(0);
    if (i >= end) return;
    const int l = i > 0 ? a[i - 1 - ao] : 0, r = i + 1 < n ? a[i + 1 - ao] : 0;
    b[i - bo] = l + r + w[i % 16];
}
)CL";

std::int32_t gen_value(std::int64_t seed, std::uint64_t i) { return std::int32_t((i * 2654435761u + std::uint64_t(seed)) % 1000); }

void register_test_generators() {
    static const bool once = [] {
        register_generator("test_rows", [](const std::vector<std::int64_t>& a, std::uint64_t first, std::uint64_t count,
                                           std::span<std::byte> out) {
            auto* v = reinterpret_cast<std::int32_t*>(out.data());
            for (std::uint64_t i = 0; i < count; ++i) v[i] = gen_value(a.at(0), first + i);
        });
        register_generator("test_weights", [](const std::vector<std::int64_t>&, std::uint64_t first, std::uint64_t count,
                                              std::span<std::byte> out) {
            auto* v = reinterpret_cast<std::int32_t*>(out.data());
            for (std::uint64_t i = 0; i < count; ++i) v[i] = std::int32_t(first + i) * 3;
        });
        return true;
    }();
    (void)once;
}

TEST(Generated, InputsMadeOnEveryRankGiveTheSameResult) {
    register_test_generators();
    const int n = 3001;
    std::vector<std::int32_t> want(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
        want[std::size_t(i)] = (i > 0 ? gen_value(7, std::uint64_t(i - 1)) : 0) +
                               (i + 1 < n ? gen_value(7, std::uint64_t(i + 1)) : 0) + (i % 16) * 3;
    DeviceSelection sel;
    sel.spec = "all";
    const auto out = test::run_local(3, sel, [&](Cluster& c) {
        DataJob job("generated", kGenSource, std::uint64_t(n));
        const auto a = job.split_generated<std::int32_t>("a", 1, "test_rows", {7});
        const auto w = job.shared_generated<std::int32_t>("w", 16, "test_weights");
        const auto b = job.split<std::int32_t>("b", 1);
        job.kernel("blend", {arg::halo(a, 1), arg::origin(a), arg::all(w), arg::out(b), arg::origin(b), arg::end(),
                           arg::value<int>(n)});
        job.gather(b);
        DataRunOptions o;
        o.strategy = "even";
        const DataRunResult r = run(c, job, o);
        const auto got = job.result<std::int32_t>(b);
        EXPECT_EQ(std::vector<std::int32_t>(got.begin(), got.end()), want);
        EXPECT_EQ(r.ranks.size(), 3u);
        return 0;
    });
    for (const auto& o : out) EXPECT_EQ(o.code, 0) << o.error;
}

TEST(Generated, AGeneratorNoRankHasEndsTheJobWithOneLine) {
    DeviceSelection sel;
    sel.spec = "all";
    std::vector<std::int32_t> weights(16, 1);
    const auto out = test::run_local(2, sel, [&](Cluster& c) {
        DataJob job("generated", kGenSource, 100);
        const auto a = job.split_generated<std::int32_t>("a", 1, "no_such_generator");
        const auto w = job.shared("w", weights);
        const auto b = job.split<std::int32_t>("b", 1);
        job.kernel("blend", {arg::halo(a, 1), arg::origin(a), arg::all(w), arg::out(b), arg::origin(b), arg::end(),
                           arg::value<int>(100)});
        DataRunOptions o;
        o.strategy = "even";
        try {
            run(c, job, o);
            ADD_FAILURE() << "an unknown generator ran";
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find("buffer 'a': no generator 'no_such_generator' on rank 0"),
                      std::string::npos)
                << e.what();
        }
        return 0;
    });
    for (const auto& o : out) EXPECT_EQ(o.code, 0) << o.error;
}
TEST(HostSteps, RankZeroWithoutSlicesGetsTheResultFromTheFirstWorker) { check_host_steps("auto"); }
TEST(HostSteps, ACallbackThatThrowsEndsTheJobWithItsMessage) { check_host_steps("all", true); }

}  // namespace
}  // namespace worksize
