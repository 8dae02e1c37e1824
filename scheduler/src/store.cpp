// The JSON database of models and tuning results (see store.hpp and docs/models.md).
// This file holds the keys, fingerprints and size classes, the lookups, puts and merges;
// store_io.cpp reads and saves the file.
#include "worksize/scheduler/store.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>

#include "store_keys.hpp"

namespace worksize {

namespace fs = std::filesystem;

namespace {

std::string device_label(const DeviceFingerprint& d) {
    std::string s = d.name;
    s.append(" (").append(d.platform).append(", driver ").append(d.driver_version).append(")");
    if (!d.host.empty()) s.append(" on ").append(d.host);
    return s;
}

}  // namespace

namespace detail {

std::string identity(const StoreKey& k, bool with_driver) {
    nlohmann::json dev = to_json(k.device);
    if (!with_driver) dev.erase("driver_version");
    nlohmann::json j = {{"kind", to_string(k.kind)}, {"device", dev},
                        {"kernel", k.kernel},        {"params", k.params},
                        {"size_class", k.size_class}};
    return j.dump();
}

std::string describe(const StoreKey& k) {
    std::string s = to_string(k.kind);
    s.append(k.kind == EntryKind::link ? " entry '" : " entry for kernel '").append(k.kernel).append("'");
    if (!k.params.empty()) s.append(" ").append(k.params.dump());
    if (!k.size_class.empty()) s.append(" size class ").append(k.size_class);
    if (!k.device.name.empty() || k.kind != EntryKind::link) s.append(" on ").append(device_label(k.device));
    return s;
}

bool same_key(const StoreKey& stored, const StoreKey& k, bool with_driver) {
    if (stored.kind != k.kind || stored.kernel != k.kernel || stored.params != k.params ||
        stored.size_class != k.size_class)
        return false;
    DeviceFingerprint a = stored.device;
    if (!with_driver) a.driver_version = k.device.driver_version;
    return fingerprint_matches(a, k.device);
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

nlohmann::json entry_json(const StoreEntry& e) {
    nlohmann::json prov = {{"host", e.host}, {"hosts", e.hosts}};
    nlohmann::json j = {{"kind", to_string(e.key.kind)},
                        {"device", to_json(e.key.device)},
                        {"kernel", e.key.kernel},
                        {"params", e.key.params},
                        {"size_class", e.key.size_class},
                        {"timestamp", e.timestamp},
                        {"schema", kStoreSchemaVersion},
                        {"provenance", prov},
                        {"payload", e.payload}};
    if (!e.alternates.empty()) {
        auto& alts = j["alternates"] = nlohmann::json::array();
        for (const auto& a : e.alternates)
            alts.push_back({{"host", a.host}, {"timestamp", a.timestamp}, {"payload", a.payload}});
    }
    j["checksum"] = "fnv1a64:" + fnv1a64_hex(j.dump());
    return j;
}

}  // namespace detail

namespace {

using detail::contains;
using detail::describe;
using detail::entry_json;
using detail::identity;
using detail::same_key;

/// The index bucket of a key: its identity without the driver and the clock, the two fields in
/// which keys that same_key() matches (with or without the driver) may differ.
std::string bucket_of(const StoreKey& k) {
    StoreKey b = k;
    b.device.max_clock_mhz = 0;
    return identity(b, false);
}

bool tuning_better(const StoreEntry& a, const StoreEntry& b) {
    // true when a should replace b. Times of runs of different iterations compare per
    // iteration; where either side has no iterations recorded, as they stand.
    std::optional<TuningRecord> ra, rb;
    try { ra = tuning_record_from_json(a.payload); } catch (const InvalidArgument&) {}
    try { rb = tuning_record_from_json(b.payload); } catch (const InvalidArgument&) {}
    const bool per_it = ra && rb && ra->iterations && rb->iterations;
    const double ta = !ra ? INFINITY : per_it ? per_iteration_s(*ra) : ra->best_s;
    const double tb = !rb ? INFINITY : per_it ? per_iteration_s(*rb) : rb->best_s;
    if (ta != tb) return ta < tb;
    return a.timestamp > b.timestamp;
}

}  // namespace

bool per_host_keys() {
    const char* v = std::getenv("WORKSIZE_DB_PER_HOST");
    if (!v) return false;
    const std::string s = v;
    return !(s.empty() || s == "0" || s == "no" || s == "false" || s == "off");
}

DeviceFingerprint fingerprint_of(const DeviceInfo& d) {
    return {per_host_keys() ? d.host : std::string(), d.platform, d.name, d.vendor, d.driver_version,
            d.compute_units, d.max_work_group_size, d.max_clock_mhz};
}

bool fingerprint_matches(const DeviceFingerprint& stored, const DeviceFingerprint& device) {
    DeviceFingerprint a = stored;
    if (a.max_clock_mhz == 0 || device.max_clock_mhz == 0) a.max_clock_mhz = device.max_clock_mhz;
    return a == device;
}

nlohmann::json to_json(const StoreEntry& e) { return entry_json(e); }

std::string entry_id(const StoreKey& key) { return fnv1a64_hex(identity(key, true)).substr(0, 8); }

StoreEntry combine_entries(const StoreEntry& a, const StoreEntry& b) {
    StoreEntry out;
    if (a.key.kind == EntryKind::tuning) {
        out = tuning_better(a, b) ? a : b;
    } else {
        const bool a_newer = a.timestamp >= b.timestamp;
        out = a_newer ? a : b;
        const StoreEntry& other = a_newer ? b : a;
        // The other model and its alternates, newest first, without repeats.
        std::vector<StoreAlternate> alts = out.alternates;
        alts.push_back({other.host, other.timestamp, other.payload});
        alts.insert(alts.end(), other.alternates.begin(), other.alternates.end());
        std::stable_sort(alts.begin(), alts.end(),
                         [](const StoreAlternate& x, const StoreAlternate& y) { return x.timestamp > y.timestamp; });
        out.alternates.clear();
        for (const auto& alt : alts) {
            if (alt.payload == out.payload && alt.timestamp == out.timestamp) continue;
            const bool seen = std::any_of(out.alternates.begin(), out.alternates.end(), [&](const StoreAlternate& x) {
                return x.timestamp == alt.timestamp && x.payload == alt.payload;
            });
            if (!seen && out.alternates.size() < kMaxAlternates) out.alternates.push_back(alt);
        }
    }
    // The known clock wins over "not recorded" (a migrated entry).
    if (out.key.device.max_clock_mhz == 0)
        out.key.device.max_clock_mhz = std::max(a.key.device.max_clock_mhz, b.key.device.max_clock_mhz);
    std::vector<std::string> hosts = a.hosts;
    hosts.insert(hosts.end(), b.hosts.begin(), b.hosts.end());
    for (const auto* h : {&a.host, &b.host})
        if (!h->empty()) hosts.push_back(*h);
    std::sort(hosts.begin(), hosts.end());
    hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
    out.hosts = std::move(hosts);
    return out;
}

nlohmann::json to_json(const DeviceFingerprint& f) {
    return {{"host", f.host},
            {"platform", f.platform},
            {"name", f.name},
            {"vendor", f.vendor},
            {"driver_version", f.driver_version},
            {"compute_units", f.compute_units},
            {"max_work_group_size", f.max_work_group_size},
            {"max_clock_mhz", f.max_clock_mhz}};
}

DeviceFingerprint fingerprint_from_json(const nlohmann::json& j) {
    if (!j.is_object()) throw InvalidArgument("device fingerprint: not a JSON object");
    DeviceFingerprint f;
    auto str = [&](const char* k) {
        if (!j.contains(k) || !j[k].is_string())
            throw InvalidArgument(std::string("device fingerprint: missing or non-string '") + k + "'");
        return j[k].get<std::string>();
    };
    auto num = [&](const char* k) {
        if (!j.contains(k) || !j[k].is_number_unsigned())
            throw InvalidArgument(std::string("device fingerprint: missing or non-integer '") + k + "'");
        return j[k].get<std::uint64_t>();
    };
    f.host = str("host");
    f.platform = str("platform");
    f.name = str("name");
    f.vendor = str("vendor");
    f.driver_version = str("driver_version");
    const auto cu = num("compute_units");
    if (cu > std::numeric_limits<std::uint32_t>::max())
        throw InvalidArgument("device fingerprint: 'compute_units' " + std::to_string(cu) + " is out of range");
    f.compute_units = std::uint32_t(cu);
    f.max_work_group_size = num("max_work_group_size");
    // Schema 1 fingerprints have no clock: 0, not recorded (matches any clock).
    if (j.contains("max_clock_mhz")) {
        const auto mhz = num("max_clock_mhz");
        if (mhz > std::numeric_limits<std::uint32_t>::max())
            throw InvalidArgument("device fingerprint: 'max_clock_mhz' " + std::to_string(mhz) + " is out of range");
        f.max_clock_mhz = std::uint32_t(mhz);
    }
    return f;
}

std::string SizeClass::to_string() const {
    return "x2^" + std::to_string(x_log2) + ".y2^" + std::to_string(y_log2);
}

SizeClass size_class_of(GlobalSize g) {
    auto lg = [](std::uint64_t v) { return v == 0 ? 0 : 63 - __builtin_clzll(v); };
    return {lg(g.x), lg(g.y)};
}

std::optional<SizeClass> parse_size_class(const std::string& text) {
    SizeClass c;
    std::string_view s(text);
    auto number = [&](std::string_view prefix, int& out) {
        if (s.substr(0, prefix.size()) != prefix) return false;
        s.remove_prefix(prefix.size());
        const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
        if (ec != std::errc{}) return false;
        s.remove_prefix(std::size_t(p - s.data()));
        return true;
    };
    if (!number("x2^", c.x_log2) || !number(".y2^", c.y_log2) || !s.empty()) return std::nullopt;
    return c;
}

std::string size_class(GlobalSize g) { return size_class_of(g).to_string(); }

const char* to_string(EntryKind k) {
    return k == EntryKind::model ? "model" : k == EntryKind::tuning ? "tuning" : "link";
}

std::string resolve_db_path(const std::string& db_path) { return db_path.empty() ? default_db_path() : db_path; }

std::string default_db_path() {
    auto env = [](const char* n) -> std::string {
        const char* v = std::getenv(n);
        return v ? v : "";
    };
    if (auto p = env("WORKSIZE_DB"); !p.empty()) return p;
    if (auto x = env("XDG_CACHE_HOME"); !x.empty()) return (fs::path(x) / "worksize" / "db.json").string();
    if (auto h = env("HOME"); !h.empty()) return (fs::path(h) / ".cache" / "worksize" / "db.json").string();
    throw Error("no database path: set WORKSIZE_DB, XDG_CACHE_HOME or HOME, or pass --db");
}

std::string fnv1a64_hex(const std::string& text) {
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

double unix_now() {
    using namespace std::chrono;
    return duration<double>(system_clock::now().time_since_epoch()).count();
}

Store::Store(std::string path) : path_(std::move(path)) {}

void Store::reindex() {
    index_.clear();
    for (std::size_t i = 0; i < entries_.size(); ++i) index_[bucket_of(entries_[i].key)].push_back(i);
}

Store::Lookup Store::find(const StoreKey& key) const {
    Lookup r;
    const std::string id = identity(key, true);
    for (const auto& [cid, msg] : corrupt_)
        if (cid == id) r.warnings.push_back(msg);
    const auto bucket = index_.find(bucket_of(key));
    if (bucket == index_.end()) return r;
    for (const std::size_t i : bucket->second) {
        const StoreEntry& e = entries_[i];
        ++r.examined;
        if (same_key(e.key, key, true)) {
            // An entry with the device's clock before one whose clock was not recorded.
            if (!r.entry || e.key.device.max_clock_mhz == key.device.max_clock_mhz) r.entry = e;
        } else if (same_key(e.key, key, false)) {
            r.warnings.push_back("ignoring stale " + describe(e.key) + ": the device now has driver " +
                                 key.device.driver_version);
        }
    }
    return r;
}

bool Store::absorb(const StoreEntry& e, bool combine_any) {
    const std::string id = identity(e.key, true), bucket = bucket_of(e.key);
    // Only entries of e's bucket can match it, with or without the driver.
    const auto found = index_.find(bucket);
    const StoreEntry* same = nullptr;
    bool replaces = false;
    if (found != index_.end())
        for (const std::size_t i : found->second) {
            if (!same && same_key(entries_[i].key, e.key, true)) same = &entries_[i];
            replaces = replaces || same_key(entries_[i].key, e.key, false);
        }
    StoreEntry next = e;
    if (same && (combine_any || contains(mine_, identity(same->key, true)))) {
        next = combine_entries(e, *same);
        if (entry_json(next) == entry_json(*same)) return false;
    }
    if (replaces) {
        std::erase_if(entries_, [&](const StoreEntry& m) { return same_key(m.key, e.key, false); });
        reindex();
    }
    std::erase_if(corrupt_, [&](const auto& c) { return c.first == id; });
    const std::string nid = identity(next.key, true);
    if (!contains(fresh_, nid)) fresh_.push_back(nid);
    if (!contains(mine_, nid)) mine_.push_back(nid);
    std::erase(removed_, nid);
    index_[bucket_of(next.key)].push_back(entries_.size());
    entries_.push_back(std::move(next));
    return true;
}

void Store::put(const StoreKey& key, nlohmann::json payload, double timestamp, const std::string& host) {
    StoreEntry e{key, std::move(payload), timestamp, host, {}, {}};
    if (!host.empty()) e.hosts = {host};
    absorb(e, false);
}

std::size_t Store::remove_if(const std::function<bool(const StoreEntry&)>& pred) {
    std::size_t n = 0;
    for (auto it = entries_.begin(); it != entries_.end();) {
        if (pred(*it)) {
            const std::string id = identity(it->key, true);
            if (!contains(removed_, id)) removed_.push_back(id);
            std::erase(fresh_, id);
            it = entries_.erase(it);
            ++n;
        } else {
            ++it;
        }
    }
    if (n) reindex();
    return n;
}

std::vector<CostModel> Store::find_models(const DeviceFingerprint& device, const std::string& kernel,
                                         const nlohmann::json& params, std::vector<std::string>* warnings) const {
    Lookup l = find({EntryKind::model, device, kernel, params, ""});
    std::vector<CostModel> out;
    auto take = [&](const nlohmann::json& payload) {
        try {
            out.push_back(cost_model_from_json(payload));
        } catch (const InvalidArgument& e) {
            l.warnings.push_back("ignoring unusable " + describe(l.entry->key) + ": " + e.what());
        }
    };
    if (l.entry) {
        take(l.entry->payload);
        for (const auto& a : l.entry->alternates) take(a.payload);
    }
    if (warnings) warnings->insert(warnings->end(), l.warnings.begin(), l.warnings.end());
    return out;
}

std::optional<CostModel> Store::find_model(const DeviceFingerprint& device, const std::string& kernel,
                                           const nlohmann::json& params,
                                           std::vector<std::string>* warnings) const {
    auto all = find_models(device, kernel, params, warnings);
    if (all.empty()) return std::nullopt;
    return all.front();
}

void Store::put_model(const DeviceFingerprint& device, const std::string& kernel,
                      const nlohmann::json& params, const CostModel& model, double timestamp,
                      const std::string& host) {
    put({EntryKind::model, device, kernel, params, ""}, to_json(model), timestamp, host);
}

std::optional<TuningRecord> Store::find_tuning(const DeviceFingerprint& device, const std::string& kernel,
                                               const nlohmann::json& params, GlobalSize global,
                                               std::vector<std::string>* warnings) const {
    Lookup l = find({EntryKind::tuning, device, kernel, params, size_class(global)});
    std::optional<TuningRecord> out;
    if (l.entry) {
        try {
            out = tuning_record_from_json(l.entry->payload);
        } catch (const InvalidArgument& e) {
            l.warnings.push_back("ignoring unusable " + describe(l.entry->key) + ": " + e.what());
        }
    }
    if (warnings) warnings->insert(warnings->end(), l.warnings.begin(), l.warnings.end());
    return out;
}

void Store::put_tuning(const DeviceFingerprint& device, const std::string& kernel,
                       const nlohmann::json& params, GlobalSize global, const TuningRecord& record,
                       double timestamp, const std::string& host) {
    put({EntryKind::tuning, device, kernel, params, size_class(global)}, to_json(record), timestamp, host);
}

std::size_t Store::merge(const Store& other) {
    std::size_t taken = 0;
    for (const auto& e : other.entries_) {
        auto it = std::find_if(entries_.begin(), entries_.end(),
                               [&](const StoreEntry& m) { return same_key(m.key, e.key, false); });
        if (it != entries_.end() && !(it->key.device.driver_version == e.key.device.driver_version)) {
            // Another driver: the newer recording wins.
            if (e.timestamp > it->timestamp) taken += absorb(e, false);
            continue;
        }
        taken += absorb(e, true);
    }
    for (const auto& w : other.warnings_) warnings_.push_back(w);
    return taken;
}

}  // namespace worksize
