// Local work-size autotuning on live devices (see autotune.hpp and docs/tuning.md); `--local
// tuned` itself is the scheduler's (local_policy.cpp).
#include "worksize/runtime/autotune.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "worksize/runtime/host_memory.hpp"
#include "worksize/scheduler/planner.hpp"

namespace worksize {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string local_text(const LocalSize& l) {
    return l.is_null() ? "NULL" : "(" + std::to_string(l.x) + "," + std::to_string(l.y) + ")";
}

/// A rank is gone or a device held by a kernel that never ended (JobAborted on a worker,
/// ends_command() on rank 0): no configuration's failure, and the tuning cannot go on.
bool is_lost(const Error& e) {
    return ends_command(e.reason()) || dynamic_cast<const JobAborted*>(&e) != nullptr;
}

/// The whole problem on device `device`, nothing on the others.
Plan single_device_plan(const std::vector<DeviceInfo>& devices, int device, const KernelJob& job) {
    PlanRequest r = job_request(job, devices.size());
    r.strategy = "even";
    r.local_policy = LocalPolicy::paper;
    std::vector<double> w(devices.size(), 0.0);
    w.at(static_cast<std::size_t>(device)) = 1.0;
    r.weights = w;
    return make_plan(devices, r);
}

}  // namespace

// --- LocalTuner -------------------------------------------------------------------------------

LocalTuner::LocalTuner(Cluster& cluster, std::string kernel, std::uint64_t iterations, JobMaker make_job,
                       MeasureOptions measure)
    : cluster_(cluster), kernel_(std::move(kernel)), iterations_(iterations), make_(std::move(make_job)), mopts_(measure) {
    if (mopts_.repeats < 1) throw InvalidArgument("tune: repeats must be at least 1");
    if (mopts_.warmup < 0) throw InvalidArgument("tune: warm-up runs must be >= 0");
    if (iterations_ < 1) throw InvalidArgument("tune: iterations must be at least 1");
    if (!(mopts_.min_run_s >= 0) || !std::isfinite(mopts_.min_run_s))
        throw InvalidArgument("tune: the minimum run time must be a finite time >= 0");
    if (mopts_.max_iterations < iterations_) mopts_.max_iterations = iterations_;
    if (!make_) throw InvalidArgument("tune: no job maker");
    proto_ = make_(iterations_);
    // Under a memory limit: one line before any input is made, for the device that needs most.
    if (host_memory_limit())
        for (int d = 0; d < int(cluster_.devices().size()); ++d)
            check_job_memory(*proto_, single_device_plan(cluster_.devices(), d, *proto_).assignments,
                             cluster_.devices());
}

LocalTuner::LocalTuner(Cluster& cluster, std::string kernel, JobOptions options, MeasureOptions measure)
    : LocalTuner(cluster, kernel, options.iterations,
                 [kernel, options](std::uint64_t n) {
                     JobOptions o = options;
                     o.iterations = n;
                     return kernel_job(kernel).make(o);
                 },
                 measure) {
    set_param_search(
        [kernel, options](std::uint64_t n, const nlohmann::json& params) {
            JobOptions o = options;
            o.iterations = n;
            for (const auto& [key, value] : params.items()) o.params[key] = value;
            return kernel_job(kernel).make(o);
        },
        options.params);
}

std::vector<CandidateScore> LocalTuner::ranked(int device) const {
    const DeviceInfo& dev = this->device(device);
    KernelLimits limits;  // the device's; kernel-specific limits surface as launch failures
    // The kernels guard their index: candidates divide the padded NDRange the plan launches.
    auto cands = local_candidates(dev, limits, rule_global(dev, size(), true), dims());
    if (const LocalSize r = proto_->required_local(); !r.is_null()) {
        // The kernel runs only with its required shape: that is the one candidate.
        std::erase_if(cands, [&](const Candidate& c) { return !(c.local == r); });
        if (cands.empty()) {  // it does not divide the size: launched padded to whole groups
            const GlobalSize g = size();
            const std::uint64_t ry = std::max<std::uint64_t>(r.y, 1);
            const GlobalSize launch{(g.x + r.x - 1) / r.x * r.x, (g.y + ry - 1) / ry * ry};
            cands.push_back(Candidate{r, launch, (launch.x / r.x) * (launch.y / ry)});
        }
    }
    if (cands.empty()) return {};
    return rank_candidates(dev, limits, cands, priority());
}

