// Unit tests of the tuner's guard-rails of issue 16 (scheduler/tuning.hpp): the baseline check
// that re-times a search's choice against the paper rule's local size and NULL and keeps the
// faster one, the record's "source" (older entries read as tuned), the warning of a guided
// search that measured too few candidates, and `--local tuned` with an entry whose source is
// NULL or the paper rule. Every time comes from a fake measuring function.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "worksize/scheduler/local_policy.hpp"
#include "worksize/scheduler/store.hpp"
#include "worksize/scheduler/tuning.hpp"

#include "synthetic_devices.hpp"

using namespace worksize;

namespace {

/// A guided search's result that chose (8) at 1 ms.
TuneResult chose_8() {
    TuneResult r;
    r.found = true;
    r.best = {8, 1};
    r.best_s = 1e-3;
    r.measured = 2;
    r.candidates = 13;
    r.strategy = "guided";
    return r;
}

const std::vector<Baseline> kBaselines = {{"paper", {16, 1}}, {"null", {0, 0}}};

/// Fresh times by local x (0: NULL); records the calls.
MeasureFn times(std::map<std::uint64_t, double> t, std::vector<std::uint64_t>* calls) {
    return [t, calls](const LocalSize& l) {
        if (calls) calls->push_back(l.x);
        const double s = t.at(l.x);
        if (s < 0) throw std::runtime_error("CL_INVALID_WORK_GROUP_SIZE");
        return s;
    };
}

}  // namespace

TEST(BaselineCheck, NullFasterBeyondTheMarginIsStoredInstead) {
    std::vector<std::uint64_t> calls;
    const TuneResult r = chose_8();
    const BaselineCheck c = check_baselines(r, kBaselines, times({{8, 1e-3}, {16, 0.99e-3}, {0, 0.5e-3}}, &calls), 3, 0.05);
    // The choice, the paper rule's and NULL, interleaved in rotated rounds, fresh times only.
    EXPECT_EQ(calls, (std::vector<std::uint64_t>{8, 16, 0, 16, 0, 8, 0, 8, 16}));
    EXPECT_TRUE(c.checked);
    EXPECT_EQ(c.runs, 9u);
    EXPECT_FALSE(c.tuned_failed);
    EXPECT_EQ(c.source, "null");
    EXPECT_EQ(c.local, (LocalSize{0, 0}));
    EXPECT_DOUBLE_EQ(c.tuned_s, 1e-3);
    EXPECT_EQ(c.baseline, "null");
    EXPECT_DOUBLE_EQ(c.baseline_s, 0.5e-3);
    EXPECT_EQ(baseline_warning(c, r.strategy, 1),
              "the guided search's local size (8) ran 1 ms against 0.5 ms with NULL (the driver's choice), 2.00x "
              "slower, in 3 fresh runs each; NULL stored instead (source null)");
    // The record: NULL with its time in the check; the search's choice kept beside it.
    const TuningRecord rec = to_record(r, c);
    EXPECT_EQ(rec.source, "null");
    EXPECT_EQ(rec.best, (LocalSize{0, 0}));
    EXPECT_DOUBLE_EQ(rec.best_s, 0.5e-3);
    EXPECT_EQ(rec.tuned_local, (LocalSize{8, 1}));
    EXPECT_DOUBLE_EQ(rec.tuned_s, 1e-3);
    EXPECT_EQ(rec.measured, 2u);
    EXPECT_EQ(rec.candidates, 13u);
    const TuningRecord back = tuning_record_from_json(nlohmann::json::parse(to_json(rec).dump()));
    EXPECT_EQ(back.source, "null");
    EXPECT_EQ(back.best, (LocalSize{0, 0}));
    EXPECT_EQ(back.tuned_local, (LocalSize{8, 1}));
    EXPECT_DOUBLE_EQ(back.tuned_s, 1e-3);
}

