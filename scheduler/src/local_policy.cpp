// Local-size policies (null, paper, tuned) and their registry, `--local tuned`'s use of the
// tuning database, and the Database a command opens once (see local_policy.hpp, docs/tuning.md).
#include "worksize/scheduler/local_policy.hpp"

#include "registry.hpp"
#include "worksize/scheduler/log.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace worksize {

// --- the tuning database as a command reads it ------------------------------------------------

TuningSource tuning_source(const Store& store) {
    TuningSource src;
    src.store = &store;
    src.why_none = "none in " + store.path();
    for (const auto& w : store.warnings())
        if (std::find(src.warnings.begin(), src.warnings.end(), w) == src.warnings.end()) src.warnings.push_back(w);
    return src;
}

TuningSource tuning_source_unavailable(const std::string& error) {
    TuningSource src;
    src.warnings.push_back("tuning database not used: " + error);
    return src;
}

Database::Database(std::string path) : arg_(std::move(path)) {}

void Database::open() {
    if (tried_) return;
    tried_ = true;
    try {
        path_ = resolve_db_path(arg_);
        store_ = Store::open(path_, CorruptPolicy::report_and_ignore);
        tuning_ = tuning_source(*store_);
        log::debug() << "database " << path_ << ": " << store_->size() << " entries";
    } catch (const Error& e) {
        error_ = e.what();
        log::debug() << "database not opened: " << error_;
        tuning_ = tuning_source_unavailable(error_);
    }
}

Store& Database::store() {
    open();
    if (!store_) throw Error(error_);
    return *store_;
}

const std::string& Database::path() {
    open();
    if (!store_) throw Error(error_);
    return path_;
}

std::vector<std::string> Database::take_warnings() {
    const Store& s = store();
    if (warned_) return {};
    warned_ = true;
    return s.warnings();
}

const TuningSource& Database::tuning() {
    open();
    return tuning_;
}

// --- tuned local sizes ------------------------------------------------------------------------

namespace {

std::string local_text(const LocalSize& l) {
    if (l.is_null()) return "NULL";
    std::string t = "(";
    t.append(std::to_string(l.x)).append(",").append(std::to_string(l.y));
    return t.append(")");
}

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
    return buf;
}

/// A stored record's time: "0.0356 ms per run of 3 iterations" (older entries: no unit given).
std::string record_time_text(const TuningRecord& r) {
    std::string t = seconds_text(r.best_s);
    if (r.iterations) t += " per run of " + std::to_string(r.iterations) + (r.iterations == 1 ? " iteration" : " iterations");
    return t;
}

/// How the entry's local size was chosen: "guided search", or where a baseline beat the
/// search's choice in the baseline check, e.g. "NULL, faster than the guided search's (64,16)
/// (34.1 ms)".
std::string origin_text(const TuningRecord& r) {
    std::string t = r.strategy + " search";
    if (r.source == "tuned") return t;
    std::string base = r.source == "null" ? std::string("NULL") : std::string("the paper rule's ").append(local_text(r.best));
    return base.append(", faster than the ").append(t).append("'s ").append(local_text(r.tuned_local)).append(" (")
        .append(seconds_text(r.tuned_s)).append(")");
}

/// Does `local` fit a slice of `global` on `dev`: as a uniform launch, or (`pad`: the plan pads
/// the NDRange to whole groups) within the device's limits?
bool fits(const LocalSize& local, const GlobalSize& global, const DeviceInfo& dev, int dims, bool pad,
          std::string* why) {
    auto no = [&](const std::string& w) {
        if (why) *why = w;
        return false;
    };
    if (local.x == 0 || local.y == 0) return no("zero local size");
    if (dims == 1 && local.y != 1) return no("2-D local size for a 1-D kernel");
    if (!pad && (global.x % local.x != 0 || global.y % local.y != 0))
        return no("local " + local_text(local) + " does not divide the slice's global (" + std::to_string(global.x) +
                  "," + std::to_string(global.y) + ")");
    if (dev.max_work_group_size && local.x * local.y > dev.max_work_group_size)
        return no("local " + local_text(local) + " exceeds the device's max work-group size " +
                  std::to_string(dev.max_work_group_size));
    if (dev.max_work_item_sizes[0] && local.x > dev.max_work_item_sizes[0]) return no("x exceeds max work-item size");
    if (dims == 2 && dev.max_work_item_sizes[1] && local.y > dev.max_work_item_sizes[1])
        return no("y exceeds max work-item size");
    return true;
}

