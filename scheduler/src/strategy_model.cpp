// The model strategy: each device's calibrated cost model, split by optimise_split (predicted
// times; devices that would only slow the job are left out). See docs/models.md.
#include <memory>

#include "worksize/scheduler/strategy.hpp"

namespace worksize {

namespace {

class ModelStrategy final : public SplitStrategy {
public:
    std::string name() const override { return "model"; }
    std::string help() const override { return "minimise the makespan the devices' calibrated cost models predict"; }
    StrategyNeeds needs() const override { return StrategyNeeds::models; }

    std::vector<double> weights(const SplitContext& ctx) const override {
        check(ctx);
        const SplitResult best = optimise_split(*ctx.models, ctx.split_job);
        std::vector<double> w;
        for (auto u : best.units) w.push_back(double(u) / double(ctx.split_job.total_units));
        ctx.left_out = best.reasons;
        return w;
    }

    /// Predicted times of the plan's units; why a device got no work.
    void finish(Plan& plan, const SplitContext& ctx) const override {
        check(ctx);
        std::vector<std::uint64_t> units(ctx.devices->size(), 0);
        for (const auto& a : plan.assignments) units.at(std::size_t(a.device)) = a.units;
        const SplitResult ev = evaluate_split(*ctx.models, ctx.split_job, units);
        plan.predicted_makespan_s = ev.makespan_s;
        for (auto& a : plan.assignments) {
            const auto i = std::size_t(a.device);
            if (a.units > 0) {
                a.predicted_s = ev.finish_s.at(i);
            } else {
                const std::string why = i < ctx.left_out.size() ? ctx.left_out[i] : "";
                a.note = "no work: " + (why.empty() ? std::string("the model gives it none") : why);
            }
        }
    }

private:
    static void check(const SplitContext& ctx) {
        if (!ctx.devices || !ctx.models || ctx.models->size() != ctx.devices->size())
            throw InvalidArgument("split: strategy 'model' needs a cost model for every device");
    }
};

}  // namespace

std::unique_ptr<SplitStrategy> make_model_strategy() { return std::make_unique<ModelStrategy>(); }

}  // namespace worksize
