// The split optimiser: the units of a job divided among devices by their cost models, and the
// predicted timeline of a split (see model.hpp and docs/models.md; the models are in model.cpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

#include "worksize/scheduler/format.hpp"
#include "worksize/scheduler/model.hpp"
#include "worksize/scheduler/planner.hpp"

namespace worksize {

namespace {
/// A makespan no split reaches (model.cpp has its own kInf: the unity build joins the files).
constexpr double kNever = std::numeric_limits<double>::infinity();
}  // namespace

SplitJob::Padding split_padding(const DeviceInfo& dev, int dims, GlobalSize problem) {
    SplitJob::Padding p;
    const std::uint64_t q = pad_quantum(dev);
    if (dims == 1) {
        p.pad_units = q;
    } else if (problem.x > 0) {
        p.pad_scale = double((problem.x + q - 1) / q * q) / double(problem.x);
    }
    return p;
}

namespace {

class Splitter {
public:
    Splitter(const std::vector<CostModel>& models, const SplitJob& job)
        : models_(models), job_(job), n_(models.size()) {
        if (models.empty()) throw InvalidArgument("split: no device models");
        if (job.total_units == 0) throw InvalidArgument("split: total_units is 0");
        if (job.granule == 0) throw InvalidArgument("split: granule is 0");
        granules_ = (job.total_units + job.granule - 1) / job.granule;
        order_ = job.send_order;
        if (order_.empty()) {
            order_.resize(n_);
            std::iota(order_.begin(), order_.end(), 0);
            std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) {
                return models[a].send.per_x_s < models[b].send.per_x_s;
            });
        } else {
            std::vector<int> seen(n_, 0);
            if (order_.size() != n_) throw InvalidArgument("split: send_order must list every device once");
            for (int i : order_) {
                if (i < 0 || std::size_t(i) >= n_ || seen[i]++)
                    throw InvalidArgument("split: send_order must list every device once");
            }
        }
        // The job-level phases depend on the whole job's bytes only: once per device.
        const double in = double(job_.total_units) * job_.bytes_in_per_unit;
        const double out = double(job_.total_units) * job_.bytes_out_per_unit;
        for (const auto& m : models_) {
            prepare_s_.push_back(m.prepare.eval(in));
            combine_s_.push_back(m.combine.eval(out));
        }
    }

    std::size_t n() const { return n_; }
    std::uint64_t granules() const { return granules_; }
    const std::vector<int>& order() const { return order_; }

    /// `shared`: the device runs with at least one other (its contention factor applies).
    Prediction device_time(std::size_t i, double units, bool shared) const {
        double launched = units;
        if (i < job_.padding.size() && units > 0) {
            const SplitJob::Padding& p = job_.padding[i];
            const double q = double(std::max<std::uint64_t>(p.pad_units, 1));
            launched = std::ceil(units / q) * q * p.pad_scale;
        }
        Prediction p = predict(models_[i], units, launched * job_.ops_per_unit,
                               units * job_.bytes_in_per_unit + job_.bytes_in_fixed,
                               units * job_.bytes_out_per_unit, shared);
        if (job_.local_inputs) {  // made and kept where the slice runs
            p.total_s -= p.send_s + p.recv_s;
            p.send_s = p.recv_s = 0;
        }
        return p;
    }
    Prediction granule_time(std::size_t i, std::uint64_t c, bool shared) const {
        return device_time(i, double(c) * double(job_.granule), shared);
    }
    static bool shared_counts(const std::vector<std::uint64_t>& c) {
        return std::count_if(c.begin(), c.end(), [](std::uint64_t x) { return x > 0; }) >= 2;
    }
    static bool shared_subset(const std::vector<char>& subset) {
        return std::count(subset.begin(), subset.end(), char(1)) >= 2;
    }

    /// Rank 0's job-level phases for the devices with work: prepare (only when two or more take
    /// part) and combine, each the largest of those devices' models.
    std::pair<double, double> job_phases(const std::vector<std::uint64_t>& c) const {
        double prep = 0, comb = 0;
        const bool shared = shared_counts(c);
        for (std::size_t i = 0; i < n_; ++i) {
            if (c[i] == 0) continue;
            if (shared) prep = std::max(prep, prepare_s_[i]);
            comb = std::max(comb, combine_s_[i]);
        }
        return {prep, comb};
    }