/// Does the entry fit the slice? A NULL entry (source "null") fits any.
bool entry_fits(const TuningRecord& r, const GlobalSize& global, const DeviceInfo& dev, int dims, bool pad,
                std::string* why) {
    return r.source == "null" || fits(r.best, global, dev, dims, pad, why);
}

/// The tuning entry of the size class nearest to `cls` (sum of |delta log2| per dimension; not
/// `cls` itself) of the same device, kernel and parameters that `accept` takes; its class in
/// `found_cls`. Unusable entries are reported through `warn` and skipped.
std::optional<TuningRecord> nearest_entry(const Store& store, const DeviceFingerprint& fp, const std::string& kernel,
                                          const nlohmann::json& params, const SizeClass& cls,
                                          const std::function<bool(const TuningRecord&)>& accept,
                                          std::string& found_cls,
                                          const std::function<void(const std::string&)>& warn) {
    const std::string key = cls.to_string();
    int best_dist = std::numeric_limits<int>::max();
    std::optional<TuningRecord> best;
    for (const auto& e : store.entries()) {
        if (e.key.kind != EntryKind::tuning || !fingerprint_matches(e.key.device, fp) || e.key.kernel != kernel ||
            e.key.params != params || e.key.size_class == key)
            continue;
        const auto ec = parse_size_class(e.key.size_class);
        if (!ec) continue;
        try {
            const auto r = tuning_record_from_json(e.payload);
            if (!accept(r)) continue;
            const int d = std::abs(ec->x_log2 - cls.x_log2) + std::abs(ec->y_log2 - cls.y_log2);
            if (d < best_dist) {
                best_dist = d;
                best = r;
                found_cls = e.key.size_class;
            }
        } catch (const InvalidArgument& ex2) {
            warn("ignoring unusable tuning entry for '" + kernel + "' " + e.key.size_class + ": " + ex2.what());
        }
    }
    return best;
}

/// Distinct warnings of one plan, in order: the source's own first.
struct Warnings {
    std::vector<std::string> list;
    void add(const std::string& w) {
        if (std::find(list.begin(), list.end(), w) == list.end()) list.push_back(w);
    }
};

void emit_warnings(const std::vector<std::string>& ws, std::vector<std::string>* warnings) {
    for (const auto& w : ws) {
        if (warnings)
            warnings->push_back(w);
        else
            log::warn(w);
    }
}

std::string paper_rule_for(const DeviceInfo& dev, GlobalSize slice, int dims, Priority priority, LocalSize& local) {
    std::string rule;
    local = dims == 2 ? paper_local_2d(dev, slice, priority, &rule) : paper_local_1d(dev, slice.x, &rule);
    return rule;
}

bool divides(const LocalSize& l, const GlobalSize& g) {
    return l.x != 0 && l.y != 0 && g.x % l.x == 0 && g.y % l.y == 0;
}

