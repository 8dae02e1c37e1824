// How plans and job results are shown: tables for people, JSON for programs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "worksize/runtime/cluster.hpp"
#include "worksize/scheduler/planner.hpp"

namespace worksize::cli {

/// JSON: `size` is the problem size (--size, [x, y], y = 1 for a 1-D kernel), `global` the
/// NDRange, `device` the index into the job's device list (its name: `device_name`).
nlohmann::json plan_to_json(const Plan& plan, const GlobalSize& size);
std::string plan_table(const Plan& plan);
std::string local_text(const LocalSize& l, int dims);
std::string global_text(const GlobalSize& g, int dims);
nlohmann::json result_to_json(const std::string& kernel, const GlobalSize& size, const Plan& plan, const JobResult& r);
std::string result_table(const Plan& plan, const JobResult& r);

}  // namespace worksize::cli
