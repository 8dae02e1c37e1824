// Cost-model fitting, prediction, the calibration ladder and the models' JSON (see model.hpp and
// docs/models.md; the split optimiser is in split.cpp).
#include "worksize/scheduler/model.hpp"
#include "worksize/scheduler/format.hpp"
#include "worksize/scheduler/planner.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <tuple>
#include <limits>
#include <map>
#include <numeric>

#include <Eigen/Dense>

namespace worksize {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Point {
    double x = 0, y = 0;
};

/// The form fitted to one phase: the line (log_x0 == 0), or fixed + c ln(max(x, log_x0) / log_x0)
/// in place of the line (log_x0 > 0).
struct Form {
    double log_x0 = 0;
};

/// Columns of the design matrix for one point under `form`.
Eigen::Vector2d basis(double x, const Form& form) {
    if (form.log_x0 > 0) return {1.0, std::log(std::max(x, form.log_x0) / form.log_x0)};
    return {1.0, x};
}

/// Weight of a point: 1 / T^2 so that the fit minimises relative error.
std::vector<double> weights_of(const std::vector<Point>& pts) {
    double floor_y = 0;
    for (const auto& p : pts) floor_y = std::max(floor_y, p.y);
    floor_y = std::max(floor_y * 1e-6, 1e-12);
    std::vector<double> w;
    for (const auto& p : pts) {
        const double s = std::max(p.y, floor_y);
        w.push_back(1.0 / (s * s));
    }
    return w;
}

/// Exact non-negative weighted least squares for the 2 columns of a form. Eigen 3.4 has no NNLS,
/// and with 2 columns the optimum is the unconstrained optimum of one of the 4 active sets: solve
/// each set's normal equations, keep the feasible one with the smallest residual. A set whose
/// columns are dependent (e.g. a single x, or x always 0) is skipped; the rank test runs on the
/// matrix scaled to a unit diagonal, so that it does not depend on the units of x.
Eigen::Vector2d nnls_small(const std::vector<Point>& pts, const std::vector<double>& w, const Form& form) {
    Eigen::Matrix2d ata = Eigen::Matrix2d::Zero();
    Eigen::Vector2d atb = Eigen::Vector2d::Zero();
    for (std::size_t i = 0; i < pts.size(); ++i) {
        const Eigen::Vector2d phi = basis(pts[i].x, form);
        const Eigen::Vector2d wphi = w[i] * phi;
        ata += wphi * phi.transpose();
        atb += wphi * pts[i].y;
    }
    Eigen::Vector2d best = Eigen::Vector2d::Zero();
    double best_rss = kInf;
    for (unsigned mask = 0; mask < 4; ++mask) {
        std::vector<Eigen::Index> cols;
        for (Eigen::Index j = 0; j < 2; ++j)
            if (mask & (1u << j)) cols.push_back(j);
        Eigen::Vector2d coef = Eigen::Vector2d::Zero();
        if (!cols.empty()) {
            const Eigen::MatrixXd a = ata(cols, cols);
            const Eigen::VectorXd d = a.diagonal().cwiseSqrt();
            if ((d.array() <= 0).any()) continue;  // a column of zeros
            const auto unscale = d.cwiseInverse().asDiagonal();
            Eigen::FullPivLU<Eigen::MatrixXd> rank(unscale * a * unscale);
            rank.setThreshold(1e-13);
            if (!rank.isInvertible()) continue;
            const Eigen::VectorXd c = a.partialPivLu().solve(atb(cols));
            if ((c.array() < 0).any()) continue;
            coef(cols) = c;
        }
        double rss = 0;
        for (std::size_t i = 0; i < pts.size(); ++i) {
            const double r = coef.dot(basis(pts[i].x, form)) - pts[i].y;
            rss += w[i] * r * r;
        }
        if (rss < best_rss * (1 - 1e-12)) {
            best_rss = rss;
            best = coef;
        }
    }
    return best;
}

PhaseModel make_phase(const Eigen::Vector2d& coef, const Form& form) {
    PhaseModel p;
    p.fixed_s = coef[0];
    if (form.log_x0 > 0) {
        p.per_log_s = coef[1];
        p.log_x0 = form.log_x0;
        return p;
    }
    p.per_x_s = coef[1];
    return p;
}

double rel_residual(const PhaseModel& p, const Point& pt, double floor_y) {
    return (p.eval(pt.x) - pt.y) / std::max(pt.y, floor_y);
}

/// Robust fit of one phase in a given form: fit, reject MAD outliers, refit.
PhaseModel robust_fit(const std::vector<Point>& all, const Form& form, double outlier_k) {
    double max_y = 0;
    for (const auto& p : all) max_y = std::max(max_y, p.y);
    const double floor_y = std::max(max_y * 1e-6, 1e-12);
    std::vector<Point> kept = all;
    PhaseModel model;
    for (int round = 0; round < 4; ++round) {
        model = make_phase(nnls_small(kept, weights_of(kept), form), form);
        if (all.size() < 4) break;
        std::vector<double> r;
        for (const auto& p : all) r.push_back(rel_residual(model, p, floor_y));
        const double med = median(r);
        std::vector<double> dev;
        for (double v : r) dev.push_back(std::abs(v - med));
        const double mad = 1.4826 * median(dev);
        std::vector<Point> next;
        for (std::size_t i = 0; i < all.size(); ++i) {
            const bool outlier = std::abs(r[i] - med) > outlier_k * mad && std::abs(r[i]) > 0.01;
            if (!outlier) next.push_back(all[i]);
        }
        // Never reject so many that the line is not determined by a majority.
        if (next.size() < std::max<std::size_t>(3, (all.size() + 1) / 2)) break;
        if (next.size() == kept.size()) break;
        kept = std::move(next);
    }
    double ss = 0;
    for (const auto& p : kept) {
        const double r = rel_residual(model, p, floor_y);
        ss += r * r;
    }
    model.rms_rel = kept.empty() ? 0.0 : std::sqrt(ss / double(kept.size()));
    model.points = all.size();
    model.rejected = all.size() - kept.size();
    return model;
}

/// `log_form`: also fit fixed + per_log ln(max(x, x0) / x0) and keep it when it fits the points better
/// than the line (concave points: docs/models.md "Host rest").
template <class X>
PhaseModel fit_phase(const std::vector<Sample>& samples, X xf, double Sample::*yf, const FitOptions& opt,
                     bool log_form = false) {
    std::map<double, std::vector<double>> by_x;
    for (const auto& s : samples) by_x[xf(s)].push_back(s.*yf);
    std::vector<Point> pts;
    bool any = false;
    for (auto& [x, ys] : by_x) {
        pts.push_back({x, median(ys)});
        if (pts.back().y > 0) any = true;
    }
    if (!any) {
        PhaseModel zero;
        zero.points = pts.size();
        return zero;
    }
    PhaseModel best = robust_fit(pts, Form{}, opt.outlier_k);
    if (log_form && pts.size() >= 3 && pts.front().x > 0) {
        PhaseModel l = robust_fit(pts, Form{pts.front().x}, opt.outlier_k);
        if (l.per_log_s > 0 && l.rejected <= best.rejected && l.rms_rel < best.rms_rel) best = l;
    }
    return best;
}

void check_sample(const Sample& s, std::size_t i) {
    const double v[] = {s.units,  s.items,  s.bytes_in, s.bytes_out,    s.send_s,        s.h2d_s,     s.kernel_s,
                        s.d2h_s,  s.recv_s, s.host_s,   s.job_bytes_in, s.job_bytes_out, s.prepare_s, s.combine_s};
    for (double x : v)
        if (!std::isfinite(x) || x < 0)
            throw InvalidArgument("cost model sample " + std::to_string(i) +
                                  " has a negative or non-finite field");
}

}  // namespace

