// The main() of an application on worksize, so that an example or a user's program holds only
// its own work: MPI starts, every rank finds its devices, rank 0 runs `body` while the others
// serve it, and any failure becomes one line "<name>: error: ..." with exit code 2 for a bad
// input, 1 otherwise; no rank is left waiting.
//
// The command line: the application's positional arguments (App::args, App::count), its own
// options (AppSpec), and the runtime's, which the `worksize` CLI takes too (options.hpp):
//   --select SPEC, --filter WORD, --master-works, --devices-per-rank N, --allow-shared-device,
//   --rank-timeout S      which devices each rank drives, and when rank 0 counts a worker lost
//   --kernel-timeout S    (kernel jobs and job files; a data job's kernels are not timed yet: a warning)
//   --strategy NAME       the split strategy: paper (default), even, pe-ratio or model
//   --local null|paper|tuned  the local-size policy (tuned: the paper rule where the database has
//                         no entry; data jobs are not tuned yet)
//   --overlap on|off      halo exchanges beside the interior launches (default on)
//   --instructions [text|json]  print each rank's instruction lists and stop
//   --check-bounds        guard zones around device buffers, checked after each launch
//   --help                all of these, and the application's own, then exit 0
// The log's level (worksize/scheduler/log.hpp) comes from WORKSIZE_LOG_LEVEL; a bad value is a
// bad input.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "worksize/runtime/cluster.hpp"
#include "worksize/runtime/data_job.hpp"

namespace worksize {

/// An option of the application's own: `--name VALUE`, or a switch `--name`.
struct AppOption {
    std::string name;      ///< without the dashes
    std::string help;
    std::string fallback;  ///< the value when it is not given (a switch: unused, off)
    bool is_switch = false;
};

/// What an application takes besides the runtime's options (for --help and the parse).
struct AppSpec {
    std::string usage;                ///< its positional arguments, e.g. "[cols] [rows] [height]"
    std::vector<AppOption> options;   ///< its own options
};

struct App {
    Cluster& cluster;
    std::vector<std::string> args;  ///< the positional arguments, in order
    DataRunOptions options;
    std::map<std::string, std::string> values;  ///< the application's own options (AppSpec), given or fallback
    std::map<std::string, bool> switches;        ///< its switches

    /// Positional argument `i` as a count >= `min`, or `fallback` when absent.
    /// @throws InvalidArgument naming the argument for anything else.
    std::uint64_t count(std::size_t i, std::uint64_t fallback, std::uint64_t min = 1) const;
    /// The application's option `name` as text. @throws InvalidArgument if it declared none so.
    const std::string& option(const std::string& name) const;
    /// The application's option `name` as a count in [min, max]. @throws InvalidArgument naming
    /// the option and the range.
    std::uint64_t count_option(const std::string& name, std::uint64_t min = 1, std::uint64_t max = UINT64_MAX) const;
    /// Whether the application's switch `name` was given.
    bool flag(const std::string& name) const;
};

int cluster_main(int argc, char** argv, const std::string& name, const AppSpec& spec,
                 const std::function<int(App&)>& body);
/// cluster_main() of an application with positional arguments only.
int cluster_main(int argc, char** argv, const std::string& name, const std::function<int(App&)>& body);

}  // namespace worksize
