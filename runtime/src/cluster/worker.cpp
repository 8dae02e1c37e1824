// The workers' side of the job protocol (see master.cpp for the messages): serve() runs rank 0's
// commands until it says exit. A run command's tasks are received (an input, or rank 0's error
// header when its packing failed), executed one thread per device, and every task is answered,
// failed ones with their error and reason, so that rank 0 always hears back; then the worker
// goes back to serving.
#include <chrono>
#include <future>
#include <map>

#include "cluster/cluster_impl.hpp"

namespace worksize {

using wire::kCmd;
using wire::kPayload;
using wire::kResult;

int Cluster::serve() {
    if (is_master()) throw Error("Cluster::serve is for ranks other than 0");
    Comm& comm = *impl_->comm;
    for (;;) {
        const auto cmd = comm.recv_json(0, kCmd);
        const auto what = cmd.at("cmd").get<std::string>();
        if (what == "exit") {
            impl_->finished = true;
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
        struct Work {
            std::size_t task;
            int device;
            std::size_t slot = 0;  // the device's k-th task: its buffers in the pools
            SliceSpec spec;
            Bytes in, out;
            SliceTimes times;
            double exec_s = 0;
            wire::Failure error;
        };
        std::vector<Work> work;
        for (const auto& t : cmd.at("tasks")) {
            Work w;
            w.task = t.at("task").get<std::size_t>();
            w.device = t.at("device").get<int>();
            try {
                w.spec = slice_spec_from_json(t.at("spec"));
            } catch (const std::exception& e) {
                w.error = wire::failure_of(e);
            }
            work.push_back(std::move(w));
        }
        std::map<int, std::size_t> next_slot;
        for (auto& w : work) {
            w.slot = next_slot[w.device]++;
            w.in = impl_->take(impl_->in_pool, w.device, w.slot);
            w.out = impl_->take(impl_->out_pool, w.device, w.slot);
            const auto hdr = comm.recv_json(0, kPayload);
            if (!hdr.at("ok").get<bool>()) {
                w.error = wire::failure_from_json(hdr);  // rank 0 could not pack it: nothing follows
                continue;
            }
            comm.recv_bytes_into(w.in, 0, kPayload);
        }
        // One thread per device; tasks of one device run in order.
        std::map<int, std::vector<Work*>> per_device;
        for (auto& w : work) per_device[w.device].push_back(&w);
        std::vector<std::future<void>> futs;
        for (auto& [dev, ws] : per_device) {
            futs.push_back(std::async(std::launch::async, [this, ws = ws] {
                for (auto* w : ws) {
                    if (!w->error.empty()) continue;
                    try {
                        const double e = now_s();
                        w->times = impl_->execute(w->device, w->spec, w->in, w->out);
                        w->exec_s = now_s() - e;
                    } catch (const std::exception& e) {
                        w->error = wire::failure_of(e);
                    }
                }
            }));
        }
        // The main thread (MPI is funneled) tells rank 0 every comm.heartbeat() seconds that this rank is alive,
        // so that a long kernel is not taken for a lost rank.
        for (auto& f : futs) wait_beating(comm, f);
        for (auto& w : work) {
            if (!w.error.empty()) {
                nlohmann::json reply = {{"task", w.task}, {"ok", false}};
                wire::put_failure(reply, w.error);
                comm.send_json(reply, 0, kResult);
                continue;
            }
            comm.send_json({{"task", w.task},
                            {"ok", true},
                            {"times",
                             {{"h2d", w.times.h2d}, {"kernel", w.times.kernel}, {"d2h", w.times.d2h}, {"exec", w.exec_s}}}},
                           0, kResult);
            comm.send_bytes(w.out, 0, kResult);
        }
        for (auto& w : work) {
            impl_->put(impl_->in_pool, w.device, w.slot, std::move(w.in));
            impl_->put(impl_->out_pool, w.device, w.slot, std::move(w.out));
        }
    }
}

}  // namespace worksize