double PhaseModel::eval(double x) const {
    double t = fixed_s + per_x_s * x;
    if (per_log_s > 0 && log_x0 > 0) t += per_log_s * std::log(std::max(x, log_x0) / log_x0);
    return t;
}

CostModel fit_cost_model(const std::vector<Sample>& samples, const FitOptions& options) {
    if (samples.empty()) throw InvalidArgument("cannot fit a cost model without samples");
    for (std::size_t i = 0; i < samples.size(); ++i) check_sample(samples[i], i);
    CostModel m;
    const auto in = [](const Sample& s) { return s.bytes_in; };
    const auto out = [](const Sample& s) { return s.bytes_out; };
    const auto items = [](const Sample& s) { return s.items; };
    const auto moved = [](const Sample& s) { return s.bytes_in + s.bytes_out; };
    m.send = fit_phase(samples, in, &Sample::send_s, options);
    m.h2d = fit_phase(samples, in, &Sample::h2d_s, options);
    m.kernel = fit_phase(samples, items, &Sample::kernel_s, options);
    m.d2h = fit_phase(samples, out, &Sample::d2h_s, options);
    m.recv = fit_phase(samples, out, &Sample::recv_s, options);
    m.host = fit_phase(samples, moved, &Sample::host_s, options, true);
    // Alone, a device's run has no prepare phase of its own to model: whatever rank 0 does before
    // the send is in host_s. `prepare` is the co-run's extra (calibration.cpp).
    m.combine = fit_phase(samples, [](const Sample& s) { return s.job_bytes_out; }, &Sample::combine_s, options);
    m.samples = samples.size();
    return m;
}

