// The workers' side of the job protocol (see master.cpp for the messages): serve() runs rank 0's
// commands until it says exit. A run command's tasks are read (rank 0's error header when its
// packing failed), executed one thread per device while the main thread takes their inputs'
// pieces (an executor that streams its input uploads each as it comes), and every task is
// answered, failed ones with their error and reason, so that rank 0 always hears back; then the
// worker goes back to serving.
#include <chrono>
#include <future>
#include <map>
#include <thread>
#include <utility>

#include "cluster/cluster_impl.hpp"
#include "transport/pieces.hpp"

namespace worksize {

using wire::kCmd;
using wire::kPayload;
using wire::kResult;

/// One run command on a worker, in phases: its tasks read and their inputs' receives posted
/// (receive()), executed in a lane per device (start_lanes()) while the main thread takes the
/// inputs' pieces, sends heartbeats and watches the deadlines (watch()), then answered
/// (answer()).
class Cluster::WorkerRun {
public:
    WorkerRun(Impl& impl, Comm& comm) : impl_(impl), comm_(comm) {}
    void receive(const nlohmann::json& cmd);
    void start_lanes();
    /// Until every input has come and every lane is done or held past --kernel-timeout. A
    /// command that came meanwhile is returned (answered after the run's answers).
    nlohmann::json watch();
    /// Every task's answer; false when a lane is held (its tasks and buffers are left to the
    /// process's end).
    bool answer();

private:
    struct Work {
        std::size_t task;
        int device;
        std::size_t slot = 0;  // the device's k-th task: its buffers in the pools
        SliceSpec spec;
        std::uint64_t host_bytes = 0;  // what the slice allocates beside its input (rank 0's estimate)
        Bytes in, out;
        SliceTimes times;
        double exec_s = 0, gen_s = 0, check_s = 0;
        bool local = false;  // rank-local inputs: made and checked here
        std::unique_ptr<pieces::Inbound> inbound;  // its input's pieces, until they have all come
        std::unique_ptr<InputFeed> feed;           // how far they have come, for its lane
        Verdict verdict;
        wire::Failure error;
    };
    /// One thread per device; tasks of one device run in order.
    struct Lane {
        std::vector<Work*> ws;
        std::future<void> done;
        SliceDeadline deadline;
        std::atomic<std::size_t> current{0};  // the index in ws of the task it runs
        bool held = false;  // past --kernel-timeout: its tasks from `current` on are failed
    };
    // A lane's thread sees only the Impl (the Cluster's) and its Lane: a held lane outlives this
    // run, which the worker leaves to serve the next command.
    static void run_lane(Impl& impl, Lane& lane);
    static void execute(Impl& impl, Work& w);
    void post_input(Work& w, const nlohmann::json& hdr);
    /// One look at the inputs' pieces; whether some came. Sets inputs_pending_.
    bool take_inputs();
    void input_done(Work& w);
    std::map<const Work*, wire::Failure> held_failures() const;

