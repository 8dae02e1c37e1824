// The main() of an application on worksize, so that an example or a user's program holds only
// its own work: MPI starts, every rank finds its devices, rank 0 runs `body` while the others
// serve it, and any failure becomes one line "<name>: error: ..." with exit code 2 for a bad
// input, 1 otherwise; no rank is left waiting.
//
// Options it takes out of the command line before `body` sees the rest:
//   --select SPEC      which devices each rank drives (DeviceSelection::spec; default auto)
//   --allow-shared-device  ranks of one host may drive one GPU (DeviceSelection::Shared::count_once)
//   --strategy NAME    the split strategy (default paper)
//   --local null|paper the local-size policy (default paper)
//   --rank-timeout S   seconds of silence after which rank 0 counts a worker lost (default 5)
// The log's level (worksize/scheduler/log.hpp) comes from WORKSIZE_LOG_LEVEL; a bad value is a
// bad input.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "worksize/runtime/cluster.hpp"
#include "worksize/runtime/data_job.hpp"

namespace worksize {

struct App {
    Cluster& cluster;
    std::vector<std::string> args;  ///< the positional arguments, in order
    DataRunOptions options;

    /// Positional argument `i` as a count >= `min`, or `fallback` when absent.
    /// @throws InvalidArgument naming the argument for anything else.
    std::uint64_t count(std::size_t i, std::uint64_t fallback, std::uint64_t min = 1) const;
};

int cluster_main(int argc, char** argv, const std::string& name, const std::function<int(App&)>& body);

}  // namespace worksize
