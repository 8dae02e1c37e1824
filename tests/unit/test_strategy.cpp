// Split strategies and local-size policies through their interfaces and registries (no device):
// the oracle's search against synthetic makespan functions, `--local tuned` planning from an
// in-memory Store, the registries' names and errors, and each strategy through plan_split.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <string>
#include <vector>

#include "worksize/scheduler/local_policy.hpp"
#include "worksize/scheduler/oracle.hpp"
#include "worksize/scheduler/store.hpp"
#include "worksize/scheduler/strategy.hpp"

#include "synthetic_devices.hpp"

namespace worksize {
namespace {

using unit::node1_cpu;

KernelDescriptor kernel2d() {
    KernelDescriptor k;
    k.name = "k2";
    k.dims = 2;
    k.ops_per_item = 10;
    return k;
}

PlanRequest request2d(GlobalSize g, LocalPolicy local = LocalPolicy::null) {
    PlanRequest r;
    r.kernel = kernel2d();
    r.global = g;
    r.local_policy = local;
    return r;
}

/// max over devices of share / speed: convex, optimum at shares proportional to the speeds.
MakespanFn balanced(std::vector<double> speeds, int* calls) {
    return [speeds, calls](const Plan& plan) {
        ++*calls;
        double m = 0;
        for (const auto& a : plan.assignments) m = std::max(m, a.share / speeds.at(std::size_t(a.device)));
        return m;
    };
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

// --- the oracle -------------------------------------------------------------------------------

TEST(Oracle, TwoDevicesFindTheOptimumOnTheFinestGrid) {
    // Device 0 (fewer PEs) is a third as fast as device 1: the optimum gives it 25 %.
    const std::vector<DeviceInfo> devs{node1_cpu("small", 2), node1_cpu("large", 8)};
    int calls = 0, warm = 0;
    std::vector<std::string> steps;
    OracleInputs in;
    in.makespan = balanced({1.0, 3.0}, &calls);
    in.warm_up = [&](const std::vector<double>& w) {
        ++warm;
        EXPECT_EQ(w, (std::vector<double>{0.5, 0.5}));
    };
    in.step = [&](const std::string& s) { steps.push_back(s); };
    const OracleResult r = oracle_search(devs, request2d({64, 1024}), nullptr, {}, in);
    EXPECT_EQ(r.small_device, 0);
    ASSERT_EQ(r.weights.size(), 2u);
    EXPECT_NEAR(r.weights[0], 0.25, 0.0125);  // the last refinement step
    EXPECT_DOUBLE_EQ(r.weights[0], 0.25);     // exactly, with this function and 1024 rows
    EXPECT_EQ(r.units, (std::vector<std::uint64_t>{256, 768}));
    EXPECT_DOUBLE_EQ(r.makespan_s, 0.25);
    // 11 coarse + 6 + 2 refined splits, all distinct; 3 best confirmed twice; one warm-up.
    EXPECT_EQ(r.points.size(), 19u);
    EXPECT_EQ(calls, 19 + 3 * 2);
    EXPECT_EQ(warm, 1);
    EXPECT_EQ(r.runs, 1 + calls);
    EXPECT_EQ(std::size_t(r.runs), oracle_steps(2, in.options));
    EXPECT_EQ(steps.size(), oracle_steps(2, in.options));
    EXPECT_EQ(steps.front(), "warm-up");
    EXPECT_EQ(steps[1], "split 0% 100%");
    EXPECT_EQ(steps.back(), "confirm");
}

TEST(Oracle, RepeatsAndIdenticalUnitsAreMeasuredOnce) {
    // 4 rows: most shares round to the same units, which are measured once.
    const std::vector<DeviceInfo> devs{node1_cpu("a", 2), node1_cpu("b", 8)};
    int calls = 0;
    OracleInputs in;
    in.makespan = balanced({1.0, 1.0}, &calls);
    in.options.repeats = 3;
    in.options.confirm_top = 0;
    const OracleResult r = oracle_search(devs, request2d({64, 4}), nullptr, {}, in);
    EXPECT_EQ(calls, int(r.points.size()) * 3);
    EXPECT_LE(r.points.size(), 5u);  // 0..4 rows for device a
    EXPECT_DOUBLE_EQ(r.weights[0], 0.5);
    EXPECT_EQ(r.runs, calls);  // no warm-up given
}

TEST(Oracle, ThreeDevicesDescendWithinTheStepAndTheCap) {
    const std::vector<DeviceInfo> devs{node1_cpu("a", 2), node1_cpu("b", 4), node1_cpu("c", 8)};
    int calls = 0;
    OracleInputs in;
    in.makespan = balanced({1.0, 1.0, 2.0}, &calls);  // optimum 25 %, 25 %, 50 %
    in.warm_up = [](const std::vector<double>&) {};
    const OracleResult r = oracle_search(devs, request2d({64, 1024}), nullptr, {}, in);
    ASSERT_EQ(r.weights.size(), 3u);
    const double opt[] = {0.25, 0.25, 0.5};
    for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(r.weights[i], opt[i], 0.0625 + 1.0 / 1024) << i;
    EXPECT_LE(r.points.size(), std::size_t(in.options.max_evaluations));
    EXPECT_LE(std::size_t(r.runs), oracle_steps(3, in.options));
    EXPECT_EQ(r.runs, 1 + calls);
}

TEST(Oracle, SeedsAreMeasuredFirstAndANeedleAmongThemIsKept) {
    // A makespan with one sharp minimum that the descent's grid never visits: 103/307/614 rows.
    const std::vector<DeviceInfo> devs{node1_cpu("a", 2), node1_cpu("b", 4), node1_cpu("c", 8)};
    const std::vector<std::uint64_t> needle{103, 307, 614};
    OracleInputs in;
    in.makespan = [&](const Plan& p) {
        std::vector<std::uint64_t> u;
        for (const auto& a : p.assignments) u.push_back(a.units);
        return u == needle ? 0.5 : 1.0;
    };
    const OracleResult without = oracle_search(devs, request2d({64, 1024}), nullptr, {}, in);
    EXPECT_DOUBLE_EQ(without.makespan_s, 1.0);
    in.seeds = {{103.0 / 1024, 307.0 / 1024, 614.0 / 1024}, {1.0, 0.0, 0.0}};
    const OracleResult with = oracle_search(devs, request2d({64, 1024}), nullptr, {}, in);
    EXPECT_EQ(with.units, needle);
    EXPECT_DOUBLE_EQ(with.makespan_s, 0.5);
    ASSERT_GE(with.points.size(), 2u);
    EXPECT_EQ(with.points[0].units, needle);  // the seeds come first
    EXPECT_EQ(with.points[1].units, (std::vector<std::uint64_t>{1024, 0, 0}));
}

TEST(Oracle, TheStrategySeedsEveryOtherSplitAndEachDeviceAlone) {
    const std::vector<DeviceInfo> devs{node1_cpu("a", 2), node1_cpu("b", 8)};
    std::vector<std::vector<std::uint64_t>> measured;
    OracleInputs in;
    in.options.confirm_top = 0;
    in.makespan = [&](const Plan& p) {
        std::vector<std::uint64_t> u;
        for (const auto& a : p.assignments) u.push_back(a.units);
        measured.push_back(u);
        return 1.0;
    };
    PlanRequest req = request2d({64, 1000});
    req.strategy = "oracle";
    SplitContext ctx;
    ctx.oracle = &in;
    const Plan plan = plan_split(devs, req, ctx);
    // pe-ratio gives 2:8 (200, 800 rows); each device alone; all before the scan's 0 %, 10 % ...
    const auto has = [&](std::vector<std::uint64_t> u) { return std::find(measured.begin(), measured.end(), u) != measured.end(); };
    EXPECT_TRUE(has({200, 800}));
    EXPECT_TRUE(has({500, 500}));
    EXPECT_TRUE(has({1000, 0}));
    EXPECT_TRUE(has({0, 1000}));
    EXPECT_EQ(plan.strategy, "oracle");
}

TEST(Oracle, Errors) {
    OracleInputs in;
    EXPECT_THROW(oracle_search({node1_cpu("a", 1)}, request2d({64, 64}), nullptr, {}, in), InvalidArgument);
    int calls = 0;
    in.makespan = balanced({1.0}, &calls);
    EXPECT_THROW(oracle_search({}, request2d({64, 64}), nullptr, {}, in), Error);
    in.options.repeats = 0;
    EXPECT_THROW(oracle_search({node1_cpu("a", 1)}, request2d({64, 64}), nullptr, {}, in), InvalidArgument);
    EXPECT_EQ(oracle_steps(1, {}), 2u);
    EXPECT_EQ(oracle_steps(2, {}), 26u);
    EXPECT_EQ(oracle_steps(4, {}), 47u);
}

// --- --local tuned from an in-memory Store -----------------------------------------------------

class TunedPlanning : public ::testing::Test {
protected:
    const nlohmann::json params_ = {{"scale", 2}};
    std::vector<DeviceInfo> devs_{node1_cpu("dev-a", 4), node1_cpu("dev-b", 8)};
    Store store_{"/nowhere/db.json"};

    PlanRequest request(std::vector<double> weights) const {
        PlanRequest r = request2d({256, 1000}, LocalPolicy::tuned);
        r.weights = std::move(weights);
        return r;
    }
    void put(int dev, GlobalSize size, LocalSize local) {
        store_.put_tuning(fingerprint_of(devs_.at(std::size_t(dev))), "k2", params_, size,
                          {local, 1e-3, 10, 50, "guided", 3});
    }
    static std::string paper_rule(const DeviceInfo& d, GlobalSize slice) {
        std::string rule;
        paper_local_2d(d, slice, Priority::x, &rule);
        return rule;
    }
};

TEST_F(TunedPlanning, AnEntryThatDividesTheSliceIsUsed) {
    put(0, {256, 500}, {16, 4});
    put(1, {256, 500}, {32, 2});
    std::vector<std::string> warnings;
    const Plan p = plan_tuned(devs_, request({0.5, 0.5}), tuning_source(store_), params_, &warnings);
    EXPECT_TRUE(warnings.empty());
    EXPECT_EQ(p.assignments[0].units, 500u);
    EXPECT_EQ(p.assignments[0].local, (LocalSize{16, 4}));
    EXPECT_EQ(p.assignments[1].local, (LocalSize{32, 2}));
    EXPECT_EQ(p.assignments[0].local_rule,
              "tuned (db entry x2^8.y2^8, guided search, 10/50 measured, 1 ms per run of 3 iterations)");
    EXPECT_TRUE(p.assignments[0].note.empty());
}

TEST_F(TunedPlanning, AnEntryThatDoesNotDivideReSplitsToItsMultiple) {
    // The whole problem's class: (16,8) and (8,4) divide neither 370 nor 630 rows, 368 and 632.
    put(0, {256, 512}, {16, 8});
    put(1, {256, 512}, {8, 4});
    const Plan p = plan_tuned(devs_, request({0.37, 0.63}), tuning_source(store_), params_);
    EXPECT_EQ(p.assignments[0].units, 368u);
    EXPECT_EQ(p.assignments[1].units, 632u);
    EXPECT_EQ(p.assignments[0].local, (LocalSize{16, 8}));
    EXPECT_EQ(p.assignments[1].local, (LocalSize{8, 4}));
    EXPECT_EQ(p.assignments[0].local_rule,
              "tuned (nearest db entry x2^8.y2^9 for slice class x2^8.y2^8, guided search, 1 ms per run of 3 "
              "iterations)");
    EXPECT_EQ(p.assignments[0].note, "rows rounded to a multiple of 8 for the tuned local size");
    EXPECT_EQ(p.assignments[1].note, "rows rounded to a multiple of 4 for the tuned local size");
    EXPECT_EQ(p.assignments[0].padded_global, p.assignments[0].global);  // whole groups: no padding
    // apply_tuned_locals alone does not re-split: the entry runs on the slice padded to whole
    // groups (370 rows -> 376).
    PlanRequest padded = request({0.37, 0.63});
    padded.pad_ndrange = true;  // kernels that guard their index
    Plan q = make_plan(devs_, padded);
    apply_tuned_locals(q, devs_, tuning_source(store_), params_);
    EXPECT_EQ(q.assignments[0].units, 370u);
    EXPECT_EQ(q.assignments[0].local, (LocalSize{16, 8}));
    EXPECT_EQ(q.assignments[0].padded_global, (GlobalSize{256, 376}));
    // A plan that does not pad keeps the paper rule and says why.
    PlanRequest unpadded = request({0.37, 0.63});
    unpadded.pad_ndrange = false;
    q = make_plan(devs_, unpadded);
    apply_tuned_locals(q, devs_, tuning_source(store_), params_);
    EXPECT_EQ(q.assignments[0].units, 370u);
    EXPECT_EQ(q.assignments[0].local_rule,
              "paper (no tuned entry: none for x2^8.y2^8 with these kernel parameters in /nowhere/db.json; the "
              "nearest other size class's, x2^8.y2^9, does not fit either): " +
                  paper_rule(devs_[0], {256, 370}));
}

TEST_F(TunedPlanning, AMissingEntryFallsBackToThePaperRuleWithTheReason) {
    const Plan p = plan_tuned(devs_, request({0.5, 0.5}), tuning_source(store_), params_);
    const std::string rule = paper_rule(devs_[0], {256, 500});
    EXPECT_EQ(p.assignments[0].local_rule,
              "paper (no tuned entry: none for x2^8.y2^8 with these kernel parameters in /nowhere/db.json): " + rule);
    LocalSize paper;
    paper = paper_local_2d(devs_[0], {256, 500}, Priority::x);
    EXPECT_EQ(p.assignments[0].local, paper);
    // No database at all, and one that could not be read.
    const Plan none = plan_tuned(devs_, request({0.5, 0.5}), TuningSource{}, params_);
    EXPECT_EQ(none.assignments[0].local_rule, "paper (no tuned entry: no database): " + rule);
    std::vector<std::string> warnings;
    const Plan bad = plan_tuned(devs_, request({0.5, 0.5}), tuning_source_unavailable("cannot read it"), params_,
                                &warnings);
    EXPECT_EQ(bad.assignments[0].local_rule, "paper (no tuned entry: no database): " + rule);
    EXPECT_EQ(warnings, (std::vector<std::string>{"tuning database not used: cannot read it"}));
    // make_plan alone (no database consulted) marks the rule without a reason.
    EXPECT_EQ(make_plan(devs_, request({0.5, 0.5})).assignments[0].local_rule, "paper (no tuned entry): " + rule);
    EXPECT_EQ(tuned_fallback_rule(std::nullopt, "R"), "paper (no tuned entry): R");
    EXPECT_EQ(tuned_fallback_rule("why", "R"), "paper (no tuned entry: why): R");
}

TEST_F(TunedPlanning, PlanForDispatchesOnThePolicy) {
    put(0, {256, 500}, {16, 4});
    const TuningSource src = tuning_source(store_);
    PlanRequest r = request({0.5, 0.5});
    EXPECT_EQ(plan_for(devs_, r, &src, params_).assignments[0].local, (LocalSize{16, 4}));
    r.local_policy = LocalPolicy::paper;
    EXPECT_EQ(plan_for(devs_, r, &src, params_).assignments[0].local, paper_local_2d(devs_[0], {256, 500}, Priority::x));
    r.local_policy = LocalPolicy::null;
    EXPECT_TRUE(plan_for(devs_, r, &src, params_).assignments[0].local.is_null());
    EXPECT_THROW(plan_tuned(devs_, r, src, params_), InvalidArgument);
}

TEST(SizeClass, KeyTextRoundTrips) {
    const SizeClass c = size_class_of({1024, 768});
    EXPECT_EQ(c, (SizeClass{10, 9}));
    EXPECT_EQ(c.to_string(), "x2^10.y2^9");
    EXPECT_EQ(size_class({1024, 768}), "x2^10.y2^9");
    EXPECT_EQ(parse_size_class("x2^10.y2^9"), c);
    EXPECT_FALSE(parse_size_class("x2^10").has_value());
    EXPECT_FALSE(parse_size_class("x2^10.y2^9z").has_value());
    EXPECT_FALSE(parse_size_class("").has_value());
}

// --- the registries ---------------------------------------------------------------------------

TEST(Registry, StrategiesAreListedInOrder) {
    const auto names = strategy_names();
    ASSERT_GE(names.size(), 5u);
    EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 5),
              (std::vector<std::string>{"even", "pe-ratio", "paper", "model", "oracle"}));
    EXPECT_EQ(find_strategy("even").needs(), StrategyNeeds::nothing);
    EXPECT_EQ(find_strategy("pe-ratio").needs(), StrategyNeeds::nothing);
    EXPECT_EQ(find_strategy("paper").needs(), StrategyNeeds::nothing);
    EXPECT_EQ(find_strategy("model").needs(), StrategyNeeds::models);
    EXPECT_EQ(find_strategy("oracle").needs(), StrategyNeeds::measurements);
    EXPECT_EQ(&find_strategy("pe_ratio"), &find_strategy("pe-ratio"));
    for (const auto* s : list_strategies()) EXPECT_FALSE(s->help().empty()) << s->name();
}

TEST(Registry, UnknownNamesListTheValidOnes) {
    EXPECT_EQ(error_of([] { find_strategy("fast"); }),
              "unknown strategy 'fast' (valid: even, pe-ratio, paper, model, oracle)");
    EXPECT_EQ(error_of([] { find_local_policy("auto"); }), "unknown local policy 'auto' (valid: null, paper, tuned)");
    EXPECT_EQ(local_policy_names(), (std::vector<std::string>{"null", "paper", "tuned"}));
    EXPECT_EQ(local_policy(LocalPolicy::tuned).name(), "tuned");
    EXPECT_EQ(parse_local_policy("null"), LocalPolicy::null);
}

class FirstDeviceOnly final : public SplitStrategy {
public:
    std::string name() const override { return "first-only"; }
    std::string help() const override { return "all work on the first device"; }
    std::vector<double> weights(const SplitContext& ctx) const override {
        std::vector<double> w(ctx.devices->size(), 0.0);
        w[0] = 1.0;
        return w;
    }
};

TEST(Registry, ARegisteredStrategyPlansByName) {
    register_strategy(std::make_unique<FirstDeviceOnly>());
    EXPECT_EQ(parse_strategy("first-only"), "first-only");
    EXPECT_EQ(strategy_names().back(), "first-only");
    PlanRequest r = request2d({64, 64});
    r.strategy = "first-only";
    const Plan p = make_plan({node1_cpu("a", 2), node1_cpu("b", 2)}, r);
    EXPECT_EQ(p.strategy, "first-only");
    EXPECT_EQ(p.assignments[0].units, 64u);
    EXPECT_EQ(p.assignments[1].units, 0u);
}

// --- each strategy through plan_split ---------------------------------------------------------

TEST(Strategies, DeviceOnlyOnesMatchSplitWeights) {
    const std::vector<DeviceInfo> devs{node1_cpu("a", 2), node1_cpu("b", 6)};
    for (const std::string name : {"even", "pe-ratio", "paper"}) {
        PlanRequest r = request2d({64, 4096});
        r.strategy = name;
        const Plan p = plan_split(devs, r);
        EXPECT_EQ(p.strategy, name);
        const auto w = split_weights(devs, name, p.compute_class);
        SplitContext ctx;
        ctx.devices = &devs;
        ctx.compute_class = p.compute_class;
        EXPECT_EQ(find_strategy(name).weights(ctx), w) << name;
        const auto units = round_to_units(w, 4096);
        for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(p.assignments[i].units, units[i]) << name;
        EXPECT_DOUBLE_EQ(p.k, name == "paper" ? correction_k(p.compute_class) : 1.0);
    }
    SplitContext ctx;
    ctx.devices = &devs;
    EXPECT_EQ(find_strategy("even").weights(ctx), (std::vector<double>{0.5, 0.5}));
    EXPECT_EQ(find_strategy("pe-ratio").weights(ctx), (std::vector<double>{0.25, 0.75}));
}

TEST(Strategies, ModelSplitsByTheCostModels) {
    const std::vector<DeviceInfo> devs{node1_cpu("slow", 2), node1_cpu("fast", 6)};
    std::vector<CostModel> models(2);
    models[0].kernel.per_x_s = 3e-9;
    models[1].kernel.per_x_s = 1e-9;
    PlanRequest r = request2d({64, 4096});
    r.strategy = "model";
    EXPECT_THROW(plan_split(devs, r), InvalidArgument);  // no models given
    SplitContext ctx;
    ctx.models = &models;
    ctx.split_job.total_units = 4096;
    ctx.split_job.ops_per_unit = 64 * 10;
    const Plan p = plan_split(devs, r, ctx);
    EXPECT_EQ(p.strategy, "model");
    EXPECT_DOUBLE_EQ(p.k, 1.0);
    EXPECT_EQ(p.assignments[0].units + p.assignments[1].units, 4096u);
    EXPECT_NEAR(p.assignments[0].share, 0.25, 0.01);
    EXPECT_GT(p.predicted_makespan_s, 0);
    for (const auto& a : p.assignments) EXPECT_GT(a.predicted_s, 0);
}

TEST(Strategies, OracleSearchesThroughTheInjectedMeasurement) {
    const std::vector<DeviceInfo> devs{node1_cpu("small", 2), node1_cpu("large", 8)};
    PlanRequest r = request2d({64, 1024});
    r.strategy = "oracle";
    EXPECT_THROW(plan_split(devs, r), InvalidArgument);  // nothing to measure with
    int calls = 0;
    OracleInputs in;
    in.makespan = balanced({0.0001, 1.0}, &calls);  // the small device only slows the job
    OracleResult res;
    SplitContext ctx;
    ctx.oracle = &in;
    ctx.oracle_result = &res;
    const Plan p = plan_split(devs, r, ctx);
    EXPECT_EQ(p.strategy, "oracle");
    EXPECT_EQ(p.assignments[0].units, 0u);
    EXPECT_EQ(p.assignments[0].note, "no work: the best measured split leaves it out");
    EXPECT_EQ(res.weights, (std::vector<double>{0.0, 1.0}));
    EXPECT_EQ(int(res.points.size()) + 6, calls);
}

}  // namespace
}  // namespace worksize