const DeviceInfo& LocalTuner::device(int index) const {
    return cluster_.devices().at(static_cast<std::size_t>(index));
}

LocalSize LocalTuner::paper_local(int device, std::string* rule) const {
    const Plan p = single_device_plan(cluster_.devices(), device, *proto_);
    const auto& a = p.assignments.at(static_cast<std::size_t>(device));
    if (rule) *rule = a.local_rule;
    return a.local;
}

ConfigTime LocalTuner::measure(int device, LocalSize local) {
    const auto key = std::make_tuple(device, local.x, local.y);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    const ConfigTime t = time_config(device, local);
    cache_[key] = t;
    if (hook_) hook_(device, local, t);
    return t;
}

ConfigTime LocalTuner::measure_fresh(int device, LocalSize local) {
    const ConfigTime t = time_config(device, local);
    if (!t.ok) cache_[std::make_tuple(device, local.x, local.y)] = t;
    if (hook_) hook_(device, local, t);
    return t;
}

double LocalTuner::run_once(int device, LocalSize local, std::uint64_t iterations, const JobMaker* make) {
    auto job = make ? (*make)(iterations) : make_(iterations);
    Plan plan = single_device_plan(cluster_.devices(), device, *job);
    plan.assignments.at(static_cast<std::size_t>(device)).local = local;
    cluster_.generate(*job);
    const JobResult res = cluster_.run(*job, plan.assignments, kernel_);
    if (!res.verdict.ok)
        throw Error(ErrorReason::wrong_result, "wrong result with local " + local_text(local) + ": " + res.verdict.detail);
    for (const auto& d : res.devices)
        if (d.assignment.device == device) return d.times.kernel;
    throw Error("no kernel time reported for the device");
}

std::uint64_t LocalTuner::timed_iterations(int device) {
    if (auto it = timed_iterations_.find(device); it != timed_iterations_.end()) return it->second;
    std::uint64_t n = iterations_;
    if (mopts_.min_run_s > 0) {
        // Probe with a configuration that is likely valid: the paper's local size, else NULL.
        // The first run warms up (compilation, clocks); the second is the probe.
        for (const LocalSize local : {paper_local(device), LocalSize{}}) {
            try {
                run_once(device, local, iterations_);
                const double t = run_once(device, local, iterations_);
                if (std::isfinite(t) && t > 0 && t < mopts_.min_run_s)
                    n = std::clamp<std::uint64_t>(
                        std::uint64_t(std::ceil(double(iterations_) * mopts_.min_run_s / t)), iterations_,
                        mopts_.max_iterations);
                break;
            } catch (const Error& e) {
                // A rank is gone (JobAborted on a worker, lost_rank on rank 0): the cluster cannot go on.
                if (is_lost(e)) throw;
                // this configuration fails here: try the next, or keep the job's own iterations
            }
        }
    }
    timed_iterations_[device] = n;
    return n;
}