Prediction predict(const CostModel& model, double units, double items, double bytes_in,
                   double bytes_out, bool with_others) {
    Prediction p;
    if (units <= 0) return p;
    p.send_s = model.send.eval(bytes_in);
    p.h2d_s = model.h2d.eval(bytes_in);
    p.kernel_s = model.kernel.eval(items);
    p.d2h_s = model.d2h.eval(bytes_out);
    p.recv_s = model.recv.eval(bytes_out);
    p.host_s = model.host.eval(bytes_in + bytes_out);
    if (with_others) {
        // Everything after the device's send slows down beside the others (docs/models.md).
        const double f = std::clamp(model.contention, 1.0, kMaxContention);
        p.h2d_s *= f;
        p.kernel_s *= f;
        p.d2h_s *= f;
        p.recv_s *= f;
        p.host_s *= f;
    }
    p.total_s = p.send_s + p.h2d_s + p.kernel_s + p.d2h_s + p.recv_s + p.host_s;
    return p;
}

// ---------------------------------------------------------------------------------------------
// Calibration ladder

double saturation_items(const DeviceInfo& device, const AdaptiveCalibration& a) {
    const double cus = double(std::max<std::uint32_t>(1, device.compute_units));
    // A CPU core is full with a few SIMD-wide groups; PoCL's max group (4096) says nothing of it.
    if (device.type == DeviceType::cpu)
        return a.waves * cus * double(std::max<std::uint64_t>(16, device.preferred_wg_multiple)) * 16;
    return a.waves * cus * double(std::max<std::uint64_t>(1, device.max_work_group_size));
}

GlobalSize next_ladder_size(GlobalSize g, int dims) {
    if (dims == 2) return GlobalSize{g.x * 2, g.y * 2};
    return GlobalSize{g.x * 2, g.y};
}

