// `worksize tune` on rank 0 (tune_run.hpp): the progress plan, and the local size of each
// (kernel, device): the search or the report's row, the baseline check and the store.
#include <algorithm>
#include <cmath>

#include "tune_run.hpp"
#include "tune_text.hpp"
#include "worksize/scheduler/log.hpp"

namespace worksize::cli {

namespace {

/// The tuner of one job; the kernel's tunable parameters not given with --param are searched too.
std::unique_ptr<LocalTuner> make_tuner(Cluster& c, const TuneArgs& o, const KernelArgs& a) {
    auto t = std::make_unique<LocalTuner>(c, a.kernel, a.iterations,
                                          [a](std::uint64_t n) {
                                              KernelArgs k = a;
                                              k.iterations = n;
                                              return make_job(k);
                                          },
                                          o.mo);
    if (o.param_search != "off") {
        t->set_param_search(
            [a](std::uint64_t n, const nlohmann::json& params) {
                KernelArgs k = a;
                k.iterations = n;
                for (const auto& [key, value] : params.items()) k.params.push_back(param_arg(key, value));
                return make_job(k);
            },
            kernel_params(a));
    }
    return t;
}

/// The progress steps planned for the tuner on device `d`.
std::size_t planned_steps(const LocalTuner& t, int d, const DeviceInfo& dev, const TuneArgs& o) {
    const auto ranked = t.ranked(d);
    const std::size_t n = ranked.size(), b = guided_budget(n, o.topts);
    std::size_t steps = 0;
    if (o.report) {
        const LocalSize paper = t.paper_local(d);
        const bool paper_cached = std::any_of(ranked.begin(), ranked.end(), [&](const CandidateScore& s) {
            return s.candidate.local == paper;
        });
        steps = n + planned_confirm_runs(n, o.topts) + planned_confirm_runs(b, o.topts) +
                2 * o.ropts.head_to_head_runs + (paper_cached ? 0 : 1) + 1;  // + NULL
    } else if (o.topts.strategy == SearchStrategy::exhaustive) {
        steps = n + planned_confirm_runs(n, o.topts);
    } else {
        steps = b + planned_confirm_runs(b, o.topts);
    }
    // The baseline check: the choice, the paper rule's local size and NULL (at most).
    steps += 3 * o.topts.baseline_runs;
    // The parameter search (at most its budget; the total is corrected once it is done).
    if (o.searches_params(dev) && !t.searched_params().empty())
        steps += o.param_budget + planned_confirm_runs(o.param_budget, o.ptopts);
    return steps;
}

}  // namespace

// Progress steps: one per configuration measurement launched (cache hits are none). The
// plan per (kernel, device) assumes no failure and, in a report, a head-to-head; it is
// an upper bound except when every finalist fails on re-timing, and the total is set to
// what was actually launched once each (kernel, device) is done.
TunePlan plan_tune(Cluster& c, const TuneArgs& o, const std::vector<KernelArgs>& jobs) {
    TunePlan plan;
    const auto& devs = c.devices();
    for (const auto& a : jobs) {
        plan.tuners.push_back(make_tuner(c, o, a));
        plan.planned.emplace_back();
        for (std::size_t d = 0; d < devs.size(); ++d) {
            const std::size_t steps = planned_steps(*plan.tuners.back(), int(d), devs[d], o);
            plan.planned.back().push_back(steps);
            plan.total += steps;
        }
    }
    return plan;
}

int run_tune(Cluster& c, const TuneArgs& o, const std::vector<KernelArgs>& jobs, TunePosition& at) {
    const std::string db_path = resolve_db_path(o.base.db);
    // Output files (rank 0 writes them), before the work.
    check_db_writable(db_path);
    check_writable(o.heatmap_csv, "heatmap-csv");
    Store store = Store::open(db_path, CorruptPolicy::report_and_ignore);
    for (const auto& w : store.warnings()) log::warn(w);
    if (c.devices().empty()) throw Error("no device to tune (see worksize devices)");
    TuneRun run(c, o, jobs, std::move(store), plan_tune(c, o, jobs), at);
    return run.run();
}

TuneRun::TuneRun(Cluster& c, const TuneArgs& o, const std::vector<KernelArgs>& jobs, Store store,
                 TunePlan plan, TunePosition& at)
    : c_(c),
      o_(o),
      jobs_(jobs),
      store_(std::move(store)),
      plan_(std::move(plan)),
      at_(at),
      devs_(c.devices()),
      ropts_(o.ropts),
      progress_("tune", plan_.total),
      summary_({"kernel", "device", "rank", "size", "best local", "best ms", "measured", "confirm runs",
                "candidates", "failed", "stored"}),
      rep_({"kernel", "device", "size", "tuned", "tuned ms", "exh. best", "best ms", "tuned/best", "compared",
            "paper", "paper ms", "NULL ms", "measured/cands", "confirm runs", "vs NULL", "vs paper",
            "stored"}) {
    // Only known after both searches of a report: whether the choices are timed head to head.
    ropts_.on_head_to_head = [this](std::size_t runs) {
        unit_plan_ = unit_plan_ - 2 * ropts_.head_to_head_runs + runs;
        progress_.set_total(progress_.total() - 2 * ropts_.head_to_head_runs + runs);
    };
    for (auto& t : plan_.tuners)
        t->on_measured([this, kernel = t->kernel()](int d, LocalSize l, const ConfigTime& ct) {
            progress_.step(kernel + " dev " + std::to_string(d) + " " + local_str(l) +
                           (ct.ok ? "" : " failed"));
        });
}

int TuneRun::run() {
    for (std::size_t ti = 0; ti < plan_.tuners.size(); ++ti)
        for (std::size_t d = 0; d < devs_.size(); ++d) tune_unit(ti, d);
    progress_.done();
    at_.tuning.clear();

    const std::size_t merged = merge_rank_dbs();
    if (!o_.heatmap_csv.empty()) write_heatmap_csv();
    if (o_.json)
        print_json(merged);
    else
        print_text(merged);
    return code_;
}

void TuneRun::tune_unit(std::size_t ti, std::size_t d) {
    LocalTuner& t = *plan_.tuners[ti];
    const DeviceInfo& dev = devs_[d];
    at_.tuning = t.kernel() + " on device " + std::to_string(d) + " (" + dev.name + ")";
    const std::size_t steps_before = progress_.count();
    unit_plan_ = plan_.planned[ti][d];
    Unit u;
    u.ti = ti;
    u.d = d;
    if (o_.report)
        report_row(u);
    else
        u.chosen = t.tune(int(d), o_.topts);
    store_choice(u);
    // The kernel's parameters (docs/tuning.md, "Kernel parameters"): a parameter set
    // faster than the defaults' choice above replaces what was stored.
    tune_params(u);
    add_rows(u);
    if (const std::uint64_t n = t.timed_iterations(int(d)); n > t.iterations())
        raised_.push_back(t.kernel() + " on device " + std::to_string(d) + " (" + dev.name + "): runs of " +
                          std::to_string(n) + " iterations timed, scaled to " +
                          std::to_string(t.iterations()));
    // The plan assumed no failures: count what this (kernel, device) launched instead.
    progress_.set_total(progress_.total() - unit_plan_ + (progress_.count() - steps_before));
}

std::string TuneRun::prefix(const Unit& u) const {
    return plan_.tuners[u.ti]->kernel() + " on device " + std::to_string(u.d) + " (" + devs_[u.d].name +
           "), size " + jobs_[u.ti].size + ": ";
}

void TuneRun::report_row(Unit& u) {
    LocalTuner& t = *plan_.tuners[u.ti];
    const std::size_t d = u.d;
    TuneResult ex, gd;
    rows_.push_back(tune_report_row(t, int(d), o_.topts, ropts_, &ex, &gd));
    const auto& r = rows_.back();
    const bool exhaustive = o_.topts.strategy == SearchStrategy::exhaustive;
    u.chosen = exhaustive ? ex : gd;
    u.failed_h2h = exhaustive ? r.best_failed : r.tuned_failed;
    // Which numbers "tuned ms" and "best ms" are (the legend is printed above the table).
    std::string compared = "search";
    if (r.head_to_head)
        compared = "h2h " + std::to_string(r.head_to_head_runs);
    else if (!std::isfinite(r.tuned_s) || !std::isfinite(r.exhaustive_best_s))
        compared = "-";
    else if (r.tuned_local == r.best_local)
        compared = "same";
    u.rep_row = {r.kernel, std::to_string(d) + " " + r.device_name, jobs_[u.ti].size,
                 local_str(r.tuned_local), ms_or_dash(r.tuned_s), local_str(r.best_local),
                 ms_or_dash(r.exhaustive_best_s), ratio_str(r.tuned_s, r.exhaustive_best_s), compared,
                 local_str(r.paper_local), ms_or_dash(r.paper_s), ms_or_dash(r.null_s),
                 std::to_string(r.measured) + "/" + std::to_string(r.candidates),
                 std::to_string(r.confirm_runs) + "+" + std::to_string(r.exhaustive_confirm_runs),
                 ratio_str(r.null_s, r.tuned_s), ratio_str(r.paper_s, r.tuned_s)};
    if (!r.head_to_head_error.empty())
        log::warn() << r.kernel << " on device " << d
                    << " failed in the head-to-head: " << r.head_to_head_error;
}

void TuneRun::store_choice(Unit& u) {
    LocalTuner& t = *plan_.tuners[u.ti];
    const std::size_t d = u.d;
    const DeviceInfo& dev = devs_[d];
    const TuneResult& chosen = u.chosen;
    const std::string where = prefix(u);
    const std::string untunable = nothing_to_tune(chosen, t.dims(), t.job().required_local());
    if (!untunable.empty()) {
        // One candidate: nothing was chosen, so nothing is stored as "tuned" (and
        // `--local tuned` keeps the paper rule, with its reason).
        log::warn() << t.kernel() << " on device " << d << " (" << dev.name << "), size " << jobs_[u.ti].size
                    << ": " << untunable << "; nothing stored";
    } else if (chosen.found && u.failed_h2h) {
        log::warn() << "the chosen local size " << local_str(chosen.best) << " of '" << t.kernel()
                    << "' failed on re-timing on device " << d << " (" << dev.name << "); nothing stored";
        code_ = kFailure;
    } else if (chosen.found) {
        // The baseline check: a choice slower than the paper rule's local size or NULL
        // is not stored as tuned; the faster baseline is, with its source.
        u.check = t.check_baselines(int(d), chosen, o_.topts);
        if (u.check.tuned_failed) {
            log::warn() << where << "the chosen local size " << local_str(chosen.best)
                        << " failed on re-timing against the paper rule and NULL ("
                        << u.check.timed.front().error << "); nothing stored";
            code_ = kFailure;
        } else {
            if (const std::string w = baseline_warning(u.check, chosen.strategy, t.dims()); !w.empty())
                log::warn() << where << w;
            store_tuning(store_, t, dev, to_record(chosen, u.check));
            store_.save();
            u.stored = true;
        }
        if (const std::string few = search_too_small(chosen, o_.topts); !few.empty())
            log::warn() << where << few
                        << ": its choice may be far from the best (--min-budget 8 or --search exhaustive "
                           "measures more)";
    } else {
        log::warn() << "every local size of '" << t.kernel() << "' failed on device " << d << " (" << dev.name
                    << "); nothing stored";
        for (const auto& m : chosen.measurements)
            if (!m.ok) {
                log::warn() << "first failure: " << m.error;
                break;
            }
        code_ = kFailure;
    }
}

void TuneRun::add_rows(Unit& u) {
    const LocalTuner& t = *plan_.tuners[u.ti];
    const DeviceInfo& dev = devs_[u.d];
    const TuneResult& chosen = u.chosen;
    summary_.add({t.kernel(), std::to_string(u.d) + " " + dev.name, std::to_string(dev.rank),
                  jobs_[u.ti].size, chosen.found ? local_str(chosen.best) : "-",
                  chosen.found ? fmt(chosen.best_s * 1e3, 4) : "-",
                  std::to_string(chosen.measured), std::to_string(chosen.confirm_runs),
                  std::to_string(chosen.candidates), std::to_string(chosen.failed),
                  u.params_stored ? "yes: params" : stored_text(u.stored, u.check)});
    if (u.stored || u.params_stored) ++at_.stored_units;
    if (!o_.report) return;
    auto& r = rows_.back();
    r.baseline_check = u.check;
    if (u.stored) {
        r.stored_source = u.check.source;
        r.stored_local = u.check.local;
    }
    results_.push_back(to_json(r));
    results_.back()["params"] = u.params_json;  // the parameter search (null: none)
    const GlobalSize problem = job_size(jobs_[u.ti]);
    results_.back()["size"] = {problem.x, problem.y};  // the NDRange is "global"
    u.rep_row.push_back(u.params_stored ? "yes: params" : stored_text(u.stored, u.check));
    rep_.add(u.rep_row);
}

}  // namespace worksize::cli
