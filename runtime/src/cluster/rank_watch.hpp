// Rank 0's one rule for a lost worker, under every job: the kernel jobs' task protocol
// (cluster/kernel_run.cpp, Cluster::drain_owed) and the data jobs (jobs/data_watch.hpp). A
// worker is lost when rank 0 has heard nothing from it (a heartbeat, a message, a send taken)
// for --rank-timeout while it listened; time rank 0 spent away from MPI (its own work, a long
// host step) does not count against the workers.
#pragma once

#include <map>
#include <string>

#include "cluster/cluster_impl.hpp"
#include "worksize/scheduler/format.hpp"

namespace worksize {

class RankWatch {
public:
    RankWatch(Comm& comm, double timeout_s) : comm_(comm), timeout_s_(timeout_s) {}

    /// Takes the heartbeats that came (wire::kHeartbeat, from any worker), and moves every
    /// deadline on by the time rank 0 was away (more than 10 ms since it last listened).
    void listen() {
        const double now = now_s();
        if (const double away = now - listened_; listened_ > 0 && away > 0.01)
            for (auto& [r, t] : heard_) t += away;
        listened_ = now;
        int from = 0;
        while (comm_.iprobe(Comm::any_source, wire::kHeartbeat, &from)) {
            (void)comm_.recv_bytes(from, wire::kHeartbeat);
            heard_[from] = now_s();
        }
    }
    /// Seconds since rank 0 last listened.
    double since_listened() const { return now_s() - listened_; }
    /// Rank 0 heard from worker `r` now.
    void heard(int r) { heard_[r] = now_s(); }
    /// Starts the clock of worker `r` unless it runs already.
    void watch(int r) {
        if (!heard_.count(r)) heard(r);
    }
    bool silent(int r) const {
        const auto it = heard_.find(r);
        return it != heard_.end() && now_s() - it->second > timeout_s_;
    }
    /// Why a silent worker is lost: "nothing heard from it for 3.2 s (--rank-timeout 3 s)".
    std::string silence(int r) const {
        const auto it = heard_.find(r);
        const double quiet = it == heard_.end() ? 0.0 : now_s() - it->second;
        return "nothing heard from it for " + format_seconds(quiet, 3) + " (--rank-timeout " +
               format_seconds(timeout_s_, 3) + ")";
    }
    double timeout_s() const { return timeout_s_; }

private:
    Comm& comm_;
    double timeout_s_;
    std::map<int, double> heard_;  ///< per worker: when rank 0 last heard from it (moved on by its absences)
    double listened_ = 0;
};

}  // namespace worksize
