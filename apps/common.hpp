// Shared plumbing of the `worksize` subcommands: option groups, the cluster wrapper that keeps
// every rank in step, tables, and exit codes.
#pragma once

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "worksize/runtime/cluster.hpp"
#include "worksize/runtime/links.hpp"
#include "worksize/runtime/mpi.hpp"
#include "worksize/runtime/options.hpp"

namespace worksize::cli {

namespace po = boost::program_options;

/// Exit codes: 0 success, 1 failure (device, MPI, I/O), 2 bad usage, 3 verification failed.
enum Exit { kOk = 0, kFailure = 1, kUsage = 2, kWrong = 3 };

/// The most --iterations a command takes: a launch costs at least microseconds, so 10^9 of them
/// run for hours on every device; more is a mistake (2^64 - 1 was accepted and never ended).
inline constexpr std::uint64_t kMaxIterations = 1'000'000'000;

/// Parse `args` against `desc`; with `kernel_positional` a bare first argument is --kernel.
/// Unknown options are errors. Adds logging_options() and sets the log level from them.
/// Throws InvalidArgument with a one-line message.
po::variables_map parse(const std::vector<std::string>& args, const po::options_description& desc,
                        bool kernel_positional = false);

// Checked numeric options and the device selection: worksize/runtime/options.hpp (shared with
// cluster_main()).
using options::count_value;
using options::default_text;
using options::Open;
using options::real_value;
using options::selection_options;
/// --param KEY=VALUE, repeatable: a KEY given twice is refused in po::notify (InvalidArgument
/// naming both), not left to the last one.
po::typed_value<std::vector<std::string>>* param_value(std::vector<std::string>* target);
/// --priority: x or y, checked in po::notify (an empty text is refused, not the kernel's default).
po::typed_value<std::string>* priority_value(std::string* target);
/// --pad: on or off (default on), checked in po::notify.
po::typed_value<std::string>* pad_value(bool* target);

/// Output files: refuse an output path before any work starts (InvalidArgument naming the option):
/// its directory must exist and take a new file, and an existing file must open for writing (it
/// is opened for append, so nothing in it is lost). Empty `path`: nothing to check. With
/// `make_dirs` (the database: Store::save makes its directories) the nearest existing ancestor
/// directory must take new entries instead.
void check_writable(const std::string& path, const std::string& option, bool make_dirs = false);
/// The database a command will save to (--db or the default): check_writable with `make_dirs`,
/// and what its save would refuse (check_database_path: a path that is not UTF-8, a bad
/// WORKSIZE_DB_LOCK_TIMEOUT, a directory at `<db>.lock`, a file that is not a worksize database).
void check_db_writable(const std::string& path);
/// Write `text` to `path` (truncating, or appending with `append`) and check that every byte
/// reached the file (the stream's state after close): throws Error naming the option otherwise.
void write_file_checked(const std::string& path, const std::string& option, const std::string& text,
                        bool append = false);

/// When `help` was asked for, print `desc` on rank 0 and return true.
bool show_help(const mpi::Environment& env, const po::options_description& desc, bool help);

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

/// Progress on stderr at log level info (not with --quiet): on a terminal (or with
/// WORKSIZE_PROGRESS=1) a bar redrawn in place ("label [=====>    ] 12/40"), otherwise one line
/// per step ("label: 12/40 what [time]"). done() ends it at the count reached (n/n): the bar full
/// and with its newline.
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
    void draw(const std::string& what, bool last = false);
    std::string label_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    std::size_t total_, n_ = 0, shown_total_ = 0, shown_n_ = 0;
    bool on_, tty_;
};

/// --quiet and --log-level, which parse() adds to every command's options and applies
/// (log::set_level), and show_help() shows.
po::options_description logging_options(bool* quiet, std::string* level);

int cmd_devices(mpi::Environment& env, const std::vector<std::string>& args);
int cmd_plan(mpi::Environment& env, const std::vector<std::string>& args);
int cmd_run(mpi::Environment& env, const std::vector<std::string>& args);
int cmd_calibrate(mpi::Environment& env, const std::vector<std::string>& args);
/// `calibrate --links` (cmd_calibrate_links.cpp).
int calibrate_links(mpi::Environment& env, const DeviceSelection& sel, const std::string& db,
                    const LinkOptions& options, bool json);
int cmd_bench(mpi::Environment& env, const std::vector<std::string>& args);
int cmd_tune(mpi::Environment& env, const std::vector<std::string>& args);
int cmd_db(mpi::Environment& env, const std::vector<std::string>& args);

}  // namespace worksize::cli
