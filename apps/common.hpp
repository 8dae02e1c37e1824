// Shared plumbing of the `worksize` subcommands: option groups, the cluster wrapper that keeps
// every rank in step, tables, and exit codes.
#pragma once

#include <boost/program_options.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "worksize/runtime/cluster.hpp"
#include "worksize/runtime/mpi.hpp"

namespace worksize::cli {

namespace po = boost::program_options;

/// Exit codes: 0 success, 1 failure (device, MPI, I/O), 2 bad usage, 3 verification failed.
enum Exit { kOk = 0, kFailure = 1, kUsage = 2, kWrong = 3 };

/// Parse `args` against `desc`; with `kernel_positional` a bare first argument is --kernel.
/// Unknown options are errors. Throws InvalidArgument with a one-line message.
po::variables_map parse(const std::vector<std::string>& args, const po::options_description& desc,
                        bool kernel_positional = false);

/// When `help` was asked for, print `desc` on rank 0 and return true.
bool show_help(const mpi::Environment& env, const po::options_description& desc, bool help);

/// Options selecting devices (--select, --filter, --master-works).
po::options_description selection_options(DeviceSelection& sel, const char* default_select = "auto");

/// Build the cluster (collective); rank 0 runs `master` and then ends every rank with its exit
/// code; other ranks serve rank 0 and return the code it sent.
int with_cluster(mpi::Environment& env, const DeviceSelection& sel, const std::function<int(Cluster&)>& master);

/// A plain text table with aligned columns.
class Table {
public:
    explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    std::string str() const;

private:
    std::vector<std::vector<std::string>> rows_;
};

std::string fmt(double v, int precision = 3);
/// A number for a CSV cell: 9 significant digits.
std::string num(double v);
std::string fmt_ms(double seconds);
std::string fmt_bytes(std::uint64_t b);

/// Progress bar on stderr ("label [=====>    ] 12/40"), only when stderr is a terminal or
/// WORKSIZE_PROGRESS=1; otherwise one line per step.
class Progress {
public:
    Progress(std::string label, std::size_t total);
    void step(const std::string& what = "");
    void done();
    std::size_t count() const { return n_; }
    std::size_t total() const { return total_; }
    /// Replace the total, e.g. when a planned upper bound turned out to be more than was run.
    void set_total(std::size_t total) { total_ = total; }

private:
    void draw(const std::string& what);
    std::string label_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    std::size_t total_, n_ = 0, shown_total_ = 0;
    bool tty_;
};

int cmd_devices(mpi::Environment& env, const std::vector<std::string>& args);
int cmd_plan(mpi::Environment& env, const std::vector<std::string>& args);
int cmd_run(mpi::Environment& env, const std::vector<std::string>& args);
int cmd_calibrate(mpi::Environment& env, const std::vector<std::string>& args);
int cmd_bench(mpi::Environment& env, const std::vector<std::string>& args);
int cmd_tune(mpi::Environment& env, const std::vector<std::string>& args);

}  // namespace worksize::cli
