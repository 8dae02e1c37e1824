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

/// Digits only, few enough for an int (a longer number is taken as a word and matches nothing).
bool is_index(const std::string& s) {
    return !s.empty() && s.size() <= 9 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

/// A selector split into its word (or index) and, for WORD:N, the instance N.
struct Selector {
    std::string word;
    int instance = -1;  ///< -1: every match (at most --devices-per-rank of them)
};

/// WORD:N when the text after the last ':' is an index and the word is not; else the whole.
Selector split_selector(const std::string& s) {
    const auto colon = s.rfind(':');
    if (colon == std::string::npos) return {s, -1};
    const std::string word = s.substr(0, colon), n = s.substr(colon + 1);
    if (word.empty() || is_index(word) || !is_index(n) || n.size() > 6) return {s, -2};  // malformed
    return {word, std::stoi(n)};
}

std::string device_words(const DeviceInfo& d) {
    return lower(d.platform + " " + d.name + " " + d.vendor + " " + to_string(d.type));
}

/// "0 NVIDIA H200 (gpu), 1 NVIDIA H200 (gpu)".
std::string list_text(const std::vector<const DeviceInfo*>& devs) {
    std::string s;
    for (const auto* d : devs) {
        if (!s.empty()) s += ", ";
        s.append(std::to_string(d->index)).append(" ").append(d->name).append(" (").append(to_string(d->type)).append(")");
    }
    return s;
}

}  // namespace

std::map<int, std::vector<std::string>> parse_select(const std::string& spec) {
    std::map<int, std::vector<std::string>> out;
    std::stringstream ss(spec);
    std::string part;
    auto fail = [&] {
        throw InvalidArgument("invalid --select '" + spec +
                              "': expected auto, all, or RANK=DEVICE[+DEVICE...][,RANK=...] with DEVICE an "
                              "index, a word of the device's platform, name, vendor or type, or WORD:N (the "
                              "word's N-th device, from 0)");
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
            if (sel.empty() || split_selector(sel).instance == -2) fail();
            out[r].push_back(sel);
        }
    }
    return out;
}

std::vector<std::size_t> select_positions(const std::vector<DeviceInfo>& devices, const DeviceSelection& sel,
                                          const RankPlace& place) {
    // Positions of the devices that pass --filter, in discovery order.
    std::vector<std::size_t> filtered;
    for (std::size_t i = 0; i < devices.size(); ++i) {
        const auto& d = devices[i];
        if (!sel.filter.empty() &&
            lower(d.platform + " " + d.name + " " + d.vendor).find(lower(sel.filter)) == std::string::npos)
            continue;
        filtered.push_back(i);
    }
    const std::size_t per_rank = static_cast<std::size_t>(std::max(1, sel.per_rank));
    std::vector<std::size_t> mine;
    if (sel.spec == "all") return filtered;
    if (sel.spec == "auto") {
        if (place.size == 1) return filtered;
        if ((place.rank == 0 && !sel.master_works) || filtered.empty()) return mine;
        // The node's ranks take its devices in turn by node-local rank; rank 0, node-local rank
        // 0 of its node, takes none unless it works, and the next rank then takes the first.
        const int slot = place.node_rank - (place.master_on_node && !sel.master_works ? 1 : 0);
        const std::size_t n = filtered.size(), take = std::min(n, per_rank);
        for (std::size_t k = 0; k < take; ++k) {
            const std::size_t i = filtered[(static_cast<std::size_t>(std::max(0, slot)) * take + k) % n];
            if (std::find(mine.begin(), mine.end(), i) == mine.end()) mine.push_back(i);
        }
        return mine;
    }

    const auto map = parse_select(sel.spec);
    const auto it = map.find(place.rank);
    if (it == map.end()) return mine;
    std::vector<const DeviceInfo*> have;
    for (auto i : filtered) have.push_back(&devices[i]);
    const std::string where = " on rank " + std::to_string(place.rank) + ", which has " + std::to_string(filtered.size()) +
                              " device(s)" + (sel.filter.empty() ? "" : " matching the filter");
    const std::string listed = have.empty() ? std::string() : " (it has: " + list_text(have) + ")";
    for (const auto& want : it->second) {
        const Selector s = split_selector(want);
        std::vector<std::size_t> match;
        for (auto i : filtered) {
            const auto& d = devices[i];
            if (is_index(s.word) ? d.index == std::stoi(s.word) : device_words(d).find(lower(s.word)) != std::string::npos)
                match.push_back(i);
        }
        if (match.empty())
            // Name what the rank has, so that the user can pick (e.g. no GPU on this node).
            throw InvalidArgument("--select names device '" + want + "'" + where + ": no such device" + listed);
        if (s.instance >= 0) {
            if (static_cast<std::size_t>(s.instance) >= match.size())
                throw InvalidArgument("--select names device '" + want + "'" + where + ": " +
                                      std::to_string(match.size()) + " match '" + s.word + "', " + s.word + ":0" +
                                      (match.size() > 1 ? " to " + s.word + ":" + std::to_string(match.size() - 1)
                                                        : std::string()) +
                                      listed);
            match = {match[static_cast<std::size_t>(s.instance)]};
        } else if (!is_index(s.word) && match.size() > per_rank) {
            // One rank per device is the rule: a word that names several is not taken as "all
            // of them" unless --devices-per-rank says so.
            std::vector<const DeviceInfo*> m;
            for (auto i : match) m.push_back(&devices[i]);
            throw InvalidArgument("--select names device '" + want + "' on rank " + std::to_string(place.rank) +
                                  ", where it matches " + std::to_string(match.size()) + " devices (" + list_text(m) +
                                  "): name one, " + want + ":0 to " + want + ":" + std::to_string(match.size() - 1) +
                                  ", join several with '+', or allow " + std::to_string(match.size()) +
                                  " with --devices-per-rank " + std::to_string(match.size()));
        }
        for (auto i : match)
            if (std::find(mine.begin(), mine.end(), i) == mine.end()) mine.push_back(i);
    }
    return mine;
}

std::vector<LocalDevice> select_devices(std::vector<LocalDevice> all, const DeviceSelection& sel, const Comm& comm) {
    std::vector<DeviceInfo> infos;
    for (auto& d : all) {
        d.info.rank = comm.rank();
        infos.push_back(d.info);
    }
    std::vector<LocalDevice> mine;
    for (auto i : select_positions(infos, sel, {comm.rank(), comm.size(), comm.node_rank(), comm.master_on_node()}))
        mine.push_back(std::move(all[i]));
    return mine;
}

}  // namespace worksize