bool judge_ladder(std::vector<LadderStep>& steps, double sat_items, const AdaptiveCalibration& a) {
    if (steps.empty()) return false;
    const double fixed0 = steps.front().overhead_s;
    const double min_kernel = std::max(a.min_kernel_s, a.overhead_factor * fixed0);
    std::vector<std::size_t> sat;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        auto& s = steps[i];
        s.saturated = s.work_items >= sat_items && s.kernel_s >= min_kernel;
        s.fitted = s.saturated;
        if (s.saturated) sat.push_back(i);
    }
    const bool enough = int(sat.size()) >= a.fit_sizes &&
                        steps[sat.back()].ops >= a.min_span * steps[sat.front()].ops;
    // Top up with the largest unsaturated sizes (the best the ladder could reach).
    int fitted = int(sat.size());
    for (std::size_t i = steps.size(); i-- > 0 && fitted < a.fit_sizes;) {
        if (steps[i].fitted) continue;
        steps[i].fitted = true;
        ++fitted;
    }
    return enough;
}

// ---------------------------------------------------------------------------------------------
// JSON

namespace {

double get_num(const nlohmann::json& j, const char* key, const char* what) {
    if (!j.is_object() || !j.contains(key) || !j.at(key).is_number())
        throw InvalidArgument(std::string(what) + ": missing or non-numeric field '" + key + "'");
    const double v = j.at(key).get<double>();
    if (!std::isfinite(v) || v < 0)
        throw InvalidArgument(std::string(what) + ": field '" + key + "' must be finite and >= 0");
    return v;
}

/// A count (points, rejected, samples): a whole number a size_t holds exactly (<= 2^53).
std::size_t get_count(const nlohmann::json& j, const char* key, const char* what) {
    const double v = get_num(j, key, what);
    if (v != std::floor(v) || v > 9007199254740992.0)
        throw InvalidArgument(std::string(what) + ": field '" + key + "' must be a whole number");
    return std::size_t(v);
}

}  // namespace

nlohmann::json to_json(const PhaseModel& p) {
    return {{"fixed_s", p.fixed_s},     {"per_x_s", p.per_x_s}, {"per_log_s", p.per_log_s},
            {"log_x0", p.log_x0},       {"rms_rel", p.rms_rel}, {"points", p.points},
            {"rejected", p.rejected}};
}

nlohmann::json to_json(const CostModel& m) {
    nlohmann::json j = {{"format", kCostModelFormat}, {"send", to_json(m.send)}, {"h2d", to_json(m.h2d)},
            {"kernel", to_json(m.kernel)},    {"d2h", to_json(m.d2h)},   {"recv", to_json(m.recv)},
            {"host", to_json(m.host)},        {"prepare", to_json(m.prepare)}, {"combine", to_json(m.combine)},
            {"samples", m.samples},    {"contention", m.contention}};
    if (m.fit.sizes > 0)
        j["fit"] = {{"rms_rel", m.fit.rms_rel}, {"max_rel", m.fit.max_rel}, {"sizes", m.fit.sizes},
                    {"size_range", m.fit.size_range}};
    return j;
}

PhaseModel phase_model_from_json(const nlohmann::json& j) {
    // Fields this reader does not know are ignored; it does not refuse them. That covers the
    // legacy "wave_items" and "per_wave_s" of the removed saw-tooth wave term
    // (docs/models.md), which databases written before its removal carry in every phase model,
    // always 0: calibration never enabled the term. They are neither read nor checked. A
    // hand-made entry with a non-zero per_wave_s loads as the plain line without its wave
    // steps; that is accepted, since no calibration ever produced one.
    PhaseModel p;
    p.fixed_s = get_num(j, "fixed_s", "phase model");
    p.per_x_s = get_num(j, "per_x_s", "phase model");
    p.per_log_s = j.contains("per_log_s") ? get_num(j, "per_log_s", "phase model") : 0.0;
    p.log_x0 = j.contains("log_x0") ? get_num(j, "log_x0", "phase model") : 0.0;
    p.rms_rel = j.contains("rms_rel") ? get_num(j, "rms_rel", "phase model") : 0.0;
    p.points = j.contains("points") ? get_count(j, "points", "phase model") : 0;
    p.rejected = j.contains("rejected") ? get_count(j, "rejected", "phase model") : 0;
    return p;
}

