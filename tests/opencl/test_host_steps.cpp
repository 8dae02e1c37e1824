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
TEST(HostSteps, RankZeroWithoutSlicesGetsTheResultFromTheFirstWorker) { check_host_steps("auto"); }
TEST(HostSteps, ACallbackThatThrowsEndsTheJobWithItsMessage) { check_host_steps("all", true); }

}  // namespace
}  // namespace worksize
