// Options shared by `plan` and `run` (kernel, size, strategy, local policy, ...) and the step
// from them to a KernelJob and a PlanRequest.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "worksize/runtime/kernel_job.hpp"
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
    std::uint64_t seed = 1;
    std::vector<std::string> params;
    std::string db;  ///< calibration/tuning database path ("": the default)
};

/// --size, --iterations, --ops, --strategy, --local, --priority, --seed, --param (not --kernel).
po::options_description kernel_options(KernelArgs& k, const char* default_size);

/// The job for these options (its inputs are not generated yet).
std::unique_ptr<KernelJob> make_job(const KernelArgs& k);
/// Dimensionality of a registered kernel.
int kernel_dims(const std::string& kernel);
PlanRequest plan_request(const KernelArgs& k, const KernelJob& job);

/// The plan `run` and `plan` use: the request's split and local policy over `devices`, with
/// `--local tuned` resolved from the tuning database (paper rule where it has no entry).
/// `cluster` is null for offline plans (profile devices).
Plan build_plan(const std::vector<DeviceInfo>& devices, const KernelArgs& k, const KernelJob& job, Cluster* cluster);

}  // namespace worksize::cli
