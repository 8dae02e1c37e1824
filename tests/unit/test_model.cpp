// Unit tests of the cost model: the fit, prediction, JSON round trip, host and job phases and the
// calibration ladder (the split optimiser's are in test_split.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model_fixtures.hpp"
#include "worksize/scheduler/model.hpp"

using namespace worksize;

using namespace worksize::test;

TEST(ModelFit, RecoversKnownCoefficientsFromNoisySamples) {
    std::mt19937 rng(42);
    std::normal_distribution<double> noise(0.0, 0.02);  // 2 % multiplicative noise
    std::vector<Sample> samples;
    for (double items : {1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6}) {
        for (int rep = 0; rep < 5; ++rep) {
            Sample s;
            s.units = items / 100;
            s.items = items;
            s.bytes_in = items * 8;
            s.bytes_out = items * 4;
            s.send_s = (2e-4 + 1e-9 * s.bytes_in) * (1 + noise(rng));
            s.h2d_s = (1e-5 + 2e-10 * s.bytes_in) * (1 + noise(rng));
            s.kernel_s = (5e-6 + 3e-9 * items) * (1 + noise(rng));
            s.d2h_s = (1e-5 + 2e-10 * s.bytes_out) * (1 + noise(rng));
            s.recv_s = (2e-4 + 1e-9 * s.bytes_out) * (1 + noise(rng));
            samples.push_back(s);
        }
    }
    // Two wild outliers (e.g. a page-fault storm) must not bend the line.
    samples[3].kernel_s *= 20;
    samples[17].send_s *= 50;
    const CostModel m = fit_cost_model(samples);
    EXPECT_NEAR(m.send.fixed_s, 2e-4, 2e-5);
    EXPECT_NEAR(m.send.per_x_s, 1e-9, 5e-11);
    EXPECT_NEAR(m.kernel.per_x_s, 3e-9, 1.5e-10);
    EXPECT_NEAR(m.kernel.fixed_s, 5e-6, 2e-6);
    EXPECT_NEAR(m.recv.per_x_s, 1e-9, 5e-11);
    EXPECT_EQ(m.samples, samples.size());
    EXPECT_LT(m.kernel.rms_rel, 0.05);
}

TEST(ModelFit, CoefficientsAreNonNegative) {
    // Times that fall with size would give a negative slope; the fit clamps it to 0.
    std::vector<Sample> s(3);
    for (int i = 0; i < 3; ++i) {
        s[i].items = 1000.0 * (i + 1);
        s[i].kernel_s = 1e-3 - 1e-4 * i;
    }
    const CostModel m = fit_cost_model(s);
    EXPECT_GE(m.kernel.per_x_s, 0.0);
    EXPECT_GE(m.kernel.fixed_s, 0.0);
    EXPECT_EQ(m.send.fixed_s, 0.0);  // an absent phase is all zeros
}

TEST(ModelFit, LineIsFoundWhateverTheUnitsOfX) {
    // The fit's rank test must not take a line over x in the 1e12s (or 1e-6s) for a singular
    // system: the exact line comes back at every scale.
    for (double scale : {1e-6, 1.0, 1e12}) {
        std::vector<Sample> s;
        for (double k : {1.0, 2.0, 4.0, 8.0}) {
            Sample v;
            v.items = k * scale;
            v.kernel_s = 1e-3 + 2e-3 * k;
            s.push_back(v);
        }
        const CostModel m = fit_cost_model(s);
        EXPECT_NEAR(m.kernel.fixed_s, 1e-3, 1e-12) << "scale " << scale;
        EXPECT_NEAR(m.kernel.per_x_s * scale, 2e-3, 1e-12) << "scale " << scale;
        EXPECT_LT(m.kernel.rms_rel, 1e-9) << "scale " << scale;
    }
}

