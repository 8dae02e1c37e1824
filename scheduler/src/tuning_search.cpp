// The tuner (see tuning.hpp and docs/models.md): tune()'s exhaustive and guided search, the
// confirmation of its fastest candidates by fresh re-timing, the checks of what a search found,
// the check of its choice against the paper rule's local size and NULL, and the TuningRecord it
// stores with its JSON form.
#include "worksize/scheduler/tuning.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

namespace worksize {

namespace {

/// One call of a measuring function: true and `seconds` on a positive finite time, else false
/// and `error` (an exception, NaN, inf or <= 0 all mean the configuration failed). A lost rank
/// or a kernel past --kernel-timeout (ends_command()) is no failure of the configuration: it is
/// rethrown, and the search ends (each further candidate would wait out the timeout again).
bool time_once(const MeasureFn& measure, const LocalSize& local, double& seconds, std::string& error) {
    try {
        seconds = measure(local);
        if (std::isfinite(seconds) && seconds > 0) return true;
        error = "no valid time (" + std::to_string(seconds) + ")";
    } catch (const Error& e) {
        if (ends_command(e.reason())) throw;
        error = e.what();
    } catch (const std::exception& e) {
        error = e.what();
    } catch (...) {
        error = "unknown exception";
    }
    seconds = std::numeric_limits<double>::quiet_NaN();
    return false;
}

class Search {
public:
    Search(const std::vector<CandidateScore>& ranked, const MeasureFn& measure)
        : ranked_(ranked), measure_(measure), done_(ranked.size(), 0), came_from_(ranked.size()) {
        for (std::size_t i = 0; i < ranked.size(); ++i) {
            const auto l = ranked[i].candidate.local;
            index_[{l.x, l.y}] = i;
            xs_.insert(l.x);
            ys_.insert(l.y);
        }
    }

    bool measured(std::size_t i) const { return done_[i]; }

    void run(std::size_t i) {
        if (done_[i]) return;
        done_[i] = 1;
        Measurement m;
        m.local = ranked_[i].candidate.local;
        m.predicted_rel = ranked_[i].predicted_rel;
        m.ok = time_once(measure_, m.local, m.seconds, m.error);
        if (!m.ok) {
            ++result_.failed;
        } else if (!result_.found || m.seconds < result_.best_s) {
            came_from_ = result_.found ? best_index_ : ranked_.size();
            result_.found = true;
            result_.best = m.local;
            result_.best_s = m.seconds;
            best_index_ = i;
        }
        result_.measurements.push_back(m);
        ++result_.measured;
    }

    /// Unmeasured neighbours of candidate i: adjacent valid x and y values and x, y doubled
    /// or halved. Ordered: continuation of the move that led to i first, then single-axis
    /// steps, then diagonal ones (reshapes), ties by analytic rank.
    std::vector<std::size_t> neighbours(std::size_t i) const {
        const auto l = ranked_[i].candidate.local;
        auto around = [](const std::set<std::uint64_t>& s, std::uint64_t v) {
            std::set<std::uint64_t> out{v, v * 2};
            if (v / 2 >= 1) out.insert(v / 2);
            auto it = s.find(v);
            if (it != s.begin()) out.insert(*std::prev(it));
            if (std::next(it) != s.end()) out.insert(*std::next(it));
            return out;
        };
        auto sgn = [](std::uint64_t a, std::uint64_t b) { return a < b ? -1 : (a > b ? 1 : 0); };
        std::vector<std::pair<int, std::size_t>> keyed;
        for (auto x : around(xs_, l.x))
            for (auto y : around(ys_, l.y)) {
                auto it = index_.find({x, y});
                if (it == index_.end() || done_[it->second]) continue;
                const int dx = sgn(x, l.x), dy = sgn(y, l.y);
                int key = (dx != 0) + (dy != 0);  // 1: axis step, 2: diagonal
                if (i == best_index_ && came_from_ != ranked_.size()) {
                    const auto p = ranked_[came_from_].candidate.local;
                    if (dx == sgn(l.x, p.x) && dy == sgn(l.y, p.y)) key = 0;
                }
                keyed.push_back({key, it->second});
            }
        std::sort(keyed.begin(), keyed.end());
        std::vector<std::size_t> out;
        for (const auto& k : keyed) out.push_back(k.second);
        return out;
    }