ConfigTime LocalTuner::time_config(int device, LocalSize local, const JobMaker* make) {
    ConfigTime t;
    try {
        const std::uint64_t n = timed_iterations(device);
        // Each time in the unit of a run of the job's own iterations.
        const double scale = double(iterations_) / double(n);
        std::vector<double> times;
        for (int r = 0; r < mopts_.warmup + mopts_.repeats; ++r) {
            const double s = run_once(device, local, n, make);
            if (r >= mopts_.warmup) times.push_back(s * scale);
        }
        t.seconds = median_time(times);
        t.ok = std::isfinite(t.seconds) && t.seconds > 0;
        if (!t.ok) t.error = "kernel time " + std::to_string(t.seconds) + " s is not a valid time";
    } catch (const Error& e) {
        if (is_lost(e)) throw;  // a rank is gone: the cluster cannot go on
        t.ok = false;
        t.error = e.what();
        t.reason = e.reason();
    }
    if (!t.ok) t.seconds = kNaN;
    return t;
}

namespace {

/// A MeasureFn over one of the tuner's measuring functions: the time, or the failure thrown.
MeasureFn measuring(LocalTuner& tuner, int device, bool fresh) {
    return [&tuner, device, fresh](const LocalSize& l) {
        const ConfigTime t = fresh ? tuner.measure_fresh(device, l) : tuner.measure(device, l);
        if (!t.ok) throw Error(t.reason, t.error);
        return t.seconds;
    };
}

}  // namespace

// --- Parameter search ---------------------------------------------------------------------------

void LocalTuner::set_param_search(ParamJobMaker make, nlohmann::json given) {
    param_make_ = std::move(make);
    given_params_ = given.is_object() ? std::move(given) : nlohmann::json::object();
}

std::vector<std::string> LocalTuner::searched_params() const {
    std::vector<std::string> keys;
    if (!param_make_ || !has_kernel_job(kernel_)) return keys;
    if (given_params_.contains("variant") && given_params_["variant"] == "tiled") return keys;
    for (const auto& t : kernel_job(kernel_).tunables)
        if (!given_params_.contains(t.key)) keys.push_back(t.key);
    return keys;
}

LocalTuner::JobMaker LocalTuner::params_maker(const nlohmann::json& params) const {
    return [make = param_make_, params](std::uint64_t n) { return make(n, params); };
}

ConfigTime LocalTuner::measure_params(int device, const nlohmann::json& params, bool fresh) {
    const auto key = std::make_pair(device, params.dump());
    if (!fresh)
        if (auto it = param_cache_.find(key); it != param_cache_.end()) return it->second;
    ConfigTime t;
    LocalSize group;
    try {
        group = param_make_(iterations_, params)->required_local();
    } catch (const Error& e) {
        t.error = e.what();
        t.reason = e.reason();
        t.seconds = kNaN;
        return t;
    }
    const JobMaker make = params_maker(params);
    t = time_config(device, group, &make);
    if (!fresh || !t.ok) param_cache_[key] = t;
    if (hook_) hook_(device, group, t);
    return t;
}

namespace {

/// Every set of the product of `dims`' values, checked by the job (it cannot build a set:
/// InvalidArgument) and for the device (candidate_of(set).invalid); the valid ones, counted in
/// res.sets and res.invalid.
std::vector<ParamCandidate> valid_param_sets(const std::vector<const TunableParam*>& dims,
                                             const std::function<ParamCandidate(const nlohmann::json&)>& candidate_of,
                                             ParamSearchResult& res) {
    std::vector<ParamCandidate> valid;
    std::vector<std::size_t> idx(dims.size(), 0);
    for (bool more = !dims.empty(); more;) {
        nlohmann::json set = nlohmann::json::object();
        for (std::size_t i = 0; i < dims.size(); ++i) set[dims[i]->key] = dims[i]->values.at(idx[i]);
        ++res.sets;
        try {
            ParamCandidate c = candidate_of(set);
            c.params = set;
            if (c.invalid.empty())
                valid.push_back(std::move(c));
            else
                ++res.invalid;
        } catch (const InvalidArgument&) {
            ++res.invalid;  // the kernel cannot be built with it
        }
        more = false;
        for (std::size_t i = dims.size(); i-- > 0;) {
            if (++idx[i] < dims[i]->values.size()) {
                more = true;
                break;
            }
            idx[i] = 0;
        }
    }
    return valid;
}

}  // namespace

