// Rank 0's side of the job protocol (see cluster.hpp): run() posts to every worker at once
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
// task kPayload {"ok":true} then the input bytes, or {"ok":false,"error","reason"}; the worker
// answers each task with kResult {"task","ok","times"|"error","reason"} followed, if ok, by the
// output bytes; while it executes it sends kHeartbeat {} every Comm::heartbeat() seconds (a third of --rank-timeout, at most one). {"cmd":"collect","what"} is answered by kResult {"ok","data"|"error","reason"};
// {"cmd":"exit","code":N} ends serve().
#include <algorithm>
#include <deque>
#include <future>
#include <limits>
#include <map>
#include <thread>

#include "cluster/cluster_impl.hpp"
#include "jobs/job_util.hpp"
#include "worksize/scheduler/format.hpp"
#include "worksize/scheduler/log.hpp"

namespace worksize {

using wire::kCmd;
using wire::kPayload;
using wire::kResult;

namespace {

/// The slices' own verdicts (rank-local inputs): the first failure, else every slice's check.
Verdict slices_verdict(const std::vector<DeviceRun>& runs) {
    std::string detail;
    std::size_t slices = 0;
    for (const auto& r : runs) {
        if (r.assignment.units == 0) continue;
        if (!r.verdict.ok) return {false, "slice at unit " + std::to_string(r.assignment.offset) + " on rank " +
                                              std::to_string(r.assignment.rank) + ": " + r.verdict.detail};
        ++slices;
        if (detail.empty()) detail = r.verdict.detail;
    }
    return {true, "each of " + std::to_string(slices) + " slices checked on its rank (inputs made there); the first: " + detail};
}

}  // namespace

JobResult Cluster::run(KernelJob& job, std::vector<Assignment> assignments, const std::string& job_name,
                       const JobOptions* local_inputs) {
    if (!is_master()) throw Error("Cluster::run is for rank 0");
    Comm& comm = *impl_->comm;
    drain_owed();
    auto& devs = impl_->devices;
    JobResult result;
    const double t0 = now_s();
    job.partition(assignments);
    result.prepare_s = now_s() - t0;

    struct Task {
        Assignment a;
        SliceSpec spec;
        int rank = 0;
        int local_index = 0;
        DeviceRun run;
        Bytes out;
        Bytes packed;  // rank 0's own devices: the slice input when it must be packed
        std::size_t slot = 0;  // rank 0's own devices: the task's buffers in the pools
        std::span<std::byte> target;  // the job's own output rows (received in place), or empty
        std::uint64_t host_bytes = 0;  // what it allocates on its rank beside its input (host_memory.hpp)
        wire::Failure error;
    };
    const KernelDescriptor desc = job.descriptor();
    const GlobalSize problem = job.problem();
    std::vector<Task> tasks;
    for (const auto& a : assignments) {
        if (a.units == 0) continue;
        if (a.device < 0 || static_cast<std::size_t>(a.device) >= devs.size())
            throw Error("plan names device " + std::to_string(a.device) + " of " + std::to_string(devs.size()));
        Task t;
        t.a = a;
        t.spec = job.slice_spec(a);
        t.rank = devs[static_cast<std::size_t>(a.device)].rank;
        // A rank lost by an earlier job of this command (tune's next candidate): at once, not
        // after another --rank-timeout.
        if (impl_->is_lost(t.rank)) throw Error(ErrorReason::lost_rank, describe_rank(t.rank) + " was lost earlier");
        t.local_index = devs[static_cast<std::size_t>(a.device)].index;
        if (local_inputs) {
            if (!job.makes_slice_inputs())
                throw InvalidArgument("--inputs local: kernel '" + t.spec.kernel +
                                      "' cannot make its inputs and check its output on each rank");
            t.spec.local_inputs = true;
            t.spec.job_options = to_json(*local_inputs);
        }
        t.host_bytes = slice_host_bytes(desc, problem, a.units, devs[static_cast<std::size_t>(a.device)].type == DeviceType::cpu);
        t.run.assignment = a;
        tasks.push_back(std::move(t));
    }

    // Rank 0's own devices run in threads while the main thread talks to the workers. Their
    // output (and a packed input) go to pooled buffers in the device's pinned memory, like a
    // worker's; a single input part is read by the device where it is.
    std::map<int, std::size_t> next_slot;
    for (auto& t : tasks) {
        if (t.rank != 0) continue;
        t.slot = next_slot[t.local_index]++;
        t.out = impl_->take(impl_->out_pool, t.local_index, t.slot);
        t.packed = impl_->take(impl_->in_pool, t.local_index, t.slot);
    }
    std::vector<std::future<void>> local;
    std::vector<std::size_t> local_task;  // the task of each of them
    auto deadlines = std::make_unique<SliceDeadline[]>(tasks.size());  // --kernel-timeout
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        if (tasks[i].rank != 0) continue;
        if (impl_->is_held(tasks[i].local_index))
            tasks[i].error = {"its device is held by a kernel that ran past --kernel-timeout", ErrorReason::timed_out};
        if (!tasks[i].error.empty()) continue;
        local_task.push_back(i);
        local.push_back(std::async(std::launch::async, [this, &job, &tasks, i, t0, dl = &deadlines[i]] {
            auto& t = tasks[i];
            dl->at = now_s() + impl_->slice_limit(t.spec);
            try {
                if (t.spec.local_inputs) {
                    impl_->run_local(job, t.spec, t.local_index, t.packed, t.out, t.host_bytes, t.run);
                    t.run.done_s = now_s() - t0 - t.run.gen_s - t.run.check_s;
                    dl->at = std::numeric_limits<double>::infinity();
                    return;
                }
                const double p = now_s();
                const auto parts = job.input_parts(t.a);
                Bytes own;  // slice_input()'s buffer
                std::span<const std::byte> in;
                if (parts.size() == 1) {
                    in = parts.front();
                } else if (parts.empty()) {
                    own = job.slice_input(t.a);
                    in = own;
                } else {
                    std::size_t n = 0;
                    for (const auto& part : parts) n += part.size();
                    t.packed.resize(n);  // default-initialised: not zeroed
                    std::size_t off = 0;
                    for (const auto& part : parts) {
                        detail::parallel_copy(t.packed.data() + off, part.data(), part.size());
                        off += part.size();
                    }
                    in = t.packed;
                }
                const double e = now_s();
                t.run.pack_s = e - p;
                t.run.times = impl_->execute(t.local_index, t.spec, in, t.out, t.host_bytes);
                t.run.exec_s = now_s() - e;
                // The output goes where the job keeps it here, in this device's thread (beside
                // the other devices and the workers' transfers), not in the serial combine.
                if (const auto target = job.output_target(t.a); !target.empty() && target.size() == t.out.size()) {
                    detail::parallel_copy(target.data(), t.out.data(), target.size());
                    t.target = target;
                }
            } catch (const std::exception& e) {
                t.error = wire::failure_of(e);
            }
            dl->at = std::numeric_limits<double>::infinity();
            t.run.done_s = now_s() - t0;
        }));
    }

