// The kernel job of a job file (scheduler/job_file.hpp): registered under the job's name, it is
// planned, tuned, calibrated, benched and run like a sample kernel (`worksize … --job FILE`).
// Rank 0 makes the inputs as the file says and sends each device its rows (with their halo) and
// the shared inputs; the device runs the kernels `iterations` times and returns its output rows
// and, per reduction, its slice's combined record; rank 0 combines those in slice order. With
// "verify": {"tolerance": t} the outputs are compared with a run of the whole problem on one
// device of rank 0's node (the first OpenCL device), made once per inputs.
#pragma once

#include <memory>
#include <string>

#include "worksize/runtime/kernel_job.hpp"
#include "worksize/scheduler/job_file.hpp"

namespace worksize {

/// Register the job of `file` (every rank, before the cluster runs it); returns its name.
/// @throws InvalidArgument when the name is a sample kernel's.
std::string register_job_file(std::shared_ptr<const JobFile> file);

}  // namespace worksize
