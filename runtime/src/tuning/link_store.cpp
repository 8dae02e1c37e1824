// The links' ladder and pairs, and their database entries as the data-job model takes them
// (see links.hpp).
#include <algorithm>
#include <map>

#include "worksize/runtime/links.hpp"

namespace worksize {

std::vector<std::uint64_t> link_ladder(const LinkOptions& o, std::uint64_t cap) {
    const std::uint64_t top = std::max(std::min(o.max_bytes, cap), o.min_bytes * 4);
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t n = o.min_bytes; n <= top; n *= 4) sizes.push_back(n);
    return sizes;
}

std::vector<std::pair<int, int>> link_pairs(int ranks) {
    std::vector<std::pair<int, int>> pairs;
    for (int r = 1; r < ranks; ++r) pairs.emplace_back(0, r);
    for (int r = 1; r + 1 < ranks; ++r) pairs.emplace_back(r, r + 1);
    return pairs;
}

void store_links(Store& store, const LinkCalibration& links, const std::vector<DeviceInfo>& devices) {
    const double now = unix_now();
    for (const auto& d : links.devices) {
        const DeviceInfo& info = devices.at(std::size_t(d.device));
        put_device_link(store, fingerprint_of(info), d.link, info.host, now);
    }
    // Pairs of ranks on the same two hosts share an entry: the slowest of them (at 1 MiB).
    std::map<std::pair<std::string, std::string>, LinkFit> slowest;
    for (const auto& r : links.ranks) {
        const auto key = std::minmax(r.host_a, r.host_b);
        const auto [it, fresh] = slowest.emplace(key, r.fit);
        if (!fresh && r.fit.time(1 << 20) > it->second.time(1 << 20)) it->second = r.fit;
    }
    for (const auto& [hosts, fit] : slowest) put_rank_link(store, hosts.first, hosts.second, fit, now);
}

StoredLinks stored_data_links(const Store& store, const std::vector<DeviceInfo>& devices) {
    StoredLinks out;
    std::vector<DeviceLink> copies;
    std::vector<LinkFit> mpi;
    std::string missing;
    for (std::size_t i = 0; i < devices.size() && missing.empty(); ++i) {
        const DeviceInfo& d = devices[i];
        if (const auto l = find_device_link(store, fingerprint_of(d)))
            copies.push_back(*l);
        else
            missing = "no host-device link for device " + std::to_string(i) + " (" + d.name + ")";
        if (i == 0 || devices[i - 1].rank == d.rank || !missing.empty()) continue;
        if (const auto m = find_rank_link(store, devices[i - 1].host, d.host))
            mpi.push_back(*m);
        else
            missing = "no MPI link between hosts " + devices[i - 1].host + " and " + d.host;
    }
    out.calibrated = missing.empty() && !devices.empty();
    if (out.calibrated) {
        out.links = data_links_from(copies, mpi);
        out.note = "links: calibrated";
    } else {
        out.note = "links: defaults (" + (missing.empty() ? std::string("no device") : missing) +
                   "), run `worksize calibrate --links`";
    }
    return out;
}

StoredLinks stored_data_links(const std::string& db_path, const std::vector<DeviceInfo>& devices) {
    try {
        const Store store = Store::open(resolve_db_path(db_path), CorruptPolicy::report_and_ignore);
        return stored_data_links(store, devices);
    } catch (const Error& e) {
        StoredLinks out;
        out.note = std::string("links: defaults (") + e.what() + "), run `worksize calibrate --links`";
        return out;
    }
}

}  // namespace worksize
