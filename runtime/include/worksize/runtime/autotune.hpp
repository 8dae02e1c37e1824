// Local work-size autotuning on live devices (docs/tuning.md); its use in plans (`--local
// tuned`: apply_tuned_locals, plan_tuned) is the scheduler's local_policy.hpp. The tuner core
// (candidates, ranking, search) is the scheduler's tuning.hpp; this layer measures candidates through Cluster::run, one device at a time with
// the whole problem, and reads and writes the tuning entries of the database (store.hpp).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "worksize/runtime/cluster.hpp"
#include "worksize/runtime/kernel_job.hpp"
#include "worksize/scheduler/local_policy.hpp"
#include "worksize/scheduler/planner.hpp"
#include "worksize/scheduler/store.hpp"
#include "worksize/scheduler/tuning.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize {


/// How each candidate is timed.
struct MeasureOptions {
    int warmup = 1;   ///< untimed runs first (PoCL compiles a kernel per local size)
    int repeats = 3;  ///< timed runs; the median kernel time counts
    /// A timed run should hold at least this much kernel time (seconds; 0: off). On a device
    /// where one run of the job's own iterations is shorter (quad 2^20 on an H200: 50 us), the
    /// tuner times runs of more iterations there and scales each time back to the job's
    /// iterations: launch jitter and a run's fixed cost (quad's final reduction launch) are then
    /// averaged out instead of deciding between candidates a few per cent apart.
    double min_run_s = 0.005;
    std::uint64_t max_iterations = 1000;  ///< cap of the raised iterations
};

/// One configuration's time on one device.
struct ConfigTime {
    bool ok = false;
    /// Median over the repeats of one run's OpenCL kernel time (all its iterations), for a run
    /// of the job's own iterations (scaled when the tuner timed more, timed_iterations); NaN if !ok.
    double seconds = 0;
    std::string error;   ///< why it failed (launch/build error, wrong result)
    ErrorReason reason = ErrorReason::generic;  ///< its kind (build_failure, device_limit, wrong_result...)
};

/// One parameter set measured by LocalTuner::tune_params.
struct ParamTrial {
    nlohmann::json params;      ///< the searched keys' values
    LocalSize group;            ///< the work-group they derive (launched as the local size)
    double predicted_rel = 1;   ///< its analytic rank score
    bool ok = false;
    double seconds = 0;         ///< NaN when failed (build, launch, or a wrong result)
    std::string error;
};

/// The parameter search of one kernel on one device (docs/tuning.md, "Kernel parameters").
struct ParamSearchResult {
    std::vector<std::string> keys;  ///< the parameters searched (tunables not fixed by --param)
    std::size_t sets = 0;           ///< sets in the product of their values
    std::size_t invalid = 0;        ///< refused before any run: the kernel cannot build them or the device cannot run them
    std::size_t candidates = 0;     ///< valid sets, ranked
    std::size_t measured = 0;       ///< sets launched (failed ones included)
    std::size_t failed = 0;         ///< launched sets that failed (build, launch, wrong result)
    std::size_t confirm_runs = 0;   ///< fresh re-timings of the finalists
    std::string strategy;           ///< "exhaustive" or "guided" (ranked top + random sample)
    std::vector<ParamTrial> trials; ///< in measuring order
    bool found = false;
    nlohmann::json best_params = nlohmann::json::object();
    LocalSize best_local;
    double best_s = 0;              ///< NaN when !found; the confirmed median otherwise
};

/// A job of the tuned kernel with these parameters added to the given ones.
using ParamJobMaker = std::function<std::unique_ptr<KernelJob>(std::uint64_t iterations, const nlohmann::json& params)>;

/// Tunes one kernel at one size on the devices of a cluster (rank 0). Every configuration runs
/// the whole problem on one device (the others get no work) through Cluster::run; a launch or
/// build failure (worksize::Error) or a wrong result makes the configuration fail, never the
/// tuner. Search times are cached per (device, local size), so that a report's exhaustive
/// table, its guided replay and the paper/NULL baselines measure each configuration once;
/// confirmation and head-to-head re-timings (measure_fresh) bypass the cache.
class LocalTuner {
public:
    /// `make_job(n)` makes a fresh job of the kernel at the tuning size with n iterations
    /// (inputs not generated); every run gets its own, so that no state carries over between
    /// runs. `iterations` is the job's own count, the unit of every time the tuner reports.
    using JobMaker = std::function<std::unique_ptr<KernelJob>(std::uint64_t iterations)>;
    LocalTuner(Cluster& cluster, std::string kernel, std::uint64_t iterations, JobMaker make_job,
               MeasureOptions measure = {});
    /// The registered job `kernel` with these options.
    LocalTuner(Cluster& cluster, std::string kernel, JobOptions options, MeasureOptions measure = {});