TEST(BaselineCheck, WithinTheMarginTheChoiceStays) {
    const TuneResult r = chose_8();
    // NULL 4 % faster, the paper rule's 3 %: noise at the 5 % margin, the choice stays.
    const auto fresh = times({{8, 1e-3}, {16, 0.97e-3}, {0, 0.96e-3}}, nullptr);
    const BaselineCheck c = check_baselines(r, kBaselines, fresh, 3, 0.05);
    EXPECT_TRUE(c.checked);
    EXPECT_EQ(c.source, "tuned");
    EXPECT_EQ(c.local, (LocalSize{8, 1}));
    EXPECT_EQ(c.baseline, "null");  // the fastest baseline, reported
    EXPECT_DOUBLE_EQ(c.baseline_s, 0.96e-3);
    EXPECT_EQ(baseline_warning(c, r.strategy, 1), "");
    const TuningRecord rec = to_record(r, c);
    EXPECT_EQ(rec.source, "tuned");
    EXPECT_EQ(rec.best, (LocalSize{8, 1}));
    EXPECT_DOUBLE_EQ(rec.best_s, 1e-3);  // the search's confirmed time, as before
    // A smaller margin: NULL is stored.
    EXPECT_EQ(check_baselines(r, kBaselines, fresh, 3, 0.03).source, "null");
}

TEST(BaselineCheck, ThePaperRulesLocalSizeWhenItIsTheFastest) {
    const TuneResult r = chose_8();
    const BaselineCheck c = check_baselines(r, kBaselines, times({{8, 2e-3}, {16, 1e-3}, {0, 1.5e-3}}, nullptr), 3, 0.05);
    EXPECT_EQ(c.source, "paper");
    EXPECT_EQ(c.local, (LocalSize{16, 1}));
    EXPECT_EQ(baseline_warning(c, "exhaustive", 1),
              "the exhaustive search's local size (8) ran 2 ms against 1 ms with the paper rule's (16), 2.00x slower, "
              "in 3 fresh runs each; (16) stored instead (source paper)");
    EXPECT_EQ(baseline_warning(c, "guided", 2).find("the guided search's local size (8,1) ran"), 0u);
    const TuningRecord rec = to_record(r, c);
    EXPECT_EQ(rec.source, "paper");
    EXPECT_EQ(rec.best, (LocalSize{16, 1}));
    EXPECT_DOUBLE_EQ(rec.best_s, 1e-3);
}

TEST(BaselineCheck, SkipsWhatEqualsTheChoiceAndWhatIsOff) {
    std::vector<std::uint64_t> calls;
    TuneResult r = chose_8();
    // The paper rule's local size is the choice: only NULL is timed against it.
    const BaselineCheck c =
        check_baselines(r, {{"paper", {8, 1}}, {"null", {0, 0}}}, times({{8, 1e-3}, {0, 2e-3}}, &calls), 2, 0.05);
    EXPECT_EQ(calls, (std::vector<std::uint64_t>{8, 0, 0, 8}));
    EXPECT_EQ(c.source, "tuned");
    EXPECT_EQ(c.timed.size(), 2u);
    // Nothing to compare, no runs, nothing found: no check, nothing timed.
    calls.clear();
    EXPECT_FALSE(check_baselines(r, {{"paper", {8, 1}}}, times({}, &calls), 3, 0.05).checked);
    EXPECT_FALSE(check_baselines(r, kBaselines, times({}, &calls), 0, 0.05).checked);
    TuneResult none = r;
    none.found = false;
    const BaselineCheck nc = check_baselines(none, kBaselines, times({}, &calls), 3, 0.05);
    EXPECT_FALSE(nc.checked);
    EXPECT_TRUE(calls.empty());
    EXPECT_THROW(to_record(none, nc), InvalidArgument);
    // Malformed baselines and margins.
    EXPECT_THROW(check_baselines(r, {{"fastest", {4, 1}}}, times({}, nullptr), 3, 0.05), InvalidArgument);
    EXPECT_THROW(check_baselines(r, {{"null", {4, 1}}}, times({}, nullptr), 3, 0.05), InvalidArgument);
    EXPECT_THROW(check_baselines(r, kBaselines, times({}, nullptr), 3, -0.1), InvalidArgument);
    EXPECT_THROW(check_baselines(r, kBaselines, times({}, nullptr), 3, NAN), InvalidArgument);
}

