// The model strategy: each device's calibrated cost model; the split whose simulated instruction
// lists (simulate_kernel.hpp) end first among optimise_split's and each device alone, refined by
// the simulation (devices that would only slow the job are left out), and the plan's predicted
// times from the same simulation. A device whose model is not trusted (SplitContext::untrusted)
// gets the paper rule's share instead, the others optimise_split's. See docs/models.md.
#include <algorithm>
#include <cmath>
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
        const std::size_t n = ctx.models->size();
        std::vector<std::size_t> trusted;
        for (std::size_t i = 0; i < n; ++i)
            if (!untrusted(ctx, i)) trusted.push_back(i);
        if (trusted.size() == n) {
            const SplitResult best =
                optimise_simulated_split(*ctx.models, ctx.split_job, ranks(ctx), ctx.declare_slices);
            std::vector<double> w;
            for (auto u : best.units) w.push_back(double(u) / double(ctx.split_job.total_units));
            ctx.left_out = best.reasons;
            return w;
        }
        // A device whose model is not trusted gets the paper rule's share (the default
        // strategy's); the trusted devices split the rest by their models (docs/models.md,
        // "Fit quality"). With two devices and one untrusted, that is the paper split.
        const std::vector<double> paper = find_strategy("paper").weights(ctx);
        std::vector<double> w(n, 0.0);
        ctx.left_out.assign(n, "");
        double rest = 1.0;
        for (std::size_t i = 0; i < n; ++i)
            if (untrusted(ctx, i)) {
                w[i] = paper.at(i);
                rest -= paper.at(i);
            }
        const double rest_units = std::round(std::max(0.0, rest) * double(ctx.split_job.total_units));
        if (trusted.empty() || rest_units < 1) return w;
        std::vector<CostModel> models;
        for (std::size_t i : trusted) models.push_back(ctx.models->at(i));
        SplitJob job = ctx.split_job;
        job.total_units = std::uint64_t(rest_units);
        job.send_order.clear();  // the given order, restricted to the trusted devices
        for (int d : ctx.split_job.send_order) {
            const auto it = std::find(trusted.begin(), trusted.end(), std::size_t(d));
            if (it != trusted.end()) job.send_order.push_back(int(it - trusted.begin()));
        }
        const SplitResult best = optimise_split(models, job);
        for (std::size_t k = 0; k < trusted.size(); ++k) {
            w[trusted[k]] = double(best.units[k]) / double(ctx.split_job.total_units);
            ctx.left_out[trusted[k]] = best.reasons[k];
        }
        return w;
    }

    /// Predicted times of the plan's units; why a device got no work.
    void finish(Plan& plan, const SplitContext& ctx) const override {
        check(ctx);
        std::vector<std::uint64_t> units(ctx.devices->size(), 0);
        for (const auto& a : plan.assignments) units.at(std::size_t(a.device)) = a.units;
        const SplitResult ev =
            simulate_split(*ctx.models, ctx.split_job, units, ranks(ctx), ctx.declare_slices);
        plan.predicted_makespan_s = ev.makespan_s;
        for (auto& a : plan.assignments) {
            const auto i = std::size_t(a.device);
            if (untrusted(ctx, i)) {
                std::string note = "model not trusted (" + ctx.untrusted[i] + "): the paper rule's share";
                a.note = a.note.empty() ? note : note.append("; ").append(a.note);
            }
            if (a.units > 0) {
                a.predicted_s = ev.finish_s.at(i);
            } else if (!untrusted(ctx, i)) {
                const std::string why = i < ctx.left_out.size() ? ctx.left_out[i] : "";
                a.note = "no work: " + (why.empty() ? std::string("the model gives it none") : why);
            }
        }
    }

private:
    static std::vector<int> ranks(const SplitContext& ctx) {
        std::vector<int> r;
        for (const auto& d : *ctx.devices) r.push_back(d.rank);
        return r;
    }
    static bool untrusted(const SplitContext& ctx, std::size_t i) {
        return i < ctx.untrusted.size() && !ctx.untrusted[i].empty();
    }
    static void check(const SplitContext& ctx) {
        if (!ctx.devices || !ctx.models || ctx.models->size() != ctx.devices->size())
            throw InvalidArgument("split: strategy 'model' needs a cost model for every device");
    }
};

}  // namespace

std::unique_ptr<SplitStrategy> make_model_strategy() { return std::make_unique<ModelStrategy>(); }

}  // namespace worksize