    // An answer's header from `from`; if ok, its output is then received without blocking
    // (start_output), in place where the job says, beside the other workers' outputs.
    struct Receiving {
        std::size_t task;
        std::size_t id;
    };
    std::map<int, Receiving> receiving;  // by rank: the output being received
    // Returns whether the task is answered (no output follows).
    auto receive_header = [&](int from) {
        const double rs = now_s();
        const auto hdr = comm.recv_json(from, kResult);
        const auto i = hdr.at("task").get<std::size_t>();
        if (i >= tasks.size() || tasks[i].rank != from)
            throw Error("rank " + std::to_string(from) + " answered an unknown task");
        auto& t = tasks[i];
        t.run.recv_start_s = rs - t0;
        if (!hdr.at("ok").get<bool>()) {
            t.error = wire::failure_from_json(hdr);
            t.run.recv_end_s = now_s() - t0;
            t.run.done_s = t.run.recv_end_s - t.run.gen_s - t.run.check_s;  // as if its input had been there
            return true;
        }
        const auto& tm = hdr.at("times");
        t.run.times = {tm.at("h2d").get<double>(), tm.at("kernel").get<double>(), tm.at("d2h").get<double>()};
        t.run.exec_s = tm.value("exec", 0.0);
        if (t.spec.local_inputs) {  // checked there: no output follows
            t.run.gen_s = tm.value("gen", 0.0);
            t.run.check_s = tm.value("check", 0.0);
            t.run.verdict = wire::verdict_from_json(hdr.at("verdict"));
            t.run.recv_end_s = now_s() - t0;
            t.run.done_s = t.run.recv_end_s - t.run.gen_s - t.run.check_s;  // as if its input had been there
            return true;
        }
        // Whatever fails here, the output is still received: the worker is not left sending.
        try {
            t.target = job.output_target(t.a);
        } catch (const std::exception& e) {
            t.error = wire::failure_of(e);
            t.target = {};
        }
        receiving[from] = {i, comm.irecv_start(from, kResult, t.target, t.target.empty() ? &t.out : nullptr)};
        return false;
    };

