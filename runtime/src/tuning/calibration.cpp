// Calibration runs, model loading and the oracle's measurement (see calibration.hpp, docs/bench.md).
#include "worksize/runtime/calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>

#include "support/clock.hpp"
#include "worksize/runtime/autotune.hpp"
#include "worksize/scheduler/links.hpp"
#include "worksize/scheduler/log.hpp"

namespace worksize {

namespace {

double median_of(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string size_text(GlobalSize g, int dims) {
    return dims == 2 ? std::to_string(g.x) + "x" + std::to_string(g.y) : std::to_string(g.x);
}

}  // namespace

SplitJob split_job_for(const KernelJob& job, std::uint64_t iterations) {
    const KernelDescriptor d = job.descriptor();
    const GlobalSize g = job.problem();
    const double ipu = d.dims == 2 ? double(g.x) : 1.0;
    SplitJob sj;
    sj.total_units = d.dims == 2 ? g.y : g.x;
    sj.ops_per_unit = ipu * d.ops_per_item * double(iterations);
    sj.bytes_in_per_unit = d.bytes_in_per_item * ipu;
    sj.bytes_out_per_unit = d.bytes_out_per_item * ipu;
    sj.bytes_in_fixed = d.bytes_in_fixed;
    sj.granule = job.granule();
    sj.serial_sends = false;  // rank 0 posts the sends to all workers at once (master.cpp)
    return sj;
}

DeclareSlices declared_slices_of(const std::string& kernel, const KernelJob& job,
                                 const std::vector<DeviceInfo>& devices, const SplitJob& sj) {
    const KernelJobFactory& factory = kernel_job(kernel);
    std::vector<int> ranks;
    for (const auto& d : devices) ranks.push_back(d.rank);
    if (!factory.declare)
        return [sj, ranks](const std::vector<std::uint64_t>& u) { return layout_slices(sj, u, ranks); };
    auto said = std::make_shared<bool>(false);  // the fallback's debug line, once
    return [&factory, &job, kernel, devices, sj, ranks, said](const std::vector<std::uint64_t>& units) {
        const GlobalSize problem = job.problem();
        const bool two_d = job.descriptor().dims == 2;
        std::vector<KernelSliceDecl> out;
        std::uint64_t offset = 0;
        try {
            for (std::size_t i = 0; i < units.size(); ++i) {
                if (units[i] == 0) continue;
                Assignment a;
                a.device = int(i);
                a.rank = devices.at(i).rank;
                a.offset = offset;
                a.units = units[i];
                a.global = two_d ? GlobalSize{problem.x, units[i]} : GlobalSize{units[i], 1};
                a.padded_global = a.global;
                a.backend = job.backend(int(i));
                out.push_back({factory.declare(job.slice_spec(a), devices[i]), a.rank, offset, units[i]});
                offset += units[i];
            }
        } catch (const std::exception& e) {
            if (!std::exchange(*said, true))
                log::debug() << kernel << ": the model simulates the layout's lists where a slice does not "
                             << "declare (" << e.what() << ")";
            return layout_slices(sj, units, ranks);
        }
        return out;
    };
}

nlohmann::json model_params_key(const nlohmann::json& kernel_params, LocalPolicy local) {
    return {{"params", kernel_params.is_null() ? nlohmann::json::object() : kernel_params}, {"local", to_string(local)}};
}

Sample sample_of(const DeviceRun& run, const KernelJob& job, std::uint64_t iterations, const JobResult* result) {
    const SplitJob sj = split_job_for(job, iterations);
    Sample s;
    const double u = double(run.assignment.units);
    s.units = u;
    // The kernel ran on the padded NDRange (Assignment::padded_global): its work is counted.
    const Assignment& a = run.assignment;
    const double slice_items = double(a.global.x) * double(a.global.y);
    const double launched = double(a.padded_global.x) * double(a.padded_global.y);
    s.items = u * sj.ops_per_unit * (slice_items > 0 && launched > slice_items ? launched / slice_items : 1.0);
    s.bytes_in = u > 0 ? u * sj.bytes_in_per_unit + sj.bytes_in_fixed : 0.0;
    s.bytes_out = u * sj.bytes_out_per_unit;
    s.send_s = run.send_s;
    s.h2d_s = run.times.h2d;
    s.d2h_s = run.times.d2h;
    s.recv_s = run.recv_s;
    s.kernel_s = std::max(0.0, run.times.kernel);
    s.job_bytes_in = double(sj.total_units) * sj.bytes_in_per_unit;
    s.job_bytes_out = double(sj.total_units) * sj.bytes_out_per_unit;
    bool shared = false;
    if (result) {
        s.prepare_s = std::max(0.0, result->prepare_s);
        s.combine_s = std::max(0.0, result->combine_s);
        shared = std::count_if(result->devices.begin(), result->devices.end(),
                               [](const DeviceRun& d) { return d.assignment.units > 0; }) >= 2;
    }
    // With others, rank 0's prepare phase is modelled on its own (CostModel::prepare); alone it is
    // part of the device's host-side rest.
    s.host_s = std::max(0.0, run.done_s - (shared ? s.prepare_s : 0.0) - s.send_s - s.h2d_s - s.kernel_s - s.d2h_s -
                                 s.recv_s);
    return s;
}

std::vector<std::string> default_calibration_sizes(const std::string& kernel) {
    if (has_kernel_job(kernel) && !kernel_job(kernel).calibration_sizes.empty())
        return kernel_job(kernel).calibration_sizes;
    return {"256", "1024", "4096"};
}

namespace {

PlanRequest request_for(const KernelJob& job, std::size_t devices, std::uint64_t iterations, LocalPolicy local,
                        Priority priority, bool priority_given) {
    PlanRequest r = job_request(job, devices);
    r.iterations = iterations;
    r.strategy = "model";
    r.local_policy = local;
    if (priority_given) r.priority = priority;
    return r;
}

JobResult checked_run(Cluster& cluster, KernelJob& job, const std::vector<Assignment>& a, const std::string& name) {
    JobResult r = cluster.run(job, a, name);
    if (!r.verdict.ok) throw Error(name + ": verification failed during measurement: " + r.verdict.detail);
    return r;
}

/// The largest common fitted size: the smallest of the devices' largest fitted sizes (none when
/// a device fitted no size).
std::optional<GlobalSize> common_fitted_size(const CalibrationResult& res) {
    GlobalSize size{0, 0};
    double size_ops = -1;
    for (const auto& dc : res.devices) {
        const LadderStep* top = nullptr;
        for (const auto& ls : dc.ladder)
            if (ls.fitted && (!top || ls.ops > top->ops)) top = &ls;
        if (!top) return std::nullopt;
        if (size_ops < 0 || top->ops < size_ops) {
            size_ops = top->ops;
            size = top->size;
        }
    }
    return size;
}

/// One co-run calibration at `size` (see corun()).
struct Corun {
    Cluster& cluster;
    const std::string& kernel;
    const JobMaker& make;
    const CalibrationOptions& o;
    CalibrationResult& res;
    const StepFn& step;
    GlobalSize size;
    std::unique_ptr<KernelJob> probe = make(size, o.iterations);
    SplitJob sj = split_job_for(*probe, o.iterations);
    std::size_t n = cluster.devices().size();
    std::vector<int> ranks = ranks_of(cluster.devices());
    DeclareSlices declare = declared_slices_of(kernel, *probe, cluster.devices(), sj);