    /// Call done(i, seconds) with the time at which each device i with granules in `c` finishes,
    /// in send order (a device's send starts when the one before it has sent, with serial sends).
    template <class Done>
    void each_finish(const std::vector<std::uint64_t>& c, Done&& done) const {
        double link = 0;
        const bool shared = shared_counts(c);
        for (int i : order_) {
            if (c[i] == 0) continue;
            const Prediction p = granule_time(i, c[i], shared);
            const double start = job_.serial_sends ? link : 0.0;
            if (job_.serial_sends) link = start + p.send_s;
            done(i, start + p.total_s);
        }
    }

    /// Makespan of granule counts (the one partial granule is ignored here).
    double makespan(const std::vector<std::uint64_t>& c) const {
        double ms = 0;
        each_finish(c, [&](int, double t) { ms = std::max(ms, t); });
        const auto [prep, comb] = job_phases(c);
        return ms + prep + comb;
    }

    /// Each device of `subset` in send order takes the most granules it can finish by T.
    std::vector<std::uint64_t> greedy(double T, const std::vector<char>& subset,
                                      std::uint64_t& total) const {
        std::vector<std::uint64_t> c(n_, 0);
        double link = 0;
        total = 0;
        const bool shared = shared_subset(subset);
        for (int i : order_) {
            if (!subset[i]) continue;
            const double start = job_.serial_sends ? link : 0.0;
            auto fits = [&](std::uint64_t k) { return start + granule_time(i, k, shared).total_s <= T; };
            if (!fits(1)) continue;
            std::uint64_t lo = 1, hi = granules_;
            if (fits(hi)) lo = hi;
            while (hi - lo > 1) {
                const std::uint64_t mid = lo + (hi - lo) / 2;
                (fits(mid) ? lo : hi) = mid;
            }
            c[i] = lo;
            total += lo;
            if (job_.serial_sends) link = start + granule_time(i, lo, shared).send_s;
            if (total >= granules_) break;
        }
        return c;
    }

    /// Bisection on T for one subset; returns counts summing to granules_ (empty on failure).
    std::vector<std::uint64_t> solve_subset(const std::vector<char>& subset) const {
        double hi = kNever;
        for (std::size_t i = 0; i < n_; ++i)
            if (subset[i]) hi = std::min(hi, granule_time(i, granules_, shared_subset(subset)).total_s);
        if (!std::isfinite(hi)) return {};
        hi = std::max(hi, 1e-300);
        std::uint64_t total = 0;
        for (int k = 0; k < 200; ++k) {
            greedy(hi, subset, total);
            if (total >= granules_) break;
            hi *= 2;
        }
        if (total < granules_) return {};
        double lo = 0;
        for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; ++it) {
            const double mid = 0.5 * (lo + hi);
            greedy(mid, subset, total);
            (total >= granules_ ? hi : lo) = mid;
        }
        auto c = greedy(hi, subset, total);
        trim(c, total - granules_);
        return c;
    }

    /// Remove `excess` granules, always from the device finishing last.
    void trim(std::vector<std::uint64_t>& c, std::uint64_t excess) const {
        while (excess > 0) {
            const auto fin = finishes(c);
            std::size_t worst = n_;
            for (std::size_t i = 0; i < n_; ++i)
                if (c[i] > 0 && (worst == n_ || fin[i] > fin[worst])) worst = i;
            const std::uint64_t d = std::min<std::uint64_t>(excess, std::max<std::uint64_t>(1, c[worst] / 2));
            c[worst] -= std::min(d, c[worst]);
            excess -= std::min(d, excess);
        }
    }

    std::vector<double> finishes(const std::vector<std::uint64_t>& c) const {
        std::vector<double> f(n_, 0.0);
        each_finish(c, [&](int i, double t) { f[std::size_t(i)] = t; });
        return f;
    }

    /// Best-improvement local search: move blocks of 2^k granules between any two devices
    /// (a device may drop to 0 or join from 0).
    /// Move blocks of granules between devices while the makespan drops. With `within_subset`
    /// a device that has none keeps none (the subset was chosen with the join margin).
    void local_search(std::vector<std::uint64_t>& c, bool within_subset = false) const {
        const std::vector<std::uint64_t> start = c;
        double cur = makespan(c);
        for (int iter = 0; iter < 10000; ++iter) {
            double best = cur;
            std::size_t bi = 0, bj = 0;
            std::uint64_t bd = 0;
            for (std::uint64_t s = std::bit_floor(granules_); s >= 1; s /= 2) {
                for (std::size_t i = 0; i < n_; ++i) {
                    if (c[i] == 0) continue;
                    const std::uint64_t d = std::min(s, c[i]);
                    for (std::size_t j = 0; j < n_; ++j) {
                        if (j == i || (within_subset && start[j] == 0)) continue;
                        c[i] -= d;
                        c[j] += d;
                        const double m = makespan(c);
                        c[i] += d;
                        c[j] -= d;
                        if (m < best * (1 - 1e-12)) {
                            best = m;
                            bi = i;
                            bj = j;
                            bd = d;
                        }
                    }
                }
            }
            if (bd == 0) break;
            c[bi] -= bd;
            c[bj] += bd;
            cur = best;
        }
    }

