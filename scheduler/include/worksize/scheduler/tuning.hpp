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
    /// Confirmation (both strategies): after the search, its `confirm_top` fastest measured
    /// candidates are re-timed `confirm_runs` more times each with fresh measurements,
    /// interleaved in rotated rounds, and the one with the lowest median of all its timings
    /// (search + confirmation) is chosen. Off when either is 0 or fewer than two candidates
    /// succeeded. The re-timings are not counted in `measured` (TuneResult::confirm_runs).
    std::size_t confirm_top = 3;
    std::size_t confirm_runs = 3;
    /// Baseline check (check_baselines, after the confirmation): the choice is re-timed
    /// `baseline_runs` times (0: no check) against the paper rule's local size and NULL,
    /// interleaved; a baseline whose median is faster by more than `baseline_margin` is stored
    /// instead. 5 %: the issue-5 target ("within 5 % of the best") and above the few per cent of
    /// run-to-run noise seen on PoCL, so that noise alone rarely replaces an equal choice.
    std::size_t baseline_runs = 3;
    double baseline_margin = 0.05;
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
    /// NaN when !found. The median of all the best's timings (its search time and its
    /// confirmation re-timings) when it was confirmed, else its search time.
    double best_s = 0;
    std::size_t measured = 0;  ///< configurations launched (failed ones included)
    /// Failed configurations, including finalists that failed on re-timing (their entry in
    /// `measurements` is then marked failed too).
    std::size_t failed = 0;
    std::size_t candidates = 0;
    std::string strategy;
    std::vector<Measurement> measurements;  ///< in measuring order (search only)
    std::size_t confirm_runs = 0;           ///< re-timings of finalists (failed ones included)
    std::vector<LocalSize> finalists;       ///< the re-timed candidates, fastest search time first
};

/// Search the ranked candidates, then confirm the finalists (TuneOptions::confirm_top).
/// `measure` times a candidate for the search (the runtime may answer from a cache);
/// `remeasure` times a finalist afresh for the confirmation (never from a cache; empty: use
/// `measure`, which is right for a measuring function that always measures). Failed
/// configurations are recorded in `measurements` with ok == false and never become `best`; a
/// finalist that fails on re-timing is dropped and marked failed.
/// @throws InvalidArgument if `ranked` is empty.
TuneResult tune(const std::vector<CandidateScore>& ranked, const MeasureFn& measure,
                const TuneOptions& options = {}, const MeasureFn& remeasure = {});

// --- Confirmation: the pure parts (the runtime supplies the measuring function) -----------------

/// Re-timings the confirmation launches after a search with `ok` successful measurements when
/// no finalist fails: min(ok, confirm_top) · confirm_runs, or 0 when that is fewer than two
/// finalists or confirmation is off. (For progress counts; failures make it fewer, or more when
/// every finalist fails and the next ones are taken.)
std::size_t planned_confirm_runs(std::size_t ok, const TuneOptions& options);

/// Median of `v` (the mean of the middle two for an even count). @throws InvalidArgument if empty.
double median_time(std::vector<double> v);

/// Indices into `measurements` of the `top` fastest successful ones, fastest first (ties: the
/// earlier measured).
std::vector<std::size_t> confirm_finalists(const std::vector<Measurement>& measurements, std::size_t top);

/// Round `round` of an interleaved re-timing of n configurations: every index once, starting at
/// round mod n (0, 1, 2; 1, 2, 0; 2, 0, 1; ...), so that drift of the machine hits all alike.
std::vector<std::size_t> rotated_order(std::size_t n, std::size_t round);

/// One configuration in a re-timing (confirmation of finalists, or a head-to-head).
struct Retimed {
    LocalSize local;
    std::vector<double> samples;  ///< its timings: any given before, then the fresh ones
    bool dropped = false;         ///< a fresh timing failed: no further runs, never chosen
    std::string error;            ///< why it was dropped
    double median_s = 0;          ///< median of `samples`; NaN when dropped or without samples
};

