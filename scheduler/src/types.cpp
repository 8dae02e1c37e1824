// Names of the scheduler's enumerations, spelled as the command line and the reports spell them
// (e.g. LocalPolicy::null is "null"), so that what is printed can be typed back in.
#include "worksize/scheduler/types.hpp"

#include <algorithm>

namespace worksize {

const char* to_string(DeviceType t) {
    switch (t) {
        case DeviceType::gpu: return "gpu";
        case DeviceType::cpu: return "cpu";
        case DeviceType::accelerator: return "accelerator";
        case DeviceType::other: return "other";
    }
    return "other";
}

const char* to_string(PeSource s) {
    switch (s) {
        case PeSource::nv_compute_capability: return "nv-compute-capability";
        case PeSource::amd_attribute: return "amd-attribute";
        case PeSource::cpu_vector_width: return "cpu-vector-width";
        case PeSource::preferred_multiple: return "preferred-multiple";
        case PeSource::profile: return "profile";
    }
    return "unknown";
}

const char* to_string(ComputeClass c) {
    switch (c) {
        case ComputeClass::small: return "small";
        case ComputeClass::medium: return "medium";
        case ComputeClass::large: return "large";
    }
    return "unknown";
}

const char* to_string(LocalPolicy p) {
    switch (p) {
        case LocalPolicy::null: return "null";
        case LocalPolicy::paper: return "paper";
        case LocalPolicy::tuned: return "tuned";
    }
    return "unknown";
}

const char* to_string(Priority p) {
    switch (p) {
        case Priority::x: return "x";
        case Priority::y: return "y";
    }
    return "unknown";
}

const char* to_string(ErrorReason r) {
    switch (r) {
        case ErrorReason::generic: return "generic";
        case ErrorReason::bad_input: return "bad-input";
        case ErrorReason::build_failure: return "build-failure";
        case ErrorReason::device_limit: return "device-limit";
        case ErrorReason::launch_failure: return "launch-failure";
        case ErrorReason::wrong_result: return "wrong-result";
        case ErrorReason::lost_rank: return "lost-rank";
        case ErrorReason::timed_out: return "timed-out";
    }
    return "generic";
}

ErrorReason error_reason_from_string(const std::string& s) {
    for (auto r : {ErrorReason::bad_input, ErrorReason::build_failure, ErrorReason::device_limit,
                   ErrorReason::launch_failure, ErrorReason::wrong_result, ErrorReason::lost_rank,
                   ErrorReason::timed_out})
        if (s == to_string(r)) return r;
    return ErrorReason::generic;
}

void throw_error(ErrorReason reason, const std::string& what) {
    if (reason == ErrorReason::bad_input) throw InvalidArgument(what);
    throw Error(reason, what);
}

ErrorReason reason_of(const std::exception& e) {
    const auto* err = dynamic_cast<const Error*>(&e);
    return err ? err->reason() : ErrorReason::generic;
}

std::vector<std::string> oversubscribed_nodes(const std::vector<RankLoad>& ranks) {
    struct Node {
        std::size_t ranks = 0;
        std::uint64_t cus = 0;
        std::size_t others = 0;  // ranks driving GPUs (or other devices that are not CPUs)
        unsigned cores = 0;
    };
    std::vector<std::pair<std::string, Node>> nodes;  // in rank order of first appearance
    for (const auto& r : ranks) {
        auto it = std::find_if(nodes.begin(), nodes.end(), [&](const auto& n) { return n.first == r.host; });
        if (it == nodes.end()) it = nodes.insert(nodes.end(), {r.host, Node{}});
        if (r.cpu_compute_units > 0) {
            ++it->second.ranks;
            it->second.cus += r.cpu_compute_units;
        }
        if (r.other_devices > 0 && r.cpu_compute_units == 0) ++it->second.others;
        it->second.cores = std::max(it->second.cores, r.cores);
    }
    std::vector<std::string> out;
    for (const auto& [host, n] : nodes)
        if (n.cores > 0 && n.cus > n.cores)
            out.push_back("node " + host + ": " + std::to_string(n.ranks) + (n.ranks == 1 ? " rank drives" : " ranks drive") +
                          " CPU devices with " + std::to_string(n.cus) + " compute units in all on " +
                          std::to_string(n.cores) +
                          " cores; timings will interfere (set POCL_MAX_PTHREAD_COUNT / POCL_CPU_MAX_CU_NUM per rank)");
        else if (n.cores > 0 && n.cus > 0 && n.others > 0 && n.cus + n.others > n.cores)
            out.push_back("node " + host + ": CPU devices with " + std::to_string(n.cus) + " compute units in all on " +
                          std::to_string(n.cores) + " cores beside " + std::to_string(n.others) +
                          (n.others == 1 ? " rank that drives a GPU" : " ranks that drive GPUs") +
                          "; the CPU devices will run slower than alone (set POCL_MAX_PTHREAD_COUNT / POCL_CPU_MAX_CU_NUM "
                          "to leave a core to each such rank)");
    return out;
}

bool same_device(const DeviceInfo& a, const DeviceInfo& b) {
    if (a.host != b.host || a.platform != b.platform || a.name != b.name || a.type != b.type) return false;
    if (!a.pci_bus_id.empty() && !b.pci_bus_id.empty()) return a.pci_bus_id == b.pci_bus_id;
    return a.pci_bus_id.empty() && b.pci_bus_id.empty() && a.index == b.index;
}

std::vector<SharedDevice> shared_devices(const std::vector<DeviceInfo>& devices) {
    std::vector<SharedDevice> out;
    std::vector<bool> grouped(devices.size(), false);
    for (std::size_t i = 0; i < devices.size(); ++i) {
        const auto& d = devices[i];
        if (grouped[i] || d.type == DeviceType::cpu) continue;
        SharedDevice g;
        g.instances.push_back(i);
        for (std::size_t j = i + 1; j < devices.size(); ++j)
            if (!grouped[j] && devices[j].rank != d.rank && same_device(d, devices[j])) {
                grouped[j] = true;
                g.instances.push_back(j);
            }
        if (g.instances.size() < 2) continue;
        std::string ranks;
        for (std::size_t k = 0; k < g.instances.size(); ++k) {
            if (k > 0) ranks += k + 1 == g.instances.size() ? " and " : ", ";
            ranks += std::to_string(devices[g.instances[k]].rank);
        }
        g.text = "ranks ";
        g.text.append(ranks).append(" on host ").append(d.host).append(" would drive one device, ");
        g.text.append(std::to_string(d.index)).append(" '").append(d.name).append("' (").append(to_string(d.type));
        if (d.pci_bus_id.empty())
            g.text.append(", no PCI bus id from the driver: the same device index)");
        else
            g.text.append(", PCI ").append(d.pci_bus_id).append(")");
        out.push_back(std::move(g));
    }
    return out;
}

}  // namespace worksize
