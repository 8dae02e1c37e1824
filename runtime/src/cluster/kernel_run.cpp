// One run of a KernelJob on rank 0 (Cluster::run, master.cpp has the protocol's messages): the
// tasks made from the plan, rank 0's own slices in threads, every worker's command, headers and
// payloads posted at once, one polling loop over the sends, heartbeats, answers and outputs
// (a silent or failing worker is lost), then the failures raised and the outputs combined.
#include <algorithm>
#include <deque>
#include <future>
#include <limits>
#include <map>
#include <optional>
#include <thread>

#include "cluster/cluster_impl.hpp"
#include "cluster/kernel_run.hpp"
#include "jobs/job_util.hpp"
#include "worksize/scheduler/format.hpp"

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
        if (!r.verdict.ok)
            return {false, "slice at unit " + std::to_string(r.assignment.offset) + " on rank " +
                               std::to_string(r.assignment.rank) + ": " + r.verdict.detail};
        ++slices;
        if (detail.empty()) detail = r.verdict.detail;
    }
    return {true, "each of " + std::to_string(slices) + " slices checked on its rank (inputs made there); the first: " + detail};
}

}  // namespace

Cluster::KernelRun::KernelRun(Cluster& cluster, KernelJob& job, const std::string& name, const JobOptions* local_inputs)
    : cluster_(cluster),
      impl_(*cluster.impl_),
      comm_(*impl_.comm),
      job_(job),
      name_(name),
      local_inputs_(local_inputs),
      watch_(comm_, impl_.rank_timeout_s) {}

Cluster::KernelRun::~KernelRun() = default;

void Cluster::KernelRun::make_tasks(std::vector<Assignment> assignments) {
    t0_ = now_s();
    job_.partition(assignments);
    result_.prepare_s = now_s() - t0_;
    assignments_ = std::move(assignments);
    const auto& devs = impl_.devices;
    const KernelDescriptor desc = job_.descriptor();
    const GlobalSize problem = job_.problem();
    for (const auto& a : assignments_) {
        if (a.units == 0) continue;
        if (a.device < 0 || static_cast<std::size_t>(a.device) >= devs.size())
            throw Error("plan names device " + std::to_string(a.device) + " of " + std::to_string(devs.size()));
        const auto& d = devs[static_cast<std::size_t>(a.device)];
        Task t;
        t.a = a;
        t.spec = job_.slice_spec(a);
        t.rank = d.rank;
        // A rank lost by an earlier job of this command (tune's next candidate): at once, not
        // after another --rank-timeout.
        if (impl_.is_lost(t.rank)) throw Error(ErrorReason::lost_rank, cluster_.describe_rank(t.rank) + " was lost earlier");
        t.local_index = d.index;
        if (local_inputs_) {
            if (!job_.makes_slice_inputs())
                throw InvalidArgument("--inputs local: kernel '" + t.spec.kernel +
                                      "' cannot make its inputs and check its output on each rank");
            t.spec.local_inputs = true;
            t.spec.job_options = to_json(*local_inputs_);
        }
        t.host_bytes = slice_host_bytes(desc, problem, a.units, d.type == DeviceType::cpu);
        t.run.assignment = a;
        tasks_.push_back(std::move(t));
    }
    deadlines_ = std::make_unique<SliceDeadline[]>(tasks_.size());
}