struct RetimeResult {
    std::vector<Retimed> configs;  ///< in the order given
    std::size_t runs = 0;          ///< fresh timings launched (failed ones included)
    /// Index of the lowest median among those not dropped (ties: the earlier given); npos
    /// when every one was dropped or none has a sample.
    std::size_t chosen = static_cast<std::size_t>(-1);
};

/// Time each configuration `runs` more times with `fresh`, in rounds (rotated_order): round r
/// times every configuration still in once, starting at configuration r. A timing that throws
/// or is not a positive finite number drops its configuration. `configs` carry any earlier
/// timings in `samples` (a search's time, or none for a head-to-head).
RetimeResult retime(std::vector<Retimed> configs, const MeasureFn& fresh, std::size_t runs);

/// The budget of the guided strategy for n candidates: min(n, max(min_budget,
/// floor(budget_fraction * n))).
std::size_t guided_budget(std::size_t n, const TuneOptions& options);

// --- Kernel parameters (docs/tuning.md, "Kernel parameters") ----------------------------------

/// One parameter set of a kernel whose parameters fix its work-group (matmul's reg tiles), as
/// the job derives it for the tuning problem on one device.
struct ParamCandidate {
    nlohmann::json params = nlohmann::json::object();  ///< the searched keys and their values
    std::string invalid;            ///< why it cannot run on the device ("": it can)
    LocalSize group;                ///< the work-group its parameters derive
    std::uint64_t groups = 0;       ///< work-groups launched for the tuning problem
    std::uint64_t local_mem_bytes = 0;   ///< __local bytes per group
    std::uint64_t outputs_per_item = 1;  ///< results a work-item computes (register blocking)
    /// Global loads per output and unit of depth, relative (a GEMM tile bm×bn: 1/bm + 1/bn).
    double traffic = 0;
};

struct ParamScore {
    ParamCandidate candidate;
    std::uint64_t resident = 0;  ///< resident groups per CU
    double occupancy = 0;        ///< resident work-items / the CU's thread limit (GPU)
    double predicted_rel = 1;    ///< predicted time relative to the best set (>= 1)
};

/// Rank valid parameter sets analytically, best first. GPU: occupancy from the group size and
/// local memory (resident groups per CU), latency hidden by the work-items in flight on a CU and
/// by each one's independent outputs, the balance of groups over the CUs, and the tile's global
/// traffic. CPU: the traffic and the balance of groups over cores. Candidates with `invalid` set
/// are left out.
std::vector<ParamScore> rank_param_candidates(const DeviceInfo& device, const std::vector<ParamCandidate>& candidates,
                                              const OccupancyParams& occ = {});

/// The indices (into a ranking of n) a parameter search measures, in order: all of them for the
/// exhaustive strategy or when guided_budget(n) covers them, else (guided) the best half of the
/// budget by the ranking, then a seeded random sample of the rest up to the budget, so that the
/// model's blind spots still get measured (Kernel Tuner's random sampling beside its ranking).
std::vector<std::size_t> param_search_order(std::size_t n, const TuneOptions& options, std::uint64_t seed = 1);

/// What is stored for a tuning result (no failed configs; best only).
struct TuningRecord {
    LocalSize best;               ///< {0,0} only with source "null"
    double best_s = 0;            ///< one run's kernel time, of `iterations` iterations
    std::size_t measured = 0;
    std::size_t candidates = 0;
    std::string strategy;
    /// The kernel iterations per run that best_s is for; 0: not recorded (entries written
    /// before it was). The merge compares per-iteration times where both sides have it.
    std::uint64_t iterations = 0;
    /// Where `best` comes from: "tuned" (the search's choice; entries written before the field
    /// existed), or "paper" / "null" when that baseline measured faster than the search's choice
    /// in the baseline check (check_baselines); the search's choice and its time in that check
    /// are then kept in tuned_local and tuned_s.
    std::string source = "tuned";
    LocalSize tuned_local{};
    double tuned_s = 0;
    /// The kernel parameters chosen with `best` (a parameter search, docs/tuning.md "Kernel
    /// parameters"), e.g. {"bm":128,...}; an empty object (entries written before the field
    /// existed, and local-size-only tuning): the job's own parameters.
    nlohmann::json params = nlohmann::json::object();
    /// The time of the job's defaults (its parameters as given, local size as `best` would have
    /// been tuned without parameters) in the parameter search; 0: not recorded.
    double default_s = 0;
};

