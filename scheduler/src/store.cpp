// The JSON database of models and tuning results (see store.hpp and docs/models.md).
#include "worksize/scheduler/store.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include "json_depth.hpp"

namespace worksize {

namespace fs = std::filesystem;

namespace {

std::string device_label(const DeviceFingerprint& d) {
    return d.name + " (" + d.platform + ", driver " + d.driver_version + ") on " + d.host;
}

/// Identity of a key; without the driver version when `with_driver` is false.
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
    s.append(" entry for kernel '").append(k.kernel).append("'");
    if (!k.params.empty()) s.append(" ").append(k.params.dump());
    if (!k.size_class.empty()) s.append(" size class ").append(k.size_class);
    s.append(" on ").append(device_label(k.device));
    return s;
}

nlohmann::json entry_json(const StoreEntry& e) {
    nlohmann::json j = {{"kind", to_string(e.key.kind)},
                        {"device", to_json(e.key.device)},
                        {"kernel", e.key.kernel},
                        {"params", e.key.params},
                        {"size_class", e.key.size_class},
                        {"timestamp", e.timestamp},
                        {"schema", kStoreSchemaVersion},
                        {"payload", e.payload}};
    j["checksum"] = "fnv1a64:" + fnv1a64_hex(j.dump());
    return j;
}

StoreKey key_from_json(const nlohmann::json& j) {
    if (!j.is_object()) throw InvalidArgument("entry is not a JSON object");
    StoreKey k;
    const std::string kind = j.at("kind").get<std::string>();
    if (kind == "model") k.kind = EntryKind::model;
    else if (kind == "tuning") k.kind = EntryKind::tuning;
    else throw InvalidArgument("unknown kind '" + kind + "'");
    k.device = fingerprint_from_json(j.at("device"));
    k.kernel = j.at("kernel").get<std::string>();
    k.params = j.at("params");
    k.size_class = j.at("size_class").get<std::string>();
    return k;
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

std::string utc_stamp() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
    return buf;
}

}  // namespace

DeviceFingerprint fingerprint_of(const DeviceInfo& d) {
    return {d.host, d.platform, d.name, d.vendor, d.driver_version, d.compute_units,
            d.max_work_group_size};
}

nlohmann::json to_json(const DeviceFingerprint& f) {
    return {{"host", f.host},
            {"platform", f.platform},
            {"name", f.name},
            {"vendor", f.vendor},
            {"driver_version", f.driver_version},
            {"compute_units", f.compute_units},
            {"max_work_group_size", f.max_work_group_size}};
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
    f.compute_units = std::uint32_t(num("compute_units"));
    f.max_work_group_size = num("max_work_group_size");
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

const char* to_string(EntryKind k) { return k == EntryKind::model ? "model" : "tuning"; }

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

void Store::note(const std::string& warning, CorruptPolicy policy) {
    if (policy == CorruptPolicy::refuse) throw Error(warning);
    warnings_.push_back(warning);
    backup_on_save_ = true;
}

Store Store::open(const std::string& path, CorruptPolicy policy) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return Store(path);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("cannot read worksize database '" + path + "'");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw Error("cannot read worksize database '" + path + "'");
    return parse(ss.str(), "'" + path + "'", policy, path);
}

Store Store::from_text(const std::string& text, const std::string& origin, CorruptPolicy policy) {
    return parse(text, origin, policy, {});
}

Store Store::parse(const std::string& text, const std::string& origin, CorruptPolicy policy,
                   std::string path) {
    Store s(std::move(path));
    if (const std::string deep = json_depth_problem(text); !deep.empty()) {
        s.note("worksize database " + origin + " is corrupt (" + deep + "); ignoring it" +
                   (s.path_.empty() ? "" : ", it will be moved aside on save"),
               policy);
        return s;
    }
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e400
        s.note("worksize database " + origin + " is corrupt (malformed JSON: " + e.what() +
                   "); ignoring it" + (s.path_.empty() ? "" : ", it will be moved aside on save"),
               policy);
        return s;
    }
    if (!doc.is_object() || !doc.contains("entries") || !doc["entries"].is_array() ||
        !doc.contains("schema") || !doc["schema"].is_number_integer()) {
        s.note("worksize database " + origin +
                   " is corrupt (not an object with 'schema' and 'entries'); ignoring it",
               policy);
        return s;
    }
    if (doc["schema"].get<int>() != kStoreSchemaVersion) {
        s.note("worksize database " + origin + " has schema version " +
                   std::to_string(doc["schema"].get<int>()) + ", this worksize uses " +
                   std::to_string(kStoreSchemaVersion) + "; its entries are stale and ignored",
               policy);
        return s;
    }
    const auto& entries = doc["entries"];
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto& j = entries[i];
        std::string id;
        std::string what = "entry #" + std::to_string(i);
        try {
            const StoreKey key = key_from_json(j);
            id = identity(key, true);
            what = describe(key);
            if (!j.contains("checksum") || !j["checksum"].is_string())
                throw InvalidArgument("no checksum");
            nlohmann::json body = j;
            body.erase("checksum");
            if (j["checksum"].get<std::string>() != "fnv1a64:" + fnv1a64_hex(body.dump()))
                throw InvalidArgument("checksum mismatch");
            if (!j.contains("schema") || j["schema"] != kStoreSchemaVersion)
                throw InvalidArgument("stale schema version");
            StoreEntry e;
            e.key = key;
            e.payload = j.at("payload");
            e.timestamp = j.at("timestamp").get<double>();
            s.entries_.push_back(std::move(e));
        } catch (const std::exception& ex) {
            // InvalidArgument from our checks, nlohmann errors for missing or mistyped fields.
            const std::string msg = "ignoring corrupt " + what + " in " + origin + ": " + ex.what();
            s.note(msg, policy);
            if (!id.empty()) s.corrupt_.push_back({id, msg});
        }
    }
    return s;
}

