// The database's file (see store.hpp and docs/models.md): open() and parse() with the schema 1
// migration, dump(), and save_as(), which merges this store's changes into what the file holds
// under its lock and replaces the file atomically.
#include "worksize/scheduler/store.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include "json_depth.hpp"
#include "store_keys.hpp"
#include "store_lock.hpp"
#include "worksize/scheduler/format.hpp"
#include "worksize/scheduler/log.hpp"

namespace worksize {

namespace fs = std::filesystem;

namespace {

using detail::contains;
using detail::describe;
using detail::entry_json;
using detail::identity;
using detail::same_key;

/// Provenance and alternates of a schema 2 entry (InvalidArgument or nlohmann errors if malformed).
void provenance_from_json(const nlohmann::json& j, StoreEntry& e) {
    const auto& p = j.at("provenance");
    e.host = p.at("host").get<std::string>();
    e.hosts = p.at("hosts").get<std::vector<std::string>>();
    if (j.contains("alternates"))
        for (const auto& a : j["alternates"])
            e.alternates.push_back({a.at("host").get<std::string>(), a.at("timestamp").get<double>(), a.at("payload")});
}

StoreKey key_from_json(const nlohmann::json& j) {
    if (!j.is_object()) throw InvalidArgument("entry is not a JSON object");
    StoreKey k;
    const std::string kind = j.at("kind").get<std::string>();
    if (kind == "model") k.kind = EntryKind::model;
    else if (kind == "tuning") k.kind = EntryKind::tuning;
    else if (kind == "link") k.kind = EntryKind::link;
    else throw InvalidArgument("unknown kind '" + kind + "'");
    k.device = fingerprint_from_json(j.at("device"));
    k.kernel = j.at("kernel").get<std::string>();
    k.params = j.at("params");
    k.size_class = j.at("size_class").get<std::string>();
    return k;
}

/// Entry `j` of a database of schema `schema`, checked: InvalidArgument from our checks, nlohmann
/// errors for missing or mistyped fields. `id` and `what` name it once its key is read (for the
/// message of a damaged entry).
StoreEntry entry_from_json(const nlohmann::json& j, int schema, bool per_host, std::string& id,
                           std::string& what) {
    StoreKey key = key_from_json(j);
    id = identity(key, true);
    what = describe(key);
    if (!j.contains("checksum") || !j["checksum"].is_string())
        throw InvalidArgument("no checksum");
    nlohmann::json body = j;
    body.erase("checksum");
    if (j["checksum"].get<std::string>() != "fnv1a64:" + fnv1a64_hex(body.dump()))
        throw InvalidArgument("checksum mismatch");
    if (!j.contains("schema") || j["schema"] != schema)
        throw InvalidArgument("stale schema version");
    StoreEntry e;
    e.payload = j.at("payload");
    e.timestamp = j.at("timestamp").get<double>();
    if (schema == 1) {
        // Schema 1 keyed by host: the host becomes provenance (and stays in the key with
        // per-host keys).
        e.host = key.device.host;
        if (!e.host.empty()) e.hosts = {e.host};
        if (!per_host) key.device.host.clear();
    } else {
        provenance_from_json(j, e);
    }
    e.key = key;
    return e;
}

std::string utc_stamp() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
    return buf;
}

/// Write `text` to a temporary file beside `path` (named by our process id), fsync it and rename
/// it over `path`. @throws Error naming the file and the OS's reason (the temporary file removed).
void write_replace(const std::string& path, const std::string& text) {
    std::error_code ec;
    const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) throw Error("cannot write worksize database '" + tmp + "': " + std::strerror(errno));
    std::size_t done = 0;
    int err = 0;  // the first failure's errno (ENOSPC for a write that wrote nothing)
    while (done < text.size() && err == 0) {
        const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
        if (w <= 0) err = w < 0 ? errno : ENOSPC;
        else done += std::size_t(w);
    }
    if (err == 0 && ::fsync(fd) != 0) err = errno;
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) {
        fs::remove(tmp, ec);
        throw Error("cannot write worksize database '" + tmp + "': " + std::strerror(err));
    }
    fs::rename(tmp, path, ec);
    if (ec) {
        const std::string why = ec.message();  // before remove() sets ec again ("Success")
        fs::remove(tmp, ec);
        throw Error("cannot replace worksize database '" + path + "': " + why);
    }
}

}  // namespace

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
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] != '{') {
        s.foreign_ = "it is not a JSON object";
        s.note(origin + " is not a worksize database (" + s.foreign_ + "); ignoring it", policy);
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
    if (doc.is_object() && !doc.contains("entries") && !doc.contains("schema")) {
        s.foreign_ = "a JSON object with neither 'schema' nor 'entries'";
        s.note(origin + " is not a worksize database (" + s.foreign_ + "); ignoring it", policy);
        return s;
    }
    if (!doc.is_object() || !doc.contains("entries") || !doc["entries"].is_array() ||
        !doc.contains("schema") || !doc["schema"].is_number_integer()) {
        s.note("worksize database " + origin +
                   " is corrupt (not an object with 'schema' and 'entries'); ignoring it",
               policy);
        return s;
    }
    const int schema = doc["schema"].get<int>();
    if (schema != kStoreSchemaVersion && schema != 1) {
        s.note("worksize database " + origin + " has schema version " + std::to_string(schema) +
                   ", this worksize uses " + std::to_string(kStoreSchemaVersion) + "; its entries are stale and ignored",
               policy);
        return s;
    }
    const bool per_host = per_host_keys();
    const auto& entries = doc["entries"];
    for (std::size_t i = 0; i < entries.size(); ++i) {
        std::string id;
        std::string what = "entry #" + std::to_string(i);
        try {
            StoreEntry e = entry_from_json(entries[i], schema, per_host, id, what);
            if (schema == 1) {
                s.absorb(e, true);  // entries that now share a key are combined
                ++s.migrated_;
            } else {
                s.entries_.push_back(std::move(e));
            }
        } catch (const std::exception& ex) {
            // InvalidArgument from our checks, nlohmann errors for missing or mistyped fields.
            const std::string msg = "ignoring corrupt " + what + " in " + origin + ": " + ex.what();
            s.note(msg, policy);
            if (!id.empty()) s.corrupt_.push_back({id, msg});
        }
    }
    if (schema == 1) {
        s.schema1_on_disk_ = !s.path_.empty();
        s.fresh_.clear();
        s.mine_.clear();
        s.warnings_.push_back("worksize database " + origin + " has schema 1 (keys by host): read " +
                              std::to_string(s.migrated_) + " entries as schema " + std::to_string(kStoreSchemaVersion) +
                              " (" + std::to_string(s.entries_.size()) +
                              " keys, the host kept as provenance); the file is rewritten on the next save");
    }
    for (const auto& e : s.entries_) s.loaded_.push_back({identity(e.key, true), e.timestamp});
    s.reindex();
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
    const detail::FileLock lock(path);
    for (const auto& name : remove_stale_temp_files(path))
        log::info("removed '" + name + "', the temporary file of a save that did not finish (its process is gone)");
    // What is on disk now (other writers may have saved since we read it).
    Store disk = Store::open(path, CorruptPolicy::report_and_ignore);
    if (!disk.foreign_.empty())
        throw InvalidArgument("'" + printable(path) + "' is not a worksize database (" + disk.foreign_ +
                              "): not overwriting it; choose another --db");
    const bool own = path == path_;
    if (disk.backup_on_save_ && fs::exists(p, ec)) {
        std::string aside = path + ".corrupt-" + utc_stamp();
        for (int n = 1; fs::exists(aside, ec); ++n) aside = path + ".corrupt-" + utc_stamp() + "-" + std::to_string(n);
        fs::copy_file(p, aside, ec);
        if (ec) throw Error("cannot move the corrupt worksize database '" + path + "' aside to '" + aside + "': " + ec.message());
        warnings_.push_back("copied the corrupt worksize database '" + path + "' aside to '" + aside +
                            "' before rewriting it");
        log::warn(warnings_.back());
    }
    if (disk.schema1_on_disk_ && !fs::exists(path + ".schema1", ec)) {
        fs::copy_file(p, path + ".schema1", ec);
        if (ec) throw Error("cannot keep the schema 1 worksize database '" + path + "' as '" + path + ".schema1': " + ec.message());
    }
    // Our changes on top of the file: removals, then each entry we put or merged. One the file
    // holds as we read it is replaced; one written by another process since is combined.
    if (own)
        for (const auto& id : removed_)
            std::erase_if(disk.entries_, [&](const StoreEntry& e) { return identity(e.key, true) == id; });
    for (const auto& e : entries_) {
        const std::string id = identity(e.key, true);
        if (own && !contains(fresh_, id)) continue;
        auto it = std::find_if(disk.entries_.begin(), disk.entries_.end(),
                               [&](const StoreEntry& d) { return same_key(d.key, e.key, false); });
        if (it == disk.entries_.end()) {
            disk.entries_.push_back(e);
            continue;
        }
        const std::string did = identity(it->key, true);
        const bool known = own && std::any_of(loaded_.begin(), loaded_.end(), [&](const auto& l) {
                               return l.first == did && l.second == it->timestamp;
                           });
        if (known || !(it->key.device.driver_version == e.key.device.driver_version))
            *it = e;  // ours supersedes what we read, and a recording under another driver
        else
            *it = combine_entries(e, *it);
    }
    write_replace(path, disk.dump());
    if (own) {
        // The store now holds what was written.
        entries_ = std::move(disk.entries_);
        corrupt_.clear();
        fresh_.clear();
        removed_.clear();
        loaded_.clear();
        for (const auto& e : entries_) loaded_.push_back({identity(e.key, true), e.timestamp});
        backup_on_save_ = false;
        reindex();
    }
}

}  // namespace worksize
