// The oracle: a search of the split by measuring it (METHOD.md 2.1). The search is pure; the
// measurement is injected (a MakespanFn that runs one plan and returns its makespan), so that
// the runtime supplies Cluster::run and a unit test a synthetic function.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worksize/scheduler/local_policy.hpp"
#include "worksize/scheduler/planner.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize {

/// Called once per measured run with a short description ("split 40% 60%", "confirm").
using StepFn = std::function<void(const std::string&)>;
/// Runs the job once with `plan`'s assignments; returns its makespan in seconds.
/// @throws Error if the run fails or does not verify.
using MakespanFn = std::function<double(const Plan& plan)>;
/// Runs the job once, untimed, on the split `weights` (programs are built outside the timing).
using WarmUpFn = std::function<void(const std::vector<double>& weights)>;

struct OracleOptions {
    int repeats = 1;                 ///< runs per evaluated split (median)
    int max_evaluations = 40;        ///< cap for more than two devices
    int confirm_top = 3;             ///< at the end, the best few splits ...
    int confirm_runs = 2;            ///< ... are run this many more times; best median wins
};

struct OraclePoint {
    std::vector<std::uint64_t> units;
    std::vector<double> shares;
    double makespan_s = 0;
};

struct OracleResult {
    std::vector<double> weights;     ///< best split found (per device, sums to 1)
    std::vector<std::uint64_t> units;
    double makespan_s = 0;
    std::vector<OraclePoint> points; ///< every split evaluated, in order
    int small_device = -1;           ///< two devices: the one with fewer PEs (its share is scanned)
    int runs = 0;                    ///< warm-up included
};

/// What the oracle measures with.
struct OracleInputs {
    MakespanFn makespan;
    WarmUpFn warm_up;                ///< optional
    OracleOptions options;
    StepFn step;                     ///< optional progress
    /// Splits (weights per device) measured before the search, e.g. every other strategy's and
    /// each device alone (the oracle strategy fills them): the search never keeps a split slower
    /// than one of them. Splits that round to the same units are measured once.
    std::vector<std::vector<double>> seeds;
};

/// Upper bound of the oracle's evaluations for n devices (for progress bars), warm-up included,
/// without OracleInputs::seeds (one more each at most).
std::size_t oracle_steps(std::size_t devices, const OracleOptions& options);
/// The most seeds the oracle strategy measures before its search (every strategy that needs
/// nothing but device data, and each device alone); 0 for one device.
std::size_t oracle_seed_count(std::size_t devices);

/// Search the split by measuring it. Two devices: the smaller device's share is scanned on 0,
/// 10 %, ..., 100 %, then refined on a 2.5 % and a 1.25 % grid around the best. More: coordinate
/// descent from the even split, moving 25 %, 12.5 %, 6.25 % of the work between pairs of devices
/// (shares may reach 0). Each split is planned from `request` (its weights replaced; `--local
/// tuned` from `tuning` with `params`); splits that round to the same units are measured once.
/// One warm-up run (even split) precedes the search, then the seeds; at the end the 3 best splits are run twice
/// more and the best median (scan run included) is chosen.
OracleResult oracle_search(const std::vector<DeviceInfo>& devices, const PlanRequest& request,
                           const TuningSource* tuning, const nlohmann::json& params, const OracleInputs& inputs);

}  // namespace worksize
