// `worksize tune`: tune the local work size of kernels on every device of every rank and keep
// the results in the tuning database; `--report` compares the tuned choice with the exhaustive
// best, the paper's rule and NULL and prints the (x, y) -> time heat maps (docs/tuning.md).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <iostream>
#include <limits>
#include <map>
#include <set>

#include "job_setup.hpp"
#include "kernel_help.hpp"
#include "output_meta.hpp"
#include "tune_text.hpp"
#include "worksize/runtime/autotune.hpp"
#include "worksize/scheduler/log.hpp"

namespace worksize::cli {

namespace {

/// The database text of this rank for collect("tuning-db"): "" when it has no file.
std::string local_db_text(const std::string& db) {
    const std::string path = resolve_db_path(db);
    if (!std::filesystem::exists(path)) return {};
    return Store::open(path, CorruptPolicy::report_and_ignore).dump();
}

}  // namespace

int cmd_tune(mpi::Environment& env, const std::vector<std::string>& args) {
    KernelArgs base;
    DeviceSelection sel;
    bool json = false, help = false, report = false;
    std::string search = "guided", heatmap_csv, param_search = "auto";
    std::size_t param_budget = 24;
    std::vector<std::string> sizes;
    double budget = 0.20;
    std::size_t min_budget = 1;
    const TuneOptions defaults;
    TuneReportOptions ropts;
    // Counts (count_value refuses a negative or out-of-range value rather than wrapping it).
    int confirm_top = int(defaults.confirm_top), confirm_runs = int(defaults.confirm_runs),
        head_to_head = int(ropts.head_to_head_runs), baseline_runs = int(defaults.baseline_runs);
    double topts_margin = defaults.baseline_margin;
    MeasureOptions mo;
    double min_run_ms = mo.min_run_s * 1e3;
    po::options_description desc(
        "worksize tune --kernel K|all [--size S] [--search guided|exhaustive] [--budget F] [--db F]\n"
        "worksize tune --report [--json] [--heatmap-csv F] ...");
    desc.add_options()
        ("help,h", po::bool_switch(&help), "show this help")
        ("kernel", po::value(&base.kernel)->default_value("all"), ("kernel: " + kernel_list() + " or all").c_str())
        ("size", po::value(&sizes)->composing(),
         ("tuning size: N (NxN for 2-D, N items for 1-D), WxH, or KERNEL=SIZE; repeatable "
          "(default with --kernel all: " + tune_sizes_help() + ")").c_str())
        ("search", po::value(&search)->default_value("guided"), "search: guided (model-ranked seeds + pattern search) or exhaustive")
        ("budget", real_value("budget", &budget, 0, 1, Open::low), "guided search: at most this fraction of the candidates")
        ("min-budget", count_value("min-budget", &min_budget, 1),
         "guided search: measure at least this many candidates (or all, if fewer)")
        ("param-search", po::value(&param_search)->default_value("auto"),
         "kernel parameters (a kernel's tunables not given with --param): guided (the model's best half of "
         "--param-budget, then a random sample), exhaustive, off, or auto (guided on GPUs and accelerators, "
         "off on CPU devices)")
        ("param-budget", count_value("param-budget", &param_budget, 1),
         "parameter search: measure at most this many parameter sets (guided; a space this small is searched whole)")
        ("confirm-top", count_value("confirm-top", &confirm_top),
         "after either search, re-time its this many fastest candidates ... (0 or 1: off)")
        ("confirm-runs", count_value("confirm-runs", &confirm_runs),
         "... this many more times each (fresh measurements, interleaved); the lowest median of all "
         "their timings wins (0: off)")
        ("baseline-runs", count_value("baseline-runs", &baseline_runs),
         "after the confirmation, time the choice against the paper rule's local size and NULL this many "
         "more times each, fresh and interleaved (0: no check) ...")
        ("baseline-margin", real_value("baseline-margin", &topts_margin, 0, 10),
         "... and store the faster baseline instead when the choice's median is slower than it by more "
         "than this fraction (0.05: 5 %)")
        ("head-to-head", count_value("head-to-head", &head_to_head),
         "report: when the tuned choice and the exhaustive best differ, measure both afresh this many "
         "times each, interleaved, and compare those medians (0: compare the searches' own times)")
        ("iterations", count_value("iterations", &base.iterations, 1, kMaxIterations), "kernel iterations per timed run")
        ("repeats", count_value("repeats", &mo.repeats, 1), "timed runs per configuration (the median counts)")
        ("warmup", count_value("warmup", &mo.warmup), "untimed runs per configuration first")
        ("min-run-ms", real_value("min-run-ms", &min_run_ms, 0, 60e3),
         "where one run of --iterations has less kernel time than this on a device (a GPU's tens of "
         "microseconds), time runs of more iterations there and scale the times back (0: off)")
        ("seed", count_value("seed", &base.seed), "seed of the generated inputs")
        ("param", param_value(&base.params), "kernel parameter KEY=VALUE, repeatable")
        ("db", po::value(&base.db), "tuning database (default: $WORKSIZE_DB, else ~/.cache/worksize/db.json)")
        ("report", po::bool_switch(&report),
         "measure every candidate, the paper's rule and NULL too, and compare them with the guided choice")
        ("json", po::bool_switch(&json), "report: print one JSON document")
        ("heatmap-csv", po::value(&heatmap_csv), "report: write the (x, y) -> time heat maps to this CSV (docs/plot_heatmap.sh)");
    desc.add(selection_options(sel));
    parse(args, desc, true);
    if (show_help(env, desc, help)) return kOk;
    // Validate everything on every rank before any collective.
    if (search != "guided" && search != "exhaustive")
        throw InvalidArgument("--search must be guided or exhaustive, not '" + search + "'");
    if (param_search != "guided" && param_search != "exhaustive" && param_search != "off" && param_search != "auto")
        throw InvalidArgument("--param-search must be auto, guided, exhaustive or off, not '" + param_search + "'");
    // (The numeric options' types and ranges are checked as they are parsed: count_value, real_value.)
    mo.min_run_s = min_run_ms * 1e-3;
    ropts.head_to_head_runs = std::size_t(head_to_head);
    if ((json || !heatmap_csv.empty()) && !report) throw InvalidArgument("--json and --heatmap-csv go with --report");
    std::vector<std::string> kernels;
    if (base.kernel == "all")
        kernels = kernel_job_names();
    else
        kernels = {base.kernel};
    std::map<std::string, std::string> size_of;
    std::string common_size;
    for (const auto& s : sizes) {
        const auto eq = s.find('=');
        if (eq == std::string::npos) {
            common_size = s;
        } else {
            const std::string k = s.substr(0, eq);
            if (std::find(kernels.begin(), kernels.end(), k) == kernels.end())
                throw InvalidArgument("--size " + s + ": '" + k + "' is not a kernel being tuned");
            size_of[k] = s.substr(eq + 1);
        }
    }
    std::vector<KernelArgs> jobs;
    for (const auto& k : kernels) {
        KernelArgs a = base;
        a.kernel = k;
        a.local = "paper";
        a.strategy = "paper";
        if (size_of.count(k))
            a.size = size_of[k];
        else if (!common_size.empty())
            a.size = common_size;
        else if (kernels.size() > 1 && !kernel_job(k).tune_size.empty())
            a.size = kernel_job(k).tune_size;  // small enough for a CPU device
        else
            throw InvalidArgument("tune needs --size for kernel '" + k + "'");
        (void)make_job(a);  // throws InvalidArgument for a bad kernel, size or parameter
        jobs.push_back(a);
    }

    TuneOptions topts;
    topts.strategy = search == "exhaustive" ? SearchStrategy::exhaustive : SearchStrategy::guided;
    topts.budget_fraction = budget;
    topts.min_budget = min_budget;
    topts.confirm_top = std::size_t(confirm_top);
    topts.confirm_runs = std::size_t(confirm_runs);
    topts.baseline_runs = std::size_t(baseline_runs);
    topts.baseline_margin = topts_margin;
    const std::string db = base.db;
    // The parameter search: its own budget (a count of sets, each a program build), confirmation as above.
    // auto: on GPUs and accelerators; on CPU devices each set costs a compilation and the
    // default kernel is competitive, so only when asked for.
    auto search_params = [&](const DeviceInfo& d) {
        return param_search == "auto" ? d.type != DeviceType::cpu : param_search != "off";
    };
    TuneOptions ptopts = topts;
    ptopts.strategy = param_search == "exhaustive" ? SearchStrategy::exhaustive : SearchStrategy::guided;
    ptopts.budget_fraction = 0;
    ptopts.min_budget = param_budget;

    Cluster cluster(env, sel);
    cluster.set_collect_handler([db](const std::string& what) -> std::string {
        if (what == "tuning-db") return local_db_text(db);
        return {};
    });
    if (!cluster.is_master()) return cluster.serve();

    std::string tuning;  // the (kernel, device) being tuned, for the line of a lost rank
    std::size_t stored_units = 0;  // (kernel, device)s stored so far
    auto body = [&](Cluster& c) -> int {
        const std::string db_path = resolve_db_path(db);
        // Output files (rank 0 writes them), before the work.
        check_db_writable(db_path);
        check_writable(heatmap_csv, "heatmap-csv");
        Store store = Store::open(db_path, CorruptPolicy::report_and_ignore);
        for (const auto& w : store.warnings()) log::warn(w);
        const auto& devs = c.devices();
        if (devs.empty()) throw Error("no device to tune (see worksize devices)");

        // Progress steps: one per configuration measurement launched (cache hits are none). The
        // plan per (kernel, device) assumes no failure and, in a report, a head-to-head; it is
        // an upper bound except when every finalist fails on re-timing, and the total is set to
        // what was actually launched once each (kernel, device) is done.
        std::vector<std::unique_ptr<LocalTuner>> tuners;
        std::vector<std::vector<std::size_t>> planned;
        std::size_t total = 0;
        for (const auto& a : jobs) {
            tuners.push_back(std::make_unique<LocalTuner>(c, a.kernel, a.iterations,
                                                          [a](std::uint64_t n) {
                                                              KernelArgs k = a;
                                                              k.iterations = n;
                                                              return make_job(k);
                                                          },
                                                          mo));
            // The kernel's tunable parameters not given with --param are searched too.
            if (param_search != "off") {
                tuners.back()->set_param_search(
                    [a](std::uint64_t n, const nlohmann::json& params) {
                        KernelArgs k = a;
                        k.iterations = n;
                        for (const auto& [key, value] : params.items()) k.params.push_back(param_arg(key, value));
                        return make_job(k);
                    },
                    kernel_params(a));
            }
            planned.emplace_back();
            for (std::size_t d = 0; d < devs.size(); ++d) {
                const auto ranked = tuners.back()->ranked(int(d));
                const std::size_t n = ranked.size(), b = guided_budget(n, topts);
                std::size_t steps = 0;
                if (report) {
                    const LocalSize paper = tuners.back()->paper_local(int(d));
                    const bool paper_cached = std::any_of(ranked.begin(), ranked.end(),
                                                          [&](const CandidateScore& s) { return s.candidate.local == paper; });
                    steps = n + planned_confirm_runs(n, topts) + planned_confirm_runs(b, topts) +
                            2 * ropts.head_to_head_runs + (paper_cached ? 0 : 1) + 1;  // + NULL
                } else if (topts.strategy == SearchStrategy::exhaustive) {
                    steps = n + planned_confirm_runs(n, topts);
                } else {
                    steps = b + planned_confirm_runs(b, topts);
                }
                // The baseline check: the choice, the paper rule's local size and NULL (at most).
                steps += 3 * topts.baseline_runs;
                // The parameter search (at most its budget; the total is corrected once it is done).
                if (search_params(devs[d]) && !tuners.back()->searched_params().empty())
                    steps += param_budget + planned_confirm_runs(param_budget, ptopts);
                planned.back().push_back(steps);
                total += steps;
            }
        }
        Progress progress("tune", total);
        // Only known after both searches of a report: whether the choices are timed head to head.
        std::size_t unit_plan = 0;  // the current (kernel, device)'s planned steps
        ropts.on_head_to_head = [&](std::size_t runs) {
            unit_plan = unit_plan - 2 * ropts.head_to_head_runs + runs;
            progress.set_total(progress.total() - 2 * ropts.head_to_head_runs + runs);
        };
        for (auto& t : tuners)
            t->on_measured([&, kernel = t->kernel()](int d, LocalSize l, const ConfigTime& ct) {
                progress.step(kernel + " dev " + std::to_string(d) + " " + local_str(l) + (ct.ok ? "" : " failed"));
            });

        int code = kOk;
        Table summary({"kernel", "device", "rank", "size", "best local", "best ms", "measured", "confirm runs", "candidates",
                       "failed", "stored"});
        Table rep({"kernel", "device", "size", "tuned", "tuned ms", "exh. best", "best ms", "tuned/best", "compared",
                   "paper", "paper ms", "NULL ms", "measured/cands", "confirm runs", "vs NULL", "vs paper", "stored"});
        std::vector<TuneReportRow> rows;
        std::vector<std::string> param_lines;  // one per parameter search
        std::vector<std::string> raised;  // (kernel, device)s timed over more iterations (--min-run-ms)
        nlohmann::json results = nlohmann::json::array();
        for (std::size_t ti = 0; ti < tuners.size(); ++ti) {
            auto& t = tuners[ti];
            for (std::size_t d = 0; d < devs.size(); ++d) {
                const DeviceInfo& dev = devs[d];
                tuning = t->kernel() + " on device " + std::to_string(d) + " (" + dev.name + ")";
                const std::size_t steps_before = progress.count();
                unit_plan = planned[ti][d];
                const std::string& size_txt = jobs[ti].size;  // the problem size, as --size gave it
                TuneResult chosen;
                bool failed_h2h = false;  // the choice failed when timed head to head: not stored
                std::vector<std::string> rep_row;  // the report's row, but its last column ("stored")
                if (report) {
                    TuneResult ex, gd;
                    rows.push_back(tune_report_row(*t, int(d), topts, ropts, &ex, &gd));
                    const auto& r = rows.back();
                    const bool exhaustive = topts.strategy == SearchStrategy::exhaustive;
                    chosen = exhaustive ? ex : gd;
                    failed_h2h = exhaustive ? r.best_failed : r.tuned_failed;
                    // Which numbers "tuned ms" and "best ms" are (the legend is printed above the table).
                    std::string compared = "search";
                    if (r.head_to_head)
                        compared = "h2h " + std::to_string(r.head_to_head_runs);
                    else if (!std::isfinite(r.tuned_s) || !std::isfinite(r.exhaustive_best_s))
                        compared = "-";
                    else if (r.tuned_local == r.best_local)
                        compared = "same";
                    rep_row = {r.kernel, std::to_string(d) + " " + r.device_name, size_txt, local_str(r.tuned_local),
                             ms_or_dash(r.tuned_s), local_str(r.best_local), ms_or_dash(r.exhaustive_best_s),
                             ratio_str(r.tuned_s, r.exhaustive_best_s), compared, local_str(r.paper_local),
                             ms_or_dash(r.paper_s), ms_or_dash(r.null_s),
                             std::to_string(r.measured) + "/" + std::to_string(r.candidates),
                             std::to_string(r.confirm_runs) + "+" + std::to_string(r.exhaustive_confirm_runs),
                             ratio_str(r.null_s, r.tuned_s), ratio_str(r.paper_s, r.tuned_s)};
                    if (!r.head_to_head_error.empty())
                        log::warn() << r.kernel << " on device " << d
                                    << " failed in the head-to-head: " << r.head_to_head_error;
                } else {
                    chosen = t->tune(int(d), topts);
                }
                bool stored = false;
                BaselineCheck check;
                const std::string where = t->kernel() + " on device " + std::to_string(d) + " (" + dev.name +
                                          "), size " + size_txt + ": ";
                const std::string untunable = nothing_to_tune(chosen, t->dims(), t->job().required_local());
                if (!untunable.empty()) {
                    // One candidate: nothing was chosen, so nothing is stored as "tuned" (and
                    // `--local tuned` keeps the paper rule, with its reason).
                    log::warn() << t->kernel() << " on device " << d << " (" << dev.name
                                << "), size " << size_txt << ": " << untunable << "; nothing stored";
                } else if (chosen.found && failed_h2h) {
                    log::warn() << "the chosen local size " << local_str(chosen.best) << " of '"
                                << t->kernel() << "' failed on re-timing on device " << d << " (" << dev.name
                                << "); nothing stored";
                    code = kFailure;
                } else if (chosen.found) {
                    // The baseline check: a choice slower than the paper rule's local size or NULL
                    // is not stored as tuned; the faster baseline is, with its source.
                    check = t->check_baselines(int(d), chosen, topts);
                    if (check.tuned_failed) {
                        log::warn() << where << "the chosen local size " << local_str(chosen.best)
                                  << " failed on re-timing against the paper rule and NULL ("
                                  << check.timed.front().error << "); nothing stored";
                        code = kFailure;
                    } else {
                        if (const std::string w = baseline_warning(check, chosen.strategy, t->dims()); !w.empty())
                            log::warn() << where << w;
                        store_tuning(store, *t, dev, to_record(chosen, check));
                        store.save();
                        stored = true;
                    }
                    if (const std::string few = search_too_small(chosen, topts); !few.empty())
                        log::warn() << where << few
                                  << ": its choice may be far from the best (--min-budget 8 or --search exhaustive "
                                     "measures more)";
                } else {
                    log::warn() << "every local size of '" << t->kernel() << "' failed on device " << d
                                << " (" << dev.name << "); nothing stored";
                    for (const auto& m : chosen.measurements)
                        if (!m.ok) {
                            log::warn() << "first failure: " << m.error;
                            break;
                        }
                    code = kFailure;
                }
                // The kernel's parameters (docs/tuning.md, "Kernel parameters"): a parameter set
                // faster than the defaults' choice above replaces what was stored.
                nlohmann::json params_json = nullptr;
                bool params_stored = false;
                if (const auto keys = t->searched_params(); !keys.empty() && search_params(dev)) {
                    const ParamSearchResult ps = t->tune_params(int(d), ptopts);
                    std::string keys_text;
                    for (const auto& key : keys) keys_text += (keys_text.empty() ? "" : ",") + key;
                    // The defaults' time: what was stored for them, else their search's choice ...
                    double default_s = std::numeric_limits<double>::quiet_NaN();
                    LocalSize default_local = chosen.best;
                    if (stored) {
                        const TuningRecord dr = to_record(chosen, check);
                        default_s = dr.best_s;
                        default_local = dr.best;
                    } else if (chosen.found) {
                        default_s = chosen.best_s;
                    }
                    // ... and, where both ran, the medians of a head-to-head of the two, fresh and
                    // interleaved (--baseline-runs each): each search's time is the survivor of a
                    // minimum, so they are compared on fresh runs only.
                    double best_s = ps.best_s;
                    std::size_t h2h_runs = 0;
                    if (ps.found && chosen.found && topts.baseline_runs > 0) {
                        const RetimeResult h = retime(
                            {{LocalSize{1, 1}, {}, false, {}, 0}, {LocalSize{2, 1}, {}, false, {}, 0}},
                            [&](const LocalSize& which) {
                                const ConfigTime ct = which.x == 1 ? t->measure_params(int(d), ps.best_params, true)
                                                                   : t->measure_fresh(int(d), default_local);
                                if (!ct.ok) throw Error(ct.reason, ct.error);
                                return ct.seconds;
                            },
                            topts.baseline_runs);
                        h2h_runs = h.runs;
                        if (!h.configs[0].dropped && !h.configs[1].dropped) {
                            best_s = h.configs[0].median_s;
                            default_s = h.configs[1].median_s;
                        }
                    }
                    // Stored when faster than the defaults' entry, or when nothing was stored for them
                    // (e.g. a variant whose parameters fix its one local size: nothing to tune).
                    const bool better = ps.found && (!stored || !std::isfinite(default_s) || best_s < default_s);
                    std::string text = t->kernel() + " on device " + std::to_string(d) + " (" + dev.name + "), size " +
                                       size_txt + ": parameters " + keys_text + " searched (" + ps.strategy + "): " +
                                       std::to_string(ps.sets) + " sets, " + std::to_string(ps.invalid) + " invalid, " +
                                       std::to_string(ps.measured) + " of " + std::to_string(ps.candidates) +
                                       " measured, " + std::to_string(ps.failed) + " failed";
                    if (ps.found) {
                        std::string best;
                        for (const auto& [key, value] : ps.best_params.items())
                            best += (best.empty() ? "" : " ") + key + "=" + value.dump();
                        text += "; best " + best + " " + fmt(best_s * 1e3, 4) + " ms";
                        if (std::isfinite(default_s))
                            text += ", " + ratio_str(default_s, best_s) + " the speed of the defaults (" +
                                    fmt(default_s * 1e3, 4) + " ms" +
                                    (h2h_runs ? ", head to head" : "") + ")";
                    }
                    text += better ? "; stored" : "; the defaults kept";
                    param_lines.push_back(text);
                    if (better) {
                        TuningRecord rec;
                        rec.best = ps.best_local;
                        rec.best_s = best_s;
                        // A kernel whose parameters fix no work-group (interp's vw, ry) runs its
                        // sets with NULL: a NULL entry, beside the defaults' local size it beat.
                        if (rec.best.is_null()) {
                            rec.source = "null";
                            rec.tuned_local = default_local;
                            rec.tuned_s = std::isfinite(default_s) ? default_s : best_s;
                        }
                        rec.measured = chosen.measured + ps.measured;
                        rec.candidates = chosen.candidates + ps.candidates;
                        rec.strategy = "params " + ps.strategy;
                        // The whole kernel configuration: the searched set, and the tunables, variant
                        // and GPU-default keys (interp's stage_x) given with --param.
                        rec.params = ps.best_params;
                        const auto& f = kernel_job(t->kernel());
                        const nlohmann::json given = kernel_params(jobs[ti]);
                        for (const auto& [key, value] : given.items())
                            if (key == "variant" || f.gpu_params.contains(key) ||
                                std::any_of(f.tunables.begin(), f.tunables.end(), [&](const auto& p) { return p.key == key; }))
                                rec.params[key] = value;
                        if (std::isfinite(default_s)) rec.default_s = default_s;
                        rec.iterations = t->iterations();
                        // Under the key and size of the job without them, where `--local tuned`
                        // looks (with_tuned_params).
                        KernelArgs plain = jobs[ti];
                        std::erase_if(plain.params, [&](const std::string& p) {
                            const std::string key = p.substr(0, p.find('='));
                            return rec.params.contains(key);
                        });
                        const auto pj = make_job(plain);
                        // It replaces the defaults' entry stored above: put() would combine the two
                        // by their own best times (the defaults' the minimum of a search, ours a
                        // head-to-head median) and could keep the defaults'.
                        const StoreKey key{EntryKind::tuning, fingerprint_of(dev), t->kernel(), pj->tuning_key(),
                                           size_class(pj->problem())};
                        store.remove_if([&](const StoreEntry& e) {
                            return e.key.kind == key.kind && e.key.kernel == key.kernel && e.key.params == key.params &&
                                   e.key.size_class == key.size_class && e.key.device == key.device;
                        });
                        store.put_tuning(key.device, t->kernel(), key.params, pj->problem(), rec, unix_now(), dev.host);
                        // And its local size under the configuration's own key and size, where
                        // the plan of `--local tuned` looks once the set is applied (interp's ry
                        // changes both): without it the run fell back to the paper's rule.
                        KernelArgs configured = plain;
                        for (const auto& [k2, v2] : rec.params.items()) configured.params.push_back(param_arg(k2, v2));
                        const auto cj = make_job(configured);
                        if (cj->tuning_key() != pj->tuning_key() || size_class(cj->problem()) != size_class(pj->problem())) {
                            TuningRecord own = rec;
                            own.params = nlohmann::json::object();
                            store.put_tuning(key.device, t->kernel(), cj->tuning_key(), cj->problem(), own, unix_now(),
                                             dev.host);
                        }
                        store.save();
                        stored = params_stored = true;
                        check = BaselineCheck{};
                        check.local = ps.best_local;
                    } else if (!ps.found) {
                        log::warn() << where << "every parameter set failed; the defaults kept";
                    }
                    nlohmann::json trials = nlohmann::json::array();
                    for (const auto& tr : ps.trials)
                        trials.push_back({{"params", tr.params},
                                          {"local", {tr.group.x, tr.group.y}},
                                          {"predicted_rel", tr.predicted_rel},
                                          {"seconds", tr.ok ? nlohmann::json(tr.seconds) : nlohmann::json(nullptr)},
                                          {"error", tr.ok ? nlohmann::json(nullptr) : nlohmann::json(tr.error)}});
                    params_json = {{"searched", keys},
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
                                   {"head_to_head_runs", h2h_runs},
                                   {"default_s", std::isfinite(default_s) ? nlohmann::json(default_s) : nlohmann::json(nullptr)},
                                   {"speedup_over_default", ps.found && std::isfinite(default_s) ? nlohmann::json(default_s / best_s) : nlohmann::json(nullptr)},
                                   {"stored", better},
                                   {"trials", trials}};
                }
                summary.add({t->kernel(), std::to_string(d) + " " + dev.name, std::to_string(dev.rank), size_txt,
                             chosen.found ? local_str(chosen.best) : "-", chosen.found ? fmt(chosen.best_s * 1e3, 4) : "-",
                             std::to_string(chosen.measured), std::to_string(chosen.confirm_runs),
                             std::to_string(chosen.candidates), std::to_string(chosen.failed),
                             params_stored ? "yes: params" : stored_text(stored, check)});
                if (stored || params_stored) ++stored_units;
                if (report) {
                    auto& r = rows.back();
                    r.baseline_check = check;
                    if (stored) {
                        r.stored_source = check.source;
                        r.stored_local = check.local;
                    }
                    results.push_back(to_json(r));
                    results.back()["params"] = params_json;  // the parameter search (null: none)
                    const GlobalSize problem = job_size(jobs[ti]);
                    results.back()["size"] = {problem.x, problem.y};  // the NDRange is "global"
                    rep_row.push_back(params_stored ? "yes: params" : stored_text(stored, check));
                    rep.add(rep_row);
                }
                if (const std::uint64_t n = t->timed_iterations(int(d)); n > t->iterations())
                    raised.push_back(t->kernel() + " on device " + std::to_string(d) + " (" + dev.name + "): runs of " +
                                     std::to_string(n) + " iterations timed, scaled to " +
                                     std::to_string(t->iterations()));
                // The plan assumed no failures: count what this (kernel, device) launched instead.
                progress.set_total(progress.total() - unit_plan + (progress.count() - steps_before));
            }
        }
        progress.done();
        tuning.clear();

        // Entries that other ranks keep in their own databases (e.g. from single-node runs on
        // their nodes) join rank 0's: rank 0 is the merge point.
        std::size_t merged = 0;
        const auto texts = c.collect("tuning-db");
        for (std::size_t r = 1; r < texts.size(); ++r) {
            if (texts[r].empty()) continue;
            const Store other = Store::from_text(texts[r], "rank " + std::to_string(r) + "'s database");
            for (const auto& w : other.warnings()) log::warn(w);
            merged += store.merge(other);
        }
        if (merged > 0) store.save();

        if (!heatmap_csv.empty()) {
            std::ostringstream f;
            // One row per candidate (NaN: failed; a shape that was no candidate has no row).
            // marks: which of the report's choices this cell is (tuned+best+paper); null_ms: NULL's
            // time on that kernel and device, the same on each of its rows (docs/plot_heatmap.sh).
            auto ms = [](double s) { return std::isfinite(s) ? num(s * 1e3) : std::string("NaN"); };
            const OutputMeta meta(schema::tune_heatmap);
            f << "kernel,device,device_name,x,y,ms,marks,null_ms" << meta.csv_header() << '\n';
            for (const auto& r : rows)
                for (const auto& [l, s] : r.heatmap) {
                    std::string marks;
                    for (const auto& [local, name] : {std::pair{r.tuned_local, "tuned"}, {r.best_local, "best"},
                                                      {r.paper_local, "paper"}})
                        if (l == local) {
                            if (!marks.empty()) marks += '+';
                            marks += name;
                        }
                    f << r.kernel << ',' << r.device << ",\"" << r.device_name << "\"," << l.x << ',' << l.y << ','
                      << ms(s) << ',' << marks << ',' << ms(r.null_s) << meta.csv_cells() << '\n';
                }
            write_file_checked(heatmap_csv, "heatmap-csv", f.str());
        }
        if (json) {
            const nlohmann::json doc = {{"db", store.path()},
                                        {"search", search},
                                        {"budget", budget},
                                        {"iterations", base.iterations},
                                        {"repeats", mo.repeats},
                                        {"warmup", mo.warmup},
                                        {"min_run_s", mo.min_run_s},
                                        {"confirm_top", topts.confirm_top},
                                        {"confirm_runs_each", topts.confirm_runs},
                                        {"head_to_head_runs_each", ropts.head_to_head_runs},
                                        {"baseline_runs_each", topts.baseline_runs},
                                        {"baseline_margin", topts.baseline_margin},
                                        {"merged_from_ranks", merged},
                                        {"results", results}};
            std::cout << OutputMeta(schema::tune_report).stamp(doc).dump(2) << '\n';
            return code;
        }
        std::cout << summary.str();
        for (const auto& line : param_lines) std::cout << line << '\n';
        if (!raised.empty()) {
            std::cout << "Shorter than --min-run-ms " << fmt(mo.min_run_s * 1e3, 3)
                      << " of kernel time per run of " << base.iterations << " iteration(s), hence timed longer:\n";
            for (const auto& r : raised) std::cout << "  " << r << '\n';
        }
        if (report) {
            std::cout << "\nReport (times: median OpenCL kernel time of " << base.iterations
                      << " iteration(s) per run (scaled where timed longer, see above), median of " << mo.repeats << " run(s) per measurement; tuned = guided "
                      << "search; vs = speed-up of the tuned choice).\n"
                      << "tuned ms and best ms: where 'compared' is 'h2h N', the medians of a head-to-head of the two "
                         "choices (N fresh measurements of both together, interleaved);\n'same': one configuration, the exhaustive "
                         "search's confirmed time; 'search': each search's own confirmed time. confirm runs: the "
                         "guided + exhaustive\nsearches' re-timings of their finalists. paper ms, NULL ms and the heat "
                         "maps are search-phase measurements.\n"
                      << rep.str();
            for (const auto& r : rows)
                std::cout << "\nHeat map, " << r.kernel << " on device " << r.device << " (" << r.device_name
                          << "), ms, rows y, columns x:\n"
                          << heatmap_table(r);
        }
        std::cout << "database: " << store.path() << " (" << store.size() << " entries";
        if (merged) std::cout << ", " << merged << " merged from other ranks";
        std::cout << ")\n";
        return code;
    };
    int code = kFailure;
    try {
        code = body(cluster);
    } catch (const Error& e) {
        cluster.finish(e.reason() == ErrorReason::bad_input ? kUsage : kFailure);
        // A lost rank or a kernel past --kernel-timeout ends the tuning where it was: what was
        // stored before stays (each (kernel, device) is saved when it is done).
        if (!ends_command(e.reason()) || tuning.empty()) throw;
        throw Error(e.reason(), std::string(e.what()) + "; tune stopped at " + tuning + ", " +
                                    std::to_string(stored_units) + " result(s) stored before");
    } catch (const std::exception& e) {
        // As with_cluster: the workers exit with rank 0's code (mpiexec ORs the ranks' codes).
        cluster.finish(reason_of(e) == ErrorReason::bad_input ? kUsage : kFailure);
        throw;
    } catch (...) {
        cluster.finish(kFailure);
        throw;
    }
    cluster.finish(code);
    return code;
}

}  // namespace worksize::cli
