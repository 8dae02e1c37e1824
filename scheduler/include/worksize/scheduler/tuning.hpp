// The local-size tuner core (METHOD.md 2.2, 2.3): which local sizes are valid for a device and
// a compiled kernel, an analytic wave/occupancy ranking of them, and two search strategies
// (exhaustive, and model-guided top-k with neighbourhood refinement) driven by a measuring
// callback that the runtime supplies. Pure C++: the runtime builds, launches and times.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worksize/scheduler/types.hpp"

namespace worksize {

/// What the compiled kernel allows on a device (clGetKernelWorkGroupInfo). 0 means "take the
/// device's value".
struct KernelLimits {
    std::uint64_t max_work_group_size = 0;      ///< CL_KERNEL_WORK_GROUP_SIZE
    std::uint64_t local_mem_fixed_bytes = 0;    ///< CL_KERNEL_LOCAL_MEM_SIZE (static __local)
    std::uint64_t local_mem_per_item_bytes = 0; ///< __local bytes the host sizes per work-item
    std::uint64_t device_local_mem_bytes = 0;   ///< CL_DEVICE_LOCAL_MEM_SIZE
    std::uint64_t preferred_multiple = 0;       ///< CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
    /// OpenCL 2+ non-uniform work-groups: any local size, the last group is partial.
    bool supports_non_uniform = false;
    /// The kernel checks its bounds, so the global size may be rounded up to a multiple of the
    /// local size (OpenCL 1.2 style). Also allows any local size.
    bool bounds_checked = false;
};

/// One valid local size and the launch it implies.
struct Candidate {
    LocalSize local;
    GlobalSize launch_global;   ///< global as launched (rounded up when bounds_checked)
    std::uint64_t groups = 0;   ///< work-groups launched
};

/// Every valid local size for `global` (dims 1: y == 1). Valid: x <= max_work_item_sizes[0],
/// y <= [1], x*y <= min(device, kernel max WG), local memory fits, and x | global.x,
/// y | global.y unless non-uniform groups or bounds checks allow any size. Sorted by (y, x).
/// @throws InvalidArgument on a zero global size or dims not 1 or 2.
std::vector<Candidate> local_candidates(const DeviceInfo& device, const KernelLimits& limits,
                                        GlobalSize global, int dims);

/// Occupancy assumptions (METHOD.md 2.3); 0 means the default for the device type.
struct OccupancyParams {
    std::uint64_t threads_per_cu = 0;     ///< GPU 2048; CPU/other: the device max WG size
    std::uint64_t max_groups_per_cu = 0;  ///< GPU 32; CPU/other 1
    double saturation = 0.5;              ///< fraction of threads_per_cu that hides latency
    double shape_weight = 1.0;            ///< strength of the access-priority shape penalty
    double size_weight = 1.0;             ///< strength of the group-size prior (0: off)
    std::uint64_t gpu_group_warps_lo = 4; ///< GPU sweet spot: 4-8 preferred multiples
    std::uint64_t gpu_group_warps_hi = 8; ///< (128-256 work-items at 32)
};

/// The analytic score of one candidate.
struct CandidateScore {
    Candidate candidate;
    std::uint64_t resident = 0;  ///< resident groups per CU
    std::uint64_t waves = 0;
    double last_wave_efficiency = 1;  ///< filled fraction of the last wave
    double warp_efficiency = 1;       ///< x*y / (x*y rounded up to the preferred multiple)
    double shape_factor = 1;          ///< >= 1: access-priority / coalescing penalty
    double size_factor = 1;           ///< >= 1: group-size prior (GPU 4-8 warps, CPU SIMD width)
    double predicted_rel = 1;         ///< predicted time relative to the best candidate (>= 1)
};

/// Score and sort candidates, best (lowest predicted_rel) first; ties prefer larger groups and
/// then the priority dimension.
std::vector<CandidateScore> rank_candidates(const DeviceInfo& device, const KernelLimits& limits,
                                            const std::vector<Candidate>& candidates,
                                            Priority priority, const OccupancyParams& occ = {});

/// Measures one local size: seconds, or NaN / inf / <= 0 / an exception when the config
/// failed to build, to launch or gave wrong results (it is then skipped).
using MeasureFn = std::function<double(const LocalSize&)>;

enum class SearchStrategy { exhaustive, guided };
const char* to_string(SearchStrategy s);

struct TuneOptions {
    SearchStrategy strategy = SearchStrategy::guided;
    double top_fraction = 0.10;     ///< guided: share of the ranking measured first
    double budget_fraction = 0.20;  ///< guided: at most this share of the candidates ...
    std::size_t min_budget = 8;     ///< ... but at least this many (or all, if fewer)
};

struct Measurement {
    LocalSize local;
    double seconds = 0;       ///< NaN when failed
    bool ok = false;
    std::string error;        ///< why it failed
    double predicted_rel = 0; ///< the analytic score it had
};

struct TuneResult {
    bool found = false;        ///< false: every measured config failed
    LocalSize best;            ///< {0,0} when !found
    double best_s = 0;         ///< NaN when !found
    std::size_t measured = 0;  ///< configurations launched (failed ones included)
    std::size_t failed = 0;
    std::size_t candidates = 0;
    std::string strategy;
    std::vector<Measurement> measurements;  ///< in measuring order
};

/// Search the ranked candidates. Failed configurations are recorded in `measurements` with
/// ok == false and never become `best`.
/// @throws InvalidArgument if `ranked` is empty.
TuneResult tune(const std::vector<CandidateScore>& ranked, const MeasureFn& measure,
                const TuneOptions& options = {});

/// The budget of the guided strategy for n candidates: min(n, max(min_budget,
/// floor(budget_fraction * n))).
std::size_t guided_budget(std::size_t n, const TuneOptions& options);

/// What is stored for a tuning result (no failed configs; best only).
struct TuningRecord {
    LocalSize best;
    double best_s = 0;
    std::size_t measured = 0;
    std::size_t candidates = 0;
    std::string strategy;
};

/// @throws InvalidArgument if the result has no successful measurement.
TuningRecord to_record(const TuneResult& r);
nlohmann::json to_json(const TuningRecord& r);
/// @throws InvalidArgument naming the missing or malformed field.
TuningRecord tuning_record_from_json(const nlohmann::json& j);

}  // namespace worksize