    std::size_t best_index() const { return best_index_; }
    TuneResult& result() { return result_; }

private:
    const std::vector<CandidateScore>& ranked_;
    const MeasureFn& measure_;
    std::vector<char> done_;
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> index_;
    std::set<std::uint64_t> xs_, ys_;
    std::size_t best_index_ = 0;
    std::size_t came_from_ = 0;  ///< the best before the current one (size(): none)
    TuneResult result_;
};

/// The confirmation phase of tune(): re-time the fastest few successful measurements afresh
/// and choose the lowest median of all their timings. A finalist that fails on re-timing is
/// marked failed in `r.measurements` (it is unreliable: never chosen, never stored); if every
/// finalist drops, the next fastest are taken. With fewer than two successful measurements
/// there is nothing to decide and nothing is re-timed.
void confirm(TuneResult& r, const MeasureFn& fresh, const TuneOptions& o) {
    if (o.confirm_top < 2 || o.confirm_runs == 0) return;
    for (;;) {
        const auto idx = confirm_finalists(r.measurements, o.confirm_top);
        if (idx.size() < 2) break;
        std::vector<Retimed> configs;
        for (std::size_t i : idx) configs.push_back({r.measurements[i].local, {r.measurements[i].seconds}, false, {}, 0});
        const RetimeResult c = retime(std::move(configs), fresh, o.confirm_runs);
        r.confirm_runs += c.runs;
        for (std::size_t k = 0; k < idx.size(); ++k) {
            const Retimed& f = c.configs[k];
            r.finalists.push_back(f.local);
            if (!f.dropped) continue;
            Measurement& m = r.measurements[idx[k]];
            m.ok = false;
            m.seconds = std::numeric_limits<double>::quiet_NaN();
            m.error = "failed on re-timing: " + f.error;
            ++r.failed;
        }
        if (c.chosen != RetimeResult{}.chosen) {
            r.found = true;
            r.best = c.configs[c.chosen].local;
            r.best_s = c.configs[c.chosen].median_s;
            return;
        }
    }
    // No confirmed choice: the fastest successful measurement left (if any).
    r.found = false;
    r.best = {};
    for (const auto& m : r.measurements)
        if (m.ok && (!r.found || m.seconds < r.best_s)) {
            r.found = true;
            r.best = m.local;
            r.best_s = m.seconds;
        }
}

}  // namespace

std::size_t planned_confirm_runs(std::size_t ok, const TuneOptions& o) {
    const std::size_t k = std::min(ok, o.confirm_top);
    return k >= 2 ? k * o.confirm_runs : 0;
}

double median_time(std::vector<double> v) {
    if (v.empty()) throw InvalidArgument("median_time: no values");
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<std::size_t> confirm_finalists(const std::vector<Measurement>& measurements, std::size_t top) {
    std::vector<std::size_t> ok;
    for (std::size_t i = 0; i < measurements.size(); ++i)
        if (measurements[i].ok) ok.push_back(i);
    std::stable_sort(ok.begin(), ok.end(),
                     [&](std::size_t a, std::size_t b) { return measurements[a].seconds < measurements[b].seconds; });
    if (ok.size() > top) ok.resize(top);
    return ok;
}

std::vector<std::size_t> rotated_order(std::size_t n, std::size_t round) {
    std::vector<std::size_t> out;
    for (std::size_t j = 0; j < n; ++j) out.push_back((round + j) % n);
    return out;
}

RetimeResult retime(std::vector<Retimed> configs, const MeasureFn& fresh, std::size_t runs) {
    if (!fresh) throw InvalidArgument("retime: no measuring function");
    RetimeResult r;
    r.configs = std::move(configs);
    for (std::size_t round = 0; round < runs; ++round) {
        for (std::size_t i : rotated_order(r.configs.size(), round)) {
            Retimed& c = r.configs[i];
            if (c.dropped) continue;
            double s = 0;
            std::string error;
            ++r.runs;
            if (time_once(fresh, c.local, s, error)) {
                c.samples.push_back(s);
            } else {
                c.dropped = true;
                c.error = error;
            }
        }
    }
    for (std::size_t i = 0; i < r.configs.size(); ++i) {
        Retimed& c = r.configs[i];
        c.median_s = c.dropped || c.samples.empty() ? std::numeric_limits<double>::quiet_NaN() : median_time(c.samples);
        if (std::isnan(c.median_s)) continue;
        if (r.chosen == RetimeResult{}.chosen || c.median_s < r.configs[r.chosen].median_s) r.chosen = i;
    }
    return r;
}

TuneResult tune(const std::vector<CandidateScore>& ranked, const MeasureFn& measure,
                const TuneOptions& options, const MeasureFn& remeasure) {
    if (ranked.empty()) throw InvalidArgument("tune: no candidate local sizes");
    if (!measure) throw InvalidArgument("tune: no measuring function");
    Search s(ranked, measure);
    const std::size_t n = ranked.size();
    if (options.strategy == SearchStrategy::exhaustive) {
        for (std::size_t i = 0; i < n; ++i) s.run(i);
    } else {
        const std::size_t budget = std::max<std::size_t>(1, guided_budget(n, options));
        // 1. Seeds (at most half the budget): walk down the analytic ranking, skipping a
        //    candidate within three octave-steps of a seed already taken (|log2 x/x'| +
        //    |log2 y/y'| < 3), so that the seeds cover the model's best region *and* its
        //    near-ties in other shapes; fill up with the next-ranked if the walk runs dry.
        const std::size_t seed_cap = std::max<std::size_t>(1, budget / 2);
        const std::size_t want = std::min(seed_cap, std::max<std::size_t>(1, std::size_t(std::ceil(options.top_fraction * double(n)))));
        std::vector<std::size_t> seeds;
        auto octaves = [&](std::size_t a, std::size_t b) {
            const auto la = ranked[a].candidate.local, lb = ranked[b].candidate.local;
            return std::abs(std::log2(double(la.x) / double(lb.x))) + std::abs(std::log2(double(la.y) / double(lb.y)));
        };
        for (std::size_t i = 0; i < n && seeds.size() < want; ++i) {
            bool close = false;
            for (std::size_t j : seeds) close = close || octaves(i, j) < 3.0;
            if (!close) seeds.push_back(i);
        }
        for (std::size_t i = 0; i < n && seeds.size() < want; ++i)
            if (std::find(seeds.begin(), seeds.end(), i) == seeds.end()) seeds.push_back(i);
        for (std::size_t i : seeds) s.run(i);
        // 2. Refinement: pattern search around the best so far. Its unmeasured neighbours are
        //    measured, the continuation of the last improving move first, then single-axis
        //    steps, then diagonal ones; the search moves as soon as one is better, and stops
        //    when the best has no unmeasured neighbour or the budget is spent.
        while (s.result().measured < budget) {
            if (!s.result().found) {  // everything failed so far: walk down the ranking
                std::size_t i = 0;
                while (i < n && s.measured(i)) ++i;
                if (i == n) break;
                s.run(i);
                continue;
            }
            const std::size_t from = s.best_index();
            const auto nb = s.neighbours(from);
            if (nb.empty()) break;
            for (std::size_t i : nb) {
                if (s.result().measured >= budget) break;
                s.run(i);
                if (s.best_index() != from) break;
            }
        }
    }
    TuneResult r = std::move(s.result());
    confirm(r, remeasure ? remeasure : measure, options);
    r.candidates = n;
    r.strategy = to_string(options.strategy);
    if (!r.found) r.best_s = std::numeric_limits<double>::quiet_NaN();
    return r;
}

std::string nothing_to_tune(const TuneResult& r, int dims, LocalSize required) {
    if (!r.found || r.candidates != 1) return {};
    const std::string local = "(" + std::to_string(r.best.x) + (dims == 2 ? "," + std::to_string(r.best.y) : "") + ")";
    if (!required.is_null()) return "the kernel requires the local size " + local + ": nothing to tune";
    return "only 1 candidate local size " + local +
           ": nothing to tune; the kernel needs a padded or bounds-checked NDRange";
}

TuningRecord to_record(const TuneResult& r) {
    if (!r.found) throw InvalidArgument("tuning result has no successful measurement to store");
    return {r.best, r.best_s, r.measured, r.candidates, r.strategy};
}

TuningRecord to_record(const TuneResult& r, const BaselineCheck& check) {
    TuningRecord rec = to_record(r);
    if (check.source == "tuned") return rec;
    rec.tuned_local = r.best;
    rec.tuned_s = check.tuned_s;
    rec.best = check.local;
    rec.best_s = check.baseline_s;
    rec.source = check.source;
    return rec;
}

std::string search_too_small(const TuneResult& r, const TuneOptions& options, std::size_t floor) {
    if (!r.found || r.strategy != to_string(SearchStrategy::guided)) return {};
    if (r.measured >= std::min(r.candidates, floor)) return {};
    if (r.measured < guided_budget(r.candidates, options)) return {};  // it stopped by itself
    return "the guided search measured " + std::to_string(r.measured) + " of " + std::to_string(r.candidates) +
           " candidates, all its budget allowed";
}

BaselineCheck check_baselines(const TuneResult& r, const std::vector<Baseline>& baselines, const MeasureFn& fresh,
                              std::size_t runs, double margin) {
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    if (!(margin >= 0) || !std::isfinite(margin))
        throw InvalidArgument("check_baselines: the margin must be a finite fraction >= 0");
    BaselineCheck c;
    c.local = r.best;
    c.tuned_s = c.baseline_s = nan;
    if (!r.found || runs == 0) return c;
    std::vector<Retimed> configs{{r.best, {}, false, {}, 0}};
    std::vector<std::string> sources{"tuned"};
    for (const auto& b : baselines) {
        if (b.source != "paper" && b.source != "null")
            throw InvalidArgument("check_baselines: unknown baseline '" + b.source + "' (paper or null)");
        if (b.source == "null" && !b.local.is_null())
            throw InvalidArgument("check_baselines: the null baseline's local size must be {0,0}");
        const bool seen = std::any_of(configs.begin(), configs.end(), [&](const Retimed& t) { return t.local == b.local; });
        if (seen) continue;  // the choice itself, or a baseline already in
        configs.push_back({b.local, {}, false, {}, 0});
        sources.push_back(b.source);
    }
    if (configs.size() < 2) return c;
    const RetimeResult t = retime(std::move(configs), fresh, runs);
    c.checked = true;
    c.runs = t.runs;
    c.timed = t.configs;
    c.tuned_failed = t.configs[0].dropped;
    c.tuned_s = t.configs[0].median_s;
    for (std::size_t i = 1; i < t.configs.size(); ++i) {
        const Retimed& b = t.configs[i];
        if (b.dropped || !std::isfinite(b.median_s)) continue;
        if (c.baseline.empty() || b.median_s < c.baseline_s) {
            c.baseline = sources[i];
            c.baseline_local = b.local;
            c.baseline_s = b.median_s;
        }
    }
    if (!c.tuned_failed && !c.baseline.empty() && c.tuned_s > (1.0 + margin) * c.baseline_s) {
        c.source = c.baseline;
        c.local = c.baseline_local;
    }
    return c;
}

std::string baseline_warning(const BaselineCheck& c, const std::string& strategy, int dims) {
    if (c.source == "tuned") return {};
    auto local = [dims](const LocalSize& l) {
        if (l.is_null()) return std::string("NULL");
        std::string t = "(" + std::to_string(l.x);
        if (dims == 2) t.append(",").append(std::to_string(l.y));
        return t.append(")");
    };
    auto ms = [](double s) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
        return std::string(buf);
    };
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2fx", c.tuned_s / c.baseline_s);
    const std::string base = c.source == "null" ? std::string("NULL (the driver's choice)")
                                                : std::string("the paper rule's ").append(local(c.local));
    const std::size_t each = c.timed.empty() ? 0 : c.timed.front().samples.size();
    std::string w = "the " + strategy;
    w.append(" search's local size ").append(local(c.timed.empty() ? LocalSize{} : c.timed.front().local));
    w.append(" ran ").append(ms(c.tuned_s)).append(" against ").append(ms(c.baseline_s)).append(" with ").append(base);
    w.append(", ").append(ratio).append(" slower, in ").append(std::to_string(each)).append(" fresh runs each; ");
    w.append(local(c.local)).append(" stored instead (source ").append(c.source).append(")");
    return w;
}

double per_iteration_s(const TuningRecord& r) {
    return r.iterations ? r.best_s / double(r.iterations) : r.best_s;
}

nlohmann::json to_json(const TuningRecord& r) {
    nlohmann::json j = {{"local", {r.best.x, r.best.y}}, {"best_s", r.best_s},   {"measured", r.measured},
                        {"candidates", r.candidates},   {"strategy", r.strategy}};
    if (r.iterations) j["iterations"] = r.iterations;
    j["source"] = r.source;
    if (r.source != "tuned") {
        j["tuned_local"] = {r.tuned_local.x, r.tuned_local.y};
        j["tuned_s"] = r.tuned_s;
    }
    if (r.params.is_object() && !r.params.empty()) j["params"] = r.params;
    if (r.default_s > 0) j["default_s"] = r.default_s;
    return j;
}

TuningRecord tuning_record_from_json(const nlohmann::json& j) {
    auto fail = [](const std::string& what) { throw InvalidArgument("tuning record: " + what); };
    if (!j.is_object()) fail("not a JSON object");
    TuningRecord r;
    if (!j.contains("local") || !j["local"].is_array() || j["local"].size() != 2 ||
        !j["local"][0].is_number_unsigned() || !j["local"][1].is_number_unsigned())
        fail("'local' must be [x, y] with non-negative integers");
    r.best = {j["local"][0].get<std::uint64_t>(), j["local"][1].get<std::uint64_t>()};
    // "source" (absent in entries written before it existed: "tuned"); only "null" is NULL.
    if (j.contains("source")) {
        if (!j["source"].is_string()) fail("'source' must be a string");
        r.source = j["source"].get<std::string>();
        if (r.source != "tuned" && r.source != "paper" && r.source != "null")
            fail("'source' must be tuned, paper or null, not '" + r.source + "'");
    }
    if (r.source == "null" && !(r.best.x == 0 && r.best.y == 0)) fail("'local' must be [0, 0] (NULL) with source null");
    if (r.source != "null" && (r.best.x == 0 || r.best.y == 0)) fail("'local' must not be 0");
    if (r.source != "tuned") {
        if (!j.contains("tuned_local") || !j["tuned_local"].is_array() || j["tuned_local"].size() != 2 ||
            !j["tuned_local"][0].is_number_unsigned() || !j["tuned_local"][1].is_number_unsigned())
            fail("'tuned_local' must be [x, y] with non-negative integers when the source is not tuned");
        r.tuned_local = {j["tuned_local"][0].get<std::uint64_t>(), j["tuned_local"][1].get<std::uint64_t>()};
        if (!j.contains("tuned_s") || !j["tuned_s"].is_number()) fail("missing or non-numeric 'tuned_s'");
        r.tuned_s = j["tuned_s"].get<double>();
        if (!std::isfinite(r.tuned_s) || r.tuned_s <= 0) fail("'tuned_s' must be a positive time");
    }
    if (!j.contains("best_s") || !j["best_s"].is_number()) fail("missing or non-numeric 'best_s'");
    r.best_s = j["best_s"].get<double>();
    if (!std::isfinite(r.best_s) || r.best_s <= 0) fail("'best_s' must be a positive time");
    for (const char* k : {"measured", "candidates"})
        if (!j.contains(k) || !j[k].is_number_unsigned()) fail(std::string("missing or non-integer '") + k + "'");
    r.measured = j["measured"].get<std::size_t>();
    r.candidates = j["candidates"].get<std::size_t>();
    if (j.contains("strategy") && !j["strategy"].is_string()) fail("'strategy' must be a string");
    r.strategy = j.value("strategy", "");
    if (j.contains("iterations")) {
        if (!j["iterations"].is_number_unsigned() || j["iterations"].get<std::uint64_t>() == 0)
            fail("'iterations' must be a positive integer");
        r.iterations = j["iterations"].get<std::uint64_t>();
    }
    // "params" and "default_s": absent in entries without a parameter search.
    if (j.contains("params")) {
        if (!j["params"].is_object()) fail("'params' must be an object of kernel parameters");
        for (const auto& [key, value] : j["params"].items())
            if (!value.is_primitive() || value.is_null()) fail("'params' value of '" + key + "' must be a number or a string");
        r.params = j["params"];
    }
    if (j.contains("default_s")) {
        if (!j["default_s"].is_number() || !std::isfinite(j["default_s"].get<double>()) || j["default_s"].get<double>() <= 0)
            fail("'default_s' must be a positive time");
        r.default_s = j["default_s"].get<double>();
    }
    return r;
}

}  // namespace worksize