std::string Store::dump() const {
    nlohmann::json doc = {{"schema", kStoreSchemaVersion},
                          {"generator", "worksize"},
                          {"entries", nlohmann::json::array()}};
    for (const auto& e : entries_) doc["entries"].push_back(entry_json(e));
    return doc.dump(1) + "\n";
}

void Store::save() { save_as(path_); }

void Store::save_as(const std::string& path) {
    if (path.empty()) throw Error("worksize database: no path to save to");
    const fs::path p(path);
    std::error_code ec;
    if (p.has_parent_path()) {
        fs::create_directories(p.parent_path(), ec);
        if (ec) throw Error("cannot create directory '" + p.parent_path().string() + "' for the worksize database: " + ec.message());
    }
    if (backup_on_save_ && path == path_ && fs::exists(p, ec)) {
        std::string aside = path + ".corrupt-" + utc_stamp();
        for (int n = 1; fs::exists(aside, ec); ++n) aside = path + ".corrupt-" + utc_stamp() + "-" + std::to_string(n);
        fs::copy_file(p, aside, ec);
        if (ec) throw Error("cannot move the corrupt worksize database '" + path + "' aside to '" + aside + "': " + ec.message());
        warnings_.push_back("moved the corrupt worksize database '" + path + "' aside to '" + aside + "'");
    }
    const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
    const std::string text = dump();
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) throw Error("cannot write worksize database '" + tmp + "'");
    std::size_t done = 0;
    bool ok = true;
    while (done < text.size()) {
        const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
        if (w <= 0) {
            ok = false;
            break;
        }
        done += std::size_t(w);
    }
    ok = ok && ::fsync(fd) == 0;
    ok = (::close(fd) == 0) && ok;
    if (!ok) {
        fs::remove(tmp, ec);
        throw Error("cannot write worksize database '" + tmp + "'");
    }
    fs::rename(tmp, p, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw Error("cannot replace worksize database '" + path + "': " + ec.message());
    }
    if (path == path_) backup_on_save_ = false;
}

Store::Lookup Store::find(const StoreKey& key) const {
    Lookup r;
    const std::string id = identity(key, true);
    const std::string loose = identity(key, false);
    for (const auto& [cid, msg] : corrupt_)
        if (cid == id) r.warnings.push_back(msg);
    for (const auto& e : entries_) {
        if (identity(e.key, true) == id) {
            r.entry = e;
        } else if (identity(e.key, false) == loose) {
            r.warnings.push_back("ignoring stale " + describe(e.key) + ": the device now has driver " +
                                 key.device.driver_version);
        }
    }
    return r;
}

void Store::put(const StoreKey& key, nlohmann::json payload, double timestamp) {
    const std::string loose = identity(key, false);
    std::erase_if(entries_, [&](const StoreEntry& e) { return identity(e.key, false) == loose; });
    const std::string id = identity(key, true);
    std::erase_if(corrupt_, [&](const auto& c) { return c.first == id; });
    entries_.push_back({key, std::move(payload), timestamp});
}

std::optional<CostModel> Store::find_model(const DeviceFingerprint& device, const std::string& kernel,
                                           const nlohmann::json& params,
                                           std::vector<std::string>* warnings) const {
    Lookup l = find({EntryKind::model, device, kernel, params, ""});
    std::optional<CostModel> out;
    if (l.entry) {
        try {
            out = cost_model_from_json(l.entry->payload);
        } catch (const InvalidArgument& e) {
            l.warnings.push_back("ignoring unusable " + describe(l.entry->key) + ": " + e.what());
        }
    }
    if (warnings) warnings->insert(warnings->end(), l.warnings.begin(), l.warnings.end());
    return out;
}

void Store::put_model(const DeviceFingerprint& device, const std::string& kernel,
                      const nlohmann::json& params, const CostModel& model, double timestamp) {
    put({EntryKind::model, device, kernel, params, ""}, to_json(model), timestamp);
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
                       double timestamp) {
    put({EntryKind::tuning, device, kernel, params, size_class(global)}, to_json(record), timestamp);
}

std::size_t Store::merge(const Store& other) {
    std::size_t taken = 0;
    for (const auto& e : other.entries_) {
        const std::string loose = identity(e.key, false);
        auto it = std::find_if(entries_.begin(), entries_.end(),
                               [&](const StoreEntry& m) { return identity(m.key, false) == loose; });
        bool take = false;
        if (it == entries_.end()) {
            take = true;
        } else if (!(it->key.device == e.key.device)) {
            take = e.timestamp > it->timestamp;  // another driver: the newer recording wins
        } else if (e.key.kind == EntryKind::tuning) {
            take = tuning_better(e, *it);
        } else {
            take = e.timestamp > it->timestamp;
        }
        if (take) {
            put(e.key, e.payload, e.timestamp);
            ++taken;
        }
    }
    for (const auto& w : other.warnings_) warnings_.push_back(w);
    return taken;
}

}  // namespace worksize