/// Why a search result must not be stored as a tuned local size: its candidate space had a
/// single local size (e.g. a prime global size above the device's work-group limit leaves only
/// 1), so nothing was chosen. Empty when there was a choice (or nothing succeeded: that is a
/// failure, not this). `dims` (1 or 2) only formats the local size: "(1)" or "(1,1)". With the
/// kernel's `required` local size the reason says so.
std::string nothing_to_tune(const TuneResult& r, int dims, LocalSize required = {});

/// Why a guided search covered too little of its candidates to trust its choice: its budget
/// (guided_budget under `options`) stopped it at fewer than min(candidates, floor) measurements
/// (the CLI's 20 % leaves 2 of 11-13 candidates: issue 16's sort choice was 1.84x slower than
/// the best). E.g. "the guided search measured 2 of 13 candidates, all its budget allowed";
/// empty for an exhaustive search, one that stopped by itself or measured enough, or nothing found.
std::string search_too_small(const TuneResult& r, const TuneOptions& options, std::size_t floor = 8);

/// A local size the tuned choice is checked against: the paper rule's ("paper") or NULL, the
/// driver's choice ("null", local {0,0}).
struct Baseline {
    std::string source;
    LocalSize local;
};

/// The baseline check of a search's choice (docs/tuning.md, "Baseline check").
struct BaselineCheck {
    bool checked = false;          ///< false: off, nothing found, or no baseline other than the choice
    std::string source = "tuned";  ///< what to store: "tuned", or the baseline that beat the choice
    LocalSize local;               ///< the local size to store ({0,0}: NULL)
    double tuned_s = 0;            ///< the choice's median in the check (NaN: not checked / failed)
    std::string baseline;          ///< the fastest baseline ("" : none succeeded)
    LocalSize baseline_local;
    double baseline_s = 0;         ///< its median in the check (NaN: none)
    std::size_t runs = 0;          ///< fresh timings launched
    bool tuned_failed = false;     ///< the choice failed on re-timing: it must not be stored
    std::vector<Retimed> timed;    ///< the choice first, then each baseline timed
};

/// After a search: time its choice and each baseline that differs from it `runs` times afresh,
/// interleaved in rotated rounds (retime), and compare the medians of those fresh timings only
/// (none of them the survivor of a minimum). A baseline whose median beats the choice's by more
/// than `margin` (tuned_s > (1 + margin) * baseline_s; the fastest such) becomes `source` and
/// `local`. A baseline that fails is dropped; a choice that fails sets tuned_failed. Nothing is
/// timed when `runs` is 0, the result found nothing, or every baseline equals the choice.
BaselineCheck check_baselines(const TuneResult& r, const std::vector<Baseline>& baselines, const MeasureFn& fresh,
                              std::size_t runs, double margin);

/// The warning of a check whose baseline replaced the choice ("" otherwise), e.g. "the tuned
/// local size (64,16) ran 34.1 ms against 16.8 ms with NULL (the driver's choice), 2.03x
/// slower, in 3 fresh runs each; NULL stored instead (source null)". `dims` formats the sizes.
std::string baseline_warning(const BaselineCheck& check, const std::string& strategy, int dims);

/// The record's `iterations` stays 0: the result does not know them (store_tuning sets them).
/// @throws InvalidArgument if the result has no successful measurement.
TuningRecord to_record(const TuneResult& r);
/// The record with a baseline check applied: a baseline that beat the choice is stored (its
/// local size, its time in the check, `source`), the choice kept in tuned_local / tuned_s.
TuningRecord to_record(const TuneResult& r, const BaselineCheck& check);

/// best_s per iteration where `iterations` is known, else best_s itself.
double per_iteration_s(const TuningRecord& r);
nlohmann::json to_json(const TuningRecord& r);
/// @throws InvalidArgument naming the missing or malformed field.
TuningRecord tuning_record_from_json(const nlohmann::json& j);

}  // namespace worksize
