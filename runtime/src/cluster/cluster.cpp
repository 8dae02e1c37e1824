// The cluster's start (see cluster.hpp): every rank discovers and selects its devices
// (device_selection.cpp) and sends rank 0 its inventory message (wire.cpp); rank 0 reads them
// and broadcasts the first failure, so that every rank throws or none does. Jobs are run by
// master.cpp (rank 0) and worker.cpp (the others).
#include "worksize/runtime/cluster.hpp"

#include "cluster/cluster_impl.hpp"
#include "jobs/bounds.hpp"
#include "worksize/runtime/devices.hpp"
#include "worksize/scheduler/log.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>
#include <thread>

namespace worksize {

Cluster::Cluster(mpi::Environment& env, const DeviceSelection& sel) : impl_(std::make_unique<Impl>()) {
    impl_->owned_comm = std::make_unique<mpi::MpiComm>(env);
    impl_->comm = impl_->owned_comm.get();
    start(sel);
}

Cluster::Cluster(Comm& comm, const DeviceSelection& sel) : impl_(std::make_unique<Impl>()) {
    impl_->comm = &comm;
    start(sel);
}

namespace {

using Contexts = std::map<int, std::unique_ptr<DeviceContext>>;

nlohmann::json failure_json(const wire::Failure& f) {
    nlohmann::json j = nlohmann::json::object();
    wire::put_failure(j, f);
    return j;
}

/// A rank driving several devices of one platform: pinned memory for the job's arrays made in a
/// context of them all (DeviceContext::rank_memory), for each of them. A platform that refuses
/// such a context leaves each device its own.
void share_rank_memory(Contexts& contexts) {
    std::map<cl_platform_id, std::vector<DeviceContext*>> by_platform;
    for (auto& [index, ctx] : contexts) by_platform[ctx->device().getInfo<CL_DEVICE_PLATFORM>()].push_back(ctx.get());
    for (auto& [platform, group] : by_platform) {
        if (group.size() < 2) continue;
        std::vector<cl::Device> devices;
        for (auto* c : group) devices.push_back(c->device());
        try {
            const cl::Context shared(devices);
            auto memory = std::make_shared<PinnedHostMemory>(shared, devices.front(), PinnedHostMemory::enabled_by_environment());
            for (auto* c : group) c->set_rank_memory(memory);
            log::debug() << "pinned memory for the job's arrays in one context over " << group.size() << " devices";
        } catch (const cl::Error& e) {
            log::debug() << "no context over the rank's " << group.size() << " devices of one platform (" << e.what()
                         << "): each keeps its own pinned memory";
        }
    }
}

/// Every rank: its devices discovered and selected (into `devices` and `contexts`), as its
/// inventory message; a failure becomes the message, never a hang.
nlohmann::json discover(const DeviceSelection& sel, Comm& comm, std::vector<DeviceInfo>& devices, Contexts& contexts) {
    std::string host = "unknown";
    try {
        auto all = all_local_devices();
        if (!all.empty()) host = all.front().info.host;
        auto mine = select_devices(std::move(all), sel, comm);
        for (auto& d : mine) {
            contexts.emplace(d.info.index, std::make_unique<DeviceContext>(d.device, d.info));
            devices.push_back(d.info);
            fault::device_identity(devices.back());  // test-only: WORKSIZE_FAULT=as-gpu
        }
        share_rank_memory(contexts);
        return wire::inventory_message(comm.rank(), host, devices, std::thread::hardware_concurrency());
    } catch (const std::exception& e) {
        return wire::inventory_failure(comm.rank(), host, wire::failure_of(e));
    }
}

void log_inventory(int r, const wire::Inventory& inv) {
    if (!log::enabled(log::Level::debug)) return;
    auto line = log::debug();
    line << "rank " << r << " on " << inv.host << " (" << inv.cores << " hardware threads) drives "
         << inv.devices.size() << " device(s)";
    for (const auto& d : inv.devices)
        line << (&d == &inv.devices.front() ? ": " : ", ") << d.index << " " << d.name << " (" << to_string(d.type)
             << ", " << d.compute_units << " CUs)";
}

/// Rank 0: every rank's inventory into `devices` and `hosts`, each node's load into `loads`;
/// the first rank whose message does not parse, as a failure (else null).
nlohmann::json read_inventories(const std::vector<std::string>& parts, const DeviceSelection& sel,
                                std::vector<DeviceInfo>& devices, std::vector<std::string>& hosts,
                                std::vector<RankLoad>& loads) {
    const int size = int(parts.size());
    for (int r = 0; r < size; ++r) {
        try {
            auto inv = wire::parse_inventory(parts[static_cast<std::size_t>(r)], r);
            hosts.push_back(inv.host);
            // Rank 0 runs kernels alone, with --master-works, or when a selection other than
            // auto gives it devices (--select all, 0=...): its devices idle otherwise.
            RankLoad load{inv.host, inv.cores, 0};
            if (r > 0 || size == 1 || sel.master_works || sel.spec != "auto")
                for (const auto& d : inv.devices) {
                    if (d.type == DeviceType::cpu)
                        load.cpu_compute_units += d.compute_units;
                    else
                        ++load.other_devices;
                }
            loads.push_back(load);
            log_inventory(r, inv);
            for (auto& d : inv.devices) devices.push_back(std::move(d));
        } catch (const std::exception& e) {
            auto f = wire::failure_of(e);
            f.message = "rank " + std::to_string(r) + ": " + f.message;
            return failure_json(f);
        }
    }
    if (devices.empty()) return failure_json({"no rank drives an OpenCL device (check --select and --filter)"});
    return nullptr;
}

/// Rank 0: ranks of one host driving one GPU or accelerator (issue 15): refused (a failure),
/// or with --allow-shared-device counted once (the lowest rank's instance); `devices` lists them.
nlohmann::json settle_shared(const DeviceSelection& sel, std::vector<DeviceInfo>& devices) {
    const auto shared = shared_devices(devices);
    nlohmann::json failure;
    if (!shared.empty() && sel.shared == DeviceSelection::Shared::refuse) {
        std::string why = shared.front().text;
        if (shared.size() > 1) why.append(" (and ").append(std::to_string(shared.size() - 1)).append(" more)");
        why.append(": run one rank per device (docs/cluster.md) or pass --allow-shared-device");
        failure = failure_json({why, ErrorReason::bad_input});
    }
    std::vector<std::size_t> drop;
    for (const auto& g : shared) {
        if (sel.shared == DeviceSelection::Shared::list) {
            log::warn() << g.text << ": plan, run, calibrate and tune refuse this without --allow-shared-device";
        } else if (sel.shared == DeviceSelection::Shared::count_once) {
            auto line = log::warn();
            line << g.text << ": --allow-shared-device: counted once, rank " << devices[g.instances.front()].rank
                 << " drives it and rank";
            for (std::size_t k = 1; k < g.instances.size(); ++k)
                line << (k == 1 ? (g.instances.size() > 2 ? "s " : " ") : ", ") << devices[g.instances[k]].rank;
            line << " get" << (g.instances.size() > 2 ? "" : "s") << " none of its work";
            drop.insert(drop.end(), g.instances.begin() + 1, g.instances.end());
        }
    }
    std::sort(drop.rbegin(), drop.rend());
    for (auto i : drop) devices.erase(devices.begin() + static_cast<std::ptrdiff_t>(i));
    return failure;
}

}  // namespace

void Cluster::start(const DeviceSelection& sel) {
    Comm& comm = *impl_->comm;
    impl_->rank_timeout_s = sel.rank_timeout_s;
    impl_->kernel_timeout_s = sel.kernel_timeout_s;
    if (sel.check_bounds) bounds::set_enabled(true);  // every rank parsed the option
    comm.set_heartbeat(std::min(1.0, sel.rank_timeout_s / 3.0));
    comm.set_alive_tag(wire::kAlive);  // a data job's neighbours are waited on while they send it
    auto msg = discover(sel, comm, impl_->devices, impl_->contexts);
    // Test-only: WORKSIZE_FAULT=inventory-version / inventory-garbage (fault.hpp).
    const auto parts = comm.gather_strings(fault::inventory_text(std::move(msg)));
    nlohmann::json failure;  // {"error", "reason"} or null
    if (comm.rank() == 0) {
        impl_->devices.clear();
        std::vector<RankLoad> loads;
        failure = read_inventories(parts, sel, impl_->devices, impl_->hosts, loads);
        if (failure.is_null()) failure = settle_shared(sel, impl_->devices);
        if (failure.is_null())
            for (const auto& w : oversubscribed_nodes(loads)) log::warn(w);
    }
    const std::string text = comm.broadcast_string(failure.is_null() ? std::string() : failure.dump());
    if (!text.empty()) {
        impl_->finished = true;
        const auto f = wire::failure_from_json(nlohmann::json::parse(text));
        if (comm.rank() == 0) f.raise();
        throw JobAborted(f.reason, f.message);
    }
}

Cluster::~Cluster() {
    // A device held by a kernel past --kernel-timeout: its context, queue and buffers, and the
    // thread waiting on it, are left to the process's end (mpi::end_held), as releasing them
    // would wait on the kernel.
    if (!impl_->held.empty()) (void)impl_.release();
}

bool Cluster::is_master() const { return impl_->comm->rank() == 0; }
int Cluster::ranks() const { return impl_->comm->size(); }
const std::vector<DeviceInfo>& Cluster::devices() const { return impl_->devices; }
const std::vector<std::string>& Cluster::hosts() const { return impl_->hosts; }
std::shared_ptr<HostMemoryResource> Cluster::host_memory() const {
    if (impl_->contexts.empty()) return nullptr;
    return impl_->contexts.begin()->second->rank_memory();
}

void Cluster::generate(KernelJob& job) const {
    job.host_memory(host_memory());
    job.generate();
}

void Cluster::set_collect_handler(std::function<std::string(const std::string&)> handler) {
    impl_->collect_handler = std::move(handler);
}

}  // namespace worksize