// Rank 0's own devices run in threads while the main thread talks to the workers. Their output
// (and a packed input) go to pooled buffers in the device's pinned memory, like a worker's; a
// single input part is read by the device where it is. The threads capture what outlives this
// run (the cluster's state, the task and its deadline, which a held device leaves allocated).
void Cluster::KernelRun::start_own_slices() {
    std::map<int, std::size_t> next_slot;
    for (auto& t : tasks_) {
        if (t.rank != 0) continue;
        t.slot = next_slot[t.local_index]++;
        t.out = impl_.take(impl_.out_pool, t.local_index, t.slot);
        t.packed = impl_.take(impl_.in_pool, t.local_index, t.slot);
    }
    for (std::size_t i = 0; i < tasks_.size(); ++i) {
        Task& t = tasks_[i];
        if (t.rank != 0) continue;
        if (impl_.is_held(t.local_index))
            t.error = {"its device is held by a kernel that ran past --kernel-timeout", ErrorReason::timed_out};
        if (!t.error.empty()) continue;
        own_task_.push_back(i);
        own_.push_back(std::async(std::launch::async, [impl = &impl_, &job = job_, &t, t0 = t0_, dl = &deadlines_[i]] {
            dl->at = now_s() + impl->slice_limit(t.spec);
            try {
                run_own_slice(*impl, job, t, &dl->guard);
            } catch (const std::exception& e) {
                t.error = wire::failure_of(e);
            }
            dl->at = std::numeric_limits<double>::infinity();
            t.run.done_s = t.spec.local_inputs ? now_s() - t0 - t.run.gen_s - t.run.check_s : now_s() - t0;
        }));
    }
}