    const std::string& kernel() const { return kernel_; }
    const KernelJob& job() const { return *proto_; }
    GlobalSize size() const { return proto_->problem(); }
    int dims() const { return proto_->descriptor().dims; }
    Priority priority() const { return proto_->descriptor().default_priority; }
    const DeviceInfo& device(int index) const;  ///< the cluster's device (rank 0's numbering)
    std::uint64_t iterations() const { return iterations_; }  ///< the job's own iterations

    /// Iterations of each timed run on the device: the job's own, or more when a probe (two runs
    /// with the paper's local size, else NULL; the second counts) took less kernel time than
    /// MeasureOptions::min_run_s: ceil(iterations * min_run_s / probe), at most max_iterations.
    /// Probed once per device, on first use; a failed probe keeps the job's own.
    std::uint64_t timed_iterations(int device);

    /// Valid candidates for the device (device limits; kernel-specific limits show up as
    /// launch failures), ranked by the analytic model, best first.
    std::vector<CandidateScore> ranked(int device) const;
    /// The paper's local size for the device and its rule text.
    LocalSize paper_local(int device, std::string* rule = nullptr) const;

    /// Time one configuration ({0,0}: NULL), cached.
    ConfigTime measure(int device, LocalSize local);
    /// Time one configuration afresh (warm-up and repeats as measure), never from the cache.
    /// A success leaves the cache alone (it keeps the search's time); a failure replaces the
    /// cached entry, so that a configuration that failed once is failed from then on.
    ConfigTime measure_fresh(int device, LocalSize local);
    /// Enable the parameter search: `make` makes jobs with parameter sets added to `given` (the
    /// parameters the user gave; their keys are not searched, and "variant":"tiled" turns the
    /// search off). The JobOptions constructor enables it by itself.
    void set_param_search(ParamJobMaker make, nlohmann::json given);
    /// The tunables the parameter search varies (empty: no parameter search).
    std::vector<std::string> searched_params() const;
    /// Search the kernel's parameters on one device: every set of the searched tunables' values
    /// that the job accepts and the device can run, ranked (rank_param_candidates), measured in
    /// param_search_order with the work-group each set derives; failures are skipped and
    /// counted; the `confirm_top` fastest are re-timed `confirm_runs` times afresh, interleaved,
    /// and the lowest median wins. @throws InvalidArgument when nothing is searched.
    ParamSearchResult tune_params(int device, const TuneOptions& options);
    /// Time one parameter set with its derived work-group (cached per device and set).
    ConfigTime measure_params(int device, const nlohmann::json& params, bool fresh = false);

    /// Called after every configuration actually launched (not on cache hits), fresh ones too.
    void on_measured(std::function<void(int device, LocalSize, const ConfigTime&)> f) { hook_ = std::move(f); }

    /// Run the search on one device with live (or cached) measurements; its confirmation
    /// (TuneOptions::confirm_top) re-times the finalists with measure_fresh.
    TuneResult tune(int device, const TuneOptions& options);

    /// The baseline check of a search's choice on the device (docs/tuning.md): the choice, the
    /// paper rule's local size and NULL, each re-timed `options.baseline_runs` times afresh
    /// (measure_fresh), interleaved; a baseline faster by more than options.baseline_margin is
    /// what to store (worksize::check_baselines).
    BaselineCheck check_baselines(int device, const TuneResult& result, const TuneOptions& options);

private:
    ConfigTime time_config(int device, LocalSize local, const JobMaker* make = nullptr);
    /// One run of the whole problem on `device` with a job of `make` (default: the tuner's):
    /// its kernel time (seconds, `iterations` iterations). @throws Error on a failed launch or a
    /// wrong result.
    double run_once(int device, LocalSize local, std::uint64_t iterations, const JobMaker* make = nullptr);
    JobMaker params_maker(const nlohmann::json& params) const;

