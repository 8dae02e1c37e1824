// The split strategies' registry, plan_split, and the strategies that need only the devices'
// descriptions: even, pe-ratio and the founding paper's pairwise rule chained over n devices
// (METHOD.md 1.1). The model and oracle strategies live in strategy_model.cpp and
// strategy_oracle.cpp.
#include "worksize/scheduler/strategy.hpp"

#include "registry.hpp"

#include <algorithm>
#include <cmath>

namespace worksize {

// Strategies defined in their own files; each is one line of the registry below.
std::unique_ptr<SplitStrategy> make_model_strategy();
std::unique_ptr<SplitStrategy> make_oracle_strategy();

namespace {

const std::vector<DeviceInfo>& devices_of(const SplitContext& ctx) {
    if (!ctx.devices || ctx.devices->empty()) throw InvalidArgument("split: no devices to split the work over");
    return *ctx.devices;
}

/// Devices that report PEs (the others get nothing); at least one must report some.
std::vector<std::size_t> with_pes(const std::vector<DeviceInfo>& devices, const std::string& strategy) {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < devices.size(); ++i)
        if (devices[i].total_pes() > 0) order.push_back(i);
    if (order.empty())
        throw InvalidArgument("split: strategy '" + strategy + "' needs PE counts, but no device reports any");
    return order;
}

class EvenStrategy final : public SplitStrategy {
public:
    std::string name() const override { return "even"; }
    std::string help() const override { return "the same share for every device"; }
    std::vector<double> weights(const SplitContext& ctx) const override {
        const std::size_t n = devices_of(ctx).size();
        return std::vector<double>(n, 1.0 / double(n));
    }
};

class PeRatioStrategy final : public SplitStrategy {
public:
    std::string name() const override { return "pe-ratio"; }
    std::vector<std::string> aliases() const override { return {"pe_ratio"}; }
    std::string help() const override { return "shares in proportion to the devices' processing elements"; }
    std::vector<double> weights(const SplitContext& ctx) const override {
        const auto& devices = devices_of(ctx);
        std::vector<double> w(devices.size(), 0.0);
        const auto order = with_pes(devices, name());
        double total = 0.0;
        for (std::size_t i : order) total += double(devices[i].total_pes());
        for (std::size_t i : order) w[i] = double(devices[i].total_pes()) / total;
        return w;
    }
};

class PaperStrategy final : public SplitStrategy {
public:
    std::string name() const override { return "paper"; }
    std::string help() const override { return "the founding paper's pairwise PE rule with its correction k"; }
    double correction(ComputeClass c) const override { return correction_k(c); }
    std::vector<double> weights(const SplitContext& ctx) const override {
        const auto& devices = devices_of(ctx);
        std::vector<double> w(devices.size(), 0.0);
        auto order = with_pes(devices, name());
        // Sort by PEs (stable), pair rule on neighbours, chain the ratios, normalise.
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return devices[a].total_pes() < devices[b].total_pes();
        });
        const double k = correction_k(ctx.compute_class);
        std::vector<double> chain(order.size(), 0.0);
        chain[0] = 1.0;
        for (std::size_t j = 1; j < order.size(); ++j) {
            const double s = paper_pair_share(devices[order[j - 1]].total_pes(), devices[order[j]].total_pes(), k);
            // s : (1 - s) = chain[j-1] : chain[j]. s > 0 since both devices have PEs.
            chain[j] = chain[j - 1] * (1.0 - s) / s;
        }
        // Normalise with the largest term as scale to keep long chains finite.
        const double top = *std::max_element(chain.begin(), chain.end());
        double total = 0.0;
        for (double& c : chain) {
            c /= top;
            total += c;
        }
        for (std::size_t j = 0; j < order.size(); ++j) w[order[j]] = chain[j] / total;
        return w;
    }
};

NamedRegistry<SplitStrategy>& registry() {
    static NamedRegistry<SplitStrategy> all = [] {
        NamedRegistry<SplitStrategy> r("strategy");
        r.add(std::make_unique<EvenStrategy>());
        r.add(std::make_unique<PeRatioStrategy>());
        r.add(std::make_unique<PaperStrategy>());
        r.add(make_model_strategy());
        r.add(make_oracle_strategy());
        return r;
    }();
    return all;
}

}  // namespace

void register_strategy(std::unique_ptr<SplitStrategy> strategy) { registry().add(std::move(strategy)); }
std::vector<const SplitStrategy*> list_strategies() { return registry().items(); }
std::vector<std::string> strategy_names() { return registry().names(); }
std::string strategy_names_text() { return registry().names_text(); }
const SplitStrategy& find_strategy(const std::string& name) { return registry().find(name); }

std::string parse_strategy(const std::string& s) { return find_strategy(s).name(); }

std::vector<double> split_weights(const std::vector<DeviceInfo>& devices, const std::string& strategy,
                                  ComputeClass cls) {
    if (devices.empty()) throw InvalidArgument("split: no devices to split the work over");
    const SplitStrategy& s = find_strategy(strategy);
    if (s.needs() != StrategyNeeds::nothing)
        throw InvalidArgument("split: strategy '" + s.name() +
                              "' needs measurements; the planner alone cannot compute it");
    SplitContext ctx;
    ctx.devices = &devices;
    ctx.compute_class = cls;
    return s.weights(ctx);
}

Plan plan_split(const std::vector<DeviceInfo>& devices, const PlanRequest& request, SplitContext ctx) {
    const SplitStrategy& s = find_strategy(request.strategy);
    ctx.devices = &devices;
    ctx.request = &request;
    // The plan's compute class (as make_plan classifies it), for strategies that ask for it.
    const double ops = request.ops ? *request.ops
                                   : request.kernel.ops_per_item * double(request.global.items()) *
                                         double(request.iterations);
    if (std::isfinite(ops) && ops >= 0) ctx.compute_class = classify(ops);
    // Explicit weights: no strategy of its own runs (nor its finish).
    if (request.weights) return plan_for(devices, request, ctx.tuning, ctx.tuning_params);
    if (s.needs() == StrategyNeeds::nothing) {
        Plan plan = plan_for(devices, request, ctx.tuning, ctx.tuning_params);
        s.finish(plan, ctx);
        return plan;
    }
    Plan plan = plan_with_weights(devices, request, s.weights(ctx), ctx.tuning, ctx.tuning_params);
    s.finish(plan, ctx);
    return plan;
}

}  // namespace worksize