private:
    const std::vector<CostModel>& models_;
    const SplitJob& job_;
    std::size_t n_;
    std::uint64_t granules_ = 0;
    std::vector<int> order_;
    std::vector<double> prepare_s_, combine_s_;  ///< each device's job-level phases (constant)
};

}  // namespace

SplitResult evaluate_split(const std::vector<CostModel>& models, const SplitJob& job,
                           const std::vector<std::uint64_t>& units) {
    Splitter sp(models, job);
    if (units.size() != models.size())
        throw InvalidArgument("split: units and models differ in length");
    SplitResult r;
    r.units = units;
    r.send_order = sp.order();
    r.predicted.assign(sp.n(), Prediction{});
    r.start_s.assign(sp.n(), 0.0);
    r.finish_s.assign(sp.n(), 0.0);
    r.reasons.assign(sp.n(), "");
    const bool shared = Splitter::shared_counts(units);
    std::tie(r.prepare_s, r.combine_s) = sp.job_phases(units);
    double link = r.prepare_s;
    for (int i : sp.order()) {
        if (units[i] == 0) continue;
        const Prediction p = sp.device_time(i, double(units[i]), shared);
        const double start = job.serial_sends ? link : r.prepare_s;
        if (job.serial_sends) link = start + p.send_s;
        r.predicted[i] = p;
        r.start_s[i] = start;
        r.finish_s[i] = start + p.total_s;
        r.makespan_s = std::max(r.makespan_s, r.finish_s[i]);
    }
    if (r.makespan_s > 0) r.makespan_s += r.combine_s;
    return r;
}

namespace {

/// How many devices `subset` holds.
std::size_t subset_size(const std::vector<char>& v) { return std::size_t(std::count(v.begin(), v.end(), 1)); }

/// The best granule counts found over subsets of the devices. A candidate wins if it is faster by
/// more than the margin (`keep` is 1 + the join margin), or if it is about as fast (within the
/// margin) with fewer devices.
class SubsetSearch {
public:
    SubsetSearch(const Splitter& sp, double keep) : sp_(sp), keep_(keep) {}

    /// The makespan of the devices of `subset` (kNever where they cannot take the job), kept
    /// as the best if it wins.
    double consider(const std::vector<char>& subset) {
        auto c = sp_.solve_subset(subset);
        if (c.empty()) return kNever;
        const double m = sp_.makespan(c);
        if (better(m, subset_size(subset))) {
            best_ms_ = m;
            best_ = c;
            best_size_ = subset_size(subset);
        }
        return m;
    }

    /// The best granule counts (empty when no subset could take the job).
    std::vector<std::uint64_t>& best() { return best_; }

private:
    /// Whether a makespan of `m` with `size` devices beats the best so far.
    bool better(double m, std::size_t size) const {
        if (best_.empty()) return true;
        if (size < best_size_) return m <= best_ms_ * keep_;
        if (size > best_size_) return m * keep_ < best_ms_;
        return m < best_ms_;
    }

