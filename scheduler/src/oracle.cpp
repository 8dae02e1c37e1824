// The oracle's search of the split (see oracle.hpp, docs/bench.md); the measurement is injected.
#include "worksize/scheduler/oracle.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace worksize {

namespace {

double median_of(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// One oracle search: measures splits (once per distinct rounding to units, the median of the
/// repeats) and keeps the best in the result, with every point measured.
class OracleSearch {
public:
    OracleSearch(const std::vector<DeviceInfo>& devices, const PlanRequest& request,
                 const TuningSource* tuning, const nlohmann::json& params, const OracleInputs& in,
                 OracleResult& res)
        : devices_(devices), request_(request), tuning_(tuning), params_(params), in_(in), res_(res) {}

    /// The makespan of the split with weights `w` (negative ones count as 0), measured unless
    /// the same units were measured before.
    double eval(std::vector<double> w) {
        for (auto& x : w) x = std::max(0.0, x);
        const Plan plan = plan_with_weights(devices_, request_, w, tuning_, params_);
        std::vector<std::uint64_t> units;
        std::vector<double> shares;
        for (const auto& a : plan.assignments) {
            units.push_back(a.units);
            shares.push_back(a.share);
        }
        if (auto it = cache_.find(units); it != cache_.end()) return it->second;
        std::vector<double> ms;
        for (int r = 0; r < in_.options.repeats; ++r) {
            ms.push_back(in_.makespan(plan));
            ++res_.runs;
        }
        const double m = median_of(ms);
        cache_[units] = m;
        ++evaluations_;
        res_.points.push_back({units, shares, m});
        if (res_.weights.empty() || m < res_.makespan_s) {
            res_.weights = shares;
            res_.units = units;
            res_.makespan_s = m;
        }
        if (in_.step) {
            std::string what = "split";
            for (double s : shares) {
                what += ' ';
                what += std::to_string(int(std::lround(s * 100)));
                what += '%';
            }
            in_.step(what);
        }
        return m;
    }

    /// Re-measure the best few splits: one run per split is noisy, the choice should not be.
    void confirm() {
        const OracleOptions& o = in_.options;
        if (o.confirm_top <= 0 || o.confirm_runs <= 0 || res_.points.size() < 2) return;
        std::vector<OraclePoint> top = res_.points;
        std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return a.makespan_s < b.makespan_s; });
        top.resize(std::min(top.size(), std::size_t(o.confirm_top)));
        // The re-runs are interleaved (round r runs every candidate once, in a rotated order) so that
        // drift of the machine hits all candidates alike.
        std::vector<Plan> plans;
        std::vector<std::vector<double>> ms;
        for (const auto& p : top) {
            std::vector<double> w(p.shares);
            plans.push_back(plan_with_weights(devices_, request_, w, tuning_, params_));
            ms.push_back({p.makespan_s});
        }
        for (int r = 0; r < o.confirm_runs; ++r) {
            for (std::size_t j = 0; j < top.size(); ++j) {
                const std::size_t i = (j + std::size_t(r)) % top.size();
                ms[i].push_back(in_.makespan(plans[i]));
                ++res_.runs;
                if (in_.step) in_.step("confirm");
            }
        }
        double best = -1;
        for (std::size_t i = 0; i < top.size(); ++i) {
            const double m = median_of(ms[i]);
            if (best < 0 || m < best) {
                best = m;
                res_.weights = top[i].shares;
                res_.units = top[i].units;
                res_.makespan_s = m;
            }
        }
    }

    /// How many distinct splits were measured.
    int evaluations() const { return evaluations_; }

private:
    const std::vector<DeviceInfo>& devices_;
    const PlanRequest& request_;
    const TuningSource* tuning_;
    const nlohmann::json& params_;
    const OracleInputs& in_;
    OracleResult& res_;
    std::map<std::vector<std::uint64_t>, double> cache_;
    int evaluations_ = 0;
};

