// Unit tests of the split optimiser on synthetic cost models: balance, devices left out and why,
// serial sends, rank-local inputs, granules, the join margin and the contention factor, and the
// optimum against brute force on small problems.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model_fixtures.hpp"
#include "worksize/scheduler/model.hpp"

using namespace worksize;
using namespace worksize::test;

TEST(Split, EqualDevicesBalanceEvenly) {
    const CostModel d = device(0, 0, 1e-4, 1e-8);
    SplitJob job = matmul_like(1024);
    job.serial_sends = false;
    const SplitResult r = optimise_split({d, d, d, d}, job);
    for (auto u : r.units) EXPECT_EQ(u, 256u);
    EXPECT_NEAR(r.makespan_s, predict(d, 256, 256 * 256, 0, 0).total_s + 2e-5, 1e-4);
    for (const auto& why : r.reasons) EXPECT_TRUE(why.empty());
}

TEST(Split, HopelessDeviceGetsZeroWithReason) {
    const CostModel fast = device(1e-4, 1e-10, 1e-5, 1e-9);
    const CostModel hopeless = device(10.0, 1e-6, 1.0, 1e-3);  // 10 s latency
    const SplitResult r = optimise_split({fast, hopeless}, matmul_like(512));
    EXPECT_EQ(r.units[0], 512u);
    EXPECT_EQ(r.units[1], 0u);
    EXPECT_TRUE(r.reasons[0].empty());
    EXPECT_NE(r.reasons[1].find("left out: even 1 unit would take"), std::string::npos) << r.reasons[1];
    EXPECT_EQ(r.finish_s[1], 0.0);
}

TEST(Split, DeviceWhoseSendDelaysOthersIsLeftOut) {
    // B (1 MB) must go to every participant over the serial link; a slow helper that computes
    // fast alone would still delay the main device's send.
    CostModel main = device(0, 1e-9, 0, 1e-9);
    CostModel helper = device(0, 1e-9, 0, 1.2e-9);
    SplitJob job = matmul_like(64);
    job.bytes_in_fixed = 1e8;  // 0.1 s of send per participant
    job.send_order = {0, 1};
    const SplitResult r = optimise_split({main, helper}, job);
    EXPECT_EQ(r.units[1], 0u);
    EXPECT_FALSE(r.reasons[1].empty());
    EXPECT_NEAR(r.makespan_s, brute_force({main, helper}, job), 1e-12);
}

TEST(Split, RankLocalInputsChargeNoTransferFromRankZero) {
    // The same helper as above: left out when rank 0 sends B to it, given work when every rank
    // makes its own inputs (run --inputs local), and no device's prediction has a send or receive.
    CostModel main = device(0, 1e-9, 0, 1e-9);
    CostModel helper = device(0, 1e-9, 0, 1.2e-9);
    SplitJob job = matmul_like(64);
    job.bytes_in_fixed = 1e8;
    job.send_order = {0, 1};
    job.local_inputs = true;
    const SplitResult r = optimise_split({main, helper}, job);
    EXPECT_GT(r.units[1], 0u);
    for (const auto& p : r.predicted) {
        EXPECT_EQ(p.send_s, 0.0);
        EXPECT_EQ(p.recv_s, 0.0);
        EXPECT_NEAR(p.total_s, p.h2d_s + p.kernel_s + p.d2h_s + p.host_s, 1e-15);
    }
}

TEST(Split, SerialSendsDelayLaterDevices) {
    const CostModel d = device(1e-3, 1e-8, 0, 1e-9);
    SplitJob job = matmul_like(100);
    job.send_order = {0, 1};
    const SplitResult r = evaluate_split({d, d}, job, {50, 50});
    EXPECT_DOUBLE_EQ(r.start_s[0], 0.0);
    EXPECT_DOUBLE_EQ(r.start_s[1], r.predicted[0].send_s);
    job.serial_sends = false;
    EXPECT_DOUBLE_EQ(evaluate_split({d, d}, job, {50, 50}).start_s[1], 0.0);
    EXPECT_THROW(evaluate_split({d, d}, job, {50}), InvalidArgument);
    job.send_order = {0, 0};
    EXPECT_THROW(evaluate_split({d, d}, job, {50, 50}), InvalidArgument);
}

TEST(Split, RejectsEmptyJobs) {
    const CostModel d = device(0, 0, 0, 1e-9);
    EXPECT_THROW(optimise_split({}, matmul_like(10)), InvalidArgument);
    EXPECT_THROW(optimise_split({d}, matmul_like(0)), InvalidArgument);
    SplitJob job = matmul_like(10);
    job.granule = 0;
    EXPECT_THROW(optimise_split({d}, job), InvalidArgument);
}

