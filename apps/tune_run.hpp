// The parts of `worksize tune` (cmd_tune.cpp): its parsed options, its jobs, the progress plan,
// and TuneRun, the tuning of every (kernel, device) on rank 0 and its output (tune_unit.cpp,
// tune_params.cpp, tune_output.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common.hpp"
#include "job_setup.hpp"
#include "worksize/runtime/autotune.hpp"

namespace worksize::cli {

/// What `worksize tune`'s options give, checked.
struct TuneArgs {
    KernelArgs base;                 ///< --kernel, --iterations, --seed, --param, --db
    DeviceSelection sel;
    std::vector<std::string> sizes;  ///< --size, as given
    bool json = false, report = false;
    std::string search = "guided", heatmap_csv, param_search = "auto";
    std::size_t param_budget = 24;
    double budget = 0.20;
    TuneOptions topts;   ///< the local-size search
    TuneOptions ptopts;  ///< the parameter search
    TuneReportOptions ropts;
    MeasureOptions mo;

    /// Whether the parameter search runs on this device (--param-search).
    bool searches_params(const DeviceInfo& d) const;
};

/// Parse and check `worksize tune`'s options on every rank (InvalidArgument); std::nullopt
/// when --help was shown.
std::optional<TuneArgs> parse_tune_args(mpi::Environment& env, const std::vector<std::string>& args);

/// One job per kernel tuned (--kernel), at its size (--size, else the kernel's tuning size).
/// @throws InvalidArgument for a size of a kernel not tuned, a missing size, or a bad job.
std::vector<KernelArgs> tune_jobs(const TuneArgs& o);

/// The tuners, one per job, and the progress steps planned for each (kernel, device).
struct TunePlan {
    std::vector<std::unique_ptr<LocalTuner>> tuners;
    std::vector<std::vector<std::size_t>> planned;  ///< [job][device]
    std::size_t total = 0;
};

TunePlan plan_tune(Cluster& c, const TuneArgs& o, const std::vector<KernelArgs>& jobs);

/// Where the tuning is, for the line of a lost rank or a kernel timeout.
struct TunePosition {
    std::string tuning;            ///< the (kernel, device) being tuned ("": none)
    std::size_t stored_units = 0;  ///< (kernel, device)s stored so far
};

/// A parameter search's best set against the defaults' choice (tune_params.cpp).
struct ParamComparison {
    double default_s = 0;      ///< the defaults' time (NaN: none); a head-to-head median where one ran
    LocalSize default_local;   ///< the defaults' local size
    double best_s = 0;         ///< the best set's time; a head-to-head median where one ran
    std::size_t h2h_runs = 0;  ///< timings launched in the head-to-head (0: none)
    bool better = false;       ///< the set is stored
};

/// Rank 0's tuning of every (kernel, device), its database writes and its output.
class TuneRun {
public:
    TuneRun(Cluster& c, const TuneArgs& o, const std::vector<KernelArgs>& jobs, Store store, TunePlan plan,
            TunePosition& at);
    TuneRun(const TuneRun&) = delete;
    TuneRun& operator=(const TuneRun&) = delete;

    /// Tune, merge the other ranks' databases, write and print the results: the exit code.
    int run();

private:
    /// One (kernel, device) as it is tuned.
    struct Unit {
        std::size_t ti = 0, d = 0;  ///< the job (and tuner) and the device
        TuneResult chosen;
        bool failed_h2h = false;  ///< the choice failed when timed head to head: not stored
        std::vector<std::string> rep_row;  ///< the report's row, but its last column ("stored")
        bool stored = false;  ///< an entry was stored (the local size's, or a parameter set's)
        BaselineCheck check;  ///< what decided the stored local size
        nlohmann::json params_json = nullptr;  ///< the parameter search (null: none)
        bool params_stored = false;
    };

    // tune_unit.cpp: the local size.
    void tune_unit(std::size_t ti, std::size_t d);
    /// --report: both searches, the paper rule and NULL (tune_report_row), and the report's row.
    void report_row(Unit& u);
    /// The baseline check of the search's choice and its store, or the warning why nothing is stored.
    void store_choice(Unit& u);
    /// The summary's row and, in a report, the report's row and the JSON result.
    void add_rows(Unit& u);
    /// "KERNEL on device D (NAME), size S: ", the start of a line about this (kernel, device).
    std::string prefix(const Unit& u) const;
    // tune_params.cpp: the kernel parameters.
    /// The parameter search, where the kernel has one and --param-search runs it on the device.
    void tune_params(Unit& u);
    /// The defaults' time and the best set's, timed head to head where both ran.
    ParamComparison compare_params(const Unit& u, const ParamSearchResult& ps);
    /// The line printed after the summary.
    std::string param_line(const Unit& u, const std::vector<std::string>& keys, const ParamSearchResult& ps,
                           const ParamComparison& cmp) const;
    /// The tuning entry of the best set.
    TuningRecord params_record(const Unit& u, const ParamSearchResult& ps, const ParamComparison& cmp) const;
    /// Store it under the job's key without the set and under the configuration's own key; save.
    void store_params(const Unit& u, const TuningRecord& rec);
    // tune_output.cpp: the results.
    /// Merge the other ranks' databases into rank 0's (saved when any entry joined): the count.
    std::size_t merge_rank_dbs();
    void write_heatmap_csv() const;
    void print_json(std::size_t merged) const;
    void print_text(std::size_t merged) const;

    Cluster& c_;
    const TuneArgs& o_;
    const std::vector<KernelArgs>& jobs_;
    Store store_;
    TunePlan plan_;
    TunePosition& at_;
    const std::vector<DeviceInfo>& devs_;
    TuneReportOptions ropts_;  ///< o_.ropts, with the progress correction of a head-to-head
    Progress progress_;
    std::size_t unit_plan_ = 0;  ///< the current (kernel, device)'s planned steps
    int code_ = kOk;
    Table summary_, rep_;  ///< the summary and the report's table
    std::vector<TuneReportRow> rows_;
    std::vector<std::string> param_lines_;  ///< one per parameter search
    std::vector<std::string> raised_;  ///< (kernel, device)s timed over more iterations (--min-run-ms)
    nlohmann::json results_ = nlohmann::json::array();
};

/// Rank 0's tuning: check the output files, open the database, plan and run (TuneRun).
int run_tune(Cluster& c, const TuneArgs& o, const std::vector<KernelArgs>& jobs, TunePosition& at);

}  // namespace worksize::cli
