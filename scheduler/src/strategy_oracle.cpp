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
        OracleResult res = oracle_search(*ctx.devices, *ctx.request, ctx.tuning, ctx.tuning_params, *ctx.oracle);
        std::vector<double> w = res.weights;
        if (ctx.oracle_result) *ctx.oracle_result = std::move(res);
        return w;
    }

    void finish(Plan& plan, const SplitContext&) const override {
        for (auto& a : plan.assignments)
            if (a.units == 0) a.note = "no work: the best measured split leaves it out";
    }
};

}  // namespace

std::unique_ptr<SplitStrategy> make_oracle_strategy() { return std::make_unique<OracleStrategy>(); }

}  // namespace worksize
