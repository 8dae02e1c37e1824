// Unit tests of the tuner's confirmation phase (scheduler/tuning.hpp): choosing the finalists,
// the rotated interleaving of re-timings, the decision on the median of all timings, failing
// finalists, and tune() with a fake measuring function that has noise and a lucky outlier.
// Nothing here is timed: every "time" comes from a fake measuring function.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "synthetic_devices.hpp"
#include "worksize/scheduler/tuning.hpp"

using namespace worksize;

namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

/// A hand-made ranking of 1-D candidates (the search order of the exhaustive strategy).
std::vector<CandidateScore> ranked_1d(const std::vector<std::uint64_t>& xs) {
    std::vector<CandidateScore> out;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        CandidateScore s;
        s.candidate.local = {xs[i], 1};
        s.candidate.launch_global = {4096, 1};
        s.candidate.groups = 4096 / xs[i];
        s.predicted_rel = 1.0 + 0.1 * double(i);
        out.push_back(s);
    }
    return out;
}

Measurement ok_m(std::uint64_t x, double s) {
    Measurement m;
    m.local = {x, 1};
    m.seconds = s;
    m.ok = true;
    return m;
}

Measurement failed_m(std::uint64_t x) {
    Measurement m;
    m.local = {x, 1};
    m.seconds = NAN;
    m.error = "CL_INVALID_WORK_GROUP_SIZE";
    return m;
}

}  // namespace

TEST(TuningConfirm, MedianRotationAndPlannedRuns) {
    EXPECT_DOUBLE_EQ(median_time({3, 1, 2}), 2.0);
    EXPECT_DOUBLE_EQ(median_time({4, 1, 3, 2}), 2.5);
    EXPECT_DOUBLE_EQ(median_time({7}), 7.0);
    EXPECT_THROW(median_time({}), InvalidArgument);

    EXPECT_EQ(rotated_order(3, 0), (std::vector<std::size_t>{0, 1, 2}));
    EXPECT_EQ(rotated_order(3, 1), (std::vector<std::size_t>{1, 2, 0}));
    EXPECT_EQ(rotated_order(3, 2), (std::vector<std::size_t>{2, 0, 1}));
    EXPECT_EQ(rotated_order(3, 4), (std::vector<std::size_t>{1, 2, 0}));
    EXPECT_EQ(rotated_order(2, 1), (std::vector<std::size_t>{1, 0}));
    EXPECT_TRUE(rotated_order(0, 3).empty());

    TuneOptions o;  // defaults: top 3, 3 runs
    EXPECT_EQ(o.confirm_top, 3u);
    EXPECT_EQ(o.confirm_runs, 3u);
    EXPECT_EQ(planned_confirm_runs(70, o), 9u);
    EXPECT_EQ(planned_confirm_runs(2, o), 6u);
    EXPECT_EQ(planned_confirm_runs(1, o), 0u);  // one finalist: nothing to decide
    EXPECT_EQ(planned_confirm_runs(0, o), 0u);
    o.confirm_runs = 0;
    EXPECT_EQ(planned_confirm_runs(70, o), 0u);
    o.confirm_runs = 3;
    o.confirm_top = 1;
    EXPECT_EQ(planned_confirm_runs(70, o), 0u);
}

TEST(TuningConfirm, FinalistsAreTheFastestSuccessfulMeasurements) {
    const std::vector<Measurement> ms = {ok_m(1, 5.0), failed_m(2), ok_m(4, 2.0), ok_m(8, 3.0),
                                         ok_m(16, 2.0), failed_m(32), ok_m(64, 1.0)};
    // Fastest first; the tie 2.0 (x = 4 and x = 16) keeps the measuring order; failures never.
    EXPECT_EQ(confirm_finalists(ms, 3), (std::vector<std::size_t>{6, 2, 4}));
    EXPECT_EQ(confirm_finalists(ms, 10), (std::vector<std::size_t>{6, 2, 4, 3, 0}));
    EXPECT_TRUE(confirm_finalists(ms, 0).empty());
    EXPECT_TRUE(confirm_finalists({failed_m(1), failed_m(2)}, 3).empty());
}