    Cluster& cluster_;
    std::string kernel_;
    std::uint64_t iterations_;
    JobMaker make_;
    std::map<int, std::uint64_t> timed_iterations_;
    MeasureOptions mopts_;
    std::unique_ptr<KernelJob> proto_;
    std::map<std::tuple<int, std::uint64_t, std::uint64_t>, ConfigTime> cache_;
    std::function<void(int, LocalSize, const ConfigTime&)> hook_;
    ParamJobMaker param_make_;
    nlohmann::json given_params_ = nlohmann::json::object();
    std::map<std::pair<int, std::string>, ConfigTime> param_cache_;
};

/// One kernel on one device in `worksize tune --report`.
struct TuneReportRow {
    std::string kernel;
    int device = 0;
    int rank = 0;
    std::string device_name;
    GlobalSize size;  ///< the NDRange tuned (LocalTuner::size); to_json writes it as "global"
    int dims = 1;
    LocalSize tuned_local, best_local, paper_local;
    std::string paper_rule;
    /// The compared times (NaN when failed): the head-to-head medians when the guided choice
    /// and the exhaustive best differ (head_to_head), else both the exhaustive search's
    /// confirmed time of the one configuration (the ratio is exactly 1).
    double tuned_s = 0, exhaustive_best_s = 0;
    /// Each search's own time for its choice (the median of its search and confirmation timings).
    double tuned_scan_s = 0, exhaustive_scan_s = 0;
    /// Search-phase times (cached, median of the repeats); NaN when failed. When the paper's
    /// local size is the tuned choice (or the exhaustive best), paper_s is tuned_s (or
    /// exhaustive_best_s): the same configuration gets the same number.
    double paper_s = 0, null_s = 0;
    std::size_t measured = 0;    ///< configurations the guided search launched
    std::size_t candidates = 0;  ///< all valid candidates
    std::size_t failed = 0;      ///< candidates that failed in the exhaustive sweep or its confirmation
    std::uint64_t iterations = 1;        ///< the job's own iterations (the unit of every time)
    std::uint64_t timed_iterations = 1;  ///< iterations per timed run (LocalTuner::timed_iterations)
    std::size_t confirm_runs = 0;             ///< the guided search's re-timings of its finalists
    std::size_t exhaustive_confirm_runs = 0;  ///< the exhaustive search's re-timings
    bool head_to_head = false;                ///< the choices differed and were timed against each other
    std::size_t head_to_head_runs = 0;        ///< fresh timings launched in the head-to-head (both sides)
    /// A configuration that failed in the head-to-head (its time is NaN; it must not be stored).
    bool tuned_failed = false, best_failed = false;
    std::string head_to_head_error;
    /// The exhaustive sweep: (x, y) -> seconds (NaN: failed).
    std::vector<std::pair<LocalSize, double>> heatmap;
    /// What `tune` stored for the --search strategy's choice (set by the caller, after
    /// tune_report_row): its source ("tuned", "paper", "null"; "": nothing stored), its local
    /// size, and the baseline check that decided it.
    std::string stored_source;
    LocalSize stored_local;
    BaselineCheck baseline_check;
};

struct TuneReportOptions {
    /// Fresh timings of each side when the guided choice differs from the exhaustive best
    /// (interleaved, rotated); 0: compare the searches' own times. 9: with 5, the H200 report's
    /// one miss (CPU matmul 512, two configurations 5 % apart on a flat landscape) turned on
    /// run-to-run noise of a few per cent; the median of 9 halves the chance of a flipped order.
    std::size_t head_to_head_runs = 9;
    /// Called once both searches are done with the number of head-to-head timings about to be
    /// launched (0 when there is none), e.g. to correct a progress count.
    std::function<void(std::size_t runs)> on_head_to_head;
};

/// Measure every candidate (exhaustive, confirmed), replay the guided search on those times
/// (its confirmation re-times afresh), time the two choices head to head if they differ, and
/// time the paper's rule and NULL. `guided` sets the guided search's budget and confirmation.
TuneReportRow tune_report_row(LocalTuner& tuner, int device, const TuneOptions& guided,
                              const TuneReportOptions& report = {}, TuneResult* exhaustive = nullptr,
                              TuneResult* guided_result = nullptr);

nlohmann::json to_json(const TuneReportRow& r);

/// Save `record` for the tuner's kernel, size and device into `store`.
void store_tuning(Store& store, const LocalTuner& tuner, const DeviceInfo& device, TuningRecord record);

}  // namespace worksize