TEST(ModelFit, OneSizeOnlyIsFittedWithoutTheSingularLine) {
    // All samples at one x: fixed + slope is singular; a one-column fit reproduces the time.
    std::vector<Sample> s(3);
    for (int i = 0; i < 3; ++i) {
        s[i].items = 5e5;
        s[i].kernel_s = 4e-3 * (1 + 0.01 * i);
    }
    const CostModel m = fit_cost_model(s);
    EXPECT_TRUE(std::isfinite(m.kernel.fixed_s) && std::isfinite(m.kernel.per_x_s));
    EXPECT_TRUE(m.kernel.fixed_s == 0.0 || m.kernel.per_x_s == 0.0);
    EXPECT_NEAR(m.kernel.eval(5e5), 4.04e-3, 1e-12);
}

TEST(ModelFit, RejectsBadSamples) {
    EXPECT_THROW(fit_cost_model({}), InvalidArgument);
    Sample s;
    s.kernel_s = -1;
    EXPECT_THROW(fit_cost_model({s}), InvalidArgument);
    s.kernel_s = NAN;
    EXPECT_THROW(fit_cost_model({s}), InvalidArgument);
}

TEST(ModelPredict, SumsPhasesAndZeroUnitsCostNothing) {
    const CostModel m = device(1e-3, 1e-9, 1e-4, 1e-8, 1e-9);
    const Prediction p = predict(m, 10, 1000, 1e6, 1e5);
    EXPECT_DOUBLE_EQ(p.send_s, 1e-3 + 1e-3);
    EXPECT_DOUBLE_EQ(p.kernel_s, 1e-4 + 1e-5);
    EXPECT_DOUBLE_EQ(p.total_s, p.send_s + p.h2d_s + p.kernel_s + p.d2h_s + p.recv_s);
    EXPECT_EQ(predict(m, 0, 0, 0, 0).total_s, 0.0);
}

TEST(ModelJson, RoundTrip) {
    CostModel m = device(1e-3, 1e-9, 1e-4, 1e-8, 2e-9);
    m.samples = 12;
    const CostModel back = cost_model_from_json(nlohmann::json::parse(to_json(m).dump()));
    EXPECT_EQ(to_json(back), to_json(m));
    EXPECT_DOUBLE_EQ(predict(back, 5, 5e5, 1e6, 1e6).total_s, predict(m, 5, 5e5, 1e6, 1e6).total_s);
    nlohmann::json bad = to_json(m);
    bad["kernel"].erase("per_x_s");
    EXPECT_THROW(cost_model_from_json(bad), InvalidArgument);
    bad = to_json(m);
    bad["send"]["fixed_s"] = -1;
    EXPECT_THROW(cost_model_from_json(bad), InvalidArgument);
    EXPECT_THROW(cost_model_from_json(nlohmann::json::array()), InvalidArgument);
}

// Found by the fuzzer under UBSan (tests/fuzz): counts and a stale format too large for an
// integer were converted to one (undefined behaviour); they are refused with the field's name.
TEST(ModelJson, HugeCountsAndFormatAreRefused) {
    const CostModel m = device(1e-3, 1e-9, 1e-4, 1e-8, 2e-9);
    auto refusal = [](const nlohmann::json& j) -> std::string {
        try {
            (void)cost_model_from_json(j);
        } catch (const InvalidArgument& e) {
            return e.what();
        }
        return "<accepted>";
    };
    nlohmann::json bad = to_json(m);
    bad["kernel"]["points"] = 1.8446744073709552e19;
    EXPECT_NE(refusal(bad).find("field 'points' must be a whole number"), std::string::npos) << refusal(bad);
    bad = to_json(m);
    bad["send"]["rejected"] = 2.5;
    EXPECT_NE(refusal(bad).find("field 'rejected' must be a whole number"), std::string::npos) << refusal(bad);
    bad = to_json(m);
    bad["samples"] = 1e300;
    EXPECT_NE(refusal(bad).find("field 'samples' must be a whole number"), std::string::npos) << refusal(bad);
    bad = to_json(m);
    bad["format"] = 1e300;
    EXPECT_NE(refusal(bad).find("stale format 1e+300"), std::string::npos) << refusal(bad);
}

