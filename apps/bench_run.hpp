// The parts of `worksize bench` (cmd_bench.cpp): its parsed options, a strategy's row of results,
// and BenchRun, the benchmark on rank 0 with its printed results and its CSVs (bench_csv.cpp).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "job_setup.hpp"

namespace worksize::cli {

/// What `worksize bench`'s options give, checked.
struct BenchArgs {
    KernelArgs k;  ///< --kernel and kernel_options()
    DeviceSelection sel;
    bool sweep = false, append = false, no_calibrate = false;
    std::string csv, phases_csv;
    int repeats = 5;
    std::vector<std::string> strategies;  ///< --strategies, split
    std::vector<std::string> calib;       ///< --calibration-sizes, split ({}: the adaptive ladder)
    bool has_model = false;               ///< a strategy needs models (model)
};

/// Parse and check `worksize bench`'s options, and make its jobs once (InvalidArgument for a bad
/// size or parameter), on every rank; std::nullopt when --help was shown.
std::optional<BenchArgs> parse_bench_args(mpi::Environment& env, const std::vector<std::string>& args);

/// The output files (rank 0 writes them), checked before the work: the CSVs, and the database
/// where the model strategy may calibrate into it.
void check_bench_outputs(const BenchArgs& o, const std::string& db_path);

/// One strategy's results.
struct BenchRow {
    std::string strategy;
    Plan plan;
    double makespan_s = 0;       ///< median of the repeats
    double predicted_s = -1;     ///< model's prediction of this split (<0: no models)
    double efficiency = 0;       ///< mean busy (done_s) over working devices / max
    double small_share = 0;
    bool verified = true;
    double ratio = -1;
    int same_as = -1;            ///< index of the first row with an identical plan (samples pooled), -1: none
    int samples = 0;             ///< timed runs behind the median (pooled over identical plans)
    double q1_s = 0, q3_s = 0;   ///< quartiles of those runs (the spread behind the median)
    std::vector<double> rounds;  ///< this strategy's own makespan in each interleaved repeat
    JobResult median_run;        ///< the run whose makespan is the median (the upper one of two)
    SplitResult prediction;      ///< the model's timeline of this split (when models_ok)
};

/// Two plans are the same experiment when every device gets the same slice and the same local size.
bool same_plan(const Plan& a, const Plan& b);

/// The oracle's scan's CSV beside --csv: its name with -sweep before the extension.
std::string sweep_path(const std::string& csv);

/// Rank 0's benchmark of the strategies: the calibration where the models are missing, each
/// strategy's plan and warm-up, the interleaved timed runs, and the results.
class BenchRun {
public:
    /// `db_path`: the database's path (db_path() of the options' kernel).
    BenchRun(Cluster& c, const BenchArgs& o, const std::string& db_path);
    BenchRun(const BenchRun&) = delete;
    BenchRun& operator=(const BenchRun&) = delete;

    /// Run the benchmark and write its results: the exit code (kWrong where a run was not verified).
    int run();

private:
    // cmd_bench.cpp: the runs and the printed results.
    /// The models from the database, else calibrated now (unless --no-calibrate).
    void get_models();
    /// Every strategy's plan (the oracle's search runs here) and one warm-up at iterations 1.
    void plan_strategies(Progress& progress);
    /// Interleaved repeats: repeat r runs every strategy once, starting at strategy r (rotated).
    void run_repeats(Progress& progress);
    /// Row i's quartiles, median run, balance, prediction and share of the small device.
    void summarise(std::size_t i);
    /// A pooled group is verified only if all its runs were: whether every row is.
    bool pool_verdicts();
    void print_table() const;
    /// The paired comparison of model with each baseline, and the calibration's cost.
    void print_comparisons() const;
    // bench_csv.cpp: the CSVs.
    void write_csv() const;
    void write_sweep_csv() const;
    void write_phases_csv() const;

    Cluster& c_;
    const BenchArgs& o_;
    const std::string& path_;
    const std::vector<DeviceInfo>& devs_;
    Database db_;  ///< opened once for the command: models, calibration, tuned local sizes
    KernelArgs k_;  ///< o_.k with the tuned kernel parameters (--local tuned)
    std::vector<CostModel> models_;
    bool models_ok_ = false;
    double calib_s_ = 0;
    std::string calib_source_ = "none";
    int small_ = 0;  ///< the device with the fewest PEs
    std::vector<BenchRow> rows_;
    std::optional<OracleResult> oracle_;
    /// The timed runs (makespan and result) of each experiment, at its first row's index.
    std::vector<std::vector<std::pair<double, JobResult>>> samples_;
};

}  // namespace worksize::cli
