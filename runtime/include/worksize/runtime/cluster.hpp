// The MPI job seen from worksize: every rank discovers its OpenCL devices and picks the ones it
// drives (device_selection.hpp), rank 0 gathers them (a versioned message per rank, wire.hpp)
// and, for each job, sends every device its slice, runs its own devices' slices, collects the
// results and verifies them (master.cpp). The other ranks serve rank 0 until it says exit
// (worker.cpp). Errors on any rank reach rank 0, with their reason, which ends every rank. The
// ranks talk through a Comm (comm.hpp): MPI in a job, threads of one process in the tests.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "worksize/runtime/bytes.hpp"
#include "worksize/runtime/comm.hpp"
#include "worksize/runtime/device_selection.hpp"
#include "worksize/runtime/kernel_job.hpp"
#include "worksize/runtime/mpi.hpp"
#include "worksize/runtime/wire.hpp"
#include "worksize/scheduler/profile.hpp"

namespace worksize {

class DataJob;
struct DataRunOptions;
struct DataRunResult;
struct LinkOptions;
struct LinkCalibration;

/// A rank's failure reached rank 0 and ended the job; other ranks see only this.
class JobAborted : public Error {
public:
    using Error::Error;
};

/// One device's part of a finished job.
struct DeviceRun {
    Assignment assignment;
    SliceTimes times;
    double send_s = 0.0;   ///< rank 0's MPI send of the slice's input (0 for rank 0's devices)
    double recv_s = 0.0;   ///< rank 0's MPI receive of the slice's output
    /// From the job's start until its output was taken (rank-local inputs: until its verdict
    /// came, less gen_s and check_s).
    double done_s = 0.0;
    double pack_s = 0.0;   ///< rank 0's packing of the slice's input (slice_input)
    double exec_s = 0.0;   ///< the executing rank's wall time for the slice (buffers, copies, kernel)
    /// Rank-local inputs (run's `local_inputs`): the executing rank's time to make the slice's
    /// input, before its execution; the makespan does not count it (JobResult::makespan_s).
    double gen_s = 0.0;
    double check_s = 0.0;  ///< rank-local inputs: its rank's check of the output, after it (not in the makespan)
    Verdict verdict;       ///< rank-local inputs: the slice checked on its rank (verify_slice)
    /// From the job's start (after partition()): when rank 0 posted the slice's input to its
    /// worker and when that send was done, and when it began and ended receiving the output
    /// (all 0 for rank 0's own devices and devices without work). The sends to all workers are
    /// posted at once, so their intervals overlap.
    double send_start_s = 0.0, send_end_s = 0.0, recv_start_s = 0.0, recv_end_s = 0.0;
};

struct JobResult {
    std::vector<DeviceRun> devices;
    /// From the first send to the combined result (finish() included). With rank-local inputs:
    /// the latest slice's answer, less the time its rank took to make its input and to check its
    /// output (the inputs exist before the timed part and the check comes after it, as in a
    /// rank-0 run).
    double makespan_s = 0.0;
    double prepare_s = 0.0;   ///< rank 0's partition() before any slice is packed
    double combine_s = 0.0;   ///< rank 0's accept_output() of every slice and finish(), after the last one
    Verdict verdict;
    std::string summary;
};

class Cluster {
public:
    /// Collective: every rank discovers and selects its devices; rank 0 gathers them.
    /// @throws Error (rank 0: naming the failing rank) or JobAborted (other ranks).
    /// Over the job's world communicator.
    Cluster(mpi::Environment& env, const DeviceSelection& selection);
    /// Over any communicator (e.g. local_comms() in tests); `comm` must outlive the cluster.
    Cluster(Comm& comm, const DeviceSelection& selection);
    ~Cluster();
    Cluster(const Cluster&) = delete;
    Cluster& operator=(const Cluster&) = delete;