    static std::vector<int> ranks_of(const std::vector<DeviceInfo>& devices) {
        std::vector<int> r;
        for (const auto& d : devices) r.push_back(d.rank);
        return r;
    }

    std::vector<CostModel> current_models() const {
        std::vector<CostModel> models(n);
        for (const auto& dc : res.devices) models.at(std::size_t(dc.device)) = dc.model;
        return models;
    }
    /// The plan and units per device of the split the models choose (as the model strategy
    /// does: by the simulated instruction lists); with `floor`, every device gets at least
    /// corun_min_share (renormalised).
    std::pair<Plan, std::vector<std::uint64_t>> model_units(bool floor) const {
        const SplitResult r = optimise_simulated_split(current_models(), sj, ranks, declare);
        std::vector<double> w(n, 0.0);
        double sum = 0;
        for (std::size_t i = 0; i < n; ++i) {
            w[i] = double(r.units[i]) / double(sj.total_units);
            if (floor) w[i] = std::max(w[i], o.corun_min_share);
            sum += w[i];
        }
        for (auto& x : w) x /= sum;
        const auto& devices = cluster.devices();
        const Plan plan = plan_with_weights(
            devices, request_for(*probe, devices.size(), o.iterations, o.local, o.priority, o.priority_given), w, o.tuning,
            probe->tuning_key());
        std::vector<std::uint64_t> units(n, 0);
        for (const auto& a : plan.assignments) units.at(std::size_t(a.device)) = a.units;
        return {plan, units};
    }
    static long working(const std::vector<std::uint64_t>& u) {
        return std::count_if(u.begin(), u.end(), [](std::uint64_t x) { return x > 0; });
    }
    /// Runs `plan` (a warm-up, then at least 3 repeats): each device's done times, rank 0's
    /// prepare times.
    std::vector<std::vector<double>> measure(const Plan& plan, std::vector<double>& prepare) {
        cluster.generate(*probe);
        checked_run(cluster, *probe, plan.assignments, kernel);  // warm-up
        ++res.runs;
        std::vector<std::vector<double>> done(n);
        for (int r = 0; r < std::max(3, o.min_repeats); ++r) {
            auto job = make(size, o.iterations);
            cluster.generate(*job);
            const JobResult jr = checked_run(cluster, *job, plan.assignments, kernel);
            ++res.runs;
            prepare.push_back(jr.prepare_s);
            for (const auto& d : jr.devices) {
                if (d.assignment.units == 0) continue;
                done.at(std::size_t(d.assignment.device)).push_back(d.done_s);
                for (auto& dc : res.devices)
                    if (dc.device == d.assignment.device)
                        dc.runs.push_back({kCorunStep, sample_of(d, *job, o.iterations, &jr), d.pack_s, d.exec_s,
                                           d.done_s, jr.prepare_s, jr.combine_s, jr.makespan_s});
            }
        }
        return done;
    }
    /// Device i's simulated finish of `units` with contention factor f, the others' `models`.
    double finish_with(std::vector<CostModel> models, std::size_t i, double f,
                       const std::vector<std::uint64_t>& units) const {
        models[i].contention = f;
        return simulate_split(models, sj, units, ranks, declare).finish_s[i];
    }
    /// The factor in [1, kMaxContention] for which device i's simulated finish of `units` (every
    /// phase after its send that much slower, the others solo) is `measured`: where nothing
    /// overlaps, (measured - start - send) / (predicted - start - send).
    double contention_of(const std::vector<CostModel>& solo, std::size_t i,
                         const std::vector<std::uint64_t>& units, double measured) const {
        const double alone = finish_with(solo, i, 1.0, units);
        if (!(alone < measured)) return 1.0;
        const double most = finish_with(solo, i, kMaxContention, units);
        if (!(most > alone)) return 1.0;  // nothing after its send to slow down
        if (!(most > measured)) return kMaxContention;
        double lo = 1.0, hi = kMaxContention;
        for (int it = 0; it < 60 && hi - lo > 1e-9; ++it) {
            const double mid = 0.5 * (lo + hi);
            (finish_with(solo, i, mid, units) < measured ? lo : hi) = mid;
        }
        return 0.5 * (lo + hi);
    }
    /// One round: the split measured, rank 0's prepare phase per input byte, and each device's
    /// contention factor against its solo prediction of this split.
    void round(const Plan& plan, const std::vector<std::uint64_t>& units) {
        std::vector<double> prepare;
        const auto done = measure(plan, prepare);
        const double job_in = double(sj.total_units) * sj.bytes_in_per_unit;
        const double prep = median_of(prepare);
        for (auto& dc : res.devices) {
            dc.model.prepare = PhaseModel{};
            if (job_in > 0) dc.model.prepare.per_x_s = prep / job_in;
            dc.model.prepare.points = 1;
        }
        // Solo predictions of this split (contention 1, the prepare phase included).
        std::vector<CostModel> solo = current_models();
        for (auto& m : solo) m.contention = 1.0;
        for (auto& dc : res.devices) {
            const std::size_t i = std::size_t(dc.device);
            if (units[i] == 0 || done[i].empty()) continue;
            dc.corun_units = units[i];
            dc.corun_measured_s = median_of(done[i]);
            dc.corun_predicted_s = finish_with(solo, i, 1.0, units);
            dc.model.contention = contention_of(solo, i, units, dc.corun_measured_s);
        }
        if (step) step(kernel + " co-run size " + size_text(size, plan.dims));
    }
};

/// The co-run calibration (METHOD.md 2.1, paper 003; docs/models.md "Contention"): all devices
/// together at the largest size every device fitted. Round 1 runs the split the solo models
/// choose (every device at least `corun_min_share`); each device's median done time against its
/// solo prediction (the simulated instruction lists) gives its contention factor f, applied to
/// every phase after its send: the f whose simulated finish is the measured one, clamped to
/// [1, kMaxContention] (without overlap, measured - start - send = f x (predicted - start -
/// send)). Rank 0's extra prepare time with several devices (sort's partition) is measured there
/// too. Round 2 repeats this at the split the models choose with those factors, when it differs
/// by more than 5 % of the units and still uses two devices or more: the factors then come from
/// the split the model will actually run.
void corun(Cluster& cluster, const std::string& kernel, const JobMaker& make, const CalibrationOptions& o,
           CalibrationResult& res, const StepFn& step) {
    const auto size = common_fitted_size(res);
    if (!size) return;
    Corun c{cluster, kernel, make, o, res, step, *size};
    auto [plan1, units1] = c.model_units(true);
    if (Corun::working(units1) < 2) return;
    c.round(plan1, units1);
    auto [plan2, units2] = c.model_units(false);
    if (Corun::working(units2) < 2) return;
    std::uint64_t moved = 0;
    for (std::size_t i = 0; i < c.n; ++i) moved += units1[i] > units2[i] ? units1[i] - units2[i] : 0;
    if (double(moved) <= 0.05 * double(c.sj.total_units)) return;
    c.round(plan2, units2);
}

}  // namespace

std::size_t calibration_steps(std::size_t devices, const CalibrationOptions& options) {
    const std::size_t co = options.corun && devices >= 2 ? 2 : 0;
    if (options.sizes.empty()) return devices * std::size_t(std::max(1, options.adaptive.max_steps)) + co;
    return devices * options.sizes.size() + co;
}

namespace {

/// One device's calibration, in phases: the sizes measured (fixed or the adaptive ladder), then
/// the model fitted and judged on them.
struct DeviceCalibrator {
    Cluster& cluster;
    const std::string& kernel;
    const JobMaker& make;
    const CalibrationOptions& o;
    const StepFn& step;
    CalibrationResult& res;
    std::size_t di;
    DeviceCalibration dc{};
    std::vector<std::vector<Sample>> per_step{};  ///< samples of each ladder step
    std::vector<Sample> last_of{};                ///< one sample per step (for max_rel_error)
    int dims = 1;

