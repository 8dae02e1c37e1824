// Inventory gathering and the master-worker job protocol (see cluster.hpp).
//
// Protocol (tags): rank 0 sends a worker kCmd {"cmd":"run","job":…,"tasks":[{"task","device",
// "spec"}]} then one kPayload message per task; the worker runs its tasks (a thread per device)
// and answers each with kResult {"task","ok","times"|"error"} followed, if ok, by the output
// bytes. {"cmd":"exit","code":N} ends serve(). Every failure is answered, never swallowed, so
// rank 0 always hears back from every task and no rank waits forever.
#include "worksize/runtime/cluster.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "worksize/runtime/devices.hpp"
#include "worksize/runtime/opencl.hpp"

namespace worksize {

namespace {

constexpr int kCmd = 11, kPayload = 12, kResult = 13;

double now_s() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

DeviceType parse_type(const std::string& s) {
    if (s == "gpu") return DeviceType::gpu;
    if (s == "cpu") return DeviceType::cpu;
    if (s == "accelerator") return DeviceType::accelerator;
    return DeviceType::other;
}

PeSource parse_pe_source(const std::string& s) {
    for (auto p : {PeSource::nv_compute_capability, PeSource::amd_attribute, PeSource::cpu_vector_width,
                   PeSource::preferred_multiple, PeSource::profile})
        if (s == to_string(p)) return p;
    throw Error("unknown PE source '" + s + "'");
}

/// Test-only fault injection (docs/testing.md), WORKSIZE_FAULT read once per process:
/// "execute" makes this rank's device executions fail like a launch error; "crash" makes the rank
/// die in the middle of a job; "wrong-local:N" makes every slice run with local size x == N
/// return a wrong result (its first float becomes 1e30), so that the verification fails.
struct InjectedFault {
    bool execute = false, crash = false;
    std::optional<std::uint64_t> wrong_local;
};

const InjectedFault& injected_fault() {
    static const InjectedFault fault = [] {
        InjectedFault f;
        const char* env = std::getenv("WORKSIZE_FAULT");
        if (!env) return f;
        const std::string v = env, prefix = "wrong-local:";
        f.execute = v == "execute";
        f.crash = v == "crash";
        if (v.rfind(prefix, 0) == 0) {
            const std::string n = v.substr(prefix.size());
            if (!n.empty() && n.find_first_not_of("0123456789") == std::string::npos) f.wrong_local = std::stoull(n);
        }
        return f;
    }();
    return fault;
}

void maybe_inject_fault(const DeviceInfo& dev) {
    const InjectedFault& f = injected_fault();
    if (f.execute)
        throw ClError("clEnqueueNDRangeKernel", CL_OUT_OF_RESOURCES,
                      dev.name + " (injected by WORKSIZE_FAULT=execute)");
    if (f.crash) std::_Exit(134);
}

void maybe_corrupt_output(const SliceSpec& spec, Bytes& out) {
    const InjectedFault& f = injected_fault();
    if (!f.wrong_local || spec.local.x != *f.wrong_local || out.size() < sizeof(float)) return;
    const float wrong = 1e30f;
    std::memcpy(out.data(), &wrong, sizeof wrong);
}

/// Parse "R=SEL[+SEL..],R=..." into rank -> selectors; a selector is a device index or a word
/// matched against the device's platform, name, vendor and type (e.g. "gpu", "nvidia", "pthread").
std::map<int, std::vector<std::string>> parse_select(const std::string& spec) {
    std::map<int, std::vector<std::string>> out;
    std::stringstream ss(spec);
    std::string part;
    auto fail = [&] {
        throw InvalidArgument("invalid --select '" + spec +
                              "': expected auto, all, or RANK=DEVICE[+DEVICE...][,RANK=...] with DEVICE an "
                              "index or a word of the device's platform, name, vendor or type");
    };
    while (std::getline(ss, part, ',')) {
        const auto eq = part.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == part.size()) fail();
        int r = -1;
        try {
            std::size_t pos = 0;
            r = std::stoi(part.substr(0, eq), &pos);
            if (pos != eq || r < 0) fail();
        } catch (const std::logic_error&) {
            fail();
        }
        std::stringstream is(part.substr(eq + 1));
        std::string sel;
        while (std::getline(is, sel, '+')) {
            if (sel.empty()) fail();
            out[r].push_back(sel);
        }
    }
    return out;
}

bool is_index(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

nlohmann::json to_json(const DeviceInfo& d) {
    return {{"rank", d.rank},
            {"index", d.index},
            {"host", d.host},
            {"platform", d.platform},
            {"name", d.name},
            {"vendor", d.vendor},
            {"driver_version", d.driver_version},
            {"type", to_string(d.type)},
            {"compute_units", d.compute_units},
            {"pes_per_cu", d.pes_per_cu},
            {"pes_per_cu_source", to_string(d.pe_source)},
            {"total_pes", d.total_pes()},
            {"max_clock_mhz", d.max_clock_mhz},
            {"max_work_group_size", d.max_work_group_size},
            {"max_work_item_sizes", d.max_work_item_sizes},
            {"local_mem_bytes", d.local_mem_bytes},
            {"global_mem_bytes", d.global_mem_bytes},
            {"max_alloc_bytes", d.max_alloc_bytes},
            {"preferred_wg_multiple", d.preferred_wg_multiple}};
}

DeviceInfo device_info_from_json(const nlohmann::json& j) {
    DeviceInfo d;
    d.rank = j.at("rank").get<int>();
    d.index = j.at("index").get<int>();
    d.host = j.at("host").get<std::string>();
    d.platform = j.at("platform").get<std::string>();
    d.name = j.at("name").get<std::string>();
    d.vendor = j.at("vendor").get<std::string>();
    d.driver_version = j.at("driver_version").get<std::string>();
    d.type = parse_type(j.at("type").get<std::string>());
    d.compute_units = j.at("compute_units").get<std::uint32_t>();
    d.pes_per_cu = j.at("pes_per_cu").get<std::uint32_t>();
    d.pe_source = parse_pe_source(j.at("pes_per_cu_source").get<std::string>());
    d.max_clock_mhz = j.at("max_clock_mhz").get<std::uint32_t>();
    d.max_work_group_size = j.at("max_work_group_size").get<std::uint64_t>();
    d.max_work_item_sizes = j.at("max_work_item_sizes").get<std::array<std::uint64_t, 3>>();
    d.local_mem_bytes = j.at("local_mem_bytes").get<std::uint64_t>();
    d.global_mem_bytes = j.at("global_mem_bytes").get<std::uint64_t>();
    d.max_alloc_bytes = j.value("max_alloc_bytes", std::uint64_t{0});
    d.preferred_wg_multiple = j.at("preferred_wg_multiple").get<std::uint64_t>();
    return d;
}

struct Cluster::Impl {
    mpi::Environment* env = nullptr;
    std::vector<DeviceInfo> devices;           // rank 0: all; others: own
    std::vector<std::string> hosts;
    std::map<int, std::unique_ptr<DeviceContext>> contexts;  // by local device index
    bool finished = false;
    std::function<std::string(const std::string&)> collect_handler;
    /// The payload buffers of this rank's devices, kept from job to job: memory that is already
    /// mapped is not zeroed or page-faulted again (docs/models.md, "Data path"). Keyed by
    /// (local device index, slot), slot k holding the device's k-th task of a command; their
    /// memory is the device's pinned host memory (DeviceContext::host_memory), so that the
    /// executor's copies between them and the device run at DMA speed. Declared after
    /// `contexts`, so destroyed before them (the resources are shared, so either order is safe).
    using Pool = std::map<std::pair<int, std::size_t>, Bytes>;
    Pool in_pool, out_pool;

    /// The pooled buffer of (device, slot), or a new empty one with the device's host memory.
    Bytes take(Pool& pool, int device, std::size_t slot) {
        std::shared_ptr<HostMemoryResource> want;
        if (auto c = contexts.find(device); c != contexts.end()) want = c->second->host_memory();
        if (auto it = pool.find({device, slot}); it != pool.end()) {
            Bytes b = std::move(it->second);
            pool.erase(it);
            // An executor may have swapped in a buffer of its own: keep only the device's memory.
            if (b.get_allocator().resource() == want) return b;
        }
        return bytes_with(std::move(want));
    }
    void put(Pool& pool, int device, std::size_t slot, Bytes&& b) {
        pool.insert_or_assign(std::pair{device, slot}, std::move(b));
    }

    DeviceContext& context(int index) {
        auto it = contexts.find(index);
        if (it == contexts.end())
            throw Error("this rank drives no device with index " + std::to_string(index));
        return *it->second;
    }

    /// Run one task on a local device; returns output bytes and times, or throws.
    SliceTimes execute(int device_index, const SliceSpec& spec, std::span<const std::byte> in, Bytes& out) {
        auto& ctx = context(device_index);
        maybe_inject_fault(ctx.info());
        const auto& factory = kernel_job(spec.kernel);
        const SliceTimes t = factory.execute(ctx, spec, in, out);
        maybe_corrupt_output(spec, out);
        return t;
    }
};

Cluster::Cluster(mpi::Environment& env, const DeviceSelection& sel) : impl_(std::make_unique<Impl>()) {
    impl_->env = &env;
    const int rank = env.rank(), size = env.size();

    // Every rank: discover and select; a failure becomes this rank's message, never a hang.
    nlohmann::json msg = {{"worksize_inventory", kInventoryVersion}, {"rank", rank}};
    std::vector<LocalDevice> mine;
    try {
        msg["host"] = "unknown";
        auto all = all_local_devices();
        if (!all.empty()) msg["host"] = all.front().info.host;
        std::vector<LocalDevice> filtered;
        for (auto& d : all) {
            d.info.rank = rank;
            if (!sel.filter.empty()) {
                const auto f = lower(sel.filter);
                if (lower(d.info.platform + " " + d.info.name + " " + d.info.vendor).find(f) == std::string::npos)
                    continue;
            }
            filtered.push_back(std::move(d));
        }
        if (sel.spec == "all") {
            mine = std::move(filtered);
        } else if (sel.spec == "auto") {
            if (size == 1 || (rank == 0 && sel.master_works)) {
                mine = std::move(filtered);
            } else if (rank != 0 && !filtered.empty()) {
                // Workers of a node take its devices round-robin; rank 0, when it is on this
                // node and only the master, is node-local rank 0 and takes none.
                const int w = env.local_rank() - (env.master_on_node() && !sel.master_works ? 1 : 0);
                const std::size_t n = filtered.size();
                const std::size_t take = std::min<std::size_t>(n, static_cast<std::size_t>(std::max(1, sel.per_rank)));
                std::vector<bool> used(n, false);
                for (std::size_t k = 0; k < take; ++k) {
                    const std::size_t i = (static_cast<std::size_t>(w) * take + k) % n;
                    if (used[i]) continue;
                    used[i] = true;
                    mine.push_back(filtered[i]);
                }
            }
        } else {
            const auto map = parse_select(sel.spec);
            if (auto it = map.find(rank); it != map.end()) {
                std::vector<bool> taken(filtered.size(), false);
                for (const auto& want : it->second) {
                    bool found = false;
                    for (std::size_t i = 0; i < filtered.size(); ++i) {
                        const auto& d = filtered[i].info;
                        const bool match = is_index(want)
                                               ? d.index == std::stoi(want)
                                               : lower(d.platform + " " + d.name + " " + d.vendor + " " +
                                                       to_string(d.type)).find(lower(want)) != std::string::npos;
                        if (!match) continue;
                        found = true;
                        if (!taken[i]) mine.push_back(filtered[i]);
                        taken[i] = true;
                    }
                    if (!found)
                        throw InvalidArgument("--select names device '" + want + "' on rank " + std::to_string(rank) +
                                              ", which has " + std::to_string(all.size()) + " device(s)" +
                                              (sel.filter.empty() ? "" : " matching the filter") + ": no such device");
                }
            }
        }
        nlohmann::json devs = nlohmann::json::array();
        for (auto& d : mine) {
            devs.push_back(to_json(d.info));
            impl_->contexts.emplace(d.info.index, std::make_unique<DeviceContext>(d.device, d.info));
            impl_->devices.push_back(d.info);
        }
        msg["devices"] = devs;
    } catch (const std::exception& e) {
        msg["error"] = e.what();
    }

    // Test-only: WORKSIZE_FAULT=inventory-version / inventory-garbage sends a mismatched or
    // malformed inventory message from this rank (docs/testing.md).
    std::string mine_text = msg.dump();
    if (const char* f = std::getenv("WORKSIZE_FAULT")) {
        if (std::string(f) == "inventory-version") {
            msg["worksize_inventory"] = 999;
            mine_text = msg.dump();
        } else if (std::string(f) == "inventory-garbage") {
            mine_text = "{\"worksize_inventory\": 1, \"rank\": ";
        }
    }
    const auto parts = mpi::gather_strings(mine_text);
    std::string failure;
    if (rank == 0) {
        impl_->devices.clear();
        for (int r = 0; r < size; ++r) {
            const std::string who = "rank " + std::to_string(r);
            try {
                const auto j = nlohmann::json::parse(parts[static_cast<std::size_t>(r)]);
                const int v = j.at("worksize_inventory").get<int>();
                if (v != kInventoryVersion)
                    throw Error("inventory message version " + std::to_string(v) + ", expected " +
                                std::to_string(kInventoryVersion) + " (mixed worksize versions?)");
                if (j.at("rank").get<int>() != r) throw Error("inventory message claims another rank");
                if (j.contains("error")) throw Error(j.at("error").get<std::string>());
                impl_->hosts.push_back(j.at("host").get<std::string>());
                for (const auto& d : j.at("devices")) impl_->devices.push_back(device_info_from_json(d));
            } catch (const nlohmann::json::exception& e) {
                failure = who + ": malformed inventory message: " + e.what();
                break;
            } catch (const std::exception& e) {
                failure = who + ": " + e.what();
                break;
            }
        }
        if (failure.empty() && impl_->devices.empty())
            failure = "no rank drives an OpenCL device (check --select and --filter)";
    }
    failure = mpi::broadcast_string(failure);
    if (!failure.empty()) {
        impl_->finished = true;
        if (rank == 0) throw Error(failure);
        throw JobAborted(failure);
    }
}

Cluster::~Cluster() = default;

bool Cluster::is_master() const { return impl_->env->rank() == 0; }
int Cluster::ranks() const { return impl_->env->size(); }
const std::vector<DeviceInfo>& Cluster::devices() const { return impl_->devices; }
const std::vector<std::string>& Cluster::hosts() const { return impl_->hosts; }

JobResult Cluster::run(KernelJob& job, std::vector<Assignment> assignments, const std::string& job_name) {
    if (!is_master()) throw Error("Cluster::run is for rank 0");
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
        std::string error;
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

    // Rank 0's own devices run in threads while the main thread talks MPI. Their output (and
    // a packed input) go to pooled buffers in the device's pinned memory, like a worker's; a
    // single input part is read by the device where it is.
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
                t.error = e.what();
            }
            t.run.done_s = now_s() - t0;
        }));
    }

    // Workers: one command per rank, then the payloads in task order (sends serialize on
    // rank 0's link, which is what the timings show).
    std::map<int, std::vector<std::size_t>> by_rank;
    for (std::size_t i = 0; i < tasks.size(); ++i)
        if (tasks[i].rank != 0) by_rank[tasks[i].rank].push_back(i);
    std::size_t expected = 0;
    for (const auto& [r, ids] : by_rank) {
        nlohmann::json cmd = {{"cmd", "run"}, {"job", job_name}, {"tasks", nlohmann::json::array()}};
        for (auto i : ids)
            cmd["tasks"].push_back({{"task", i}, {"device", tasks[i].local_index}, {"spec", to_json(tasks[i].spec)}});
        mpi::send_json(cmd, r, kCmd);
        for (auto i : ids) {
            // The job's own data is sent in place when it can say where it is; else packed.
            const double p = now_s();
            const auto parts = job.input_parts(tasks[i].a);
            Bytes packed;
            if (parts.empty()) packed = job.slice_input(tasks[i].a);
            const double s = now_s();
            tasks[i].run.pack_s = s - p;
            if (parts.empty())
                mpi::send_bytes(packed, r, kPayload);
            else
                mpi::send_parts(parts, r, kPayload);
            tasks[i].run.send_s = now_s() - s;
            ++expected;
        }
    }
    for (std::size_t got = 0; got < expected; ++got) {
        int from = 0;
        const auto hdr = mpi::recv_json(mpi::any_source(), kResult, &from);
        const auto i = hdr.at("task").get<std::size_t>();
        if (i >= tasks.size()) throw Error("rank " + std::to_string(from) + " answered an unknown task");
        auto& t = tasks[i];
        if (!hdr.at("ok").get<bool>()) {
            t.error = hdr.at("error").get<std::string>();
            t.run.done_s = now_s() - t0;
            continue;
        }
        const auto& tm = hdr.at("times");
        t.run.times = {tm.at("h2d").get<double>(), tm.at("kernel").get<double>(), tm.at("d2h").get<double>()};
        t.run.exec_s = tm.value("exec", 0.0);
        const double s = now_s();
        t.target = job.output_target(t.a);
        if (t.target.empty()) {
            t.out = mpi::recv_bytes(from, kResult);
        } else {
            try {
                mpi::recv_bytes_into(t.target, from, kResult);
            } catch (const mpi::MpiError& e) {
                t.error = e.what();
            }
        }
        t.run.recv_s = now_s() - s;
        t.run.done_s = now_s() - t0;
    }
    for (auto& f : local) f.get();

    for (const auto& t : tasks) {
        if (!t.error.empty()) {
            const auto& d = devs[static_cast<std::size_t>(t.a.device)];
            throw Error("rank " + std::to_string(t.rank) + ", device '" + d.name + "': " + t.error);
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

int Cluster::serve() {
    if (is_master()) throw Error("Cluster::serve is for ranks other than 0");
    for (;;) {
        const auto cmd = mpi::recv_json(0, kCmd);
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
                reply = {{"ok", false}, {"error", e.what()}};
            }
            mpi::send_json(reply, 0, kResult);
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
            std::string error;
        };
        std::vector<Work> work;
        for (const auto& t : cmd.at("tasks")) {
            Work w;
            w.task = t.at("task").get<std::size_t>();
            w.device = t.at("device").get<int>();
            try {
                w.spec = slice_spec_from_json(t.at("spec"));
            } catch (const std::exception& e) {
                w.error = e.what();
            }
            work.push_back(std::move(w));
        }
        std::map<int, std::size_t> next_slot;
        for (auto& w : work) {
            w.slot = next_slot[w.device]++;
            w.in = impl_->take(impl_->in_pool, w.device, w.slot);
            w.out = impl_->take(impl_->out_pool, w.device, w.slot);
            mpi::recv_bytes_into(w.in, 0, kPayload);
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
                        w->error = e.what();
                    }
                }
            }));
        }
        for (auto& f : futs) f.get();
        for (auto& w : work) {
            if (!w.error.empty()) {
                mpi::send_json({{"task", w.task}, {"ok", false}, {"error", w.error}}, 0, kResult);
                continue;
            }
            mpi::send_json({{"task", w.task},
                            {"ok", true},
                            {"times",
                             {{"h2d", w.times.h2d}, {"kernel", w.times.kernel}, {"d2h", w.times.d2h}, {"exec", w.exec_s}}}},
                           0, kResult);
            mpi::send_bytes(w.out, 0, kResult);
        }
        for (auto& w : work) {
            impl_->put(impl_->in_pool, w.device, w.slot, std::move(w.in));
            impl_->put(impl_->out_pool, w.device, w.slot, std::move(w.out));
        }
    }
}