TEST(TuningConfirm, RetimeInterleavesInRotatedRoundsAndDropsAFailure) {
    // Three finalists with their search time as the first sample; B fails on its second fresh run.
    std::vector<Retimed> in = {{{1, 1}, {1.0}, false, {}, 0}, {{2, 1}, {0.5}, false, {}, 0}, {{4, 1}, {1.2}, false, {}, 0}};
    std::vector<std::uint64_t> calls;
    std::map<std::uint64_t, int> n;
    const std::map<std::uint64_t, double> fresh_time = {{1, 1.1}, {2, 0.9}, {4, 1.0}};
    const RetimeResult r = retime(in, [&](const LocalSize& l) {
        calls.push_back(l.x);
        if (l.x == 2 && ++n[2] == 2) throw std::runtime_error("wrong result");
        return fresh_time.at(l.x);
    }, 3);
    // Round 0: A B C; round 1: B C A (B fails); round 2: C A B, B skipped as dropped.
    EXPECT_EQ(calls, (std::vector<std::uint64_t>{1, 2, 4, 2, 4, 1, 4, 1}));
    EXPECT_EQ(r.runs, 8u);
    ASSERT_EQ(r.configs.size(), 3u);
    EXPECT_TRUE(r.configs[1].dropped);
    EXPECT_EQ(r.configs[1].error, "wrong result");
    EXPECT_TRUE(std::isnan(r.configs[1].median_s));  // its best search time no longer counts
    EXPECT_EQ(r.configs[0].samples, (std::vector<double>{1.0, 1.1, 1.1, 1.1}));
    EXPECT_EQ(r.configs[2].samples, (std::vector<double>{1.2, 1.0, 1.0, 1.0}));
    EXPECT_DOUBLE_EQ(r.configs[0].median_s, 1.1);
    EXPECT_DOUBLE_EQ(r.configs[2].median_s, 1.0);
    EXPECT_EQ(r.chosen, 2u);  // lowest median among those not dropped

    // A head-to-head: no earlier samples, both sides timed `runs` times, alternating starts.
    calls.clear();
    const RetimeResult h = retime({{{8, 1}, {}, false, {}, 0}, {{16, 1}, {}, false, {}, 0}},
                                  [&](const LocalSize& l) {
                                      calls.push_back(l.x);
                                      return l.x == 8 ? 2.0 : 3.0;
                                  },
                                  5);
    EXPECT_EQ(calls, (std::vector<std::uint64_t>{8, 16, 16, 8, 8, 16, 16, 8, 8, 16}));
    EXPECT_EQ(h.runs, 10u);
    EXPECT_EQ(h.configs[0].samples.size(), 5u);
    EXPECT_EQ(h.configs[1].samples.size(), 5u);
    EXPECT_EQ(h.chosen, 0u);

    // Invalid times drop too (NaN, <= 0, inf); every one dropped: no choice.
    const RetimeResult all = retime({{{1, 1}, {1.0}, false, {}, 0}, {{2, 1}, {1.0}, false, {}, 0}},
                                    [](const LocalSize& l) { return l.x == 1 ? -1.0 : INFINITY; }, 3);
    EXPECT_TRUE(all.configs[0].dropped && all.configs[1].dropped);
    EXPECT_EQ(all.runs, 2u);
    EXPECT_EQ(all.chosen, kNone);
    // Zero runs: the decision rests on the given samples.
    const RetimeResult none = retime({{{1, 1}, {2.0}, false, {}, 0}, {{2, 1}, {1.0}, false, {}, 0}},
                                     [](const LocalSize&) -> double { throw std::runtime_error("not called"); }, 0);
    EXPECT_EQ(none.runs, 0u);
    EXPECT_EQ(none.chosen, 1u);
}