/// apply_tuned_locals on a source. For each assignment left on the paper rule although the
/// device has an entry (of the slice's class, else of the nearest class) that does not fit its
/// slice, `unfit[device]` is that entry's local size ({0,0} elsewhere).
void apply_entries(Plan& plan, const std::vector<DeviceInfo>& devices, const TuningSource& src,
                   const nlohmann::json& params, Warnings& ws, std::vector<LocalSize>* unfit) {
    if (unfit) unfit->assign(devices.size(), LocalSize{});
    auto warn = [&](const std::string& w) { ws.add(w); };
    for (auto& a : plan.assignments) {
        if (a.units == 0 || a.local_rule == kRequiredLocalRule || a.backend != "kernel") continue;
        const DeviceInfo& dev = devices.at(static_cast<std::size_t>(a.device));
        bool done = false;
        std::string reason = src.why_none;
        if (src.store) {
            const Store& store = *src.store;
            const DeviceFingerprint fp = fingerprint_of(dev);
            std::vector<std::string> w;
            const auto rec = store.find_tuning(fp, plan.kernel, params, a.global, &w);
            for (const auto& s : w) warn(s);
            const SizeClass cls = size_class_of(a.global);
            const std::string cls_text = cls.to_string();
            std::string why;
            if (rec && entry_fits(*rec, a.global, dev, plan.dims, plan.padded, &why)) {
                a.local = rec->best;
                // Padded to whole groups; plan_tuned still re-splits to spare the padding.
                if (unfit && rec->source != "null" && !divides(rec->best, a.global))
                    unfit->at(std::size_t(a.device)) = rec->best;
                a.local_rule = "tuned (db entry " + cls_text + ", " + origin_text(*rec) + ", " +
                               std::to_string(rec->measured) + "/" + std::to_string(rec->candidates) +
                               " measured, " + record_time_text(*rec) + ")";
                done = true;
            } else {
                if (rec) reason = "entry for " + cls_text + " unusable: " + why;
                std::string best_cls;
                const auto best = nearest_entry(
                    store, fp, plan.kernel, params, cls,
                    [&](const TuningRecord& r) { return entry_fits(r, a.global, dev, plan.dims, plan.padded, nullptr); },
                    best_cls, warn);
                if (best) {
                    a.local = best->best;
                    if (unfit && !divides(best->best, a.global)) unfit->at(std::size_t(a.device)) = best->best;
                    a.local_rule = "tuned (nearest db entry " + best_cls + " for slice class " + cls_text + ", " +
                                   origin_text(*best) + ", " + record_time_text(*best) + ")";
                    done = true;
                } else {
                    // Entries of other size classes that exist but do not fit the slice.
                    std::string other_cls;
                    const auto other = nearest_entry(store, fp, plan.kernel, params, cls,
                                                     [](const TuningRecord&) { return true; }, other_cls,
                                                     [](const std::string&) {});
                    if (!rec) reason = "none for " + cls_text + " with these kernel parameters in " + store.path();
                    if (other) reason += "; the nearest other size class's, " + other_cls + ", does not fit either";
                    if (unfit && (rec || other)) unfit->at(std::size_t(a.device)) = rec ? rec->best : other->best;
                }
            }
        }
        if (!done) {
            // The plan's local size stays (the paper's, unless the plan is a NULL one); say why.
            std::string rule = a.local_rule;
            if (plan.local_policy != LocalPolicy::null)
                rule = paper_rule_for(dev, rule_global(dev, a.global, plan.padded), plan.dims, plan.priority, a.local);
            a.local_rule = tuned_fallback_rule(reason, rule);
        }
        a.padded_global = launch_global(dev, a.global, a.local, plan.dims, plan.padded);
    }
}

class NullPolicy final : public LocalSizePolicy {
public:
    LocalPolicy id() const override { return LocalPolicy::null; }
    std::string name() const override { return "null"; }
    std::string help() const override { return "null (driver)"; }
    LocalSize local(const DeviceInfo&, GlobalSize, int, Priority, std::string& rule) const override {
        rule = "null (driver chooses)";
        return {};
    }
};

class PaperPolicy final : public LocalSizePolicy {
public:
    LocalPolicy id() const override { return LocalPolicy::paper; }
    std::string name() const override { return "paper"; }
    std::string help() const override { return "paper"; }
    LocalSize local(const DeviceInfo& dev, GlobalSize slice, int dims, Priority priority,
                    std::string& rule) const override {
        LocalSize l;
        rule = paper_rule_for(dev, slice, dims, priority, l);
        return l;
    }
};

class TunedPolicy final : public LocalSizePolicy {
public:
    LocalPolicy id() const override { return LocalPolicy::tuned; }
    std::string name() const override { return "tuned"; }
    std::string help() const override { return "tuned"; }
    /// Before the database is read: the paper's local size, marked as a tuned plan's fallback.
    LocalSize local(const DeviceInfo& dev, GlobalSize slice, int dims, Priority priority,
                    std::string& rule) const override {
        LocalSize l;
        rule = tuned_fallback_rule(std::nullopt, paper_rule_for(dev, slice, dims, priority, l));
        return l;
    }
    Plan plan(const std::vector<DeviceInfo>& devices, const PlanRequest& request, const TuningSource* tuning,
              const nlohmann::json& params, std::vector<std::string>* warnings) const override {
        const TuningSource none;
        return plan_tuned(devices, request, tuning ? *tuning : none, params, warnings);
    }
};