ParamSearchResult LocalTuner::tune_params(int device, const TuneOptions& options) {
    ParamSearchResult res;
    res.keys = searched_params();
    if (res.keys.empty()) throw InvalidArgument("tune: kernel '" + kernel_ + "' has no parameter to search");
    res.strategy = to_string(options.strategy);
    const auto& tunables = kernel_job(kernel_).tunables;
    std::vector<const TunableParam*> dims;
    for (const auto& k : res.keys)
        for (const auto& t : tunables)
            if (t.key == k) dims.push_back(&t);
    const DeviceInfo& dev = this->device(device);
    const auto valid = valid_param_sets(
        dims, [&](const nlohmann::json& set) { return param_make_(iterations_, set)->param_candidate(dev); }, res);
    const auto ranked = rank_param_candidates(dev, valid);
    res.candidates = ranked.size();
    for (const std::size_t i : param_search_order(ranked.size(), options)) {
        const auto& c = ranked[i].candidate;
        const ConfigTime t = measure_params(device, c.params);
        ++res.measured;
        if (!t.ok) ++res.failed;
        res.trials.push_back({c.params, c.group, ranked[i].predicted_rel, t.ok, t.ok ? t.seconds : kNaN, t.error});
    }
    // Confirmation: the fastest few afresh, interleaved (retime), the lowest median wins. The
    // sets travel through retime as indices into `trials` (LocalSize{index + 1, 1}).
    std::vector<std::size_t> ok;
    for (std::size_t i = 0; i < res.trials.size(); ++i)
        if (res.trials[i].ok) ok.push_back(i);
    std::stable_sort(ok.begin(), ok.end(),
                     [&](std::size_t a, std::size_t b) { return res.trials[a].seconds < res.trials[b].seconds; });
    if (ok.empty()) {
        res.best_s = kNaN;
        return res;
    }
    std::size_t chosen = ok.front();
    res.best_s = res.trials[chosen].seconds;
    const std::size_t top = std::min(ok.size(), options.confirm_top);
    if (top >= 2 && options.confirm_runs > 0) {
        std::vector<Retimed> configs;
        for (std::size_t j = 0; j < top; ++j)
            configs.push_back({LocalSize{ok[j] + 1, 1}, {res.trials[ok[j]].seconds}, false, {}, 0});
        const RetimeResult r = retime(
            configs,
            [&](const LocalSize& l) {
                const ConfigTime t = measure_params(device, res.trials.at(l.x - 1).params, true);
                if (!t.ok) throw Error(t.reason, t.error);
                return t.seconds;
            },
            options.confirm_runs);
        res.confirm_runs = r.runs;
        for (const auto& c : r.configs)
            if (c.dropped) {
                res.trials.at(c.local.x - 1).ok = false;
                res.trials.at(c.local.x - 1).error = c.error;
                ++res.failed;
            }
        if (r.chosen == static_cast<std::size_t>(-1)) {
            res.best_s = kNaN;
            return res;
        }
        chosen = r.configs[r.chosen].local.x - 1;
        res.best_s = r.configs[r.chosen].median_s;
    }
    res.found = true;
    res.best_params = res.trials[chosen].params;
    res.best_local = res.trials[chosen].group;
    return res;
}

TuneResult LocalTuner::tune(int device, const TuneOptions& options) {
    const auto r = ranked(device);
    if (r.empty()) throw InvalidArgument("tune: no valid local size for '" + kernel_ + "' on device " + std::to_string(device));
    return worksize::tune(r, measuring(*this, device, false), options, measuring(*this, device, true));
}

BaselineCheck LocalTuner::check_baselines(int device, const TuneResult& result, const TuneOptions& options) {
    std::vector<Baseline> baselines;
    if (const LocalSize paper = paper_local(device); !paper.is_null()) baselines.push_back({"paper", paper});
    baselines.push_back({"null", LocalSize{}});
    return worksize::check_baselines(result, baselines, measuring(*this, device, true), options.baseline_runs,
                                     options.baseline_margin);
}