    Impl& impl_;
    Comm& comm_;
    std::vector<Work> work_;
    std::vector<std::unique_ptr<Lane>> lanes_;
    bool inputs_pending_ = false;
};

void Cluster::WorkerRun::receive(const nlohmann::json& cmd) {
    for (const auto& t : cmd.at("tasks")) {
        Work w;
        w.task = t.at("task").get<std::size_t>();
        w.device = t.at("device").get<int>();
        w.host_bytes = t.value("host_bytes", std::uint64_t(0));
        try {
            w.spec = slice_spec_from_json(t.at("spec"));
        } catch (const std::exception& e) {
            w.error = wire::failure_of(e);
        }
        if (impl_.is_held(w.device))
            w.error = {"its device is held by a kernel that ran past --kernel-timeout", ErrorReason::timed_out};
        work_.push_back(std::move(w));
    }
    std::map<int, std::size_t> next_slot;
    for (auto& w : work_) {
        w.slot = next_slot[w.device]++;
        w.in = impl_.take(impl_.in_pool, w.device, w.slot);
        w.out = impl_.take(impl_.out_pool, w.device, w.slot);
        const auto hdr = comm_.recv_json(0, kPayload);
        if (!hdr.at("ok").get<bool>()) {
            w.error = wire::failure_from_json(hdr);  // rank 0 could not pack it: nothing follows
            continue;
        }
        w.local = hdr.value("local", false);
        if (!w.local) post_input(w, hdr);
    }
}

// Every piece's receive is posted now, into the task's input buffer: the next task's header
// follows them on the same tag.
void Cluster::WorkerRun::post_input(Work& w, const nlohmann::json& hdr) {
    const auto parts = hdr.at("parts").get<std::vector<std::uint64_t>>();
    std::uint64_t total = 0;
    for (auto n : parts) total += n;
    w.in.resize(total);
    std::vector<std::span<std::byte>> places;
    std::uint64_t at = 0;
    for (auto n : parts) {
        for (auto p : pieces::cut(std::span(w.in).subspan(at, n), pieces::piece_bytes())) places.push_back(p);
        at += n;
    }
    w.feed = std::make_unique<InputFeed>(total);
    const std::size_t count = places.size();
    w.inbound = std::make_unique<pieces::Inbound>(comm_, 0, kPayload, std::move(places), std::max<std::size_t>(count, 1));
    inputs_pending_ = true;
}

bool Cluster::WorkerRun::take_inputs() {
    bool progress = false;
    inputs_pending_ = false;
    for (auto& w : work_) {
        if (!w.inbound) continue;
        try {
            if (w.inbound->poll()) {
                progress = true;
                w.feed->arrived(w.inbound->arrived());
            }
        } catch (const std::exception& e) {
            w.feed->fail(e.what());
            w.inbound.reset();
            continue;
        }
        if (w.inbound->done())
            input_done(w);
        else
            inputs_pending_ = true;
    }
    return progress;
}

// The input is all there: the lane running it gets --kernel-timeout from now (its wait for the
// input is not the kernel's).
void Cluster::WorkerRun::input_done(Work& w) {
    w.inbound.reset();
    w.feed->arrived(w.feed->total());
    for (auto& lane : lanes_) {
        if (lane->ws[lane->current] != &w) continue;
        double at = lane->deadline.at.load();
        if (at != std::numeric_limits<double>::infinity())
            lane->deadline.at.compare_exchange_strong(at, now_s() + impl_.slice_limit(w.spec));
    }
}

void Cluster::WorkerRun::execute(Impl& impl, Work& w) {
    if (w.local) {
        const auto job = kernel_job(w.spec.kernel).make(job_options_from_json(w.spec.job_options));
        DeviceRun run;
        impl.run_local(*job, w.spec, w.device, w.in, w.out, w.host_bytes, run);
        w.times = run.times;
        w.exec_s = run.exec_s;
        w.gen_s = run.gen_s;
        w.check_s = run.check_s;
        w.verdict = run.verdict;
        return;
    }
    const double e = now_s();
    w.times = impl.execute(w.device, w.spec, w.in, w.out, w.host_bytes, w.feed.get());
    w.exec_s = now_s() - e;
}

void Cluster::WorkerRun::run_lane(Impl& impl, Lane& lane) {
    for (std::size_t k = 0; k < lane.ws.size(); ++k) {
        Work* w = lane.ws[k];
        lane.current = k;
        if (!w->error.empty()) continue;
        lane.deadline.at = now_s() + impl.slice_limit(w->spec);
        try {
            execute(impl, *w);
        } catch (const std::exception& e) {
            w->error = wire::failure_of(e);
        }
        lane.deadline.at = std::numeric_limits<double>::infinity();
    }
}

void Cluster::WorkerRun::start_lanes() {
    std::map<int, std::vector<Work*>> per_device;
    for (auto& w : work_) per_device[w.device].push_back(&w);
    for (auto& [dev, ws] : per_device) {
        lanes_.push_back(std::make_unique<Lane>());
        Lane& lane = *lanes_.back();
        lane.ws = ws;
        lane.done = std::async(std::launch::async, [&impl = impl_, &lane] { run_lane(impl, lane); });
    }
}

// The main thread (MPI is funneled) tells rank 0 every comm.heartbeat() seconds that this rank
// is alive, so that a long kernel is not taken for a lost rank, and leaves a lane whose slice is
// past --kernel-timeout to itself (a kernel cannot be stopped).
nlohmann::json Cluster::WorkerRun::watch() {
    nlohmann::json pending;
    for (double beat = now_s();;) {
        const bool came = take_inputs();
        Lane* waiting = nullptr;
        for (auto& lane : lanes_) {
            if (lane->held || lane->done.wait_for(std::chrono::seconds(0)) == std::future_status::ready) continue;
            const Work* w = lane->ws[lane->current];
            if (w->feed && !w->feed->complete()) {  // waiting on its input, not on a kernel
                waiting = lane.get();
                continue;
            }
            if (lane->deadline.passed()) {
                lane->held = true;
                impl_.hold(lane->ws.front()->device);
                continue;
            }
            waiting = lane.get();
        }
        if (!waiting && !inputs_pending_) return pending;  // every input taken, even a failed task's
        // Rank 0 sends a command while this rank executes only when it has given up on the
        // job without waiting for this rank's answers: after a lost rank, "exit" (lost).
        // This rank then ends without waiting for its kernels (MPI_Abort does not end it
        // under hydra's -disable-auto-cleanup once a rank has exited).
        if (comm_.iprobe(0, kCmd)) {
            const auto next = comm_.recv_json(0, kCmd);
            if (next.value("cmd", "") == "exit" && next.value("lost", false) && impl_.owned_comm)
                mpi::end_unfinalized(next.value("code", 1));
            pending = next;  // answered after the run's answers (not sent by rank 0 today)
        }
        // Back at once when it is done; at least every 50 ms to look at the deadlines. While
        // pieces move, no sleep: MPI moves a message only inside its calls.
        const double wait = std::clamp(beat + comm_.heartbeat() - now_s(), 0.0, 0.05);
        if (inputs_pending_) {
            if (!came) std::this_thread::yield();
        } else {
            waiting->done.wait_for(std::chrono::duration<double>(wait));
        }
        if (now_s() - beat >= comm_.heartbeat()) {
            send_heartbeat(comm_);
            beat = now_s();
        }
    }
}

/// The failures of a held lane's tasks, from the main thread's own record (the lane's thread
/// may still write into them).
std::map<const Cluster::WorkerRun::Work*, wire::Failure> Cluster::WorkerRun::held_failures() const {
    std::map<const Work*, wire::Failure> held;
    for (const auto& lane : lanes_) {
        if (!lane->held) continue;
        const std::size_t from = lane->current;
        held[lane->ws[from]] = impl_.timed_out(lane->ws[from]->spec);
        for (std::size_t k = from + 1; k < lane->ws.size(); ++k)
            held[lane->ws[k]] = {"not run: its device is held by a kernel that ran past --kernel-timeout",
                                 ErrorReason::timed_out};
    }
    return held;
}

bool Cluster::WorkerRun::answer() {
    const auto held = held_failures();
    for (auto& w : work_) {
        const auto h = held.find(&w);
        if (h != held.end() || !w.error.empty()) {
            nlohmann::json reply = {{"task", w.task}, {"ok", false}};
            wire::put_failure(reply, h != held.end() ? h->second : w.error);
            comm_.send_json(reply, 0, kResult);
            continue;
        }
        nlohmann::json reply = {
            {"task", w.task},
            {"ok", true},
            {"times",
             {{"h2d", w.times.h2d}, {"kernel", w.times.kernel}, {"d2h", w.times.d2h}, {"exec", w.exec_s}, {"gen", w.gen_s}, {"check", w.check_s}}}};
        if (w.local)
            reply["verdict"] = wire::verdict_to_json(w.verdict);  // the output stays here
        else
            reply["bytes"] = w.out.size();  // in pieces after the header
        comm_.send_json(reply, 0, kResult);
        if (!w.local) pieces::send_all(comm_, w.out, 0, kResult);
    }
    if (!held.empty()) {
        // A held lane's thread, tasks and buffers are left to the process's end (main's
        // mpi::end_held): destroying them would wait on the kernel.
        for (auto& lane : lanes_)
            if (lane->held) (void)lane.release();
        (void)new std::vector<Work>(std::move(work_));
        return false;
    }
    for (auto& w : work_) {
        impl_.put(impl_.in_pool, w.device, w.slot, std::move(w.in));
        impl_.put(impl_.out_pool, w.device, w.slot, std::move(w.out));
    }
    return true;
}

int Cluster::serve() {
    if (is_master()) throw Error("Cluster::serve is for ranks other than 0");
    Comm& comm = *impl_->comm;
    nlohmann::json pending;  // a command that came while a run executed
    for (;;) {
        const auto cmd = pending.is_null() ? comm.recv_json(0, kCmd) : std::exchange(pending, nullptr);
        const auto what = cmd.at("cmd").get<std::string>();
        if (what == "exit") {
            impl_->finished = true;
            comm.drain_alive();  // a data job's last signs of life from its neighbours: none left to MPI_Finalize
            // A rank of the job is lost: MPI_Finalize would wait for it forever (MPICH 4.0 does,
            // and `mpiexec -disable-auto-cleanup` then waits for this rank): this rank ends here,
            // without it (docs/cluster.md, "The fault model").
            if (cmd.value("lost", false) && impl_->owned_comm) mpi::end_unfinalized(cmd.value("code", 1));
            return cmd.value("code", 0);
        }
        if (what == "collect") {
            nlohmann::json reply = {{"ok", true}, {"data", ""}};
            try {
                if (impl_->collect_handler) reply["data"] = impl_->collect_handler(cmd.at("what").get<std::string>());
            } catch (const std::exception& e) {
                reply = {{"ok", false}};
                wire::put_failure(reply, wire::failure_of(e));
            }
            comm.send_json(reply, 0, kResult);
            continue;
        }
        if (what == "data") {
            serve_data(cmd);
            continue;
        }
        if (what != "run") throw Error("unknown command '" + what + "' from rank 0");
        WorkerRun run(*impl_, comm);
        run.receive(cmd);
        run.start_lanes();
        pending = run.watch();
        (void)run.answer();
    }
}

}  // namespace worksize
