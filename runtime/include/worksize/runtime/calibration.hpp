// Measurements over a live Cluster for the model and oracle strategies (METHOD.md 2.1):
// calibration runs (each device alone on a few small problems, outlier-robust repeats) that
// give the Samples `fit_cost_model` fits, the bridge from a job to the split optimiser's
// SplitJob, model loading from the database, and the oracle's measurement (running the job for
// each split the scheduler's oracle_search asks about). See docs/bench.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worksize/runtime/cluster.hpp"
#include "worksize/scheduler/local_policy.hpp"
#include "worksize/scheduler/model.hpp"
#include "worksize/scheduler/oracle.hpp"
#include "worksize/scheduler/planner.hpp"
#include "worksize/scheduler/simulate_kernel.hpp"
#include "worksize/scheduler/store.hpp"

namespace worksize {

/// Makes a fresh (not yet generated) job; the calibration and the oracle call it per run.
using JobMaker = std::function<std::unique_ptr<KernelJob>(GlobalSize size, std::uint64_t iterations)>;

/// The model's unit of compute: a Sample's `items` and a SplitJob's `ops_per_unit` are counted
/// in operations (work-items x descriptor ops per item x iterations), so that one model serves
/// every problem size and iteration count (matmul's per-item work grows with K, sort's with
/// log^2 n). Bytes come from the job's descriptor.
SplitJob split_job_for(const KernelJob& job, std::uint64_t iterations);

/// The slices a split of `job` over `devices` runs as, for the simulation of its instruction
/// lists (simulate_kernel.hpp; SplitContext::declare_slices): each device's declaration
/// (KernelJobFactory::declare of the job's `kernel`) of its units, offsets in device order,
/// launched without a local size. A job that is not declared (sort), and a split whose slices do
/// not declare (one the job refuses), get the lists of the job's layout (layout_slices of `sj`).
/// Holds a reference to `job`.
DeclareSlices declared_slices_of(const std::string& kernel, const KernelJob& job,
                                 const std::vector<DeviceInfo>& devices, const SplitJob& sj);

/// Key parameters of a model in the database: the kernel's parameters and the local policy
/// (a model measured with one local-size rule does not predict another).
nlohmann::json model_params_key(const nlohmann::json& kernel_params, LocalPolicy local);

/// The Sample of one device's run. `kernel_s` is the OpenCL kernel event time (all iterations);
/// `host_s` is what the five timed phases do not account for (worker-side setup, slice packing
/// and allocation on the master): done_s minus the other phases, so that the model predicts
/// when the device's result is back without making that overhead scale with the operations.
/// With `result` (the run's JobResult) the job-level fields too: the job's bytes, rank 0's
/// prepare and combine times; in a run of several devices the prepare time is not host_s.
Sample sample_of(const DeviceRun& run, const KernelJob& job, std::uint64_t iterations,
                 const JobResult* result = nullptr);

/// Explicit calibration sizes of a kernel for `--sizes`-style use (small and fixed; the default
/// calibration is adaptive and starts from the first of them): the registered job's
/// KernelJobFactory::calibration_sizes, else {"256", "1024", "4096"}.
std::vector<std::string> default_calibration_sizes(const std::string& kernel);

struct CalibrationOptions {
    std::vector<GlobalSize> sizes;   ///< explicit problem sizes (all fitted); empty: adaptive
    AdaptiveCalibration adaptive;    ///< used when `sizes` is empty
    std::uint64_t iterations = 1;
    LocalPolicy local = LocalPolicy::paper;
    Priority priority = Priority::x;
    bool priority_given = false;
    const TuningSource* tuning = nullptr;  ///< for --local tuned (null: no database)
    int min_repeats = 3;             ///< timed runs per (device, size), after one warm-up
    int max_repeats = 15;
    double stable_rel = 0.02;        ///< stop when the median moves less than this
    /// After the solo runs, one co-run of all devices together (>= 2 devices) measures each
    /// device's contention factor (CostModel::contention); false: factors stay 1.
    bool corun = true;
    double corun_min_share = 0.05;   ///< every device gets at least this share in the co-run
};

inline constexpr std::size_t kCorunStep = static_cast<std::size_t>(-1);

/// One timed calibration run of a device, with rank 0's job-level times (for `--samples-csv`).
struct CalibrationRun {
    std::size_t step = 0;            ///< index into DeviceCalibration::ladder (kCorunStep: the co-run)
    Sample sample;
    double pack_s = 0, exec_s = 0, done_s = 0;      ///< DeviceRun's
    double prepare_s = 0, combine_s = 0, makespan_s = 0;  ///< JobResult's
};

struct DeviceCalibration {
    int device = 0;                  ///< index into Cluster::devices()
    CostModel model;
    std::vector<Sample> samples;
    double seconds = 0;              ///< wall time of this device's runs
    double max_rel_error = 0;        ///< worst |predicted/measured - 1| of done_s over fitted sizes
    std::vector<LadderStep> ladder;  ///< every size run, smallest first
    std::vector<CalibrationRun> runs;  ///< every timed run, fitted or not
    bool saturated = true;           ///< adaptive: every fitted size met the saturation rule
    /// The co-run (CalibrationOptions::corun): the device's units, its median measured done time
    /// and its solo prediction for that split; the model's contention factor comes from them.
    std::uint64_t corun_units = 0;
    double corun_measured_s = 0;
    double corun_predicted_s = 0;
};

struct CalibrationResult {
    std::string kernel;
    std::vector<DeviceCalibration> devices;
    double seconds = 0;
    int runs = 0;
};

/// Number of progress steps calibrate() reports (one per (device, size); adaptive: an upper bound).
std::size_t calibration_steps(std::size_t devices, const CalibrationOptions& options);

/// Rank 0: calibrate one kernel on every device of the cluster.
/// @throws Error if a run fails or does not verify.
CalibrationResult calibrate(Cluster& cluster, const std::string& kernel, const JobMaker& make,
                            const CalibrationOptions& options, const StepFn& step = {});

/// Put the result's models into `store` under `params_key`.
void store_calibration(Store& store, const std::vector<DeviceInfo>& devices, const CalibrationResult& result,
                       const nlohmann::json& params_key);

/// The model of every device for a kernel. A device without a usable model yields an entry in
/// `missing` ("no calibration for kernel K on device D (rank R)" plus the store's reason when
/// an entry was stale or damaged); its model is left default.
std::vector<CostModel> load_models(const Store& store, const std::vector<DeviceInfo>& devices,
                                   const std::string& kernel, const nlohmann::json& params_key,
                                   std::vector<std::string>& missing);

/// The oracle's measurement on a live cluster (rank 0): a warm-up run of the job at 1 iteration
/// (programs built outside the timing), and a MakespanFn that runs a fresh job of `size` (as
/// `make` takes it) on a plan and returns its makespan. @throws Error if a run does not verify.
OracleInputs oracle_inputs(Cluster& cluster, const JobMaker& make, GlobalSize size, const PlanRequest& request,
                           const std::string& job_name, const TuningSource* tuning, const OracleOptions& options,
                           const StepFn& step = {});

}  // namespace worksize