TuneReportRow tune_report_row(LocalTuner& tuner, int device, const TuneOptions& guided, const TuneReportOptions& report,
                              TuneResult* exhaustive_out, TuneResult* guided_out) {
    TuneReportRow row;
    row.kernel = tuner.kernel();
    row.device = device;
    row.rank = tuner.device(device).rank;
    row.device_name = tuner.device(device).name;
    row.size = tuner.size();
    row.dims = tuner.dims();
    row.iterations = tuner.iterations();
    row.timed_iterations = tuner.timed_iterations(device);
    TuneOptions ex = guided;
    ex.strategy = SearchStrategy::exhaustive;
    const TuneResult e = tuner.tune(device, ex);
    TuneOptions gd = guided;
    gd.strategy = SearchStrategy::guided;
    // Replays on the cached exhaustive times; its confirmation re-times afresh.
    const TuneResult g = tuner.tune(device, gd);
    row.candidates = e.candidates;
    row.failed = e.failed;
    row.measured = g.measured;
    row.confirm_runs = g.confirm_runs;
    row.exhaustive_confirm_runs = e.confirm_runs;
    row.best_local = e.best;
    row.exhaustive_scan_s = e.found ? e.best_s : kNaN;
    row.tuned_local = g.best;
    row.tuned_scan_s = g.found ? g.best_s : kNaN;
    row.exhaustive_best_s = row.exhaustive_scan_s;
    row.tuned_s = row.tuned_scan_s;
    const bool h2h = e.found && g.found && !(e.best == g.best) && report.head_to_head_runs > 0;
    if (report.on_head_to_head) report.on_head_to_head(h2h ? 2 * report.head_to_head_runs : 0);
    if (e.found && g.found && e.best == g.best) {
        // One configuration: the same time on both sides, exactly 1.
        row.tuned_s = row.exhaustive_best_s;
    } else if (h2h) {
        // Two different choices, each the winner of its own noisy comparison (the exhaustive
        // one among all candidates, so biased low): time them against each other afresh,
        // interleaved, and compare the medians of those runs only.
        const RetimeResult h = retime({{g.best, {}, false, {}, 0}, {e.best, {}, false, {}, 0}},
                                      measuring(tuner, device, true), report.head_to_head_runs);
        row.head_to_head = true;
        row.head_to_head_runs = h.runs;
        row.tuned_s = h.configs[0].median_s;
        row.exhaustive_best_s = h.configs[1].median_s;
        row.tuned_failed = h.configs[0].dropped;
        row.best_failed = h.configs[1].dropped;
        for (const auto& c : h.configs)
            if (c.dropped && row.head_to_head_error.empty())
                row.head_to_head_error = local_text(c.local) + ": " + c.error;
    }
    row.paper_local = tuner.paper_local(device, &row.paper_rule);
    const ConfigTime p = tuner.measure(device, row.paper_local);
    row.paper_s = p.ok ? p.seconds : kNaN;
    // One configuration, one number: the paper's local size chosen by a search gets that
    // search's compared time, so that gain_over_paper is exactly 1 for the same configuration.
    if (p.ok && g.found && row.paper_local == row.tuned_local && std::isfinite(row.tuned_s))
        row.paper_s = row.tuned_s;
    else if (p.ok && e.found && row.paper_local == row.best_local && std::isfinite(row.exhaustive_best_s))
        row.paper_s = row.exhaustive_best_s;
    const ConfigTime n = tuner.measure(device, LocalSize{});
    row.null_s = n.ok ? n.seconds : kNaN;
    for (const auto& m : e.measurements) row.heatmap.push_back({m.local, m.ok ? m.seconds : kNaN});
    std::sort(row.heatmap.begin(), row.heatmap.end(), [](const auto& a, const auto& b) {
        return a.first.y != b.first.y ? a.first.y < b.first.y : a.first.x < b.first.x;
    });
    if (exhaustive_out) *exhaustive_out = e;
    if (guided_out) *guided_out = g;
    return row;
}

