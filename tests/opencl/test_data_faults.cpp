// Data jobs never hang (docs/cluster.md, "The fault model"): over in-process ranks (local_comms),
// a worker that stops answering during the scatter, during its steps while rank 0 holds no slice,
// or before the final gather is found lost by rank 0 by its deadline (before the hang ends, which
// would end the job with the worker's own error instead), named with its host and device; a
// worker whose steps are each longer than --rank-timeout is not.
// The faults are WORKSIZE_FAULT's data-job hooks (fault.hpp), read at each data job.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "local_cluster.hpp"
#include "smooth_job.hpp"
#include "worksize/runtime/data_job.hpp"

namespace worksize {
namespace {

using test::run_local;

const char* kSource = test::kSmoothSource;

constexpr int kN = 2001;
// Workers send a heartbeat every third of the timeout (Comm::heartbeat): three chances to be
// heard within it, on a loaded machine too.
constexpr double kTimeout = 1.0;
// A hang outlasts the timeout twice over, then the hung worker throws its own error.
constexpr const char* kHangSeconds = "2";

std::vector<std::int32_t> start_values() {
    std::vector<std::int32_t> a(kN);
    for (int i = 0; i < kN; ++i) a[std::size_t(i)] = (i * 7919) % 101;
    return a;
}

using test::smooth_reference;

/// WORKSIZE_FAULT for one test.
struct FaultEnv {
    explicit FaultEnv(const std::string& value) { ::setenv("WORKSIZE_FAULT", value.c_str(), 1); }
    ~FaultEnv() { ::unsetenv("WORKSIZE_FAULT"); }
    FaultEnv(const FaultEnv&) = delete;
    FaultEnv& operator=(const FaultEnv&) = delete;
};

/// Two ranks, rank 0 holding no slice (the default selection: it drives no device), rank 1 the
/// whole job; --rank-timeout 1 s.
DeviceSelection one_worker() {
    DeviceSelection sel;
    sel.rank_timeout_s = kTimeout;
    return sel;
}

/// What rank 0 saw of a data job of `steps` steps on one worker under WORKSIZE_FAULT=`fault`.
struct Seen {
    bool threw = false;
    std::string error;
    ErrorReason reason = ErrorReason::generic;
    double steps_s = -1;  ///< a healthy run: the slowest rank's steps, as run() measured them
    std::vector<int> lost;
    bool verified = false;
};

Seen run_with_fault(const std::string& fault, int steps) {
    FaultEnv env(fault);
    Seen seen;
    const auto out = run_local(2, one_worker(), [&](Cluster& c) {
        std::vector<std::int32_t> a = start_values();
        DataJob job("smooth", kSource, std::uint64_t(kN));
        const auto ba = job.split("a", 1, a), bb = job.split<std::int32_t>("b", 1);
        job.kernel("smooth", {arg::halo(ba, 1), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::value<int>(kN),
                              arg::end()});
        job.swap(ba, bb).steps(std::uint64_t(steps)).gather(ba);
        DataRunOptions o;
        o.strategy = "even";
        try {
            const DataRunResult r = run(c, job, o);
            seen.steps_s = r.steps_s;
            seen.verified = a == smooth_reference(start_values(), steps);
        } catch (const Error& e) {
            seen.threw = true;
            seen.error = e.what();
            seen.reason = e.reason();
        }
        seen.lost = c.lost_ranks();
        return seen.threw ? 1 : 0;
    });
    EXPECT_FALSE(out[0].code == std::nullopt) << out[0].error;
    return seen;
}

// Rank 0 names the hung worker once --rank-timeout has passed since its last sign of life. The
// hung worker sleeps twice the timeout, then throws "this rank hung on purpose": had the deadline
// not fired first, rank 0 would report that error, not a lost rank (no clock is read here).
void expect_lost(const std::string& phase) {
    const Seen s = run_with_fault("hang-data:" + phase + ":" + kHangSeconds, 3);
    ASSERT_TRUE(s.threw) << "a worker hung in the " << phase << " went unnoticed";
    EXPECT_EQ(s.reason, ErrorReason::lost_rank) << s.error;
    EXPECT_NE(s.error.find("rank 1 on host "), std::string::npos) << s.error;
    EXPECT_NE(s.error.find("(device '"), std::string::npos) << s.error;
    EXPECT_NE(s.error.find(" is lost: nothing heard from it for "), std::string::npos) << s.error;
    EXPECT_EQ(s.error.find("hung on purpose"), std::string::npos) << s.error;
    EXPECT_EQ(s.lost, std::vector<int>{1});
}

TEST(DataJobFaults, AWorkerHungBeforeTakingItsInputsIsLost) { expect_lost("scatter"); }

TEST(DataJobFaults, AWorkerHungInItsStepsIsLostWhileRankZeroHoldsNoSlice) { expect_lost("steps"); }

TEST(DataJobFaults, AWorkerHungBeforeTheFinalGatherIsLost) { expect_lost("gather"); }

TEST(DataJobFaults, AWorkerWhoseStepsOutlastTheTimeoutIsNotLost) {
    // Each step waits 1.5 s on the device (WORKSIZE_FAULT=slow-data): longer than --rank-timeout,
    // rank 0 waiting all along for the final gather; the worker's heartbeats keep it alive.
    const Seen s = run_with_fault("slow-data:1.5", 2);
    EXPECT_FALSE(s.threw) << s.error;
    EXPECT_TRUE(s.lost.empty());
    EXPECT_TRUE(s.verified);
    // The fault took hold: the steps, as the job measured them, took longer than the same job's
    // without it, in this process (two durations compared, no limit: 3 s of sleeps against
    // milliseconds of work).
    const Seen plain = run_with_fault("", 2);
    ASSERT_FALSE(plain.threw) << plain.error;
    EXPECT_GT(s.steps_s, 2 * plain.steps_s);
}

}  // namespace
}  // namespace worksize
