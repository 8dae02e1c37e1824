// `worksize db list|show|rm`: look into the model and tuning database and remove entries
// (docs/tuning.md, "The database"). Rank 0 alone acts; the database is no collective.
#include <algorithm>
#include <cctype>
#include <ctime>
#include <iostream>

#include "common.hpp"
#include "worksize/scheduler/log.hpp"
#include "worksize/scheduler/store.hpp"

namespace worksize::cli {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

std::string utc_date(double t) {
    const std::time_t s = std::time_t(t);
    std::tm tm{};
    char buf[32];
    if (!::gmtime_r(&s, &tm) || std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) return "unknown";
    return buf;
}

/// One selector: "id=HEX", "kernel=NAME", "device=WORD", "kind=KIND" or a bare word (an entry id, a kernel,
/// or a word of the device's name, platform or vendor, case-insensitive).
struct Selector {
    std::string field, value, text;
    bool matches(const StoreEntry& e) const {
        const auto& d = e.key.device;
        const std::string w = lower(value);
        const bool dev = lower(d.name).find(w) != std::string::npos || lower(d.platform).find(w) != std::string::npos ||
                         lower(d.vendor).find(w) != std::string::npos;
        if (field == "id") return entry_id(e.key) == w;
        if (field == "kernel") return e.key.kernel == value;
        if (field == "device") return dev;
        if (field == "kind") return to_string(e.key.kind) == value;
        return entry_id(e.key) == w || e.key.kernel == value || dev;
    }
};

Selector parse_selector(const std::string& text) {
    Selector s{"", text, text};
    if (const auto eq = text.find('='); eq != std::string::npos) {
        s.field = text.substr(0, eq);
        s.value = text.substr(eq + 1);
        if (s.field != "id" && s.field != "kernel" && s.field != "device" && s.field != "kind")
            throw InvalidArgument("db: bad selector '" + text +
                                  "' (id=ID, kernel=NAME, device=WORD, kind=model|tuning|link or a bare word)");
    }
    if (s.value.empty()) throw InvalidArgument("db: empty selector '" + text + "' (id=ID, kernel=NAME, device=WORD or a bare word)");
    return s;
}

std::string hosts_text(const StoreEntry& e) {
    std::string t = e.host.empty() ? "-" : e.host;
    for (const auto& h : e.hosts)
        if (h != e.host) t.append(",").append(h);
    return t;
}

nlohmann::json list_json(const StoreEntry& e) {
    return {{"id", entry_id(e.key)},       {"kind", to_string(e.key.kind)}, {"kernel", e.key.kernel},
            {"params", e.key.params},      {"size_class", e.key.size_class}, {"device", to_json(e.key.device)},
            {"host", e.host},              {"hosts", e.hosts},               {"timestamp", e.timestamp},
            {"recorded", utc_date(e.timestamp)}, {"alternates", e.alternates.size()}};
}

/// `worksize db`'s arguments sorted: the action (the first word), the selectors (the other words
/// not starting with '-') and the options among them.
struct DbWords {
    std::string action;
    std::vector<std::string> opts, words;
};

/// Sort db's arguments into the action, the selectors and the options (with the values of --db and
/// --log-level).
DbWords split_db_words(const std::vector<std::string>& args) {
    DbWords w;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (!a.empty() && a[0] == '-') {
            w.opts.push_back(a);
            if ((a == "--db" || a == "--log-level") && i + 1 < args.size()) w.opts.push_back(args[++i]);
        } else if (w.action.empty()) {
            w.action = a;
        } else {
            w.words.push_back(a);
        }
    }
    return w;
}

/// Check the action (list, show or rm; --json only with list) and parse the selectors: rm needs one.
std::vector<Selector> check_db_action(const std::string& action, bool json, const std::vector<std::string>& words) {
    if (action.empty()) throw InvalidArgument("db needs an action: list, show or rm (see worksize db --help)");
    if (action != "list" && action != "show" && action != "rm")
        throw InvalidArgument("db: unknown action '" + action + "' (list, show or rm)");
    if (json && action != "list") throw InvalidArgument("db: --json is an option of db list (show prints JSON)");
    std::vector<Selector> sels;
    for (const auto& w : words) sels.push_back(parse_selector(w));
    if (action == "rm" && sels.empty())
        throw InvalidArgument(
            "db rm needs a selector (an entry id from `worksize db list`, a kernel or a device word)");
    return sels;
}