NamedRegistry<LocalSizePolicy>& policies() {
    static NamedRegistry<LocalSizePolicy> all = [] {
        NamedRegistry<LocalSizePolicy> r("local policy");
        r.add(std::make_unique<NullPolicy>());
        r.add(std::make_unique<PaperPolicy>());
        r.add(std::make_unique<TunedPolicy>());
        return r;
    }();
    return all;
}

}  // namespace

Plan LocalSizePolicy::plan(const std::vector<DeviceInfo>& devices, const PlanRequest& request, const TuningSource*,
                           const nlohmann::json&, std::vector<std::string>*) const {
    return make_plan(devices, request);
}

void register_local_policy(std::unique_ptr<LocalSizePolicy> policy) { policies().add(std::move(policy)); }
std::vector<std::string> local_policy_names() { return policies().names(); }
std::string local_policy_names_text() { return policies().names_text(); }
const LocalSizePolicy& find_local_policy(const std::string& name) { return policies().find(name); }

const LocalSizePolicy& local_policy(LocalPolicy id) {
    for (const LocalSizePolicy* p : policies().items())
        if (p->id() == id) return *p;
    throw InvalidArgument(std::string("no local policy '") + to_string(id) + "' is registered");
}

LocalPolicy parse_local_policy(const std::string& s) { return find_local_policy(s).id(); }

std::string tuned_fallback_rule(const std::optional<std::string>& why, const std::string& paper_rule) {
    std::string rule = "paper (no tuned entry";
    if (why) rule.append(": ").append(*why);
    return rule.append("): ").append(paper_rule);
}

void apply_tuned_locals(Plan& plan, const std::vector<DeviceInfo>& devices, const TuningSource& tuning,
                        const nlohmann::json& params, std::vector<std::string>* warnings) {
    Warnings ws;
    for (const auto& w : tuning.warnings) ws.add(w);
    apply_entries(plan, devices, tuning, params, ws, nullptr);
    emit_warnings(ws.list, warnings);
}

Plan plan_tuned(const std::vector<DeviceInfo>& devices, PlanRequest request, const TuningSource& tuning,
                const nlohmann::json& params, std::vector<std::string>* warnings) {
    if (request.local_policy != LocalPolicy::tuned) throw InvalidArgument("plan_tuned: the local policy is not tuned");
    Warnings ws;
    for (const auto& w : tuning.warnings) ws.add(w);
    Plan plan = make_plan(devices, request);
    std::vector<LocalSize> unfit;
    apply_entries(plan, devices, tuning, params, ws, &unfit);
    // Devices whose entry does not divide their slice, and the multiple that would let it.
    std::vector<std::uint64_t> multiples(devices.size(), 1);
    bool any = false;
    for (const auto& a : plan.assignments) {
        const LocalSize l = unfit.at(std::size_t(a.device));
        const std::uint64_t m = plan.dims == 2 ? l.y : l.x;
        if (m > 1 && a.units % m != 0 && m * 8 <= a.units) {
            multiples.at(std::size_t(a.device)) = m;
            any = true;
        }
    }
    if (any) {
        request.unit_multiples = multiples;
        plan = make_plan(devices, request);
        apply_entries(plan, devices, tuning, params, ws, nullptr);
        for (auto& a : plan.assignments) {
            const std::uint64_t m = multiples.at(std::size_t(a.device));
            if (m > 1 && a.units > 0)
                a.note = std::string(plan.dims == 2 ? "rows" : "items") + " rounded to a multiple of " +
                         std::to_string(m) + " for the tuned local size";
        }
    }
    emit_warnings(ws.list, warnings);
    return plan;
}

Plan plan_for(const std::vector<DeviceInfo>& devices, const PlanRequest& request, const TuningSource* tuning,
              const nlohmann::json& params, std::vector<std::string>* warnings) {
    return local_policy(request.local_policy).plan(devices, request, tuning, params, warnings);
}

Plan plan_with_weights(const std::vector<DeviceInfo>& devices, PlanRequest request, std::vector<double> weights,
                       const TuningSource* tuning, const nlohmann::json& params) {
    request.weights = std::move(weights);
    return plan_for(devices, request, tuning, params);
}

}  // namespace worksize
