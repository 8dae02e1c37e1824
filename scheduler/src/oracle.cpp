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

    std::map<std::vector<std::uint64_t>, double> cache;
    int evaluations = 0;
    auto eval = [&](std::vector<double> w) -> double {
        for (auto& x : w) x = std::max(0.0, x);
        const Plan plan = plan_with_weights(devices, request, w, tuning, params);
        std::vector<std::uint64_t> units;
        std::vector<double> shares;
        for (const auto& a : plan.assignments) {
            units.push_back(a.units);
            shares.push_back(a.share);
        }
        if (auto it = cache.find(units); it != cache.end()) return it->second;
        std::vector<double> ms;
        for (int r = 0; r < o.repeats; ++r) {
            ms.push_back(in.makespan(plan));
            ++res.runs;
        }
        const double m = median_of(ms);
        cache[units] = m;
        ++evaluations;
        res.points.push_back({units, shares, m});
        if (res.weights.empty() || m < res.makespan_s) {
            res.weights = shares;
            res.units = units;
            res.makespan_s = m;
        }
        if (step) {
            std::string what = "split";
            for (double s : shares) {
                what += ' ';
                what += std::to_string(int(std::lround(s * 100)));
                what += '%';
            }
            step(what);
        }
        return m;
    };

    // Re-measure the best few splits: one run per split is noisy, the choice should not be.
    auto confirm = [&]() {
        if (o.confirm_top <= 0 || o.confirm_runs <= 0 || res.points.size() < 2) return;
        std::vector<OraclePoint> top = res.points;
        std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return a.makespan_s < b.makespan_s; });
        top.resize(std::min(top.size(), std::size_t(o.confirm_top)));
        // The re-runs are interleaved (round r runs every candidate once, in a rotated order) so that
        // drift of the machine hits all candidates alike.
        std::vector<Plan> plans;
        std::vector<std::vector<double>> ms;
        for (const auto& p : top) {
            std::vector<double> w(p.shares);
            plans.push_back(plan_with_weights(devices, request, w, tuning, params));
            ms.push_back({p.makespan_s});
        }
        for (int r = 0; r < o.confirm_runs; ++r) {
            for (std::size_t j = 0; j < top.size(); ++j) {
                const std::size_t i = (j + std::size_t(r)) % top.size();
                ms[i].push_back(in.makespan(plans[i]));
                ++res.runs;
                if (step) step("confirm");
            }
        }
        double best = -1;
        for (std::size_t i = 0; i < top.size(); ++i) {
            const double m = median_of(ms[i]);
            if (best < 0 || m < best) {
                best = m;
                res.weights = top[i].shares;
                res.units = top[i].units;
                res.makespan_s = m;
            }
        }
    };

    if (n == 1) {
        eval({1.0});
        return res;
    }
    for (const auto& seed : in.seeds)
        if (seed.size() == n) eval(seed);
    if (n == 2) {
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
            const double m = eval(weights_for(share));
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
        confirm();
        return res;
    }
    // Coordinate descent over pairs: move `step` of the work from device j to device i.
    std::vector<double> w(n, 1.0 / double(n));
    double cur = eval(w);
    for (double stepsz : {0.25, 0.125, 0.0625}) {
        bool improved = true;
        while (improved && evaluations < o.max_evaluations) {
            improved = false;
            std::vector<double> best_w;
            double best_m = cur;
            for (std::size_t i = 0; i < n && evaluations < o.max_evaluations; ++i)
                for (std::size_t j = 0; j < n && evaluations < o.max_evaluations; ++j) {
                    if (i == j || w[j] <= 0) continue;
                    auto c = w;
                    const double mv = std::min(stepsz, c[j]);
                    c[j] -= mv;
                    c[i] += mv;
                    const double m = eval(c);
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
    confirm();
    return res;
}

}  // namespace worksize