TEST(BaselineCheck, AFailingBaselineIsDroppedAFailingChoiceIsNotStored) {
    const TuneResult r = chose_8();
    // NULL fails to launch (a kernel that needs its local size): the paper rule still counts.
    const BaselineCheck c = check_baselines(r, kBaselines, times({{8, 2e-3}, {16, 1e-3}, {0, -1}}, nullptr), 3, 0.05);
    EXPECT_TRUE(c.timed[2].dropped);
    EXPECT_EQ(c.timed[2].error, "CL_INVALID_WORK_GROUP_SIZE");
    EXPECT_EQ(c.source, "paper");
    // Every baseline fails: the choice stays.
    const BaselineCheck b = check_baselines(r, kBaselines, times({{8, 2e-3}, {16, -1}, {0, -1}}, nullptr), 3, 0.05);
    EXPECT_EQ(b.source, "tuned");
    EXPECT_EQ(b.baseline, "");
    EXPECT_TRUE(std::isnan(b.baseline_s));
    // The choice fails on re-timing: flagged (the caller stores nothing), no baseline stored.
    const BaselineCheck f = check_baselines(r, kBaselines, times({{8, -1}, {16, 1e-3}, {0, 1e-3}}, nullptr), 3, 0.05);
    EXPECT_TRUE(f.tuned_failed);
    EXPECT_EQ(f.source, "tuned");
    EXPECT_EQ(baseline_warning(f, r.strategy, 1), "");
}

TEST(SearchCoverage, AGuidedSearchOfTwoInThirteenIsTooSmall) {
    // The issue's case: 13 candidates, the CLI's budget (20 %, floor 1) measures 2.
    std::vector<CandidateScore> ranked;
    for (std::uint64_t x = 1; x <= 4096; x *= 2) {
        CandidateScore s;
        s.candidate.local = {x, 1};
        s.candidate.launch_global = {4096, 1};
        s.candidate.groups = 4096 / x;
        ranked.push_back(s);
    }
    ASSERT_EQ(ranked.size(), 13u);
    TuneOptions o;
    o.min_budget = 1;
    const TuneResult g = tune(ranked, [](const LocalSize& l) { return 1e-3 * double(l.x); }, o);
    EXPECT_EQ(g.measured, 2u);
    EXPECT_EQ(search_too_small(g, o), "the guided search measured 2 of 13 candidates, all its budget allowed");
    // The library's floor of 8: a budget of 8, and this search stops at 3 by itself (the
    // best, 1, has no unmeasured neighbour): not cut short by the budget.
    o.min_budget = 8;
    const TuneResult g8 = tune(ranked, [](const LocalSize& l) { return 1e-3 * double(l.x); }, o);
    EXPECT_LT(g8.measured, 8u);
    EXPECT_EQ(search_too_small(g8, o), "");
    o.strategy = SearchStrategy::exhaustive;
    EXPECT_EQ(search_too_small(tune(ranked, [](const LocalSize& l) { return 1e-3 * double(l.x); }, o), o), "");
    // A large space at 20 %: 20 of 100 is enough; 4 of 5 by a budget of 4 is not (floor 8).
    TuneOptions cli;
    cli.min_budget = 1;
    TuneResult big = g;
    big.measured = 20;
    big.candidates = 100;
    EXPECT_EQ(search_too_small(big, cli), "");
    TuneResult small = g;
    small.measured = 1;
    small.candidates = 5;
    EXPECT_EQ(search_too_small(small, cli), "the guided search measured 1 of 5 candidates, all its budget allowed");
    EXPECT_EQ(search_too_small(small, cli, 1), "");  // another floor
    TuneResult none = g;
    none.found = false;
    EXPECT_EQ(search_too_small(none, cli), "");
}