TEST(TuningConfirm, ALuckySearchTimeLosesToTheConfirmedBest) {
    // A flat landscape with ±3 % noise: x = 8 is truly fastest (1.00), x = 16 and 32 are 1.10
    // and 1.12, the rest 1.3-2. The search's single timing of x = 16 is a lucky outlier (0.80),
    // the winner's curse of picking the minimum of noisy timings.
    const auto ranked = ranked_1d({64, 32, 16, 8, 4, 2, 1});
    const std::map<std::uint64_t, double> truth = {{1, 2.0}, {2, 1.6}, {4, 1.3}, {8, 1.0}, {16, 1.10}, {32, 1.12}, {64, 1.4}};
    std::mt19937 rng(12345);
    std::uniform_real_distribution<double> noise(0.97, 1.03);
    std::map<std::uint64_t, int> scans, fresh;
    auto measure = [&](const LocalSize& l) {
        ++scans[l.x];
        if (l.x == 16) return 0.80;  // the lucky first timing
        return truth.at(l.x) * noise(rng);
    };
    auto remeasure = [&](const LocalSize& l) {
        ++fresh[l.x];
        return truth.at(l.x) * noise(rng);
    };
    TuneOptions o;
    o.strategy = SearchStrategy::exhaustive;
    o.confirm_runs = 0;  // off: the minimum of single timings wins
    const TuneResult plain = tune(ranked, measure, o, remeasure);
    EXPECT_EQ(plain.best, (LocalSize{16, 1}));
    EXPECT_EQ(plain.confirm_runs, 0u);
    EXPECT_TRUE(fresh.empty());

    scans.clear();
    o.confirm_runs = 3;  // the default
    const TuneResult r = tune(ranked, measure, o, remeasure);
    ASSERT_TRUE(r.found);
    EXPECT_EQ(r.best, (LocalSize{8, 1}));
    // x = 8's samples all lie in [0.97, 1.03]; x = 16 has 0.80 and three in [1.067, 1.133].
    EXPECT_GE(r.best_s, 0.97);
    EXPECT_LE(r.best_s, 1.03);
    EXPECT_EQ(r.finalists, (std::vector<LocalSize>{{16, 1}, {8, 1}, {32, 1}}));
    // The re-timings went through `remeasure` only, three per finalist, and are not candidates.
    EXPECT_EQ(r.confirm_runs, 9u);
    EXPECT_EQ(fresh, (std::map<std::uint64_t, int>{{8, 3}, {16, 3}, {32, 3}}));
    for (const auto& [x, k] : scans) EXPECT_EQ(k, 1) << "x = " << x << " searched more than once";
    EXPECT_EQ(r.measured, ranked.size());
    EXPECT_EQ(r.measurements.size(), ranked.size());
    EXPECT_EQ(r.failed, 0u);
    const TuningRecord rec = to_record(r);
    EXPECT_EQ(rec.best, (LocalSize{8, 1}));
    EXPECT_DOUBLE_EQ(rec.best_s, r.best_s);
    EXPECT_EQ(rec.measured, ranked.size());
}

TEST(TuningConfirm, WithoutRemeasureTheSearchFunctionIsCalledAgain) {
    const auto ranked = ranked_1d({8, 4, 2, 1});
    int calls = 0;
    TuneOptions o;
    o.strategy = SearchStrategy::exhaustive;
    const TuneResult r = tune(ranked, [&](const LocalSize& l) {
        ++calls;
        return double(l.x);
    }, o);
    EXPECT_EQ(calls, 4 + 9);
    EXPECT_EQ(r.best, (LocalSize{1, 1}));
    EXPECT_DOUBLE_EQ(r.best_s, 1.0);  // a deterministic function: confirmation changes nothing
    EXPECT_EQ(r.measured, 4u);
}