TEST(ModelJson, LegacyWaveFieldsAreIgnored) {
    // A phase model as databases wrote it before the saw-tooth wave term was removed (from
    // docs/results/issue4-h200-pinned/interp-tuned/db.json): it loads as the plain line.
    const auto legacy = nlohmann::json::parse(R"({"fixed_s": 2.0432586851164926e-05, "log_x0": 0.0,
        "per_log_s": 0.0, "per_wave_s": 0.0, "per_x_s": 1.135046746781917e-13, "points": 3,
        "rejected": 0, "rms_rel": 0.0922419670839289, "wave_items": 0.0})");
    const PhaseModel p = phase_model_from_json(legacy);
    EXPECT_DOUBLE_EQ(p.fixed_s, 2.0432586851164926e-05);
    EXPECT_DOUBLE_EQ(p.per_x_s, 1.135046746781917e-13);
    EXPECT_EQ(p.points, 3u);
    for (double x : {0.0, 1e3, 1.5e9, 7e12})
        EXPECT_DOUBLE_EQ(p.eval(x), 2.0432586851164926e-05 + 1.135046746781917e-13 * x);
    // Written back, the model no longer carries the fields.
    const nlohmann::json again = to_json(p);
    EXPECT_FALSE(again.contains("wave_items"));
    EXPECT_FALSE(again.contains("per_wave_s"));
    // A non-zero wave term (never produced by calibration) is ignored too: the plain line.
    nlohmann::json odd = legacy;
    odd["wave_items"] = 4096;
    odd["per_wave_s"] = 3e-4;
    EXPECT_DOUBLE_EQ(phase_model_from_json(odd).eval(1e4), 2.0432586851164926e-05 + 1.135046746781917e-13 * 1e4);
    // A whole cost model with the legacy fields in every phase loads and predicts as the lines.
    const CostModel m = device(1e-3, 1e-9, 1e-4, 1e-8, 2e-9);
    nlohmann::json j = to_json(m);
    for (const char* phase : {"send", "h2d", "kernel", "d2h", "recv", "host", "prepare", "combine"}) {
        j[phase]["wave_items"] = 0.0;
        j[phase]["per_wave_s"] = 0.0;
    }
    const CostModel back = cost_model_from_json(j);
    EXPECT_EQ(to_json(back), to_json(m));
    EXPECT_DOUBLE_EQ(predict(back, 5, 5e5, 1e6, 1e6).total_s, predict(m, 5, 5e5, 1e6, 1e6).total_s);
}

// ---------------------------------------------------------------------------------------------
// Host phase, stale formats, the adaptive calibration ladder (issue 4: H200 diagnosis)

namespace {

/// A synthetic GPU whose kernel is latency-bound until the NDRange fills `sat_items`: below it
/// a launch costs as if it were full (throughput proportional to occupancy), plus a latency.
struct SyntheticGpu {
    double latency_s = 4e-4;       // launch/latency floor of the kernel event
    double per_op_s = 3e-13;       // saturated slope
    double host_s = 5e-4;          // host overhead per run (packing, allocation, setup)
    double host_per_byte = 2e-11;
    double ops_per_item = 100;
    double sat_items = 0;

    double kernel(double items, double iterations) const {
        const double eff = std::max(items, sat_items);
        return latency_s + eff * ops_per_item * iterations * per_op_s;
    }
    Sample sample(double items, double iterations) const {
        Sample s;
        s.units = items;
        s.items = items * ops_per_item * iterations;
        s.bytes_in = items * 8;
        s.bytes_out = items * 4;
        s.kernel_s = kernel(items, iterations);
        s.h2d_s = 1e-5 + 4e-11 * s.bytes_in;
        s.d2h_s = 1e-5 + 4e-11 * s.bytes_out;
        s.host_s = host_s + host_per_byte * (s.bytes_in + s.bytes_out);
        return s;
    }
};

DeviceInfo h200_like() {
    DeviceInfo d;
    d.compute_units = 132;
    d.max_work_group_size = 1024;
    return d;
}

}  // namespace