    const Splitter& sp_;
    double keep_;
    std::vector<std::uint64_t> best_;
    double best_ms_ = kNever;
    std::size_t best_size_ = 0;
};

/// Every subset of the `n` devices, smaller subsets first, so that the margin compares a larger
/// set with the best smaller.
void search_all_subsets(SubsetSearch& search, std::size_t n) {
    std::vector<unsigned> masks;
    for (unsigned mask = 1; mask < (1u << n); ++mask) masks.push_back(mask);
    std::stable_sort(masks.begin(), masks.end(),
                     [](unsigned a, unsigned b) { return std::popcount(a) < std::popcount(b); });
    for (unsigned mask : masks) {
        std::vector<char> subset(n);
        for (std::size_t i = 0; i < n; ++i) subset[i] = (mask >> i) & 1u;
        search.consider(subset);
    }
}

/// Backward elimination from all `n` devices: drop the device whose removal helps most (or costs
/// less than the margin, `keep` being 1 + the join margin), while one does.
void eliminate_devices(SubsetSearch& search, std::size_t n, double keep) {
    std::vector<char> subset(n, 1);
    double cur = search.consider(subset);
    for (bool improved = true; improved;) {
        improved = false;
        std::size_t drop = n;
        double drop_ms = cur * keep;
        for (std::size_t i = 0; i < n; ++i) {
            if (!subset[i] || subset_size(subset) == 1) continue;
            subset[i] = 0;
            const double m = search.consider(subset);
            subset[i] = 1;
            if (m <= drop_ms) {
                drop_ms = m;
                drop = i;
            }
        }
        if (drop < n) {
            subset[drop] = 0;
            cur = drop_ms;
            improved = true;
        }
    }
}

/// Granule counts -> units; the partial granule comes off the device with the most.
std::vector<std::uint64_t> units_from_granules(const Splitter& sp, const SplitJob& job,
                                               const std::vector<std::uint64_t>& counts) {
    std::vector<std::uint64_t> units(sp.n());
    for (std::size_t i = 0; i < sp.n(); ++i) units[i] = counts[i] * job.granule;
    const std::uint64_t excess = sp.granules() * job.granule - job.total_units;
    if (excess > 0) {
        const auto it = std::max_element(units.begin(), units.end());
        *it -= excess;
    }
    return units;
}

/// Why device `i`, given no units of the split `units` with makespan `makespan_s`, is left out:
/// one granule alone would finish later, or with it the makespan gains less than the join
/// margin, or it would make the job slower.
std::string left_out_reason(const Splitter& sp, const SplitJob& job, const std::vector<std::uint64_t>& units,
                            std::size_t i, double makespan_s) {
    const std::size_t n = sp.n();
    const double one = sp.granule_time(i, 1, true).total_s;  // it would run with the others
    const std::string g = job.granule == 1 ? "1 unit" : "1 granule (" + std::to_string(job.granule) + " units)";
    if (one >= makespan_s) {
        return "left out: even " + g + " would take " + format_seconds(one, 4) +
               ", later than the job's " + format_seconds(makespan_s, 4) + " without it";
    }
    std::vector<char> with(n);
    for (std::size_t j = 0; j < n; ++j) with[j] = units[j] > 0 || j == i;
    const auto c = sp.solve_subset(with);
    const double m = c.empty() ? kNever : sp.makespan(c);
    return m < makespan_s
               ? "left out: with it the predicted makespan is " + format_seconds(m, 4) + " against " +
                     format_seconds(makespan_s, 4) + " without it, a gain within the " +
                     std::to_string(int(std::lround(job.join_margin * 100))) + " % join margin"
               : "left out: with it the predicted makespan is " + format_seconds(m, 4) + " against " +
                     format_seconds(makespan_s, 4) + " without it (its send and fixed costs delay the job)";
}

}  // namespace

SplitResult optimise_split(const std::vector<CostModel>& models, const SplitJob& job) {
    Splitter sp(models, job);
    const std::size_t n = sp.n();
    const double keep = 1.0 + std::max(0.0, job.join_margin);
    SubsetSearch search(sp, keep);
    if (n <= 8)
        search_all_subsets(search, n);
    else
        eliminate_devices(search, n, keep);
    std::vector<std::uint64_t>& best = search.best();
    if (best.empty()) throw Error("split: no device can take the job under its model");
    sp.local_search(best, job.join_margin > 0);

    const std::vector<std::uint64_t> units = units_from_granules(sp, job, best);
    SplitResult r = evaluate_split(models, job, units);

    // Why each left-out device is left out.
    for (std::size_t i = 0; i < n; ++i) {
        if (units[i] != 0) continue;
        r.reasons[i] = left_out_reason(sp, job, units, i, r.makespan_s);
    }
    return r;
}

}  // namespace worksize