TEST(TuningConfirm, AFinalistFailingOnRetimingIsDroppedNeverBestAndMarkedFailed) {
    // The guided search on a synthetic GPU; the candidate its search found fastest gives a wrong
    // result when it is run again.
    const DeviceInfo d = unit::gpu();
    const GlobalSize g{1024, 768};
    const auto ranked = rank_candidates(d, {}, local_candidates(d, {}, g, 2), Priority::x);
    auto f = [](const LocalSize& l) {
        // Smooth in log2 x, log2 y around (64, 4), so that several measured candidates are near.
        return 1e-3 * (1 + 0.2 * std::abs(std::log2(double(l.x) / 64)) + 0.2 * std::abs(std::log2(double(l.y) / 4)));
    };
    TuneOptions off;
    off.confirm_runs = 0;
    const TuneResult first = tune(ranked, f, off);
    ASSERT_TRUE(first.found);
    ASSERT_GE(first.measured - first.failed, 3u);
    const LocalSize flaky = first.best;

    TuneOptions o;  // guided, confirm 3 x 3
    const TuneResult r = tune(ranked, f, o, [&](const LocalSize& l) -> double {
        if (l == flaky) throw std::runtime_error("wrong result with local (flaky)");
        return f(l);
    });
    ASSERT_TRUE(r.found);
    EXPECT_NE(r.best, flaky);
    ASSERT_EQ(r.finalists.size(), 3u);
    EXPECT_EQ(r.finalists.front(), flaky);
    EXPECT_EQ(r.measured, first.measured);  // the same search; re-timings are not candidates
    EXPECT_EQ(r.failed, first.failed + 1);
    EXPECT_EQ(r.confirm_runs, 1u + 2u * 3u);  // the flaky one once, then dropped
    bool marked = false;
    for (const auto& m : r.measurements)
        if (m.local == flaky) {
            EXPECT_FALSE(m.ok);
            EXPECT_TRUE(std::isnan(m.seconds));
            EXPECT_NE(m.error.find("failed on re-timing"), std::string::npos) << m.error;
            marked = true;
        }
    EXPECT_TRUE(marked);
    // The choice is the better of the two surviving finalists (deterministic times here).
    EXPECT_DOUBLE_EQ(r.best_s, std::min(f(r.finalists[1]), f(r.finalists[2])));
    EXPECT_NE(to_record(r).best, flaky);
}

TEST(TuningConfirm, WhenEveryFinalistFailsTheNextAreTakenAndAllFailingFindsNothing) {
    const auto ranked = ranked_1d({16, 8, 4, 2, 1});
    auto measure = [](const LocalSize& l) { return double(l.x); };
    TuneOptions o;
    o.strategy = SearchStrategy::exhaustive;
    // 1, 2, 4 are the finalists and all fail afresh; 8 and 16 are confirmed next.
    std::vector<std::uint64_t> fresh;
    const TuneResult r = tune(ranked, measure, o, [&](const LocalSize& l) -> double {
        fresh.push_back(l.x);
        if (l.x <= 4) throw std::runtime_error("out of resources");
        return double(l.x);
    });
    ASSERT_TRUE(r.found);
    EXPECT_EQ(r.best, (LocalSize{8, 1}));
    EXPECT_EQ(r.failed, 3u);
    EXPECT_EQ(r.confirm_runs, 3u + 2u * 3u);
    EXPECT_EQ(fresh, (std::vector<std::uint64_t>{1, 2, 4, 8, 16, 16, 8, 8, 16}));
    EXPECT_EQ(r.finalists, (std::vector<LocalSize>{{1, 1}, {2, 1}, {4, 1}, {8, 1}, {16, 1}}));

    // Everything fails on re-timing: after 1, 2, 4 and then 8, 16 drop, nothing is left.
    const TuneResult none = tune(ranked, measure, o, [](const LocalSize&) -> double { throw std::runtime_error("gone"); });
    EXPECT_FALSE(none.found);
    EXPECT_TRUE(none.best.is_null());
    EXPECT_TRUE(std::isnan(none.best_s));
    EXPECT_EQ(none.failed, 5u);
    EXPECT_EQ(none.confirm_runs, 5u);
    EXPECT_EQ(none.measured, 5u);
    EXPECT_THROW(to_record(none), InvalidArgument);

    // Only one candidate succeeds in the search: nothing to decide, nothing re-timed.
    int fresh_calls = 0;
    const TuneResult one = tune(ranked, [](const LocalSize& l) -> double {
        if (l.x != 4) throw std::runtime_error("CL_INVALID_WORK_GROUP_SIZE");
        return 1.0;
    }, o, [&](const LocalSize&) {
        ++fresh_calls;
        return 1.0;
    });
    ASSERT_TRUE(one.found);
    EXPECT_EQ(one.best, (LocalSize{4, 1}));
    EXPECT_EQ(one.confirm_runs, 0u);
    EXPECT_EQ(fresh_calls, 0);
    EXPECT_TRUE(one.finalists.empty());
}