void Cluster::set_collect_handler(std::function<std::string(const std::string&)> handler) {
    impl_->collect_handler = std::move(handler);
}

std::vector<std::string> Cluster::collect(const std::string& what) {
    if (!is_master()) throw Error("Cluster::collect is for rank 0");
    std::vector<std::string> out;
    out.push_back(impl_->collect_handler ? impl_->collect_handler(what) : std::string());
    std::string failure;
    for (int r = 1; r < impl_->env->size(); ++r) {
        mpi::send_json({{"cmd", "collect"}, {"what", what}}, r, kCmd);
        const auto reply = mpi::recv_json(r, kResult);
        if (!reply.at("ok").get<bool>()) {
            if (failure.empty()) failure = "rank " + std::to_string(r) + ": " + reply.at("error").get<std::string>();
            out.emplace_back();
        } else {
            out.push_back(reply.at("data").get<std::string>());
        }
    }
    if (!failure.empty()) throw Error(failure);
    return out;
}

void Cluster::finish(int exit_code) {
    if (!is_master() || impl_->finished) return;
    impl_->finished = true;
    for (int r = 1; r < impl_->env->size(); ++r) mpi::send_json({{"cmd", "exit"}, {"code", exit_code}}, r, kCmd);
}

}  // namespace worksize
