// Device selection (see device_selection.hpp): --filter, then the auto, all or RANK=DEVICE modes.
#include "worksize/runtime/device_selection.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace worksize {

namespace {

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool is_index(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

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

std::vector<LocalDevice> select_devices(std::vector<LocalDevice> all, const DeviceSelection& sel, const Comm& comm) {
    const int rank = comm.rank(), size = comm.size();
    std::vector<LocalDevice> mine;
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
            const int w = comm.node_rank() - (comm.master_on_node() && !sel.master_works ? 1 : 0);
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
                if (!found) {
                    // Name what the rank has, so that the user can pick (e.g. no GPU on this node).
                    std::string have;
                    for (const auto& d : filtered)
                        have += (have.empty() ? "" : ", ") + std::to_string(d.info.index) + " " + d.info.name + " (" +
                                to_string(d.info.type) + ")";
                    throw InvalidArgument("--select names device '" + want + "' on rank " + std::to_string(rank) +
                                          ", which has " + std::to_string(filtered.size()) + " device(s)" +
                                          (sel.filter.empty() ? "" : " matching the filter") + ": no such device" +
                                          (have.empty() ? "" : " (it has: " + have + ")"));
                }
            }
        }
    }
    return mine;
}

}  // namespace worksize
