// Rank 0's side of the job protocol (see cluster.hpp): run() sends every worker one command and
// then, per task, a payload header followed by the slice input, or an error header when packing
// failed (so that a worker never waits for a payload that will not come), runs its own devices'
// slices in threads, receives every task's answer and combines them; collect() asks every rank
// for a string; finish() sends the exit. A failure is raised only once every worker has
// answered, with the reason the failing rank gave it.
//
// Protocol (tags, wire.hpp): kCmd {"cmd":"run","job":…,"tasks":[{"task","device","spec"}]}; per
// task kPayload {"ok":true} then the input bytes, or {"ok":false,"error","reason"}; the worker
// answers each task with kResult {"task","ok","times"|"error","reason"} followed, if ok, by the
// output bytes. {"cmd":"collect","what"} is answered by kResult {"ok","data"|"error","reason"};
// {"cmd":"exit","code":N} ends serve().
#include <algorithm>
#include <future>
#include <map>

#include "cluster_impl.hpp"

namespace worksize {

using wire::kCmd;
using wire::kPayload;
using wire::kResult;

JobResult Cluster::run(KernelJob& job, std::vector<Assignment> assignments, const std::string& job_name) {
    if (!is_master()) throw Error("Cluster::run is for rank 0");
    Comm& comm = *impl_->comm;
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
        wire::Failure error;
    };
    std::vector<Task> tasks;
    for (const auto& a : assignments) {
        if (a.units == 0) continue;
        if (a.device < 0 || static_cast<std::size_t>(a.device) >= devs.size())
            throw Error("plan names device " + std::to_string(a.device) + " of " + std::to_string(devs.size()));
        Task t;
        t.a = a;
        t.spec = job.slice_spec(a);
        t.rank = devs[static_cast<std::size_t>(a.device)].rank;
        t.local_index = devs[static_cast<std::size_t>(a.device)].index;
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
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        if (tasks[i].rank != 0) continue;
        local.push_back(std::async(std::launch::async, [this, &job, &tasks, i, t0] {
            auto& t = tasks[i];
            try {
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
                    t.packed.clear();
                    t.packed.reserve(n);
                    for (const auto& part : parts) t.packed.insert(t.packed.end(), part.begin(), part.end());
                    in = t.packed;
                }
                const double e = now_s();
                t.run.pack_s = e - p;
                t.run.times = impl_->execute(t.local_index, t.spec, in, t.out);
                t.run.exec_s = now_s() - e;
            } catch (const std::exception& e) {
                t.error = wire::failure_of(e);
            }
            t.run.done_s = now_s() - t0;
        }));
    }

    // Workers: one command per rank, then per task a header and the payload (sends serialize on
    // rank 0's link, which is what the timings show). Once packing has failed, every further
    // task gets an error header instead: each worker hears about each of its tasks, answers
    // them, and goes back to serving.
    wire::Failure pack_failure;
    std::map<int, std::vector<std::size_t>> by_rank;
    for (std::size_t i = 0; i < tasks.size(); ++i)
        if (tasks[i].rank != 0) by_rank[tasks[i].rank].push_back(i);
    std::size_t expected = 0;
    for (const auto& [r, ids] : by_rank) {
        nlohmann::json cmd = {{"cmd", "run"}, {"job", job_name}, {"tasks", nlohmann::json::array()}};
        for (auto i : ids)
            cmd["tasks"].push_back({{"task", i}, {"device", tasks[i].local_index}, {"spec", to_json(tasks[i].spec)}});
        comm.send_json(cmd, r, kCmd);
        for (auto i : ids) {
            ++expected;
            if (pack_failure.empty()) {
                // The job's own data is sent in place when it can say where it is; else packed.
                const double p = now_s();
                std::vector<std::span<const std::byte>> parts;
                Bytes packed;
                try {
                    fault::before_pack();
                    parts = job.input_parts(tasks[i].a);
                    if (parts.empty()) packed = job.slice_input(tasks[i].a);
                } catch (const std::exception& e) {
                    const auto& d = devs[static_cast<std::size_t>(tasks[i].a.device)];
                    pack_failure = wire::failure_of(e);
                    pack_failure.message = "rank 0: packing the input of rank " + std::to_string(r) + ", device '" +
                                           d.name + "': " + pack_failure.message;
                }
                if (pack_failure.empty()) {
                    const double s = now_s();
                    tasks[i].run.pack_s = s - p;
                    comm.send_json({{"ok", true}}, r, kPayload);
                    if (parts.empty())
                        comm.send_bytes(packed, r, kPayload);
                    else
                        comm.send_parts(parts, r, kPayload);
                    tasks[i].run.send_s = now_s() - s;
                    continue;
                }
            }
            nlohmann::json cancel = {{"ok", false}};
            wire::put_failure(cancel, {"rank 0 sent no input: " + pack_failure.message, pack_failure.reason});
            comm.send_json(cancel, r, kPayload);
        }
    }
    for (std::size_t got = 0; got < expected; ++got) {
        int from = 0;
        const auto hdr = comm.recv_json(Comm::any_source, kResult, &from);
        const auto i = hdr.at("task").get<std::size_t>();
        if (i >= tasks.size()) throw Error("rank " + std::to_string(from) + " answered an unknown task");
        auto& t = tasks[i];
        if (!hdr.at("ok").get<bool>()) {
            t.error = wire::failure_from_json(hdr);
            t.run.done_s = now_s() - t0;
            continue;
        }
        const auto& tm = hdr.at("times");
        t.run.times = {tm.at("h2d").get<double>(), tm.at("kernel").get<double>(), tm.at("d2h").get<double>()};
        t.run.exec_s = tm.value("exec", 0.0);
        const double s = now_s();
        // Whatever fails here, the output is still received: the worker is not left sending.
        try {
            t.target = job.output_target(t.a);
        } catch (const std::exception& e) {
            t.error = wire::failure_of(e);
            t.target = {};
        }
        if (t.target.empty()) {
            comm.recv_bytes_into(t.out, from, kResult);
        } else {
            try {
                comm.recv_bytes_exact(t.target, from, kResult);
            } catch (const Error& e) {
                t.error = wire::failure_of(e);
            }
        }
        t.run.recv_s = now_s() - s;
        t.run.done_s = now_s() - t0;
    }
    for (auto& f : local) f.get();

    if (!pack_failure.empty()) pack_failure.raise();
    for (const auto& t : tasks) {
        if (!t.error.empty()) {
            const auto& d = devs[static_cast<std::size_t>(t.a.device)];
            t.error.raise("rank " + std::to_string(t.rank) + ", device '" + d.name + "': ");
        }
    }
    const double c0 = now_s();
    for (auto& t : tasks) job.accept_output(t.a, t.target.empty() ? std::span<const std::byte>(t.out) : t.target);
    job.finish();
    result.makespan_s = now_s() - t0;
    result.combine_s = result.makespan_s - (c0 - t0);
    for (auto& t : tasks) result.devices.push_back(t.run);
    // Devices that got no work are listed too, with zero times.
    for (const auto& a : assignments)
        if (a.units == 0) result.devices.push_back(DeviceRun{a, {}, 0, 0, 0, 0, 0});
    std::sort(result.devices.begin(), result.devices.end(),
              [](const DeviceRun& x, const DeviceRun& y) { return x.assignment.device < y.assignment.device; });
    for (auto& t : tasks) {
        if (t.rank != 0) continue;
        impl_->put(impl_->out_pool, t.local_index, t.slot, std::move(t.out));
        impl_->put(impl_->in_pool, t.local_index, t.slot, std::move(t.packed));
    }
    result.verdict = job.verify();
    result.summary = job.summary();
    return result;
}

std::vector<std::string> Cluster::collect(const std::string& what) {
    if (!is_master()) throw Error("Cluster::collect is for rank 0");
    Comm& comm = *impl_->comm;
    std::vector<std::string> out;
    out.push_back(impl_->collect_handler ? impl_->collect_handler(what) : std::string());
    wire::Failure failure;
    for (int r = 1; r < comm.size(); ++r) {
        comm.send_json({{"cmd", "collect"}, {"what", what}}, r, kCmd);
        const auto reply = comm.recv_json(r, kResult);
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
    if (!failure.empty()) failure.raise();
    return out;
}

void Cluster::finish(int exit_code) {
    if (!is_master() || impl_->finished) return;
    impl_->finished = true;
    for (int r = 1; r < impl_->comm->size(); ++r) impl_->comm->send_json({{"cmd", "exit"}, {"code", exit_code}}, r, kCmd);
}

}  // namespace worksize