    // Workers: one command per rank, then per task a header and the payload, all posted at
    // once (non-blocking sends), so that the sends to several workers overlap. Once packing has
    // failed, every further task gets an error header instead: each worker hears about each of
    // its tasks, answers them, and goes back to serving.
    wire::Failure pack_failure;
    std::map<int, std::vector<std::size_t>> by_rank;
    for (std::size_t i = 0; i < tasks.size(); ++i)
        if (tasks[i].rank != 0) by_rank[tasks[i].rank].push_back(i);
    struct Pending {
        int rank;
        std::size_t task;  // the payload of this task, or npos for a command or header
        std::size_t id;
    };
    constexpr std::size_t npos = std::size_t(-1);
    std::vector<Pending> pending;
    std::deque<std::string> texts;  // the JSON of posted messages, alive until sent
    std::deque<Bytes> packs;        // packed inputs, alive until sent
    auto post_json = [&](const nlohmann::json& j, int r, int tag) {
        texts.push_back(j.dump());
        const auto b = std::as_bytes(std::span(texts.back().data(), texts.back().size()));
        pending.push_back({r, npos, comm.isend_parts({&b, 1}, r, tag)});
    };
    std::map<int, std::size_t> outstanding;  // results still expected, by rank
    for (const auto& [r, ids] : by_rank) {
        nlohmann::json cmd = {{"cmd", "run"}, {"job", job_name}, {"tasks", nlohmann::json::array()}};
        for (auto i : ids)
            cmd["tasks"].push_back({{"task", i},
                                    {"device", tasks[i].local_index},
                                    {"spec", to_json(tasks[i].spec)},
                                    {"host_bytes", tasks[i].host_bytes}});
        post_json(cmd, r, kCmd);
        for (auto i : ids) {
            ++outstanding[r];
            if (tasks[i].spec.local_inputs) {  // made there: nothing to send
                post_json({{"ok", true}, {"local", true}}, r, kPayload);
                continue;
            }
            if (pack_failure.empty()) {
                // The job's own data is sent in place when it can say where it is; else packed.
                const double p = now_s();
                std::vector<std::span<const std::byte>> parts;
                try {
                    fault::before_pack();
                    parts = job.input_parts(tasks[i].a);
                    if (parts.empty()) {
                        packs.push_back(job.slice_input(tasks[i].a));
                        parts.emplace_back(packs.back());
                    }
                } catch (const std::exception& e) {
                    const auto& d = devs[static_cast<std::size_t>(tasks[i].a.device)];
                    pack_failure = wire::failure_of(e);
                    pack_failure.message = "rank 0: packing the input of rank " + std::to_string(r) + ", device '" +
                                           d.name + "': " + pack_failure.message;
                }
                if (pack_failure.empty()) {
                    const double s = now_s();
                    tasks[i].run.pack_s = s - p;
                    tasks[i].run.send_start_s = s - t0;
                    post_json({{"ok", true}}, r, kPayload);
                    pending.push_back({r, i, comm.isend_parts(parts, r, kPayload)});
                    continue;
                }
            }
            nlohmann::json cancel = {{"ok", false}};
            wire::put_failure(cancel, {"rank 0 sent no input: " + pack_failure.message, pack_failure.reason});
            post_json(cancel, r, kPayload);
        }
    }