nlohmann::json to_json(const TuneReportRow& r) {
    auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    auto ratio = [&](double a, double b) { return std::isfinite(a) && std::isfinite(b) && b > 0 ? num(a / b) : nlohmann::json(nullptr); };
    auto loc = [](const LocalSize& l) { return nlohmann::json::array({l.x, l.y}); };
    nlohmann::json heat = nlohmann::json::array();
    for (const auto& [l, s] : r.heatmap) heat.push_back({{"x", l.x}, {"y", l.y}, {"seconds", num(s)}});
    return {{"kernel", r.kernel},
            {"device", r.device},
            {"device_name", r.device_name},
            {"rank", r.rank},
            {"global", {r.size.x, r.size.y}},  // the NDRange tuned (the problem's size is the caller's)
            {"tuned_s", num(r.tuned_s)},
            {"tuned_local", loc(r.tuned_local)},
            {"exhaustive_best_s", num(r.exhaustive_best_s)},
            {"exhaustive_best_local", loc(r.best_local)},
            // Each search's own (confirmed) time for its choice, before any head-to-head.
            {"tuned_scan_s", num(r.tuned_scan_s)},
            {"exhaustive_scan_s", num(r.exhaustive_scan_s)},
            // true: tuned_s and exhaustive_best_s are the medians of an interleaved head-to-head.
            {"head_to_head", r.head_to_head},
            {"head_to_head_runs", r.head_to_head_runs},
            {"head_to_head_error", r.head_to_head_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.head_to_head_error)},
            {"confirm_runs", r.confirm_runs},
            {"exhaustive_confirm_runs", r.exhaustive_confirm_runs},
            {"paper_s", num(r.paper_s)},
            {"paper_local", loc(r.paper_local)},
            {"paper_rule", r.paper_rule},
            {"null_s", num(r.null_s)},
            {"measured", r.measured},
            {"candidates", r.candidates},
            {"failed", r.failed},
            // Times are per run of `iterations`; each run timed had `timed_iterations`.
            {"iterations", r.iterations},
            {"timed_iterations", r.timed_iterations},
            // > 1: the tuned choice is faster by this factor.
            {"gain_over_null", ratio(r.null_s, r.tuned_s)},
            {"gain_over_paper", ratio(r.paper_s, r.tuned_s)},
            // >= 1: how much slower the tuned choice is than the exhaustive best.
            {"tuned_over_exhaustive", ratio(r.tuned_s, r.exhaustive_best_s)},
            {"heatmap", heat},
            // What was stored for the --search strategy's choice: "tuned", or the baseline that
            // beat it in the baseline check ("paper", "null"); null: nothing stored.
            {"stored_source", r.stored_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.stored_source)},
            {"stored_local", r.stored_source.empty() ? nlohmann::json(nullptr) : loc(r.stored_local)},
            {"baseline_check",
             {{"checked", r.baseline_check.checked},
              {"runs", r.baseline_check.runs},
              {"tuned_s", num(r.baseline_check.tuned_s)},
              {"baseline", r.baseline_check.baseline.empty() ? nlohmann::json(nullptr)
                                                             : nlohmann::json(r.baseline_check.baseline)},
              {"baseline_local", loc(r.baseline_check.baseline_local)},
              {"baseline_s", num(r.baseline_check.baseline_s)}}}};
}

void store_tuning(Store& store, const LocalTuner& tuner, const DeviceInfo& device, TuningRecord record) {
    record.iterations = tuner.iterations();  // the unit of the tuner's times
    store.put_tuning(fingerprint_of(device), tuner.kernel(), tuner.job().tuning_key(), tuner.size(), record,
                     unix_now(), device.host);
}

}  // namespace worksize
