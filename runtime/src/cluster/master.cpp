// Rank 0's side of the job protocol (see cluster.hpp; a run's phases are in kernel_run.cpp): run() posts to every worker at once
// (non-blocking sends) one command and then, per task, a payload header followed by the slice
// input, or an error header when packing failed (so that a worker never waits for a payload that
// will not come), runs its own devices' slices in threads, and in one polling loop sees the sends
// finish and receives every task's answer, then combines them; collect() asks every rank for a
// string; finish() sends the exit. A failure is raised only once every worker has answered, with
// the reason the failing rank gave it, except a lost worker (nothing heard for --rank-timeout, or
// an MPI error): that is raised at once, and the others' answers are dropped by the next command
// (docs/cluster.md, "The fault model").
//
// Protocol (tags, wire.hpp): kCmd {"cmd":"run","job":…,"tasks":[{"task","device","spec"}]}; per
// task kPayload {"ok":true,"parts":[bytes...]} then each part's bytes in pieces (transport/pieces.hpp:
// messages of at most 16 MiB, the worker posting every receive and uploading each piece as it
// comes), or {"ok":false,"error","reason"}, or (rank-local inputs, SliceSpec::local_inputs)
// {"ok":true,"local":true} and nothing; the worker answers each task with kResult
// {"task","ok","times","bytes"|"error","reason"} followed, if ok, by the output's bytes in pieces
// (rank-local inputs: {"task","ok","times","verdict"} and no output); while it executes it sends kHeartbeat {} every Comm::heartbeat() seconds (a third of --rank-timeout, at most one). {"cmd":"collect","what"} is answered by kResult {"ok","data"|"error","reason"};
// {"cmd":"exit","code":N} ends serve().
#include <chrono>
#include <thread>

#include "cluster/cluster_impl.hpp"
#include "cluster/rank_watch.hpp"
#include "cluster/kernel_run.hpp"
#include "transport/pieces.hpp"
#include "worksize/scheduler/log.hpp"

namespace worksize {

using wire::kCmd;
using wire::kPayload;
using wire::kResult;

JobResult Cluster::run(KernelJob& job, std::vector<Assignment> assignments, const std::string& job_name,
                       const JobOptions* local_inputs) {
    if (!is_master()) throw Error("Cluster::run is for rank 0");
    drain_owed();
    KernelRun run(*this, job, job_name, local_inputs);
    run.make_tasks(std::move(assignments));
    run.start_own_slices();
    run.post_to_workers();
    run.wait_for_workers();
    run.wait_own_slices();
    run.raise_failures();
    return run.combine();
}

std::vector<std::string> Cluster::collect(const std::string& what) {
    if (!is_master()) throw Error("Cluster::collect is for rank 0");
    Comm& comm = *impl_->comm;
    drain_owed();
    std::vector<std::string> out;
    out.push_back(impl_->collect_handler ? impl_->collect_handler(what) : std::string());
    wire::Failure failure;
    const double saved_patience = comm.patience();
    comm.set_patience(impl_->rank_timeout_s);
    for (int r = 1; r < comm.size(); ++r) {
        if (impl_->is_lost(r)) {
            out.emplace_back();
            continue;
        }
        comm.send_json({{"cmd", "collect"}, {"what", what}}, r, kCmd);
        nlohmann::json reply;
        try {
            reply = comm.recv_json(r, kResult);
        } catch (const Error& e) {
            comm.set_patience(saved_patience);
            if (e.reason() != ErrorReason::lost_rank) throw;
            impl_->lost.push_back(r);
            mpi::note_lost_peer();
            throw Error(ErrorReason::lost_rank, describe_rank(r) + " is lost: " + e.what());
        }
        if (!reply.at("ok").get<bool>()) {
            if (failure.empty()) {
                failure = wire::failure_from_json(reply);
                failure.message = "rank " + std::to_string(r) + ": " + failure.message;
            }
            out.emplace_back();
        } else {
            out.push_back(reply.at("data").get<std::string>());
        }
    }
    comm.set_patience(saved_patience);
    if (!failure.empty()) failure.raise();
    return out;
}

void Cluster::finish(int exit_code) {
    if (!is_master() || impl_->finished) return;
    impl_->finished = true;
    impl_->comm->drain_alive();  // none of a data job's signs of life left to MPI_Finalize
    // After a loss the workers must not wait in MPI_Finalize for the lost rank: "lost" tells them
    // to end without it (serve()).
    const bool lost = !impl_->lost.empty() || mpi::lost_peer();
    for (int r = 1; r < impl_->comm->size(); ++r)
        if (!impl_->is_lost(r))
            impl_->comm->send_json({{"cmd", "exit"}, {"code", exit_code}, {"lost", lost}}, r, kCmd);
}

void Cluster::drain_owed() {
    Comm& comm = *impl_->comm;
    const double saved_patience = comm.patience();
    comm.set_patience(impl_->rank_timeout_s);
    Bytes scratch;
    RankWatch watch(comm, impl_->rank_timeout_s);
    for (auto& [r, n] : impl_->owed) {
        for (; n > 0 && !impl_->is_lost(r); --n) {
            try {
                // The worker may still be executing: its heartbeats come first.
                watch.heard(r);
                for (;;) {
                    if (comm.iprobe(r, kResult)) break;
                    watch.listen();
                    if (watch.silent(r))
                        throw Error(ErrorReason::lost_rank, watch.silence(r) + " while its answers were awaited");
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
                const auto hdr = comm.recv_json(r, kResult);
                if (hdr.value("ok", false) && hdr.contains("bytes")) {  // an output follows, in pieces
                    scratch.resize(hdr.at("bytes").get<std::uint64_t>());
                    pieces::receive_all(comm, r, kResult, scratch);
                }
            } catch (const Error& e) {
                if (e.reason() != ErrorReason::lost_rank) throw;
                impl_->lost.push_back(r);
                log::warn() << describe_rank(r) << " is lost too: " << e.what();
            }
        }
    }
    impl_->owed.clear();
    comm.set_patience(saved_patience);
}

const std::vector<int>& Cluster::lost_ranks() const { return impl_->lost; }

std::size_t Cluster::drop_lost_devices() {
    auto& devs = impl_->devices;
    const std::size_t before = devs.size();
    devs.erase(std::remove_if(devs.begin(), devs.end(), [&](const DeviceInfo& d) { return impl_->is_lost(d.rank); }),
               devs.end());
    return before - devs.size();
}

std::string Cluster::describe_rank(int r) const {
    std::string s = "rank " + std::to_string(r);
    if (r >= 0 && static_cast<std::size_t>(r) < impl_->hosts.size()) {
        s += " on host ";
        s += impl_->hosts[static_cast<std::size_t>(r)];
    }
    std::string names;
    int n = 0;
    for (const auto& d : impl_->devices)
        if (d.rank == r) {
            names += n++ ? ", '" : "'";
            names += d.name;
            names += "'";
        }
    if (n > 0) {
        s += n == 1 ? " (device " : " (devices ";
        s += names;
        s += ")";
    }
    return s;
}

}  // namespace worksize