TEST(ModelHost, HostPhaseDoesNotScaleWithIterations) {
    SyntheticGpu g;
    g.sat_items = 0;
    std::vector<Sample> samples;
    for (double items : {1e5, 2e5, 4e5, 8e5})
        for (int r = 0; r < 3; ++r) samples.push_back(g.sample(items, 1));
    const CostModel m = fit_cost_model(samples);
    EXPECT_NEAR(m.host.fixed_s, g.host_s, 0.02 * g.host_s);
    EXPECT_NEAR(m.host.per_x_s, g.host_per_byte, 0.02 * g.host_per_byte);
    EXPECT_NEAR(m.kernel.per_x_s, g.per_op_s, 0.02 * g.per_op_s);
    // The same slice with 10 iterations: only the kernel phase grows.
    const Sample s1 = g.sample(4e5, 1), s10 = g.sample(4e5, 10);
    const Prediction p1 = predict(m, s1.units, s1.items, s1.bytes_in, s1.bytes_out);
    const Prediction p10 = predict(m, s10.units, s10.items, s10.bytes_in, s10.bytes_out);
    EXPECT_DOUBLE_EQ(p10.host_s, p1.host_s);
    EXPECT_NEAR(p10.kernel_s, s10.kernel_s, 0.05 * s10.kernel_s);
    EXPECT_NEAR(p10.total_s, s10.kernel_s + s10.h2d_s + s10.d2h_s + s10.host_s, 0.05 * p10.total_s);
    EXPECT_DOUBLE_EQ(p10.total_s, p10.send_s + p10.h2d_s + p10.kernel_s + p10.d2h_s + p10.recv_s + p10.host_s);
}

namespace {

/// A sample moving `bytes` (half in, half out) whose host rest took `host_s`.
Sample host_sample(double bytes, double host_s) {
    Sample s;
    s.units = bytes / 8;
    s.items = s.units;
    s.bytes_in = bytes / 2;
    s.bytes_out = bytes / 2;
    s.kernel_s = 1e-9 * s.items;
    s.host_s = host_s;
    return s;
}

}  // namespace

/// Host rest measured on the H200 (sort, issue4-h200-datapath): 1.19, 1.52, 1.66 ms for 0.5,
/// 1 and 2 MiB moved, then 1.98 ms at 32 MiB. A line through the small sizes predicted 10.9 ms
/// at 32 MiB; the ln term follows the flattening.
TEST(ModelHost, ConcaveHostRestExtrapolatesWithTheLnTerm) {
    std::vector<Sample> samples;
    const double mib = 1024.0 * 1024.0;
    const std::pair<double, double> pts[] = {{0.5 * mib, 1.19e-3}, {1 * mib, 1.52e-3}, {2 * mib, 1.66e-3}};
    for (const auto& [bytes, host] : pts)
        for (int r = 0; r < 3; ++r) samples.push_back(host_sample(bytes, host));
    const CostModel m = fit_cost_model(samples);
    EXPECT_GT(m.host.per_log_s, 0.0);
    const double at32 = m.host.eval(32 * mib);
    EXPECT_GT(at32, 1.66e-3);  // still grows
    EXPECT_LT(at32, 3.0e-3);   // but nowhere near the line's 10.9 ms
}

TEST(ModelHost, LinearHostRestKeepsTheLine) {
    std::vector<Sample> samples;
    for (double bytes : {1e6, 2e6, 4e6, 8e6})  // e.g. page faults of a fresh buffer: linear in bytes
        samples.push_back(host_sample(bytes, 2e-4 + 1e-9 * bytes));
    const CostModel m = fit_cost_model(samples);
    EXPECT_NEAR(m.host.eval(64e6), 2e-4 + 1e-9 * 64e6, 0.03 * (2e-4 + 1e-9 * 64e6));
    EXPECT_EQ(m.host.per_log_s, 0.0);
}

