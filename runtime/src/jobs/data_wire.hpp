// The data jobs' messages between ranks in JSON: the plan's slices (rank 0's command) and each
// rank's report of its part (data_job.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "jobs/data_execution.hpp"
#include "worksize/runtime/data_job.hpp"
#include "worksize/runtime/wire.hpp"

namespace worksize::data_exec {

nlohmann::json slices_to_json(const std::vector<SliceDesc>& v);
std::vector<SliceDesc> slices_from_json(const nlohmann::json& j);
/// A rank's report and its failure (if any); `origin`: the failure started on this rank.
nlohmann::json report_to_json(const RankReport& r, const wire::Failure& f, bool origin);
RankReport report_from_json(const nlohmann::json& j);

}  // namespace worksize::data_exec