    // One polling loop waits for everything: the sends completing, the workers' heartbeats
    // and their answers. A worker is lost when nothing was heard from it (a send done, a
    // heartbeat, an answer) for rank_timeout_s while rank 0 waited on it, or when MPI failed
    // on it; it is never talked to again, and the others are still waited for, so that every
    // living worker has answered when the loss is raised.
    std::map<int, double> heard;
    for (const auto& [r, n] : outstanding) heard[r] = now_s();
    std::map<int, std::string> lost_why;
    auto lose = [&](int r, const std::string& why) {
        if (lost_why.count(r)) return;
        lost_why[r] = why;
        impl_->lost.push_back(r);
        mpi::note_lost_peer();
        for (auto it = pending.begin(); it != pending.end();)
            if (it->rank == r) {
                comm.abandon_send(it->id);
                it = pending.erase(it);
            } else {
                ++it;
            }
        outstanding[r] = 0;
    };
    const double saved_patience = comm.patience();
    comm.set_patience(impl_->rank_timeout_s);
    // After a loss the job has failed: rank 0 stops waiting for answers (they are received
    // and dropped by the next command, drain_owed()) and only lets the posted sends and the
    // outputs in flight finish.
    auto waiting = [&] {
        if (!pending.empty() || !receiving.empty()) return true;  // never left writing into the job
        if (!lost_why.empty()) return false;
        for (const auto& [r, n] : outstanding)
            if (n > 0) return true;
        return false;
    };
    while (waiting()) {
        bool progress = false;
        for (auto it = pending.begin(); it != pending.end();) {
            bool done = false;
            const int r = it->rank;
            try {
                done = comm.test_send(it->id);
            } catch (const std::exception& e) {
                lose(r, e.what());
                progress = true;
                break;  // lose() changed the list
            }
            if (!done) {
                ++it;
                continue;
            }
            heard[r] = now_s();
            if (it->task != npos) {
                auto& run = tasks[it->task].run;
                run.send_end_s = now_s() - t0;
                run.send_s = run.send_end_s - run.send_start_s;
            }
            it = pending.erase(it);
            progress = true;
        }
        int from = 0;
        while (comm.iprobe(Comm::any_source, wire::kHeartbeat, &from)) {
            (void)comm.recv_bytes(from, wire::kHeartbeat);
            heard[from] = now_s();
        }
        // Outputs in flight, one per worker, side by side.
        for (auto it = receiving.begin(); it != receiving.end();) {
            const int r = it->first;
            auto& t = tasks[it->second.task];
            bool done = false;
            try {
                done = comm.test_recv(it->second.id);
            } catch (const Error& e) {
                if (e.reason() == ErrorReason::lost_rank) {
                    it = receiving.erase(it);
                    lose(r, e.what());
                    progress = true;
                    continue;
                }
                t.error = wire::failure_of(e);
                done = true;
            }
            if (!done) {
                ++it;
                continue;
            }
            t.run.done_s = t.run.recv_end_s = now_s() - t0;
            t.run.recv_s = t.run.recv_end_s - t.run.recv_start_s;
            heard[r] = now_s();
            if (outstanding[r] > 0) --outstanding[r];
            it = receiving.erase(it);
            progress = true;
        }
        // New answers, from the workers that are not sending one already.
        for (auto& [r, n] : outstanding) {
            if (n == 0 || receiving.count(r) || !comm.iprobe(r, kResult)) continue;
            progress = true;
            heard[r] = now_s();
            try {
                if (receive_header(r)) --n;
            } catch (const Error& e) {
                if (e.reason() != ErrorReason::lost_rank) throw;
                lose(r, e.what());
            }
        }
        if (progress) continue;
        const double now = now_s();
        for (const auto& [r, n] : outstanding) {
            // A worker whose output is being received is heard by test_recv's patience.
            const bool owed = (n > 0 && !receiving.count(r)) || std::any_of(pending.begin(), pending.end(), [r = r](const Pending& p) { return p.rank == r; });
            if (owed && now - heard[r] > impl_->rank_timeout_s) {
                lose(r, "nothing heard from it for " + format_seconds(now - heard[r], 3) + " (--rank-timeout " +
                            format_seconds(impl_->rank_timeout_s, 3) + ")");
                break;
            }
        }
        // MPI moves a message only inside MPI calls: while one is in flight, poll again at
        // once (a 200 µs sleep here held a 96 MiB send to a GPU worker to 2 GB/s).
        if (!pending.empty() || !receiving.empty())
            std::this_thread::yield();
        else
            std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    comm.set_patience(saved_patience);
    if (!lost_why.empty())
        for (const auto& [r, n] : outstanding)
            if (n > 0 && !impl_->is_lost(r)) impl_->owed[r] += n;
    // Rank 0's own slices, each within --kernel-timeout: one past it holds its device, and its
    // thread, the tasks and their buffers are left to the process's end (mpi::end_held).
    std::size_t held_task = npos;
    for (std::size_t k = 0; k < local.size() && held_task == npos; ++k)
        while (local[k].wait_for(std::chrono::milliseconds(50)) != std::future_status::ready)
            if (deadlines[local_task[k]].passed()) {
                held_task = local_task[k];
                break;
            }
    wire::Failure held_failure;
    if (held_task != npos) {
        const auto& t = tasks[held_task];
        impl_->hold(t.local_index);
        held_failure = impl_->timed_out(t.spec);
        held_failure.message = "rank 0, device '" + devs[static_cast<std::size_t>(t.a.device)].name + "': " +
                               held_failure.message;
        (void)new std::vector<std::future<void>>(std::move(local));
        (void)new std::vector<Task>(std::move(tasks));
        (void)deadlines.release();
    }

    if (!lost_why.empty()) {
        const auto& [r, why] = *lost_why.begin();
        throw Error(ErrorReason::lost_rank, describe_rank(r) + " is lost: " + why);
    }
    if (!held_failure.empty()) held_failure.raise();
    if (!pack_failure.empty()) pack_failure.raise();
    for (const auto& t : tasks) {
        if (!t.error.empty()) {
            const auto& d = devs[static_cast<std::size_t>(t.a.device)];
            t.error.raise("rank " + std::to_string(t.rank) + ", device '" + d.name + "': ");
        }
    }
    const double c0 = now_s();
    if (!local_inputs) {
        for (auto& t : tasks) job.accept_output(t.a, t.target.empty() ? std::span<const std::byte>(t.out) : t.target);
        job.finish();
        result.makespan_s = now_s() - t0;
    } else {
        for (const auto& t : tasks) result.makespan_s = std::max(result.makespan_s, t.run.done_s);
    }
    result.combine_s = std::max(0.0, result.makespan_s - (c0 - t0));
    for (auto& t : tasks) result.devices.push_back(t.run);
    // Devices that got no work are listed too, with zero times.
    for (const auto& a : assignments)
        if (a.units == 0) {
            DeviceRun idle;
            idle.assignment = a;
            result.devices.push_back(idle);
        }
    std::sort(result.devices.begin(), result.devices.end(),
              [](const DeviceRun& x, const DeviceRun& y) { return x.assignment.device < y.assignment.device; });
    for (auto& t : tasks) {
        if (t.rank != 0) continue;
        impl_->put(impl_->out_pool, t.local_index, t.slot, std::move(t.out));
        impl_->put(impl_->in_pool, t.local_index, t.slot, std::move(t.packed));
    }
    result.verdict = local_inputs ? slices_verdict(result.devices) : job.verify();
    result.summary = job.summary();
    return result;
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
    for (auto& [r, n] : impl_->owed) {
        for (; n > 0 && !impl_->is_lost(r); --n) {
            try {
                // The worker may still be executing: its heartbeats come first.
                for (double heard = now_s();;) {
                    if (comm.iprobe(r, kResult)) break;
                    if (comm.iprobe(r, wire::kHeartbeat)) {
                        (void)comm.recv_bytes(r, wire::kHeartbeat);
                        heard = now_s();
                        continue;
                    }
                    if (now_s() - heard > impl_->rank_timeout_s)
                        throw Error(ErrorReason::lost_rank, "nothing heard while its answers were awaited");
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
                const auto hdr = comm.recv_json(r, kResult);
                if (hdr.value("ok", false)) comm.recv_bytes_into(scratch, r, kResult);
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