TEST(ModelJson, HostPhaseRoundTripsAndOldFormatIsStale) {
    CostModel m;
    m.kernel.per_x_s = 1e-12;
    m.host.fixed_s = 3e-4;
    m.host.per_x_s = 1e-11;
    m.host.per_log_s = 2e-5;
    m.host.log_x0 = 1e5;
    const nlohmann::json j = to_json(m);
    EXPECT_EQ(j.at("format"), kCostModelFormat);
    const CostModel back = cost_model_from_json(j);
    EXPECT_DOUBLE_EQ(back.host.fixed_s, 3e-4);
    EXPECT_DOUBLE_EQ(back.host.per_x_s, 1e-11);
    EXPECT_DOUBLE_EQ(back.host.per_log_s, 2e-5);
    EXPECT_DOUBLE_EQ(back.host.eval(1e6), 3e-4 + 1e-11 * 1e6 + 2e-5 * std::log(10.0));
    EXPECT_DOUBLE_EQ(back.host.eval(1e3), 3e-4 + 1e-11 * 1e3);  // below log_x0: no ln part
    nlohmann::json old = j;
    old.erase("format");
    old.erase("host");
    try {
        cost_model_from_json(old);
        FAIL() << "a format-1 model must be refused";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("stale"), std::string::npos) << e.what();
    }
}

TEST(CalibrationLadder, SaturationRuleUsesDeviceInfo) {
    AdaptiveCalibration a;
    EXPECT_DOUBLE_EQ(saturation_items(h200_like(), a), 4.0 * 132 * 1024);
    DeviceInfo cpu;
    cpu.type = DeviceType::cpu;
    cpu.compute_units = 16;
    cpu.max_work_group_size = 4096;
    cpu.preferred_wg_multiple = 8;
    EXPECT_DOUBLE_EQ(saturation_items(cpu, a), 4.0 * 16 * 16 * 16);
    EXPECT_EQ(next_ladder_size(GlobalSize{64, 64}, 2).x, 128u);
    EXPECT_EQ(next_ladder_size(GlobalSize{64, 64}, 2).y, 128u);
    EXPECT_EQ(next_ladder_size(GlobalSize{4096, 1}, 1).x, 8192u);
    EXPECT_EQ(next_ladder_size(GlobalSize{4096, 1}, 1).y, 1u);
}

TEST(CalibrationLadder, LatencyFloorDeviceIsFittedOnSaturatedSizes) {
    const AdaptiveCalibration a;
    SyntheticGpu g;
    g.sat_items = saturation_items(h200_like(), a);
    std::vector<LadderStep> steps;
    std::vector<std::vector<Sample>> per_step;
    bool done = false;
    for (double items = 16384; items < 1e10 && !done; items *= 2) {
        LadderStep s;
        s.size = GlobalSize{std::uint64_t(items), 1};
        s.work_items = items;
        const Sample smp = g.sample(items, 1);
        s.ops = smp.items;
        s.kernel_s = smp.kernel_s;
        s.done_s = smp.kernel_s + smp.h2d_s + smp.d2h_s + smp.host_s;
        s.overhead_s = s.done_s - s.kernel_s;
        steps.push_back(s);
        per_step.push_back({smp, smp, smp});
        done = judge_ladder(steps, g.sat_items, a);
    }
    ASSERT_TRUE(done);
    std::vector<Sample> fitted, small;
    int nfit = 0;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        if (i < 3) small.insert(small.end(), per_step[i].begin(), per_step[i].end());
        if (!steps[i].fitted) continue;
        ++nfit;
        EXPECT_TRUE(steps[i].saturated);
        EXPECT_GE(steps[i].work_items, g.sat_items);
        EXPECT_GE(steps[i].kernel_s, a.min_kernel_s);
        fitted.insert(fitted.end(), per_step[i].begin(), per_step[i].end());
    }
    EXPECT_GE(nfit, a.fit_sizes);
    const CostModel good = fit_cost_model(fitted);
    const CostModel bad = fit_cost_model(small);
    EXPECT_NEAR(good.kernel.per_x_s, g.per_op_s, 0.05 * g.per_op_s);
    // A job 16x the largest fitted size, with 10 iterations, is predicted within 15 %.
    const double items = 16 * steps.back().work_items;
    const Sample big = g.sample(items, 10);
    const double measured = big.kernel_s + big.h2d_s + big.d2h_s + big.host_s;
    const double p = predict(good, big.units, big.items, big.bytes_in, big.bytes_out).total_s;
    EXPECT_NEAR(p / measured, 1.0, 0.15);
    // The three smallest sizes (the old fixed calibration) see only the latency floor.
    const double pb = predict(bad, big.units, big.items, big.bytes_in, big.bytes_out).total_s;
    EXPECT_GT(std::abs(pb / measured - 1.0), 0.25);
}