    bool is_master() const;
    int ranks() const;
    /// Rank 0: the devices of every rank, in (rank, index) order; other ranks: their own.
    const std::vector<DeviceInfo>& devices() const;
    /// Rank 0: hosts by rank (for ranks that drive no device too).
    const std::vector<std::string>& hosts() const;
    /// Page-locked host memory of this rank's first device (null without a device).
    std::shared_ptr<HostMemoryResource> host_memory() const;
    /// `n` uninitialised elements in host_memory(): a data job's input held here goes onto the
    /// devices without a copy, at the link's full rate (a pageable one is copied through pinned
    /// halves first, docs/porting.md). Pinning costs time once, when it is made.
    template <class T>
    HostVector<T> host_vector(std::size_t n) const {
        HostVector<T> v{DefaultInitAllocator<T>(host_memory())};
        v.resize(n);
        return v;
    }

    /// Rank 0: `job`'s inputs made (KernelJob::generate) in host_memory(), pinned, where the
    /// job can (the sample kernels), so that rank 0's own slices copy them without staging.
    void generate(KernelJob& job) const;

    /// Rank 0: run `job` as planned (assignment.device indexes devices()).
    /// @throws Error naming the rank and device that failed, with the failure's reason (e.g.
    /// device_limit from a worker's CL_INVALID_WORK_GROUP_SIZE); every worker has answered.
    /// `local_inputs` (`run --inputs local`): every slice's input is made on the rank that runs
    /// it, from these options (KernelJob::make_slice_input), and checked there
    /// (verify_slice): rank 0 sends no input and receives no output, and the verdict combines
    /// the slices'. @throws InvalidArgument for a job that cannot (makes_slice_inputs()).
    JobResult run(KernelJob& job, std::vector<Assignment> assignments, const std::string& job_name,
                  const JobOptions* local_inputs = nullptr);
    /// Rank 0: run a declarative data job (data_job.hpp; the free run() calls it).
    DataRunResult run(DataJob& job, const DataRunOptions& options);

    /// Collective, before serve(): rank 0 runs `check` (e.g. that the database is writable;
    /// its exception is rethrown there and the workers return at once), then every rank times
    /// its devices' host↔device copies and its MPI links (links.hpp); rank 0 gets every rank's,
    /// the others an empty result. A worker's failure reaches rank 0 with its reason; a rank
    /// silent past --rank-timeout is lost (rank 0 throws Error lost_rank naming it).
    LinkCalibration calibrate_links(const LinkOptions& options, const std::function<void()>& check = {});
    /// Rank 0: ask every other rank for a string (e.g. its local tuning database); each rank
    /// answers with its handler's result (set_collect_handler) or "" without one. Rank 0's own
    /// answer is first. @throws Error naming a rank whose handler failed.
    std::vector<std::string> collect(const std::string& what);
    /// Every rank: how this rank answers collect(what). Rank 0 uses it for its own answer.
    void set_collect_handler(std::function<std::string(const std::string&)> handler);

    /// Other ranks: execute rank 0's jobs until it says exit; returns the exit code it sent. A
    /// job that failed on any rank (rank 0's packing included) is answered and forgotten: the
    /// worker goes on serving until the exit.
    int serve();
    /// Rank 0: the ranks found lost (docs/cluster.md, "The fault model"); they are never
    /// talked to again.
    const std::vector<int>& lost_ranks() const;
    /// Rank 0: remove the lost ranks' devices from devices() (before planning again on the
    /// devices left); returns how many were removed.
    std::size_t drop_lost_devices();
    /// Rank 0: "rank R on host H (devices 'A', 'B')" for messages.
    std::string describe_rank(int rank) const;
    /// Rank 0: end the job on every rank with this exit code (idempotent).
    void finish(int exit_code);

private:
    /// The collective start: discovery, selection, inventory.
    void start(const DeviceSelection& selection);
    /// Rank 0: receive and drop the answers that living workers still owe for a job that
    /// failed on a lost rank (rank 0 stopped waiting for them), so that the next command starts
    /// in step.
    void drain_owed();
    /// Other ranks: take part in the data job rank 0's command describes (data_job.cpp).
    void serve_data(const nlohmann::json& cmd);

    struct Impl;
    class KernelRun;  ///< one run(KernelJob&) in phases (runtime/src/cluster/kernel_run.*)
    class WorkerRun;  ///< a worker's part of one run command in phases (runtime/src/cluster/worker.cpp)
    std::unique_ptr<Impl> impl_;
};

}  // namespace worksize
