// `worksize tune` on rank 0 (tune_run.hpp): the kernel parameters of each (kernel, device)
// (docs/tuning.md, "Kernel parameters"): the search, its head-to-head with the defaults'
// choice, the record stored under both keys, and the search's JSON.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tune_run.hpp"
#include "tune_text.hpp"
#include "worksize/scheduler/log.hpp"

namespace worksize::cli {

namespace {

/// The parameter search in the report's JSON.
nlohmann::json param_search_json(const std::vector<std::string>& keys, const ParamSearchResult& ps,
                                 const ParamComparison& cmp) {
    nlohmann::json trials = nlohmann::json::array();
    for (const auto& tr : ps.trials)
        trials.push_back({{"params", tr.params},
                          {"local", {tr.group.x, tr.group.y}},
                          {"predicted_rel", tr.predicted_rel},
                          {"seconds", tr.ok ? nlohmann::json(tr.seconds) : nlohmann::json(nullptr)},
                          {"error", tr.ok ? nlohmann::json(nullptr) : nlohmann::json(tr.error)}});
    const double best_s = cmp.best_s, default_s = cmp.default_s;
    const nlohmann::json doc = {
        {"searched", keys},
        {"strategy", ps.strategy},
        {"sets", ps.sets},
        {"invalid", ps.invalid},
        {"candidates", ps.candidates},
        {"measured", ps.measured},
        {"failed", ps.failed},
        {"confirm_runs", ps.confirm_runs},
        {"best", ps.found ? ps.best_params : nlohmann::json(nullptr)},
        {"best_local", {ps.best_local.x, ps.best_local.y}},
        {"best_s", ps.found ? nlohmann::json(best_s) : nlohmann::json(nullptr)},
        {"search_best_s", ps.found ? nlohmann::json(ps.best_s) : nlohmann::json(nullptr)},
        {"head_to_head_runs", cmp.h2h_runs},
        {"default_s", std::isfinite(default_s) ? nlohmann::json(default_s) : nlohmann::json(nullptr)},
        {"speedup_over_default",
         ps.found && std::isfinite(default_s) ? nlohmann::json(default_s / best_s) : nlohmann::json(nullptr)},
        {"stored", cmp.better},
        {"trials", trials}};
    return doc;
}

}  // namespace

void TuneRun::tune_params(Unit& u) {
    LocalTuner& t = *plan_.tuners[u.ti];
    const auto keys = t.searched_params();
    if (keys.empty() || !o_.searches_params(devs_[u.d])) return;
    const ParamSearchResult ps = t.tune_params(int(u.d), o_.ptopts);
    const ParamComparison cmp = compare_params(u, ps);
    param_lines_.push_back(param_line(u, keys, ps, cmp));
    if (cmp.better) {
        store_params(u, params_record(u, ps, cmp));
        u.stored = u.params_stored = true;
        u.check = BaselineCheck{};
        u.check.local = ps.best_local;
    } else if (!ps.found) {
        log::warn() << prefix(u) << "every parameter set failed; the defaults kept";
    }
    u.params_json = param_search_json(keys, ps, cmp);
}

ParamComparison TuneRun::compare_params(const Unit& u, const ParamSearchResult& ps) {
    LocalTuner& t = *plan_.tuners[u.ti];
    const int d = int(u.d);
    const TuneResult& chosen = u.chosen;
    ParamComparison cmp;
    // The defaults' time: what was stored for them, else their search's choice ...
    cmp.default_s = std::numeric_limits<double>::quiet_NaN();
    cmp.default_local = chosen.best;
    if (u.stored) {
        const TuningRecord dr = to_record(chosen, u.check);
        cmp.default_s = dr.best_s;
        cmp.default_local = dr.best;
    } else if (chosen.found) {
        cmp.default_s = chosen.best_s;
    }
    // ... and, where both ran, the medians of a head-to-head of the two, fresh and
    // interleaved (--baseline-runs each): each search's time is the survivor of a
    // minimum, so they are compared on fresh runs only.
    cmp.best_s = ps.best_s;
    if (ps.found && chosen.found && o_.topts.baseline_runs > 0) {
        const RetimeResult h = retime(
            {{LocalSize{1, 1}, {}, false, {}, 0}, {LocalSize{2, 1}, {}, false, {}, 0}},
            [&](const LocalSize& which) {
                const ConfigTime ct = which.x == 1 ? t.measure_params(d, ps.best_params, true)
                                                   : t.measure_fresh(d, cmp.default_local);
                if (!ct.ok) throw Error(ct.reason, ct.error);
                return ct.seconds;
            },
            o_.topts.baseline_runs);
        cmp.h2h_runs = h.runs;
        if (!h.configs[0].dropped && !h.configs[1].dropped) {
            cmp.best_s = h.configs[0].median_s;
            cmp.default_s = h.configs[1].median_s;
        }
    }
    // Stored when faster than the defaults' entry, or when nothing was stored for them
    // (e.g. a variant whose parameters fix its one local size: nothing to tune).
    cmp.better = ps.found && (!u.stored || !std::isfinite(cmp.default_s) || cmp.best_s < cmp.default_s);
    return cmp;
}

std::string TuneRun::param_line(const Unit& u, const std::vector<std::string>& keys,
                                const ParamSearchResult& ps, const ParamComparison& cmp) const {
    std::string keys_text;
    for (const auto& key : keys) keys_text += (keys_text.empty() ? "" : ",") + key;
    std::string text = prefix(u) + "parameters " + keys_text + " searched (" + ps.strategy + "): " +
                       std::to_string(ps.sets) + " sets, " + std::to_string(ps.invalid) + " invalid, " +
                       std::to_string(ps.measured) + " of " + std::to_string(ps.candidates) + " measured, " +
                       std::to_string(ps.failed) + " failed";
    if (ps.found) {
        std::string best;
        for (const auto& [key, value] : ps.best_params.items())
            best += (best.empty() ? "" : " ") + key + "=" + value.dump();
        text += "; best " + best + " " + fmt(cmp.best_s * 1e3, 4) + " ms";
        if (std::isfinite(cmp.default_s))
            text += ", " + ratio_str(cmp.default_s, cmp.best_s) + " the speed of the defaults (" +
                    fmt(cmp.default_s * 1e3, 4) + " ms" + (cmp.h2h_runs ? ", head to head" : "") + ")";
    }
    text += cmp.better ? "; stored" : "; the defaults kept";
    return text;
}

TuningRecord TuneRun::params_record(const Unit& u, const ParamSearchResult& ps,
                                    const ParamComparison& cmp) const {
    const LocalTuner& t = *plan_.tuners[u.ti];
    TuningRecord rec;
    rec.best = ps.best_local;
    rec.best_s = cmp.best_s;
    // A kernel whose parameters fix no work-group (interp's vw, ry) runs its
    // sets with NULL: a NULL entry, beside the defaults' local size it beat.
    if (rec.best.is_null()) {
        rec.source = "null";
        rec.tuned_local = cmp.default_local;
        rec.tuned_s = std::isfinite(cmp.default_s) ? cmp.default_s : cmp.best_s;
    }
    rec.measured = u.chosen.measured + ps.measured;
    rec.candidates = u.chosen.candidates + ps.candidates;
    rec.strategy = "params " + ps.strategy;
    // The whole kernel configuration: the searched set, and the tunables, variant
    // and GPU-default keys (interp's stage_x) given with --param.
    rec.params = ps.best_params;
    const auto& f = kernel_job(t.kernel());
    const nlohmann::json given = kernel_params(jobs_[u.ti]);
    for (const auto& [key, value] : given.items())
        if (key == "variant" || f.gpu_params.contains(key) ||
            std::any_of(f.tunables.begin(), f.tunables.end(), [&](const auto& p) { return p.key == key; }))
            rec.params[key] = value;
    if (std::isfinite(cmp.default_s)) rec.default_s = cmp.default_s;
    rec.iterations = t.iterations();
    return rec;
}

void TuneRun::store_params(const Unit& u, const TuningRecord& rec) {
    const std::string& kernel = plan_.tuners[u.ti]->kernel();
    const DeviceInfo& dev = devs_[u.d];
    // Under the key and size of the job without them, where `--local tuned`
    // looks (with_tuned_params).
    KernelArgs plain = jobs_[u.ti];
    std::erase_if(plain.params, [&](const std::string& p) {
        const std::string key = p.substr(0, p.find('='));
        return rec.params.contains(key);
    });
    const auto pj = make_job(plain);
    // It replaces the defaults' entry stored above: put() would combine the two
    // by their own best times (the defaults' the minimum of a search, ours a
    // head-to-head median) and could keep the defaults'.
    const StoreKey key{EntryKind::tuning, fingerprint_of(dev), kernel, pj->tuning_key(),
                       size_class(pj->problem())};
    store_.remove_if([&](const StoreEntry& e) {
        return e.key.kind == key.kind && e.key.kernel == key.kernel && e.key.params == key.params &&
               e.key.size_class == key.size_class && e.key.device == key.device;
    });
    store_.put_tuning(key.device, kernel, key.params, pj->problem(), rec, unix_now(), dev.host);
    // And its local size under the configuration's own key and size, where
    // the plan of `--local tuned` looks once the set is applied (interp's ry
    // changes both): without it the run fell back to the paper's rule.
    KernelArgs configured = plain;
    for (const auto& [k2, v2] : rec.params.items()) configured.params.push_back(param_arg(k2, v2));
    const auto cj = make_job(configured);
    if (cj->tuning_key() != pj->tuning_key() || size_class(cj->problem()) != size_class(pj->problem())) {
        TuningRecord own = rec;
        own.params = nlohmann::json::object();
        store_.put_tuning(key.device, kernel, cj->tuning_key(), cj->problem(), own, unix_now(), dev.host);
    }
    store_.save();
}

}  // namespace worksize::cli