void Cluster::KernelRun::run_own_slice(Impl& impl, KernelJob& job, Task& t, UserMemoryGuard* guard) {
    if (t.spec.local_inputs) {
        impl.run_local(job, t.spec, t.local_index, t.packed, t.out, t.host_bytes, t.run);
        return;
    }
    const double p = now_s();
    auto parts = job.input_parts(t.a);
    Bytes own;  // slice_input()'s buffer
    std::span<const std::byte> in;
    std::optional<InputParts> straight;  // several parts, uploaded from where they are
    if (parts.size() == 1) {
        in = parts.front();
    } else if (parts.size() > 1 && kernel_job(t.spec.kernel).streams_input) {
        straight.emplace(std::move(parts));
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
    // The output goes where the job keeps it here, in this device's thread (beside the other
    // devices and the workers' transfers), not in the serial combine: downloaded straight into
    // it (OutputInPlace, then t.out stays empty), else copied there.
    const auto target = job.output_target(t.a);
    t.run.times =
        impl.execute(t.local_index, t.spec, in, t.out, t.host_bytes, nullptr, straight ? &*straight : nullptr, target, guard);
    t.run.exec_s = now_s() - e;
    if (!target.empty() && t.out.empty()) {
        t.target = target;
    } else if (!target.empty() && target.size() == t.out.size()) {
        detail::parallel_copy(target.data(), t.out.data(), target.size());
        t.target = target;
    }
}

void Cluster::KernelRun::post_json(const nlohmann::json& j, int r, int tag) {
    texts_.push_back(j.dump());
    const auto b = std::as_bytes(std::span(texts_.back().data(), texts_.back().size()));
    pending_.push_back({r, npos, comm_.isend_parts({&b, 1}, r, tag)});
}

// Workers: one command per rank, then per task a header and the payload, all posted at once
// (non-blocking sends), so that the sends to several workers overlap. Once packing has failed,
// every further task gets an error header instead: each worker hears about each of its tasks,
// answers them, and goes back to serving.
void Cluster::KernelRun::post_to_workers() {
    std::map<int, std::vector<std::size_t>> by_rank;
    for (std::size_t i = 0; i < tasks_.size(); ++i)
        if (tasks_[i].rank != 0) by_rank[tasks_[i].rank].push_back(i);
    for (const auto& [r, ids] : by_rank) {
        nlohmann::json cmd = {{"cmd", "run"}, {"job", name_}, {"tasks", nlohmann::json::array()}};
        for (auto i : ids)
            cmd["tasks"].push_back({{"task", i},
                                    {"device", tasks_[i].local_index},
                                    {"spec", to_json(tasks_[i].spec)},
                                    {"host_bytes", tasks_[i].host_bytes}});
        post_json(cmd, r, kCmd);
        for (auto i : ids) {
            ++outstanding_[r];
            post_payload(r, i);
        }
    }
}

void Cluster::KernelRun::post_payload(int r, std::size_t i) {
    if (tasks_[i].spec.local_inputs) {  // made there: nothing to send
        post_json({{"ok", true}, {"local", true}}, r, kPayload);
        return;
    }
    if (pack_failure_.empty()) {
        // The job's own data is sent in place when it can say where it is; else packed.
        const double p = now_s();
        std::vector<std::span<const std::byte>> parts;
        try {
            fault::before_pack();
            parts = job_.input_parts(tasks_[i].a);
            if (parts.empty()) {
                packs_.push_back(job_.slice_input(tasks_[i].a));
                parts.emplace_back(packs_.back());
            }
        } catch (const std::exception& e) {
            const auto& d = impl_.devices[static_cast<std::size_t>(tasks_[i].a.device)];
            pack_failure_ = wire::failure_of(e);
            pack_failure_.message =
                "rank 0: packing the input of rank " + std::to_string(r) + ", device '" + d.name + "': " + pack_failure_.message;
        }
        if (pack_failure_.empty()) {
            const double s = now_s();
            tasks_[i].run.pack_s = s - p;
            tasks_[i].run.send_start_s = s - t0_;
            // The parts' sizes, then each part in pieces (transport/pieces.hpp): the worker posts
            // every piece's receive and uploads each as it comes.
            std::vector<std::uint64_t> sizes;
            for (const auto& part : parts) sizes.push_back(part.size());
            post_json({{"ok", true}, {"parts", sizes}}, r, kPayload);
            for (const auto& part : parts)
                for (std::size_t id : pieces::post(comm_, part, r, kPayload)) pending_.push_back({r, i, id});
            return;
        }
    }
    nlohmann::json cancel = {{"ok", false}};
    wire::put_failure(cancel, {"rank 0 sent no input: " + pack_failure_.message, pack_failure_.reason});
    post_json(cancel, r, kPayload);
}

// A worker is lost when nothing was heard from it (a send done, a heartbeat, an answer) for
// rank_timeout_s while rank 0 waited on it, or when MPI failed on it; it is never talked to
// again, and the others are still waited for, so that every living worker has answered when
// the loss is raised.
void Cluster::KernelRun::lose(int r, const std::string& why) {
    if (lost_why_.count(r)) return;
    lost_why_[r] = why;
    impl_.lost.push_back(r);
    mpi::note_lost_peer();
    for (auto it = pending_.begin(); it != pending_.end();)
        if (it->rank == r) {
            comm_.abandon_send(it->id);
            it = pending_.erase(it);
        } else {
            ++it;
        }
    outstanding_[r] = 0;
}

// After a loss the job has failed: rank 0 stops waiting for answers (they are received and
// dropped by the next command, drain_owed()) and only lets the posted sends and the outputs in
// flight finish.
bool Cluster::KernelRun::waiting() const {
    if (!pending_.empty() || !receiving_.empty()) return true;  // never left writing into the job
    if (!lost_why_.empty()) return false;
    for (const auto& [r, n] : outstanding_)
        if (n > 0) return true;
    return false;
}

// One polling loop waits for everything: the sends completing, the workers' heartbeats and
// their answers and outputs.
void Cluster::KernelRun::wait_for_workers() {
    for (const auto& [r, n] : outstanding_) watch_.heard(r);
    const double saved_patience = comm_.patience();
    comm_.set_patience(impl_.rank_timeout_s);
    while (waiting()) {
        bool progress = poll_sends();
        watch_.listen();
        progress = poll_outputs() || progress;
        progress = poll_answers() || progress;
        if (progress) continue;
        check_silence();
        // MPI moves a message only inside MPI calls: while one is in flight, poll again at
        // once (a 200 µs sleep here held a 96 MiB send to a GPU worker to 2 GB/s).
        if (!pending_.empty() || !receiving_.empty())
            std::this_thread::yield();
        else
            std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    comm_.set_patience(saved_patience);
    if (!lost_why_.empty())
        for (const auto& [r, n] : outstanding_)
            if (n > 0 && !impl_.is_lost(r)) impl_.owed[r] += n;
}

bool Cluster::KernelRun::poll_sends() {
    bool progress = false;
    for (auto it = pending_.begin(); it != pending_.end();) {
        bool done = false;
        const int r = it->rank;
        try {
            done = comm_.test_send(it->id);
        } catch (const std::exception& e) {
            lose(r, e.what());
            return true;  // lose() changed the list
        }
        if (!done) {
            ++it;
            continue;
        }
        watch_.heard(r);
        if (it->task != npos) {
            auto& run = tasks_[it->task].run;
            run.send_end_s = now_s() - t0_;
            run.send_s = run.send_end_s - run.send_start_s;
        }
        it = pending_.erase(it);
        progress = true;
    }
    return progress;
}

// Outputs in flight, one per worker, side by side.
bool Cluster::KernelRun::poll_outputs() {
    bool progress = false;
    for (auto it = receiving_.begin(); it != receiving_.end();) {
        const int r = it->first;
        auto& t = tasks_[it->second.task];
        bool done = false;
        try {
            it->second.in->poll();
            done = it->second.in->done();
        } catch (const Error& e) {
            if (e.reason() == ErrorReason::lost_rank) {
                it = receiving_.erase(it);
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
        t.run.done_s = t.run.recv_end_s = now_s() - t0_;
        t.run.recv_s = t.run.recv_end_s - t.run.recv_start_s;
        watch_.heard(r);
        if (outstanding_[r] > 0) --outstanding_[r];
        it = receiving_.erase(it);
        progress = true;
    }
    return progress;
}

// New answers, from the workers that are not sending one already.
bool Cluster::KernelRun::poll_answers() {
    bool progress = false;
    for (auto& [r, n] : outstanding_) {
        if (n == 0 || receiving_.count(r) || !comm_.iprobe(r, kResult)) continue;
        progress = true;
        watch_.heard(r);
        try {
            if (receive_header(r)) --n;
        } catch (const Error& e) {
            if (e.reason() != ErrorReason::lost_rank) throw;
            lose(r, e.what());
        }
    }
    return progress;
}

void Cluster::KernelRun::check_silence() {
    for (const auto& [r, n] : outstanding_) {
        // A worker whose output is being received is heard by test_recv's patience.
        const bool owed = (n > 0 && !receiving_.count(r)) ||
                          std::any_of(pending_.begin(), pending_.end(), [r = r](const Pending& p) { return p.rank == r; });
        if (owed && watch_.silent(r)) {
            lose(r, watch_.silence(r));
            return;
        }
    }
}

// An answer's header from `from`; if ok, its output is then received without blocking
// (start_output), in place where the job says, beside the other workers' outputs. Returns
// whether the task is answered (no output follows).
bool Cluster::KernelRun::receive_header(int from) {
    const double rs = now_s();
    const auto hdr = comm_.recv_json(from, kResult);
    const auto i = hdr.at("task").get<std::size_t>();
    if (i >= tasks_.size() || tasks_[i].rank != from) throw Error("rank " + std::to_string(from) + " answered an unknown task");
    auto& t = tasks_[i];
    t.run.recv_start_s = rs - t0_;
    if (!hdr.at("ok").get<bool>()) {
        t.error = wire::failure_from_json(hdr);
        t.run.done_s = t.run.recv_end_s = now_s() - t0_;
        return true;
    }
    const auto& tm = hdr.at("times");
    t.run.times = {tm.at("h2d").get<double>(), tm.at("kernel").get<double>(), tm.at("d2h").get<double>()};
    t.run.exec_s = tm.value("exec", 0.0);
    if (t.spec.local_inputs) {  // checked there: no output follows
        t.run.gen_s = tm.value("gen", 0.0);
        t.run.check_s = tm.value("check", 0.0);
        t.run.verdict = wire::verdict_from_json(hdr.at("verdict"));
        t.run.recv_end_s = now_s() - t0_;
        t.run.done_s = t.run.recv_end_s - t.run.gen_s - t.run.check_s;  // as if its input had been there
        return true;
    }
    // Whatever fails here, the output is still received: the worker is not left sending.
    const auto bytes = hdr.at("bytes").get<std::uint64_t>();
    try {
        t.target = job_.output_target(t.a);
    } catch (const std::exception& e) {
        t.error = wire::failure_of(e);
        t.target = {};
    }
    if (!t.target.empty() && t.target.size() != bytes) {
        t.error = {"rank " + std::to_string(from) + " sent " + std::to_string(bytes) + " bytes of output where " +
                       std::to_string(t.target.size()) + " were expected",
                   ErrorReason::generic};
        t.target = {};
    }
    std::span<std::byte> dest = t.target;
    if (dest.empty()) {
        t.out.resize(bytes);
        dest = t.out;
    }
    receiving_[from] = {i, std::make_unique<pieces::Inbound>(comm_, from, kResult, pieces::cut(dest, pieces::piece_bytes()))};
    return false;
}

// Rank 0's own slices, each within --kernel-timeout: one past it holds its device, and its
// thread, the tasks and their buffers are left to the process's end (mpi::end_held).
void Cluster::KernelRun::wait_own_slices() {
    std::size_t held = npos;
    bool copying = false;  // the held slice was still copying to or from the job's memory
    for (std::size_t k = 0; k < own_.size() && held == npos; ++k)
        while (own_[k].wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
            SliceDeadline& dl = deadlines_[own_task_[k]];
            if (!dl.passed()) continue;
            if (!dl.guard.abandon() && !dl.grace) {  // a copy of the job's memory runs: it ends soon
                dl.grace = true;
                dl.at = now_s() + kCopyGrace_s;
                continue;
            }
            copying = !dl.guard.abandon();
            held = own_task_[k];
            break;
        }
    if (held == npos) return;
    const auto& t = tasks_[held];
    impl_.hold(t.local_index);
    held_failure_ = impl_.timed_out(t.spec);
    held_failure_.message =
        "rank 0, device '" + impl_.devices[static_cast<std::size_t>(t.a.device)].name + "': " + held_failure_.message +
        (copying ? " (a copy to or from the job's memory was still running " + format_seconds(kCopyGrace_s, 0) +
                       " later: keep that memory until the process ends)"
                 : "");
    (void)new std::vector<std::future<void>>(std::move(own_));
    (void)new std::vector<Task>(std::move(tasks_));  // the elements stay where the threads see them
    (void)deadlines_.release();
}

void Cluster::KernelRun::raise_failures() const {
    if (!lost_why_.empty()) {
        const auto& [r, why] = *lost_why_.begin();
        throw Error(ErrorReason::lost_rank, cluster_.describe_rank(r) + " is lost: " + why);
    }
    if (!held_failure_.empty()) held_failure_.raise();
    if (!pack_failure_.empty()) pack_failure_.raise();
    for (const auto& t : tasks_) {
        if (t.error.empty()) continue;
        const auto& d = impl_.devices[static_cast<std::size_t>(t.a.device)];
        t.error.raise("rank " + std::to_string(t.rank) + ", device '" + d.name + "': ");
    }
}

JobResult Cluster::KernelRun::combine() {
    const double c0 = now_s();
    if (!local_inputs_) {
        for (auto& t : tasks_) job_.accept_output(t.a, t.target.empty() ? std::span<const std::byte>(t.out) : t.target);
        job_.finish();
        result_.makespan_s = now_s() - t0_;
    } else {
        for (const auto& t : tasks_) result_.makespan_s = std::max(result_.makespan_s, t.run.done_s);
    }
    result_.combine_s = std::max(0.0, result_.makespan_s - (c0 - t0_));
    for (auto& t : tasks_) result_.devices.push_back(t.run);
    // Devices that got no work are listed too, with zero times.
    for (const auto& a : assignments_)
        if (a.units == 0) {
            DeviceRun idle;
            idle.assignment = a;
            result_.devices.push_back(idle);
        }
    std::sort(result_.devices.begin(), result_.devices.end(),
              [](const DeviceRun& x, const DeviceRun& y) { return x.assignment.device < y.assignment.device; });
    for (auto& t : tasks_) {
        if (t.rank != 0) continue;
        impl_.put(impl_.out_pool, t.local_index, t.slot, std::move(t.out));
        impl_.put(impl_.in_pool, t.local_index, t.slot, std::move(t.packed));
    }
    result_.verdict = local_inputs_ ? slices_verdict(result_.devices) : job_.verify();
    result_.summary = job_.summary();
    return std::move(result_);
}

}  // namespace worksize