CostModel cost_model_from_json(const nlohmann::json& j) {
    if (!j.is_object()) throw InvalidArgument("cost model: not a JSON object");
    const double format = j.contains("format") ? get_num(j, "format", "cost model") : 1.0;
    if (format != double(kCostModelFormat))
        throw InvalidArgument("cost model: stale format " + (j.contains("format") ? j["format"].dump() : "1") + " (this version reads " +
                              std::to_string(kCostModelFormat) +
                              ": host ln term, pinned staging, partial sums as output); recalibrate");
    CostModel m;
    auto phase = [&](const char* key) {
        if (!j.contains(key)) throw InvalidArgument(std::string("cost model: missing phase '") + key + "'");
        try {
            return phase_model_from_json(j.at(key));
        } catch (const InvalidArgument& e) {
            throw InvalidArgument(std::string("cost model phase '") + key + "': " + e.what());
        }
    };
    m.send = phase("send");
    m.h2d = phase("h2d");
    m.kernel = phase("kernel");
    m.d2h = phase("d2h");
    m.recv = phase("recv");
    m.host = phase("host");
    m.prepare = phase("prepare");
    m.combine = phase("combine");
    m.samples = j.contains("samples") ? get_count(j, "samples", "cost model") : 0;
    m.contention = j.contains("contention") ? get_num(j, "contention", "cost model") : 1.0;
    if (!(m.contention >= 1.0 && m.contention <= kMaxContention))
        throw InvalidArgument("cost model: contention " + std::to_string(m.contention) + " outside [1, " +
                              std::to_string(kMaxContention) + "]");
    if (j.contains("fit")) {
        const auto& f = j.at("fit");
        m.fit.rms_rel = get_num(f, "rms_rel", "cost model fit");
        m.fit.max_rel = get_num(f, "max_rel", "cost model fit");
        m.fit.sizes = std::size_t(get_num(f, "sizes", "cost model fit"));
        if (f.contains("size_range")) {
            if (!f.at("size_range").is_string()) throw InvalidArgument("cost model fit: field 'size_range' must be a string");
            m.fit.size_range = f.at("size_range").get<std::string>();
        }
    }
    return m;
}

// ---------------------------------------------------------------------------------------------
// Fit quality

FitQuality fit_quality(const std::vector<double>& predicted, const std::vector<double>& measured,
                       std::string size_range) {
    if (predicted.size() != measured.size())
        throw InvalidArgument("fit_quality: " + std::to_string(predicted.size()) + " predictions for " +
                              std::to_string(measured.size()) + " measurements");
    FitQuality q;
    q.size_range = std::move(size_range);
    double ss = 0;
    for (std::size_t i = 0; i < measured.size(); ++i) {
        if (!(measured[i] > 0) || !std::isfinite(measured[i]) || !std::isfinite(predicted[i]))
            throw InvalidArgument("fit_quality: measured and predicted times must be finite, measured > 0");
        const double e = std::abs(predicted[i] / measured[i] - 1.0);
        ss += e * e;
        q.max_rel = std::max(q.max_rel, e);
    }
    q.sizes = measured.size();
    q.rms_rel = q.sizes ? std::sqrt(ss / double(q.sizes)) : 0.0;
    return q;
}

std::string untrusted_fit(const FitQuality& q, const FitLimits& limits) {
    if (q.sizes == 0 || (q.rms_rel <= limits.rms_rel && q.max_rel <= limits.max_rel)) return {};
    auto pct = [](double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3g %%", v * 100);
        return std::string(buf);
    };
    std::string t = "fit error rms ";
    t.append(pct(q.rms_rel)).append(", max ").append(pct(q.max_rel)).append(" over ");
    if (q.size_range.empty())
        t.append(std::to_string(q.sizes)).append(" calibrated sizes");
    else
        t.append("the calibrated sizes ").append(q.size_range);
    t.append(" (limits: rms ").append(pct(limits.rms_rel)).append(", max ").append(pct(limits.max_rel)).append(")");
    return t;
}

}  // namespace worksize
