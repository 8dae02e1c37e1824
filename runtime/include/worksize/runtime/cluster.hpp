// The MPI job seen from worksize: every rank discovers its OpenCL devices and picks the ones it
// drives, rank 0 gathers them (a versioned message per rank) and, for each job, sends every device
// its slice, runs its own devices' slices, collects the results and verifies them. The other ranks
// serve rank 0 until it says exit. Errors on any rank reach rank 0, which ends every rank.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "worksize/runtime/kernel_job.hpp"
#include "worksize/runtime/mpi.hpp"

namespace worksize {

/// Which devices each rank drives.
struct DeviceSelection {
    /// "auto": one process drives all its devices; in a job of several ranks rank 0 is the
    ///   master only and the other ranks of a node take the node's devices round-robin by
    ///   node-local rank. "all": every rank drives all its devices. "R=I[+I..],R=...": rank R
    ///   drives device indices I (as `worksize devices --all` numbers them).
    std::string spec = "auto";
    /// Only devices whose platform, name or vendor contains this (case-insensitive).
    std::string filter;
    /// Rank 0 also drives devices in a job of several ranks (auto mode).
    bool master_works = false;
    /// auto mode: devices per worker rank (taken round-robin from the node's devices).
    int per_rank = 1;
};

/// A rank's failure reached rank 0 and ended the job; other ranks see only this.
class JobAborted : public Error {
public:
    using Error::Error;
};

nlohmann::json to_json(const DeviceInfo& d);
DeviceInfo device_info_from_json(const nlohmann::json& j);

/// Inventory message version: rank 0 refuses a message of another version.
inline constexpr int kInventoryVersion = 1;

/// One device's part of a finished job.
struct DeviceRun {
    Assignment assignment;
    SliceTimes times;
    double send_s = 0.0;   ///< rank 0's MPI send of the slice's input (0 for rank 0's devices)
    double recv_s = 0.0;   ///< rank 0's MPI receive of the slice's output
    double done_s = 0.0;   ///< from the job's start until its output was taken
    double pack_s = 0.0;   ///< rank 0's packing of the slice's input (slice_input)
    double exec_s = 0.0;   ///< the executing rank's wall time for the slice (buffers, copies, kernel)
};

struct JobResult {
    std::vector<DeviceRun> devices;
    double makespan_s = 0.0;  ///< from the first send to the combined result (finish() included)
    double prepare_s = 0.0;   ///< rank 0's partition() before any slice is packed
    double combine_s = 0.0;   ///< rank 0's accept_output() of every slice and finish(), after the last one
    Verdict verdict;
    std::string summary;
};

class Cluster {
public:
    /// Collective: every rank discovers and selects its devices; rank 0 gathers them.
    /// @throws Error (rank 0: naming the failing rank) or JobAborted (other ranks).
    Cluster(mpi::Environment& env, const DeviceSelection& selection);
    ~Cluster();
    Cluster(const Cluster&) = delete;
    Cluster& operator=(const Cluster&) = delete;

    bool is_master() const;
    int ranks() const;
    /// Rank 0: the devices of every rank, in (rank, index) order; other ranks: their own.
    const std::vector<DeviceInfo>& devices() const;
    /// Rank 0: hosts by rank (for ranks that drive no device too).
    const std::vector<std::string>& hosts() const;

    /// Rank 0: run `job` as planned (assignment.device indexes devices()).
    /// @throws Error naming the rank and device that failed.
    JobResult run(KernelJob& job, std::vector<Assignment> assignments, const std::string& job_name);

    /// Rank 0: ask every other rank for a string (e.g. its local tuning database); each rank
    /// answers with its handler's result (set_collect_handler) or "" without one. Rank 0's own
    /// answer is first. @throws Error naming a rank whose handler failed.
    std::vector<std::string> collect(const std::string& what);
    /// Every rank: how this rank answers collect(what). Rank 0 uses it for its own answer.
    void set_collect_handler(std::function<std::string(const std::string&)> handler);

    /// Other ranks: execute rank 0's jobs until it says exit; returns the exit code it sent.
    int serve();
    /// Rank 0: end the job on every rank with this exit code (idempotent).
    void finish(int exit_code);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace worksize