TEST(CalibrationLadder, TopsUpWithLargestUnsaturatedSizes) {
    const AdaptiveCalibration a;
    std::vector<LadderStep> steps;
    for (int i = 0; i < 5; ++i) {
        LadderStep s;
        s.work_items = 1000.0 * (1 << i);
        s.ops = s.work_items;
        s.kernel_s = 1e-4 * (1 << i);
        s.overhead_s = 1e-4;
        steps.push_back(s);
    }
    EXPECT_FALSE(judge_ladder(steps, 1e9, a));
    int fitted = 0;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        EXPECT_FALSE(steps[i].saturated);
        fitted += steps[i].fitted;
        EXPECT_EQ(steps[i].fitted, i >= 2);
    }
    EXPECT_EQ(fitted, 3);
}

// Rank 0's job-level phases: prepare only when two or more devices work, combine always; both
// are the largest of the working devices' models, at the job's own bytes.
TEST(ModelJobPhases, PrepareWithSeveralDevicesCombineAlways) {
    CostModel a, b;
    a.kernel.per_x_s = 1e-9;
    b.kernel.per_x_s = 1e-9;
    a.prepare.per_x_s = 1e-9;  // 1 ns per input byte of the job
    b.prepare.per_x_s = 2e-9;
    a.combine.fixed_s = 1e-3;
    b.combine.fixed_s = 3e-3;
    SplitJob job;
    job.total_units = 1000;
    job.ops_per_unit = 1000;
    job.bytes_in_per_unit = 1000;  // the job's input: 1e6 bytes
    job.serial_sends = false;
    const SplitResult alone = evaluate_split({a, b}, job, {1000, 0});
    EXPECT_DOUBLE_EQ(alone.prepare_s, 0.0);
    EXPECT_DOUBLE_EQ(alone.combine_s, 1e-3);
    EXPECT_DOUBLE_EQ(alone.makespan_s, 1e-3 + 1e-3);
    const SplitResult both = evaluate_split({a, b}, job, {500, 500});
    EXPECT_DOUBLE_EQ(both.prepare_s, 2e-3);
    EXPECT_DOUBLE_EQ(both.combine_s, 3e-3);
    EXPECT_DOUBLE_EQ(both.start_s[0], 2e-3);
    EXPECT_DOUBLE_EQ(both.finish_s[1], 2e-3 + 0.5e-3);
    EXPECT_DOUBLE_EQ(both.makespan_s, 2e-3 + 0.5e-3 + 3e-3);
    // Splitting saves 0.5 ms of compute but costs 2 ms of prepare and 2 ms more combine: alone wins.
    const SplitResult best = optimise_split({a, b}, job);
    EXPECT_EQ(std::count_if(best.units.begin(), best.units.end(), [](std::uint64_t u) { return u > 0; }), 1);
    EXPECT_DOUBLE_EQ(best.makespan_s, 2e-3);
    // A cheap prepare and combine: both devices take part again.
    a.prepare = b.prepare = PhaseModel{};
    a.combine = b.combine = PhaseModel{};
    EXPECT_EQ(optimise_split({a, b}, job).units[1], 500u);
}