/// Whether every selector matches the entry (so every entry, without selectors).
bool selected_by(const std::vector<Selector>& sels, const StoreEntry& e) {
    return std::all_of(sels.begin(), sels.end(), [&](const Selector& s) { return s.matches(e); });
}

/// The entries of `store` the selectors choose; InvalidArgument where there are selectors and none matches.
std::vector<StoreEntry> chosen_entries(const Store& store, const std::vector<Selector>& sels, const std::string& path) {
    std::vector<StoreEntry> chosen;
    for (const auto& e : store.entries())
        if (selected_by(sels, e)) chosen.push_back(e);
    if (!sels.empty() && chosen.empty()) {
        std::string what;
        for (const auto& s : sels) what.append(what.empty() ? "'" : " and '").append(s.text).append("'");
        throw InvalidArgument("db: no entry of '" + path + "' matches " + what + " (see worksize db list)");
    }
    return chosen;
}

/// `db list`: a table of the chosen entries and their count, or (--json) one JSON document.
void print_db_list(const Store& store, const std::vector<StoreEntry>& chosen, const std::string& path, bool json) {
    if (json) {
        nlohmann::json j = nlohmann::json::array();
        for (const auto& e : chosen) j.push_back(list_json(e));
        std::cout << nlohmann::json{{"database", path}, {"entries", j}}.dump(2) << '\n';
        return;
    }
    Table t({"id", "kind", "kernel", "params", "size class", "device", "CUs", "MHz", "key host", "measured on",
             "recorded"});
    for (const auto& e : chosen) {
        const auto& d = e.key.device;
        t.add({entry_id(e.key), to_string(e.key.kind), e.key.kernel, e.key.params.dump(),
               e.key.size_class.empty() ? "-" : e.key.size_class, d.name.empty() ? "-" : d.name,
               d.compute_units ? std::to_string(d.compute_units) : "-",
               d.max_clock_mhz ? std::to_string(d.max_clock_mhz) : "-", d.host.empty() ? "-" : d.host,
               hosts_text(e), utc_date(e.timestamp)});
    }
    std::cout << t.str();
    std::cout << chosen.size() << " of " << store.size() << " entries in " << path << '\n';
}

/// `db show`: the chosen entries in full, with their ids, as one JSON array.
void print_db_show(const std::vector<StoreEntry>& chosen) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& e : chosen) {
        j.push_back(to_json(e));
        j.back()["id"] = entry_id(e.key);
    }
    std::cout << j.dump(2) << '\n';
}

/// `db rm`: remove the entries the selectors choose, save the database and say how many went.
void remove_db_entries(Store& store, const std::vector<Selector>& sels, const std::string& path) {
    const std::size_t n = store.remove_if([&](const StoreEntry& e) { return selected_by(sels, e); });
    store.save();
    std::cout << "removed " << n << (n == 1 ? " entry" : " entries") << " from " << path << " (" << store.size()
              << " left)\n";
}

}  // namespace

int cmd_db(mpi::Environment& env, const std::vector<std::string>& args) {
    const char* usage = "worksize db list|show|rm [SELECTOR...] [--db F] [--json]\n"
                        "  list: one line per entry; show: entries as JSON; rm: remove the selected entries.\n"
                        "  SELECTOR: id=ID (from list), kernel=NAME, device=WORD, kind=model|tuning|link, or a bare\n"
                        "  word matching an id, a kernel or a device; several must all match";
    std::string db;
    bool json = false, help = false;
    po::options_description desc(usage);
    desc.add_options()
        ("help,h", po::bool_switch(&help), "show this help")
        ("db", po::value(&db), "database file (default $WORKSIZE_DB, else ~/.cache/worksize/db.json)")
        ("json", po::bool_switch(&json), "list: one JSON document");
    // The action, then selectors (words not starting with '-') among the options.
    const DbWords w = split_db_words(args);
    parse(w.opts, desc);
    if (show_help(env, desc, help)) return kOk;
    if (env.rank() != 0) return kOk;
    const std::vector<Selector> sels = check_db_action(w.action, json, w.words);

    const std::string path = resolve_db_path(db);
    Store store = Store::open(path, CorruptPolicy::report_and_ignore);
    for (const auto& warning : store.warnings()) log::warn(warning);
    const std::vector<StoreEntry> chosen = chosen_entries(store, sels, path);
    if (w.action == "list")
        print_db_list(store, chosen, path, json);
    else if (w.action == "show")
        print_db_show(chosen);
    else
        remove_db_entries(store, sels, path);
    return kOk;
}

}  // namespace worksize::cli
