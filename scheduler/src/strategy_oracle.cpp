// The oracle strategy: the split that measured fastest (oracle_search, with the measurement the
// caller injects through SplitContext::oracle).
#include <memory>

#include "worksize/scheduler/strategy.hpp"

namespace worksize {

namespace {

class OracleStrategy final : public SplitStrategy {
public:
    std::string name() const override { return "oracle"; }
    std::string help() const override { return "search the split by running the job, keep the fastest measured"; }
    StrategyNeeds needs() const override { return StrategyNeeds::measurements; }

    std::vector<double> weights(const SplitContext& ctx) const override {
        if (!ctx.devices || !ctx.request || !ctx.oracle)
            throw InvalidArgument("split: strategy 'oracle' needs measurements; the planner alone cannot compute it");
        OracleInputs in = *ctx.oracle;
        in.seeds = seeds(ctx);
        OracleResult res = oracle_search(*ctx.devices, *ctx.request, ctx.tuning, ctx.tuning_params, in);
        std::vector<double> w = res.weights;
        if (ctx.oracle_result) *ctx.oracle_result = std::move(res);
        return w;
    }

    /// Every other strategy's split that can be computed here (device data alone, or models when
    /// the caller has them) and each device alone: the search starts from all of them.
    static std::vector<std::vector<double>> seeds(const SplitContext& ctx) {
        std::vector<std::vector<double>> out;
        for (const SplitStrategy* s : list_strategies()) {
            if (s->name() == "oracle" || s->needs() == StrategyNeeds::measurements) continue;
            if (s->needs() == StrategyNeeds::models && !ctx.models) continue;
            try {
                SplitContext c = ctx;
                c.oracle = nullptr;
                out.push_back(s->weights(c));
            } catch (const std::exception&) {
                // a strategy that cannot split this job (e.g. an untrusted model) seeds nothing
            }
        }
        for (std::size_t d = 0; d < ctx.devices->size(); ++d) {
            std::vector<double> alone(ctx.devices->size(), 0.0);
            alone[d] = 1.0;
            out.push_back(alone);
        }
        return out;
    }

    void finish(Plan& plan, const SplitContext&) const override {
        for (auto& a : plan.assignments)
            if (a.units == 0) a.note = "no work: the best measured split leaves it out";
    }
};

}  // namespace

std::unique_ptr<SplitStrategy> make_oracle_strategy() { return std::make_unique<OracleStrategy>(); }

std::size_t oracle_seed_count(std::size_t devices) {
    if (devices <= 1) return 0;
    std::size_t n = devices;
    for (const SplitStrategy* s : list_strategies())
        if (s->needs() == StrategyNeeds::nothing) ++n;
    return n;
}

}  // namespace worksize
