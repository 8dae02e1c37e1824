// Options shared by `plan` and `run` (kernel, size, strategy, local policy, ...) and the step
// from them to a KernelJob and a PlanRequest.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "worksize/runtime/calibration.hpp"
#include "worksize/runtime/kernel_job.hpp"
#include "worksize/runtime/plan_job.hpp"
#include "worksize/scheduler/local_policy.hpp"
#include "worksize/scheduler/planner.hpp"

namespace worksize::cli {

struct KernelArgs {
    std::string kernel;
    std::string size;
    std::uint64_t iterations = 1;
    std::optional<double> ops;
    std::string strategy = "paper";
    std::string local = "paper";
    std::string priority;
    /// --pad: pad slices' NDRanges where the kernel guards its index (PlanRequest::pad_ndrange);
    /// false (--pad off): the paper's local-size rule on each slice itself.
    bool pad = true;
    std::uint64_t seed = 1;
    std::vector<std::string> params;
    std::string backend;  ///< --backend: NAME or DEVICE=NAME[,..] (parse_backends); "": the kernel
    bool local_inputs = false;  ///< run --inputs local: the model charges no transfer from rank 0
    std::string db;  ///< calibration/tuning database path ("": the default)
    double join_margin = 0.10;  ///< model strategy: a device joins only for a larger predicted gain
    FitLimits fit_limits;       ///< model fits above these errors are not trusted (calibrate warns)
    /// with_tuned_params may add device-dependent kernel parameters (false: the paper
    /// experiment, which compares local-size rules on the kernels as they are).
    bool device_params = true;
};

/// The default --size of every command that runs or plans one kernel (plan, run, bench): N for
/// N items of a 1-D kernel, NxN for a 2-D one. (A job file's default is its own size.)
inline constexpr const char* kDefaultSize = "512";

/// --fit-rms-limit and --fit-max-limit (calibrate, and kernel_options for plan, run, bench).
po::options_description fit_limit_options(FitLimits& limits);

/// --size, --iterations, --ops, --strategy, --local, --priority, --pad, --seed, --param, --db,
/// --join-margin and the fit limits (not --kernel).
po::options_description kernel_options(KernelArgs& k);

/// The job for these options (its inputs are not generated yet).
std::unique_ptr<KernelJob> make_job(const KernelArgs& k);
/// The JobOptions make_job() makes the job from (checked the same way).
JobOptions job_options(const KernelArgs& k);

/// `--inputs rank0|local` (run, plan) into `text`.
po::options_description inputs_option(std::string& text);
/// Sets k.local_inputs from --inputs' text. @throws InvalidArgument for another text, or for
/// "local" with a kernel that cannot make its inputs on each rank (`probe`, a job of k).
void apply_inputs(KernelArgs& k, const std::string& text, const KernelJob& probe);
/// Dimensionality of a registered kernel.
int kernel_dims(const std::string& kernel);
/// The runtime's plan options (KernelPlanOptions) of these options, without a cluster or a
/// database. @throws InvalidArgument for an unknown strategy, local policy or priority (in that
/// order), or a bad size or parameter.
KernelPlanOptions kernel_plan_options(const KernelArgs& k);
/// The same for a plan over `devices` (its --backend checked against them), measuring strategies
/// running on `cluster` (their search's progress on stderr), the database `db` (null: k's).
KernelPlanOptions plan_options(const KernelArgs& k, const std::vector<DeviceInfo>& devices, Cluster* cluster = nullptr,
                               Database* db = nullptr);
/// kernel_plan_request of these options (what the commands validate before any collective).
PlanRequest plan_request(const KernelArgs& k, const KernelJob& job, std::size_t devices = 0);
/// The kernel parameters of --param as JSON: integers where the text is one ("512"), other
/// numbers as reals ("2.5", "1e3"), else strings. Throws InvalidArgument for one without '='.
nlohmann::json kernel_params(const KernelArgs& k);
/// Refuse a key the kernel's factory does not declare (KernelJobFactory::params), naming the
/// valid ones; a factory that declares none takes any key.
void check_param_keys(const std::string& kernel, const nlohmann::json& params);
/// --backend's canonical text (BackendChoice::text(): "" for the kernel everywhere), its names
/// checked against the kernel's backends. Throws InvalidArgument naming the valid ones.
std::string backend_text(const KernelArgs& k);
/// Refuse a --backend that names a device the plan does not have.
void check_backend_devices(const KernelArgs& k, std::size_t devices);
/// The database path: --db, else the default (WORKSIZE_DB, XDG cache, ~/.cache).
std::string db_path(const KernelArgs& k);
/// The job's parsed --size, and a maker of jobs of these options at any size and iterations.
GlobalSize job_size(const KernelArgs& k);
JobMaker job_maker(const KernelArgs& k);
/// Database key parameters of the models for these options.
nlohmann::json model_key(const KernelArgs& k);

/// "KEY=VALUE" as --param takes it (a string value without its JSON quotes).
std::string param_arg(const std::string& key, const nlohmann::json& value);

/// k with the kernel parameters that depend on the devices (the runtime's tuned_job_options,
/// plan_job.hpp: a tuning entry's with `--local tuned`, else the GPU defaults where every device
/// is a GPU) added as --param strings, so that the job is made with them. k unchanged when
/// k.device_params is false (the paper experiment) or the kernel has no tunables.
KernelArgs with_tuned_params(const KernelArgs& k, const std::vector<DeviceInfo>& devices, Database* db = nullptr);

/// Calibrate `kernel` (with k's params, iterations and local policy) on every device and store
/// the models in k's database; progress on stderr. Used by `calibrate` and by `bench`.
/// "sizes 64 128 [256 512 1024] (saturated)": the sizes a device ran, the fitted ones in brackets.
std::string ladder_text(const DeviceCalibration& dc);

/// `max_size`: cap of the adaptive ladder ("" : none; see AdaptiveCalibration::max_size).
/// `db`: the command's database (null: k's, opened here); the models are put there and saved.
CalibrationResult calibrate_and_store(Cluster& c, const KernelArgs& k, const std::vector<std::string>& sizes,
                                      int min_repeats, int max_repeats, const std::string& max_size = "",
                                      Database* db = nullptr);

}  // namespace worksize::cli
