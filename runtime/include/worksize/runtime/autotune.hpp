// Local work-size autotuning on live devices, and its use in plans (`--local tuned`).
#pragma once

#include <string>
#include <vector>

#include "worksize/runtime/kernel_job.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize {

/// Replace each assignment's local size by the tuning database's entry for its device, kernel
/// and slice size class; assignments without an entry keep the paper's rule, and their
/// local_rule says so. `db_path` "" means the default database.
void apply_tuned_locals(Plan& plan, const std::vector<DeviceInfo>& devices, const KernelJob& job,
                        const std::string& db_path);

}  // namespace worksize