TEST(ModelJobPhases, CombineFittedFromTheJobsOutputBytes) {
    std::vector<Sample> samples;
    for (double n : {1e3, 2e3, 4e3, 8e3}) {
        Sample s;
        s.units = n;
        s.items = n;
        s.bytes_out = n;  // the device's own share
        s.job_bytes_out = 4 * n;
        s.kernel_s = 1e-9 * n;
        s.combine_s = 1e-4 + 2e-9 * s.job_bytes_out;
        samples.push_back(s);
    }
    const CostModel m = fit_cost_model(samples);
    EXPECT_NEAR(m.combine.fixed_s, 1e-4, 1e-9);
    EXPECT_NEAR(m.combine.per_x_s, 2e-9, 1e-13);
    const CostModel back = cost_model_from_json(nlohmann::json::parse(to_json(m).dump()));
    EXPECT_DOUBLE_EQ(back.combine.per_x_s, m.combine.per_x_s);
    nlohmann::json old = to_json(m);
    old["format"] = 2;
    EXPECT_THROW(cost_model_from_json(old), InvalidArgument);
}

// Issue 14's split sort: 2^25 floats over two H200s, one of them sorts the whole array in
// 29.5 ms. With rank 0's serial partition (830 ms) or even a parallel one (40 ms), a split
// cannot pay and the model gives the other device nothing; for devices that take seconds to
// sort (CPUs), the same 40 ms partition is worth it and both take part.
TEST(ModelJobPhases, SplitSortLeavesTheSecondGpuOutWhenThePartitionCannotPay) {
    const double n = double(1u << 25), bytes = 4 * n;
    auto gpu = [&](double whole_s, double prepare_s) {
        CostModel m;
        m.send = line(2e-5, 1.0 / 25e9);   // ~25 GB/s to the device's rank
        m.h2d = line(1e-5, 1.0 / 50e9);
        m.kernel = line(1e-4, whole_s / n);
        m.d2h = line(1e-5, 1.0 / 50e9);
        m.recv = line(2e-5, 1.0 / 25e9);
        m.prepare.per_x_s = prepare_s / bytes;  // per input byte of the job
        return m;
    };
    SplitJob job;
    job.total_units = 1u << 25;
    job.ops_per_unit = 1;
    job.bytes_in_per_unit = 4;
    job.bytes_out_per_unit = 4;
    for (double prepare : {0.830, 0.040}) {
        const CostModel h200 = gpu(0.0295, prepare);
        const SplitResult r = optimise_split({h200, h200}, job);
        EXPECT_EQ(std::count(r.units.begin(), r.units.end(), 0u), 1) << "prepare " << prepare;
        EXPECT_DOUBLE_EQ(r.prepare_s, 0.0);
        // Never slower than the best device alone (evaluate_split of the whole job on it).
        const SplitResult alone = evaluate_split({h200, h200}, job, {job.total_units, 0});
        EXPECT_LE(r.makespan_s, alone.makespan_s * (1 + 1e-9)) << "prepare " << prepare;
        EXPECT_FALSE(r.reasons[r.units[0] == 0 ? 0 : 1].empty());
    }
    const CostModel cpu = gpu(2.0, 0.040);
    const SplitResult both = optimise_split({cpu, cpu}, job);
    EXPECT_GT(both.units[0], 0u);
    EXPECT_GT(both.units[1], 0u);
    EXPECT_NEAR(both.prepare_s, 0.040, 1e-9);
    EXPECT_LT(both.makespan_s, evaluate_split({cpu, cpu}, job, {job.total_units, 0}).makespan_s);
}