TEST(Split, GranulesAndRemainder) {
    const CostModel d = device(0, 0, 0, 1e-9);
    SplitJob job = matmul_like(1000);
    job.granule = 16;
    job.serial_sends = false;
    const SplitResult r = optimise_split({d, d}, job);
    EXPECT_EQ(r.units[0] + r.units[1], 1000u);
    int off_granule = 0;
    for (auto u : r.units) off_granule += u % 16 != 0;
    EXPECT_LE(off_granule, 1);
}

class SplitBruteForce : public ::testing::TestWithParam<int> {};

TEST_P(SplitBruteForce, MatchesBruteForce) {
    std::mt19937 rng(GetParam());
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    auto lg = [&](double lo, double hi) { return std::exp(std::log(lo) + u01(rng) * (std::log(hi) - std::log(lo))); };
    for (int n : {2, 3}) {
        for (int trial = 0; trial < 6; ++trial) {
            std::vector<CostModel> models;
            for (int i = 0; i < n; ++i)
                models.push_back(device(lg(1e-6, 1e-2), lg(1e-11, 1e-8), lg(1e-6, 1e-2), lg(1e-10, 1e-7),
                                        lg(1e-11, 1e-8)));
            if (trial % 3 == 2) {  // a device with a concave (ln) host phase
                models[0].host.per_log_s = lg(1e-5, 1e-3);
                models[0].host.log_x0 = 3e5;
            }
            SplitJob job = matmul_like(n == 2 ? 240 : 96);
            job.granule = trial % 2 ? 4 : 1;
            job.serial_sends = trial != 1;
            if (trial == 4) job.send_order = n == 2 ? std::vector<int>{1, 0} : std::vector<int>{2, 0, 1};
            const SplitResult r = optimise_split(models, job);
            const double bf = brute_force(models, job);
            std::uint64_t sum = 0;
            for (auto x : r.units) sum += x;
            EXPECT_EQ(sum, job.total_units);
            EXPECT_LE(r.makespan_s, bf * (1 + 1e-9)) << "n=" << n << " trial=" << trial;
            EXPECT_NEAR(r.makespan_s, evaluate_split(models, job, r.units).makespan_s, 1e-15);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Seeds, SplitBruteForce, ::testing::Values(1, 2, 3, 4, 5, 6, 7, 8));

TEST(ModelSplit, LeavesOutADevice300TimesSlower) {
    // Matmul 8192x8192 (K = 8192), 10 iterations: a GPU and a CPU 300x slower per operation.
    CostModel gpu = device(3e-5, 1e-10, 4e-4, 3e-13, 1e-10);
    CostModel cpu = device(3e-5, 1e-10, 6e-4, 9e-11, 1e-10);
    gpu.host = line(5e-4, 2e-11);
    cpu.host = line(5e-4, 2e-11);
    SplitJob job;
    job.total_units = 8192;
    job.ops_per_unit = 8192.0 * 3 * 8192 * 10;
    job.bytes_in_per_unit = 8192 * 4;
    job.bytes_out_per_unit = 8192 * 4;
    job.bytes_in_fixed = 8192.0 * 8192 * 4;
    job.granule = 16;
    const SplitResult r = optimise_split({gpu, cpu}, job);
    // Compute alone would give it 1/301 = 0.33 %; its send of B and fixed costs allow no more.
    EXPECT_LE(double(r.units[1]) / double(job.total_units), 0.0034);
    // With the old, 22x-too-small ratio (GPU slope 4.6e-12) it would take about 4 %.
    CostModel gpu_small = gpu;
    gpu_small.kernel.per_x_s = 4.6e-12;
    const SplitResult old = optimise_split({gpu_small, cpu}, job);
    EXPECT_GT(double(old.units[1]) / double(job.total_units), 0.03);
}

// The join margin: a device whose predicted gain is within the margin gets no work, with a
// reason; with margin 0 it gets its (small) optimal share.
TEST(SplitOptimiser, JoinMarginLeavesOutMarginalDevices) {
    CostModel fast, slow;
    fast.kernel.per_x_s = 1e-9;   // 1 ns per operation
    slow.kernel.per_x_s = 20e-9;  // 20x slower: optimal share ~4.8 %, gain ~4.8 %
    SplitJob job;
    job.total_units = 10000;
    job.ops_per_unit = 1000;
    const SplitResult plain = optimise_split({fast, slow}, job);
    EXPECT_GT(plain.units[1], 0u);
    job.join_margin = 0.10;
    const SplitResult careful = optimise_split({fast, slow}, job);
    EXPECT_EQ(careful.units[1], 0u);
    EXPECT_EQ(careful.units[0], 10000u);
    EXPECT_NE(careful.reasons[1].find("join margin"), std::string::npos) << careful.reasons[1];
    // An equal partner saves ~50 %: it joins whatever the margin.
    job.join_margin = 0.10;
    const SplitResult equal = optimise_split({fast, fast}, job);
    EXPECT_GT(equal.units[1], 4000u);
}

// The contention factor (METHOD.md 2.1): the kernel and host phases of a device that runs with
// others take `contention` times longer; alone it runs at its solo speed.
TEST(ModelContention, PredictAppliesTheFactorOnlyWithOthers) {
    CostModel m;
    m.send = line(1e-3, 0);
    m.kernel = line(0, 1e-9);
    m.host = line(2e-3, 0);
    m.contention = 2.0;
    const Prediction alone = predict(m, 10, 1e6, 0, 0);
    const Prediction shared = predict(m, 10, 1e6, 0, 0, true);
    EXPECT_DOUBLE_EQ(shared.kernel_s, 2 * alone.kernel_s);
    EXPECT_DOUBLE_EQ(shared.host_s, 2 * alone.host_s);
    EXPECT_DOUBLE_EQ(shared.send_s, alone.send_s);
    SplitJob job;
    job.total_units = 100;
    job.ops_per_unit = 1e4;
    // One device with work: no contention; two: both run with the other.
    EXPECT_DOUBLE_EQ(evaluate_split({m, m}, job, {100, 0}).makespan_s, predict(m, 100, 1e6, 0, 0).total_s);
    job.serial_sends = false;
    EXPECT_DOUBLE_EQ(evaluate_split({m, m}, job, {50, 50}).makespan_s, predict(m, 50, 5e5, 0, 0, true).total_s);
}

TEST(ModelContention, FactorTwoOnTheSlowDeviceShrinksItsShare) {
    CostModel fast, slow;
    fast.kernel.per_x_s = 1e-9;
    slow.kernel.per_x_s = 4e-9;  // solo: optimal share 20 %
    SplitJob job;
    job.total_units = 10000;
    job.ops_per_unit = 1000;
    const SplitResult solo = optimise_split({fast, slow}, job);
    EXPECT_NEAR(double(solo.units[1]) / 10000, 0.20, 0.01);
    slow.contention = 2.0;  // with the fast one running it is 8 ns/op: share ~11 %
    const SplitResult shared = optimise_split({fast, slow}, job);
    EXPECT_NEAR(double(shared.units[1]) / 10000, 1.0 / 9.0, 0.01);
    EXPECT_GT(shared.makespan_s, solo.makespan_s);
}

TEST(ModelContention, DeviceLeftOutWhenTheCoRunSlowsTheFastOne) {
    CostModel fast, slow;
    fast.kernel.per_x_s = 1e-9;
    slow.kernel.per_x_s = 20e-9;
    SplitJob job;
    job.total_units = 10000;
    job.ops_per_unit = 1000;
    EXPECT_GT(optimise_split({fast, slow}, job).units[1], 0u);  // solo models: it joins (~4.8 %)
    fast.contention = 2.0;  // running together halves the fast device's speed
    slow.contention = 2.0;
    const SplitResult r = optimise_split({fast, slow}, job);
    EXPECT_EQ(r.units[1], 0u);
    EXPECT_EQ(r.units[0], 10000u);
    EXPECT_DOUBLE_EQ(r.makespan_s, 1e-9 * 1e7);  // alone: its solo speed
    EXPECT_FALSE(r.reasons[1].empty());
}

TEST(ModelContention, JsonRoundTripAndRange) {
    CostModel m = device(1e-3, 1e-9, 1e-4, 1e-8, 2e-9);
    m.contention = 1.75;
    const CostModel back = cost_model_from_json(nlohmann::json::parse(to_json(m).dump()));
    EXPECT_DOUBLE_EQ(back.contention, 1.75);
    nlohmann::json j = to_json(m);
    j.erase("contention");
    EXPECT_DOUBLE_EQ(cost_model_from_json(j).contention, 1.0);  // entries before the field: none
    j["contention"] = 0.5;
    EXPECT_THROW(cost_model_from_json(j), InvalidArgument);
    j["contention"] = 5.0;
    EXPECT_THROW(cost_model_from_json(j), InvalidArgument);
}
