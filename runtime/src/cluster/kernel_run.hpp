// One run of a KernelJob on rank 0, in phases (kernel_run.cpp; Cluster::run calls them in order).
#pragma once

#include <deque>
#include <future>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cluster/cluster_impl.hpp"
#include "cluster/rank_watch.hpp"
#include "transport/pieces.hpp"

namespace worksize {

class Cluster::KernelRun {
public:
    KernelRun(Cluster& cluster, KernelJob& job, const std::string& name, const JobOptions* local_inputs);
    ~KernelRun();
    KernelRun(const KernelRun&) = delete;
    KernelRun& operator=(const KernelRun&) = delete;

    /// partition() and one task per assignment with work. @throws for a bad plan or a lost rank.
    void make_tasks(std::vector<Assignment> assignments);
    /// Rank 0's own slices, each in a thread.
    void start_own_slices();
    /// Every worker's command, then each task's header and payload, posted at once.
    void post_to_workers();
    /// Until every worker has answered (and its output arrived) or one is lost.
    void wait_for_workers();
    /// Rank 0's own slices, within --kernel-timeout.
    void wait_own_slices();
    /// A lost rank, a held device, a failed packing or a failed slice, as one Error.
    void raise_failures() const;
    /// The outputs placed and combined, the verdict and the result.
    JobResult combine();

private:
    struct Task {
        Assignment a;
        SliceSpec spec;
        int rank = 0;
        int local_index = 0;
        DeviceRun run;
        Bytes out;
        Bytes packed;                  ///< rank 0's own devices: the slice input when it must be packed
        std::size_t slot = 0;          ///< rank 0's own devices: the task's buffers in the pools
        std::span<std::byte> target;   ///< the job's own output rows (received in place), or empty
        std::uint64_t host_bytes = 0;  ///< what it allocates on its rank beside its input (host_memory.hpp)
        wire::Failure error;
    };
    static constexpr std::size_t npos = std::size_t(-1);
    /// How long rank 0 waits past --kernel-timeout for a copy of the job's memory to end.
    static constexpr double kCopyGrace_s = 10.0;
    struct Pending {
        int rank;
        std::size_t task;  ///< the payload of this task, or npos for a command or header
        std::size_t id;
    };
    struct Receiving {
        std::size_t task;
        std::unique_ptr<pieces::Inbound> in;  ///< its output's pieces
    };

    static void run_own_slice(Impl& impl, KernelJob& job, Task& t, UserMemoryGuard* guard);
    void post_json(const nlohmann::json& j, int r, int tag);
    void post_payload(int r, std::size_t task);
    void lose(int r, const std::string& why);
    bool waiting() const;
    bool poll_sends();
    bool poll_outputs();
    bool poll_answers();
    void check_silence();
    bool receive_header(int from);

    Cluster& cluster_;
    Impl& impl_;
    Comm& comm_;
    KernelJob& job_;
    std::string name_;
    const JobOptions* local_inputs_;
    JobResult result_;
    double t0_ = 0;
    std::vector<Assignment> assignments_;
    std::vector<Task> tasks_;
    std::unique_ptr<SliceDeadline[]> deadlines_;  ///< --kernel-timeout, per task
    std::vector<std::future<void>> own_;          ///< rank 0's own slices
    std::vector<std::size_t> own_task_;           ///< the task of each of them
    std::vector<Pending> pending_;
    std::deque<std::string> texts_;  ///< the JSON of posted messages, alive until sent
    std::deque<Bytes> packs_;        ///< packed inputs, alive until sent
    std::map<int, std::size_t> outstanding_;  ///< results still expected, by rank
    std::map<int, Receiving> receiving_;      ///< by rank: the output being received
    RankWatch watch_;  ///< --rank-timeout over the workers
    std::map<int, std::string> lost_why_;
    wire::Failure pack_failure_, held_failure_;
};

}  // namespace worksize