TEST(TuningRecordSource, OlderEntriesAreTunedAndSourcesAreChecked) {
    // An entry written before the source existed.
    const auto old = nlohmann::json::parse(
        R"({"local": [32, 8], "best_s": 0.001, "measured": 12, "candidates": 60, "strategy": "guided", "iterations": 3})");
    const TuningRecord r = tuning_record_from_json(old);
    EXPECT_EQ(r.source, "tuned");
    EXPECT_EQ(r.best, (LocalSize{32, 8}));
    EXPECT_EQ(to_json(r)["source"], "tuned");
    EXPECT_FALSE(to_json(r).contains("tuned_local"));
    auto with = [&](const nlohmann::json& patch) {
        nlohmann::json j = old;
        j.merge_patch(patch);
        return j;
    };
    const auto beaten = nlohmann::json::parse(R"({"tuned_local": [32, 8], "tuned_s": 0.002})");
    EXPECT_EQ(tuning_record_from_json(with(beaten)).source, "tuned");  // no source: tuned
    nlohmann::json paper = with(beaten);
    paper["source"] = "paper";
    EXPECT_EQ(tuning_record_from_json(paper).source, "paper");
    nlohmann::json null = paper;
    null["source"] = "null";
    EXPECT_THROW(tuning_record_from_json(null), InvalidArgument);  // NULL's local is [0, 0]
    null["local"] = nlohmann::json::parse("[0, 0]");
    EXPECT_EQ(tuning_record_from_json(null).best, (LocalSize{0, 0}));
    nlohmann::json zero = old;
    zero["local"] = nlohmann::json::parse("[0, 0]");
    EXPECT_THROW(tuning_record_from_json(zero), InvalidArgument);  // only NULL may be 0
    nlohmann::json odd = paper;
    odd["source"] = "fastest";
    EXPECT_THROW(tuning_record_from_json(odd), InvalidArgument);
    odd["source"] = 1;
    EXPECT_THROW(tuning_record_from_json(odd), InvalidArgument);
    nlohmann::json bare = old;
    bare["source"] = "paper";  // without the search's choice beside it
    EXPECT_THROW(tuning_record_from_json(bare), InvalidArgument);
    paper["tuned_s"] = -1;
    EXPECT_THROW(tuning_record_from_json(paper), InvalidArgument);
}

TEST(TunedPlanningBaseline, NullAndPaperEntriesAreUsedAndSaySo) {
    const std::vector<DeviceInfo> devs{unit::node1_cpu("dev-a", 4), unit::node1_cpu("dev-b", 4)};
    const nlohmann::json params = {{"scale", 2}};
    Store store("/nowhere/db.json");
    TuningRecord null_rec{{0, 0}, 1e-3, 10, 50, "guided", 3};
    null_rec.source = "null";
    null_rec.tuned_local = {16, 4};
    null_rec.tuned_s = 2e-3;
    TuningRecord paper_rec{{32, 2}, 1e-3, 10, 50, "exhaustive", 3};
    paper_rec.source = "paper";
    paper_rec.tuned_local = {8, 8};
    paper_rec.tuned_s = 1.5e-3;
    store.put_tuning(fingerprint_of(devs[0]), "k2", params, {256, 500}, null_rec);
    store.put_tuning(fingerprint_of(devs[1]), "k2", params, {256, 500}, paper_rec);
    PlanRequest r;
    r.kernel.name = "k2";
    r.kernel.dims = 2;
    r.kernel.ops_per_item = 10;
    r.global = {256, 1000};
    r.local_policy = LocalPolicy::tuned;
    r.weights = std::vector<double>{0.5, 0.5};
    std::vector<std::string> warnings;
    const Plan p = plan_tuned(devs, r, tuning_source(store), params, &warnings);
    EXPECT_TRUE(warnings.empty());
    EXPECT_TRUE(p.assignments[0].local.is_null());
    EXPECT_EQ(p.assignments[0].local_rule,
              "tuned (db entry x2^8.y2^8, NULL, faster than the guided search's (16,4) (2 ms), 10/50 measured, 1 ms "
              "per run of 3 iterations)");
    EXPECT_EQ(p.assignments[1].local, (LocalSize{32, 2}));
    EXPECT_EQ(p.assignments[1].local_rule,
              "tuned (db entry x2^8.y2^8, the paper rule's (32,2), faster than the exhaustive search's (8,8) (1.5 ms), "
              "10/50 measured, 1 ms per run of 3 iterations)");
    // A NULL entry fits any slice: used from the nearest size class too (100 rows: class y2^6).
    r.weights = std::vector<double>{0.1, 0.9};
    const Plan q = plan_tuned(devs, r, tuning_source(store), params, &warnings);
    EXPECT_EQ(q.assignments[0].units, 100u);
    EXPECT_TRUE(q.assignments[0].local.is_null());
    EXPECT_EQ(q.assignments[0].local_rule,
              "tuned (nearest db entry x2^8.y2^8 for slice class x2^8.y2^6, NULL, faster than the guided search's "
              "(16,4) (2 ms), 1 ms per run of 3 iterations)");
}
