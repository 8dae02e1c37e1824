// One planning entry point for both kinds of job: plan_job(devices, job, options) gives the Plan
// of a kernel job (KernelJob: the sample kernels, a user's registered kernel, a job file) and of
// a data job (DataJob, the overload in data_job.hpp). The `worksize` commands plan through it;
// a C++ program gets the same plans.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "worksize/runtime/calibration.hpp"
#include "worksize/runtime/data_job.hpp"
#include "worksize/runtime/kernel_job.hpp"
#include "worksize/scheduler/local_policy.hpp"
#include "worksize/scheduler/model.hpp"
#include "worksize/scheduler/oracle.hpp"
#include "worksize/scheduler/planner.hpp"

namespace worksize {

class Cluster;

/// How a kernel job is planned (what `worksize plan/run/bench` take as --strategy, --local, ...).
struct KernelPlanOptions {
    std::string kernel;  ///< the registered job's name (kernel_job()): models, tuning entries, errors
    /// What the job was made from (kernel_job(kernel).make(job)): its iterations count in the
    /// plan; its params (with "backend") key the models; the oracle makes jobs of other sizes from it.
    JobOptions job;
    std::string strategy = "paper";          ///< a registered split strategy (parse_strategy's spellings)
    LocalPolicy local_policy = LocalPolicy::paper;
    std::optional<Priority> priority;        ///< default: the kernel's
    std::optional<double> ops;               ///< overrides the descriptor's compute amount
    /// Pad slices' NDRanges where the kernel guards its index (PlanRequest::pad_ndrange); false:
    /// the paper's local-size rule on each slice itself.
    bool pad = true;
    bool local_inputs = false;  ///< each rank makes its slices' inputs: the model charges no transfer
    double join_margin = 0.10;  ///< model strategy: a device joins only for a larger predicted gain
    FitLimits fit_limits;       ///< model fits above these errors are not trusted
    std::string db;             ///< the database's path ("": the default, default_db_path())
    Database* database = nullptr;  ///< the caller's open database (null: `db`, opened by plan_job)
    Cluster* cluster = nullptr;    ///< measuring strategies (oracle) run the job here; null: offline
    /// A measuring strategy's search: `start` (label, steps) before its first run, `step` after
    /// each, `done` at its end. Any may be empty.
    std::function<void(const std::string& label, std::size_t steps)> on_search_start;
    StepFn on_search_step;
    std::function<void()> on_search_done;
};

/// What plan_job found besides the plan.
struct KernelPlanExtras {
    std::optional<OracleResult> oracle;  ///< oracle: the search and its points
    std::vector<std::string> warnings;   ///< model: problems in the database not fatal to the plan
};

/// The request plan_job splits: job_request(job, devices) with the options' iterations, ops,
/// strategy, local policy, priority and padding. @throws InvalidArgument for an unknown strategy.
PlanRequest kernel_plan_request(const KernelJob& job, const KernelPlanOptions& options, std::size_t devices = 0);

/// The models' key parameters (model_params_key) of a job of kernel parameters `params` (with
/// "backend" where it is not the kernel): integers as reals, as databases keep them.
nlohmann::json kernel_model_key(const nlohmann::json& params, LocalPolicy local);

/// The job the model strategy splits (SplitContext::split_job): split_job_for with the options'
/// iterations, join margin and rank-local inputs, and each device's padding where the plan pads.
SplitJob model_split_job(const KernelJob& job, const KernelPlanOptions& options,
                         const std::vector<DeviceInfo>& devices);

/// The job's options with the kernel parameters that depend on the devices, for a kernel with
/// tunable parameters (KernelJobFactory::tunables); make and plan the job with them to get the
/// job `worksize plan/run/bench/calibrate` make (the CLI's --param is `given.params`):
///  - LocalPolicy::tuned: the parameters of the devices' tuning entries (TuningRecord::params)
///    in `database` (null: the one at `db`, "" the default). Devices whose entries disagree: the
///    set most of them chose (ties: the first device's), with a warning. The entries are those of
///    the job of `given` (its tuning key and size). An entry without parameters keeps the job's own.
///  - else, where every device is a GPU and `local` is not null: the factory's gpu_params
///    (matmul: the register-tiled variant; interp: the staged tile).
/// `given` unchanged when the kernel has no tunables or its params hold a gpu_params key (the
/// variant is the user's: interp stage=0 ry=1, matmul variant=tiled). Where they hold only
/// other tunables (interp's vw), no entry decides and the GPU defaults add the rest, where the
/// job they make is valid on every device. A `given.size` of no items ({0, 0}: no one size, as
/// calibrate's ladder) reads no entry and adds the GPU defaults unchecked. Parameters are only
/// added, never changed. @throws InvalidArgument for an unknown kernel, or as the job's factory.
JobOptions tuned_job_options(const std::string& kernel, const JobOptions& given, const std::vector<DeviceInfo>& devices,
                             LocalPolicy local, Database* database = nullptr, const std::string& db = "");
/// The same for plan options: tuned_job_options(options.kernel, options.job, devices,
/// options.local_policy, options.database, options.db). Set `options.job` to it before
/// kernel_job(options.kernel).make(options.job) and plan_job.
JobOptions tuned_job_options(const std::vector<DeviceInfo>& devices, const KernelPlanOptions& options);

/// The plan of a kernel job over `devices`: the options' split strategy and local policy, with
/// `tuned` resolved from the database's tuning entries (paper rule where it has none).
/// `model`: each device's model from the database, split by the simulation of the job's
/// instruction lists; throws Error naming the first device without a usable model.
/// `oracle`: searches the split by running the job on options.cluster; throws InvalidArgument
/// without one. The strategy comes from the scheduler's registry (strategy.hpp); this gathers
/// what its needs() asks for.
Plan plan_job(const std::vector<DeviceInfo>& devices, const KernelJob& job, const KernelPlanOptions& options,
              KernelPlanExtras* extras = nullptr);

}  // namespace worksize
