// plan_job for a kernel job: the request, and what the split strategy needs from outside the
// scheduler (the database's models or tuning entries, or runs of the job on a cluster).
#include <utility>

#include "worksize/runtime/plan_job.hpp"
#include "worksize/scheduler/log.hpp"
#include "worksize/scheduler/store.hpp"
#include "worksize/scheduler/strategy.hpp"

namespace worksize {

PlanRequest kernel_plan_request(const KernelJob& job, const KernelPlanOptions& options, std::size_t devices) {
    PlanRequest r = job_request(job, devices);
    r.iterations = options.job.iterations;
    r.ops = options.ops;
    r.strategy = parse_strategy(options.strategy);
    r.local_policy = options.local_policy;
    if (options.priority) r.priority = options.priority;
    if (!options.pad) r.pad_ndrange = false;  // the paper's rule on the slice itself
    return r;
}

nlohmann::json kernel_model_key(const nlohmann::json& params, LocalPolicy local) {
    // Numbers as reals: the key is compared as text, and databases keep their models (scale=2
    // stays {"scale":2.0}).
    nlohmann::json p = params;
    for (auto& [key, value] : p.items())
        if (value.is_number_integer()) value = value.get<double>();
    return model_params_key(p, local);
}

SplitJob model_split_job(const KernelJob& job, const KernelPlanOptions& options,
                         const std::vector<DeviceInfo>& devices) {
    SplitJob sj = split_job_for(job, options.job.iterations);
    sj.join_margin = options.join_margin;
    sj.local_inputs = options.local_inputs;
    if (kernel_plan_request(job, options, devices.size()).pad_ndrange)
        for (std::size_t i = 0; i < devices.size(); ++i)  // a library backend's slice is not padded
            sj.padding.push_back(job.backend(int(i)) == "kernel"
                                     ? split_padding(devices[i], job.descriptor().dims, job.problem())
                                     : SplitJob::Padding{});
    return sj;
}

namespace {

/// The strategy's models: each device's from the database (throws naming the first missing),
/// the database's warnings into `extras`, and each untrusted fit noted in ctx and warned.
void gather_models(const std::vector<DeviceInfo>& devices, const KernelJob& job, const KernelPlanOptions& o,
                   Database& db, std::vector<CostModel>& models, SplitContext& ctx, KernelPlanExtras* extras) {
    const Store& store = db.store();
    std::vector<std::string> missing;
    models = load_models(store, devices, o.kernel, kernel_model_key(o.job.params, o.local_policy), missing);
    if (!missing.empty())
        throw Error(missing.front() + " (database " + db.path() + "): run `worksize calibrate --kernel " + o.kernel +
                    (o.db.empty() ? "" : " --db " + o.db) + "`");
    if (extras)
        for (const auto& w : store.warnings()) extras->warnings.push_back(w);
    // Models that miss their own calibration by more than the limits: the strategy gives their
    // devices the paper rule's share, and says so here.
    ctx.untrusted.assign(devices.size(), "");
    for (std::size_t i = 0; i < devices.size(); ++i) {
        ctx.untrusted[i] = untrusted_fit(models[i].fit, o.fit_limits);
        if (ctx.untrusted[i].empty()) continue;
        std::string w = "not trusting the " + o.kernel + " model of device " + std::to_string(i) + " (";
        w.append(devices[i].name).append(", rank ").append(std::to_string(devices[i].rank)).append("): ");
        w.append(ctx.untrusted[i]).append("; --strategy model gives it the paper rule's share (recalibrate it, ");
        w.append("or raise --fit-rms-limit / --fit-max-limit to use the model anyway)");
        log::warn() << w;
    }
    ctx.models = &models;
    ctx.split_job = model_split_job(job, o, devices);
    ctx.declare_slices = declared_slices_of(o.kernel, job, devices, ctx.split_job);
}

/// Fresh jobs of the options' kernel and parameters at any size and iterations (the oracle's runs).
JobMaker job_maker(const KernelPlanOptions& o) {
    return [kernel = o.kernel, base = o.job](GlobalSize size, std::uint64_t iterations) {
        JobOptions jo = base;
        jo.size = size;
        jo.iterations = iterations;
        return kernel_job(kernel).make(jo);
    };
}

}  // namespace

Plan plan_job(const std::vector<DeviceInfo>& devices, const KernelJob& job, const KernelPlanOptions& o,
              KernelPlanExtras* extras) {
    const PlanRequest request = kernel_plan_request(job, o, devices.size());
    Database own(o.db);
    Database& db = o.database ? *o.database : own;
    const SplitStrategy& strategy = find_strategy(request.strategy);
    SplitContext ctx;
    if (request.local_policy == LocalPolicy::tuned) {
        ctx.tuning = &db.tuning();
        ctx.tuning_params = job.tuning_key();
    }
    std::vector<CostModel> models;
    OracleInputs oracle;
    OracleResult oracle_result;
    bool searching = false;
    switch (strategy.needs()) {
        case StrategyNeeds::nothing:
            break;
        case StrategyNeeds::models:
            gather_models(devices, job, o, db, models, ctx, extras);
            break;
        case StrategyNeeds::measurements: {
            if (!o.cluster)
                throw InvalidArgument("strategy " + strategy.name() +
                                      " searches the split by running the job: use it with "
                                      "`worksize run` or `worksize bench`, not `plan`");
            OracleOptions oo;
            if (o.on_search_start)
                o.on_search_start(strategy.name() + " " + o.kernel,
                                  oracle_steps(devices.size(), oo) + oracle_seed_count(devices.size()));
            searching = true;
            oracle = oracle_inputs(*o.cluster, job_maker(o), o.job.size, request, o.kernel, ctx.tuning, oo,
                                   [&](const std::string& what) {
                                       if (o.on_search_step) o.on_search_step(what);
                                   });
            ctx.oracle = &oracle;
            ctx.oracle_result = &oracle_result;
            break;
        }
    }
    Plan plan = plan_split(devices, request, ctx);
    if (searching && o.on_search_done) o.on_search_done();
    log::debug() << "plan of " << o.kernel << ": strategy " << plan.strategy << ", local "
                 << to_string(plan.local_policy) << ", " << devices.size() << " device(s)";
    if (extras && ctx.oracle) extras->oracle = std::move(oracle_result);
    return plan;
}

}  // namespace worksize
