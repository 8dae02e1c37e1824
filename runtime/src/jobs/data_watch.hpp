// Rank 0's watch over the workers of a data job (jobs/data_job.cpp): heartbeats, deadlines,
// lost workers.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/cluster_impl.hpp"
#include "cluster/rank_watch.hpp"
#include "jobs/data_execution.hpp"
#include "worksize/scheduler/format.hpp"

namespace worksize::data_exec {

/// Rank 0's deadlines on the workers of a data job: the rule of every job (RankWatch), with the
/// data jobs' waits on it and a worker's report of a lost neighbour.
class Watch {
public:
    Watch(Comm& comm, double timeout_s, std::function<std::string(int)> describe, std::function<void(int)> on_lost)
        : comm_(comm), ranks_(comm, timeout_s), describe_(std::move(describe)), on_lost_(std::move(on_lost)) {}

    /// Takes the heartbeats that came (RankWatch::listen); raises the loss a worker reported of
    /// its neighbour (wire::kLost).
    void poll() {
        ranks_.listen();
        int from = 0;
        if (comm_.iprobe(Comm::any_source, wire::kLost, &from)) {
            const auto j = comm_.recv_json(from, wire::kLost);
            const int lost = j.at("lost").get<int>();
            const std::string why = "rank " + std::to_string(from) + ": " + j.value("error", std::string());
            if (lost <= 0) throw Error(ErrorReason::lost_rank, why);  // rank 0 itself was too slow for it
            lose(lost, why);
        }
    }
    /// poll() at most every 10 ms: rank 0's pulse while it steps with its own slices.
    void pulse() {
        if (ranks_.since_listened() >= 0.01) poll();
    }
    void heard(int r) { ranks_.heard(r); }
    /// Rank 0's own wait on neighbour `r` ran out (`why`): `r` is lost, unless it is alive
    /// (its heartbeats come) and waiting itself on a lost rank, which it then names (kLost).
    [[noreturn]] void settle(int r, const std::string& why) {
        ranks_.watch(r);
        for (;;) {
            poll();
            if (ranks_.silent(r)) lose(r, why);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    /// Waits until a message with `tag` from worker `r` has come (it is then received with
    /// --rank-timeout as the patience between its pieces).
    void await(int r, int tag) {
        ranks_.watch(r);
        const double start = now_s();
        for (;;) {
            poll();
            if (comm_.iprobe(r, tag)) {
                heard(r);
                return;
            }
            check(r);
            // The first 2 ms without sleeping: a gather's next piece is usually on its way.
            if (now_s() - start < 0.002)
                std::this_thread::yield();
            else
                std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    }
    /// Rank 0 waits on worker `r` (a message in flight): the heartbeats taken at most every
    /// millisecond, `r` lost once silent for --rank-timeout.
    void listen(int r) {
        ranks_.watch(r);
        if (ranks_.since_listened() >= 0.001) poll();
        check(r);
    }
    /// Waits until the sends in `sends` (rank, handle) are done.
    void await_sends(std::vector<std::pair<int, std::size_t>>& sends) {
        while (!sends.empty()) {
            if (test_sends(sends)) continue;
            std::this_thread::yield();  // MPI moves a message only inside MPI calls
        }
    }
    /// One look at the sends in `sends`: the done ones are taken out (their ranks heard);
    /// whether any was. A send that failed, or whose rank was silent too long, loses its rank.
    bool test_sends(std::vector<std::pair<int, std::size_t>>& sends) {
        for (const auto& [r, id] : sends) ranks_.watch(r);
        poll();
        bool progress = false;
        for (auto it = sends.begin(); it != sends.end();) {
            bool done = false;
            try {
                done = comm_.test_send(it->second);
            } catch (const Error& e) {
                if (e.reason() != ErrorReason::lost_rank) throw;
                const int r = it->first;
                abandon(sends);
                lose(r, e.what());
            }
            if (!done) {
                ++it;
                continue;
            }
            heard(it->first);
            it = sends.erase(it);
            progress = true;
        }
        if (progress) return true;
        for (const auto& [r, id] : sends)
            if (ranks_.silent(r)) {
                const int lost = r;
                const std::string why = ranks_.silence(lost);
                abandon(sends);
                lose(lost, why);
            }
        return false;
    }
    /// Raises the loss of rank `r` (Error lost_rank), naming its host and devices.
    [[noreturn]] void lose(int r, const std::string& why) {
        on_lost_(r);
        throw LostWorker(describe_(r) + " is lost: " + why);
    }

private:
    void check(int r) {
        if (ranks_.silent(r)) lose(r, ranks_.silence(r));
    }
    void abandon(std::vector<std::pair<int, std::size_t>>& sends) {
        for (const auto& [r, id] : sends) comm_.abandon_send(id);
        sends.clear();
    }

    Comm& comm_;
    RankWatch ranks_;
    std::function<std::string(int)> describe_;
    std::function<void(int)> on_lost_;
};

}  // namespace worksize::data_exec