    /// Runs one size on device di alone: a warm-up, then repeats until the median is stable.
    void measure(GlobalSize size);
    void run_fixed();
    void run_adaptive();
    /// The model from the fitted steps' samples, and its quality: its done time against each
    /// fitted size's measured median.
    void fit();
};

void DeviceCalibrator::measure(GlobalSize size) {
    const auto& devices = cluster.devices();
    auto probe = make(size, o.iterations);
    std::vector<double> weights(devices.size(), 0.0);
    weights[di] = 1.0;
    const Plan plan = plan_with_weights(
        devices, request_for(*probe, devices.size(), o.iterations, o.local, o.priority, o.priority_given), weights, o.tuning,
        probe->tuning_key());
    dims = plan.dims;
    LadderStep ls;
    ls.size = size;
    for (const auto& a : plan.assignments)
        if (a.device == int(di)) ls.work_items = double(a.global.x) * double(std::max<std::uint64_t>(1, a.global.y));
    cluster.generate(*probe);
    checked_run(cluster, *probe, plan.assignments, kernel);
    ++res.runs;
    std::vector<double> done, kern, over;
    std::vector<Sample> samples;
    double prev_median = -1;
    for (int r = 0; r < o.max_repeats; ++r) {
        auto job = make(size, o.iterations);
        cluster.generate(*job);
        const JobResult jr = checked_run(cluster, *job, plan.assignments, kernel);
        ++res.runs;
        for (const auto& d : jr.devices) {
            if (d.assignment.device != int(di) || d.assignment.units == 0) continue;
            const Sample s = sample_of(d, *job, o.iterations, &jr);
            samples.push_back(s);
            dc.runs.push_back({dc.ladder.size(), s, d.pack_s, d.exec_s, d.done_s, jr.prepare_s, jr.combine_s, jr.makespan_s});
            ls.ops = s.items;
            done.push_back(d.done_s);
            kern.push_back(s.kernel_s);
            over.push_back(std::max(0.0, d.done_s - s.kernel_s));
        }
        if (int(done.size()) >= o.min_repeats) {
            const double m = median_of(done);
            if (prev_median > 0 && std::abs(m - prev_median) <= o.stable_rel * m) break;
            prev_median = m;
        }
    }
    ls.done_s = median_of(done);
    ls.kernel_s = median_of(kern);
    ls.overhead_s = median_of(over);
    dc.ladder.push_back(ls);
    last_of.push_back(samples.empty() ? Sample{} : samples.back());
    per_step.push_back(std::move(samples));
    if (step) step(kernel + " device " + std::to_string(di) + " size " + size_text(size, plan.dims));
}

void DeviceCalibrator::run_fixed() {
    for (const auto& size : o.sizes) measure(size);
    for (auto& ls : dc.ladder) ls.fitted = true;
}

void DeviceCalibrator::run_adaptive() {
    const auto& a = o.adaptive;
    const DeviceInfo& dev = cluster.devices()[di];
    const double sat = saturation_items(dev, a);
    double mem_limit = a.max_bytes;
    if (dev.global_mem_bytes > 0) mem_limit = std::min(mem_limit, 0.25 * double(dev.global_mem_bytes));
    GlobalSize size = a.start;
    for (int k = 0; k < std::max(1, a.max_steps); ++k) {
        measure(size);
        if (judge_ladder(dc.ladder, sat, a)) break;
        const GlobalSize next = next_ladder_size(size, dims);
        if (a.max_size.x > 0 && (next.x > a.max_size.x || (dims == 2 && next.y > a.max_size.y))) break;
        auto nj = make(next, o.iterations);
        const SplitJob sj = split_job_for(*nj, o.iterations);
        const double bytes = double(sj.total_units) * (sj.bytes_in_per_unit + sj.bytes_out_per_unit) + sj.bytes_in_fixed;
        if (bytes > mem_limit) break;
        const auto& cur = dc.ladder.back();
        const double next_ops = double(sj.total_units) * sj.ops_per_unit;
        const double predicted = cur.ops > 0 ? cur.done_s * next_ops / cur.ops : 0.0;
        if (predicted > a.max_run_s) break;
        size = next;
    }
    judge_ladder(dc.ladder, sat, a);
    for (const auto& ls : dc.ladder)
        if (ls.fitted && !ls.saturated) dc.saturated = false;
}

void DeviceCalibrator::fit() {
    for (std::size_t i = 0; i < dc.ladder.size(); ++i)
        if (dc.ladder[i].fitted) dc.samples.insert(dc.samples.end(), per_step[i].begin(), per_step[i].end());
    dc.model = fit_cost_model(dc.samples);
    std::vector<double> predicted, measured;
    std::string first, last;
    for (std::size_t i = 0; i < dc.ladder.size(); ++i) {
        const auto& ls = dc.ladder[i];
        if (!ls.fitted || !(ls.done_s > 0)) continue;
        const Sample& s = last_of[i];
        predicted.push_back(predict(dc.model, s.units, s.items, s.bytes_in, s.bytes_out).total_s);
        measured.push_back(ls.done_s);
        if (first.empty()) first = size_text(ls.size, dims);
        last = size_text(ls.size, dims);
    }
    dc.model.fit = fit_quality(predicted, measured, first == last ? first : first + ".." + last);
    dc.max_rel_error = dc.model.fit.max_rel;
}

}  // namespace

CalibrationResult calibrate(Cluster& cluster, const std::string& kernel, const JobMaker& make,
                            const CalibrationOptions& o, const StepFn& step) {
    const bool adaptive = o.sizes.empty();
    if (adaptive && (o.adaptive.start.x == 0 || o.adaptive.start.y == 0))
        throw InvalidArgument("calibrate: no sizes and no start size for the adaptive ladder");
    if (o.min_repeats < 1 || o.max_repeats < o.min_repeats)
        throw InvalidArgument("calibrate: repeats must satisfy 1 <= min <= max");
    if (cluster.devices().empty()) throw Error("calibrate: the cluster has no device");
    CalibrationResult res;
    res.kernel = kernel;
    const double t_all = now_s();
    for (std::size_t di = 0; di < cluster.devices().size(); ++di) {
        const double t_dev = now_s();
        DeviceCalibrator c{cluster, kernel, make, o, step, res, di};
        c.dc.device = int(di);
        if (adaptive)
            c.run_adaptive();
        else
            c.run_fixed();
        c.fit();
        c.dc.seconds = now_s() - t_dev;
        res.devices.push_back(std::move(c.dc));
    }
    if (o.corun && res.devices.size() >= 2) corun(cluster, kernel, make, o, res, step);
    res.seconds = now_s() - t_all;
    return res;
}

void store_calibration(Store& store, const std::vector<DeviceInfo>& devices, const CalibrationResult& result,
                       const nlohmann::json& params_key) {
    for (const auto& dc : result.devices) {
        const DeviceInfo& d = devices.at(std::size_t(dc.device));
        store.put_model(fingerprint_of(d), result.kernel, params_key, dc.model, unix_now(), d.host);
    }
}

namespace {

/// Whether model `m` was calibrated on a rank other than rank 0: its slices' inputs came over
/// MPI (a fitted send), where rank 0's own devices take theirs in-process.
bool calibrated_over_mpi(const CostModel& m) { return m.send.per_x_s > 0 || m.send.fixed_s > 0; }

/// Of a device's stored models (newest first), the newest calibrated where the device runs now
/// (on rank 0, or on another rank: over MPI). Two GPUs of one kind share a fingerprint: on two
/// H200s, the model of the one on rank 1 (MPI sends of 537 MB) predicted 225 ms for the one on
/// rank 0 alone, which took 70. Without such a model, the newest, its transfers made to fit:
/// none on rank 0; elsewhere the stored MPI link from rank 0's host (`mpi`), when there is one.
CostModel placed_model(const std::vector<CostModel>& found, const DeviceInfo& d, const std::optional<LinkFit>& mpi) {
    const bool remote = d.rank != 0;
    for (const auto& m : found)
        if (calibrated_over_mpi(m) == remote) return m;
    CostModel m = found.front();
    if (!remote) {
        m.send = m.recv = PhaseModel{};
    } else if (mpi && mpi->valid()) {
        PhaseModel link;
        link.fixed_s = mpi->latency_s;
        link.per_x_s = mpi->byte_s;
        link.points = mpi->sizes;
        m.send = m.recv = link;
    }
    return m;
}

}  // namespace

std::vector<CostModel> load_models(const Store& store, const std::vector<DeviceInfo>& devices,
                                   const std::string& kernel, const nlohmann::json& params_key,
                                   std::vector<std::string>& missing) {
    std::vector<CostModel> models(devices.size());
    const auto on_rank0 = std::find_if(devices.begin(), devices.end(), [](const DeviceInfo& d) { return d.rank == 0; });
    for (std::size_t i = 0; i < devices.size(); ++i) {
        const auto& d = devices[i];
        std::vector<std::string> warnings;
        const auto found = store.find_models(fingerprint_of(d), kernel, params_key, &warnings);
        if (!found.empty()) {
            std::optional<LinkFit> mpi;
            if (d.rank != 0 && on_rank0 != devices.end()) mpi = find_rank_link(store, on_rank0->host, d.host);
            models[i] = placed_model(found, d, mpi);
            continue;
        }
        std::string msg = "no calibration for kernel " + kernel + " on device '" + d.name + "' (rank " +
                          std::to_string(d.rank) + ")";
        for (const auto& w : warnings) msg += "; " + w;
        // A damaged file (not one entry) shows only in the store's own warnings.
        if (warnings.empty())
            for (const auto& w : store.warnings())
                if (w.find("entry") == std::string::npos) msg += "; " + w;
        missing.push_back(msg);
    }
    return models;
}

OracleInputs oracle_inputs(Cluster& cluster, const JobMaker& make, GlobalSize size, const PlanRequest& request,
                           const std::string& job_name, const TuningSource* tuning, const OracleOptions& options,
                           const StepFn& step) {
    OracleInputs in;
    in.options = options;
    in.step = step;
    const std::uint64_t iterations = request.iterations;
    in.warm_up = [&cluster, make, size, request, job_name, tuning](const std::vector<double>& weights) {
        auto warm = make(size, 1);
        cluster.generate(*warm);
        PlanRequest wr = request;
        wr.iterations = 1;
        const Plan p = plan_with_weights(cluster.devices(), wr, weights, tuning, warm->tuning_key());
        checked_run(cluster, *warm, p.assignments, job_name);
    };
    in.makespan = [&cluster, make, size, iterations, job_name](const Plan& plan) {
        auto job = make(size, iterations);
        cluster.generate(*job);
        return checked_run(cluster, *job, plan.assignments, job_name).makespan_s;
    };
    return in;
}

}  // namespace worksize
