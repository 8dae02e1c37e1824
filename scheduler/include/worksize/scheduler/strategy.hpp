// Split strategies behind one interface, and their registry. A strategy gives each device's
// share of the work (weights summing to 1); make_plan turns the weights into whole rows or items
// and local sizes. The command line, the help text and Plan::strategy name strategies through
// the registry, so that adding one is its own .cpp plus one line in strategy.cpp's list (see
// docs/models.md, "Adding a split strategy"). Pure: no OpenCL, no MPI; what a strategy needs
// from outside (cost models, a way to run the job) comes in its SplitContext.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worksize/scheduler/local_policy.hpp"
#include "worksize/scheduler/model.hpp"
#include "worksize/scheduler/oracle.hpp"
#include "worksize/scheduler/planner.hpp"
#include "worksize/scheduler/simulate_kernel.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize {

/// What a strategy needs besides the devices' descriptions.
enum class StrategyNeeds {
    nothing,       ///< device data alone (even, pe-ratio, paper)
    models,        ///< each device's calibrated cost model (SplitContext::models, split_job)
    measurements,  ///< running the job (SplitContext::oracle)
};

/// Everything a strategy may draw on. `devices` and `request` are always set by plan_split; the
/// rest only where the strategy's needs() asks for it.
struct SplitContext {
    const std::vector<DeviceInfo>* devices = nullptr;
    const PlanRequest* request = nullptr;
    ComputeClass compute_class = ComputeClass::small;
    /// `--local tuned`: the tuning database and the kernel parameters its entries are keyed by.
    const TuningSource* tuning = nullptr;
    nlohmann::json tuning_params = nlohmann::json::object();
    /// needs models: one model per device (order of `devices`) and the job in the models' units.
    const std::vector<CostModel>* models = nullptr;
    SplitJob split_job;
    /// needs models: per device (order of `devices`), why its model is not trusted ("" or
    /// absent: trusted; see untrusted_fit). The model strategy gives such a device the paper
    /// rule's share and splits the rest among the trusted ones by their models.
    std::vector<std::string> untrusted;
    /// needs models, optional: the slices a split of the job runs as (a declared job's
    /// declarations), whose instruction lists the model strategy simulates; unset: the lists of
    /// the job's layout as split_job gives it (layout_slices).
    DeclareSlices declare_slices;
    /// needs measurements: how to run a plan of the job, and where the search's record goes.
    const OracleInputs* oracle = nullptr;
    OracleResult* oracle_result = nullptr;
    /// Filled by weights() for finish(): why each device was left out ("": no reason given).
    mutable std::vector<std::string> left_out;
};

class SplitStrategy {
public:
    virtual ~SplitStrategy() = default;
    /// The name the command line takes and Plan::strategy prints, e.g. "pe-ratio".
    virtual std::string name() const = 0;
    /// Other spellings parse_strategy accepts (e.g. "pe_ratio").
    virtual std::vector<std::string> aliases() const { return {}; }
    /// One line for the command line's help.
    virtual std::string help() const = 0;
    virtual StrategyNeeds needs() const { return StrategyNeeds::nothing; }
    /// The correction k the plan reports for a compute class (the paper's; 1 elsewhere).
    virtual double correction(ComputeClass) const { return 1.0; }
    /// Each device's share, in the order of *ctx.devices, summing to 1.
    /// @throws InvalidArgument when the context lacks what needs() asks for.
    virtual std::vector<double> weights(const SplitContext& ctx) const = 0;
    /// Called on the plan made from weights(): predicted times, notes of devices left out.
    virtual void finish(Plan&, const SplitContext&) const {}
};

/// Add a strategy to the registry (replacing one of the same name).
void register_strategy(std::unique_ptr<SplitStrategy> strategy);
/// @throws InvalidArgument "unknown strategy 'X' (valid: even, pe-ratio, ...)".
const SplitStrategy& find_strategy(const std::string& name);
/// The registered strategies, in the order they are listed.
std::vector<const SplitStrategy*> list_strategies();
/// Their names, in the same order.
std::vector<std::string> strategy_names();
/// "even, pe-ratio, paper, model, oracle".
std::string strategy_names_text();
/// The canonical name of a strategy given on the command line (an alias resolves to its name).
/// @throws InvalidArgument as find_strategy.
std::string parse_strategy(const std::string& s);

/// Plan with the request's strategy: its weights over the devices (request.weights, when set,
/// win), then make_plan or, for `--local tuned`, plan_tuned from ctx.tuning, then the strategy's
/// finish. `ctx.devices` and `ctx.request` are set here.
Plan plan_split(const std::vector<DeviceInfo>& devices, const PlanRequest& request, SplitContext ctx = {});

}  // namespace worksize