/// Two devices: the share of the one with fewer PEs from 0 to 1 in tenths, then around the best
/// in steps of 2.5 % (up to 7.5 %), then 1.25 % either side of the new best.
void search_pair(OracleSearch& search, const std::vector<DeviceInfo>& devices, OracleResult& res) {
    const int s = devices[0].total_pes() <= devices[1].total_pes() ? 0 : 1;
    res.small_device = s;
    auto weights_for = [&](double share) {
        std::vector<double> w(2);
        w[std::size_t(s)] = share;
        w[std::size_t(1 - s)] = 1.0 - share;
        return w;
    };
    double best_share = 0, best = -1;
    auto try_share = [&](double share) {
        if (share < -1e-12 || share > 1 + 1e-12) return;
        share = std::clamp(share, 0.0, 1.0);
        const double m = search.eval(weights_for(share));
        if (best < 0 || m < best) {
            best = m;
            best_share = share;
        }
    };
    for (int i = 0; i <= 10; ++i) try_share(i / 10.0);
    const double c1 = best_share;
    for (double d : {-0.075, -0.05, -0.025, 0.025, 0.05, 0.075}) try_share(c1 + d);
    const double c2 = best_share;
    for (double d : {-0.0125, 0.0125}) try_share(c2 + d);
}

/// Three or more devices: coordinate descent over pairs from the even split, moving a step of
/// the work (25 %, then 12.5 %, then 6.25 %) from device j to device i while that helps, within
/// `max_evaluations` measured splits.
void search_descent(OracleSearch& search, std::size_t n, int max_evaluations) {
    std::vector<double> w(n, 1.0 / double(n));
    double cur = search.eval(w);
    for (double stepsz : {0.25, 0.125, 0.0625}) {
        bool improved = true;
        while (improved && search.evaluations() < max_evaluations) {
            improved = false;
            std::vector<double> best_w;
            double best_m = cur;
            for (std::size_t i = 0; i < n && search.evaluations() < max_evaluations; ++i)
                for (std::size_t j = 0; j < n && search.evaluations() < max_evaluations; ++j) {
                    if (i == j || w[j] <= 0) continue;
                    auto c = w;
                    const double mv = std::min(stepsz, c[j]);
                    c[j] -= mv;
                    c[i] += mv;
                    const double m = search.eval(c);
                    if (m < best_m) {
                        best_m = m;
                        best_w = c;
                    }
                }
            if (!best_w.empty()) {
                w = best_w;
                cur = best_m;
                improved = true;
            }
        }
    }
}

}  // namespace

std::size_t oracle_steps(std::size_t devices, const OracleOptions& options) {
    const std::size_t confirm = std::size_t(std::max(0, options.confirm_top) * std::max(0, options.confirm_runs));
    if (devices <= 1) return 2;
    if (devices == 2) return 1 + 11 + 6 + 2 + confirm;
    return 1 + std::size_t(std::max(1, options.max_evaluations)) + confirm;
}

OracleResult oracle_search(const std::vector<DeviceInfo>& devices, const PlanRequest& request,
                           const TuningSource* tuning, const nlohmann::json& params, const OracleInputs& in) {
    const std::size_t n = devices.size();
    const OracleOptions& o = in.options;
    if (n == 0) throw Error("oracle: the cluster has no device");
    if (o.repeats < 1) throw InvalidArgument("oracle: repeats must be at least 1");
    if (!in.makespan) throw InvalidArgument("oracle: nothing to measure the splits with");
    const StepFn& step = in.step;
    OracleResult res;

    // Warm-up on the even split: every device builds its program outside the timing.
    if (in.warm_up) {
        in.warm_up(std::vector<double>(n, 1.0 / double(n)));
        ++res.runs;
        if (step) step("warm-up");
    }

    OracleSearch search(devices, request, tuning, params, in, res);
    if (n == 1) {
        search.eval({1.0});
        return res;
    }
    for (const auto& seed : in.seeds)
        if (seed.size() == n) search.eval(seed);
    if (n == 2)
        search_pair(search, devices, res);
    else
        search_descent(search, n, o.max_evaluations);
    search.confirm();
    return res;
}

}  // namespace worksize
