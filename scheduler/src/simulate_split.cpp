// A split's timeline from the simulated instruction lists, and the split the simulation picks
// (simulate_kernel.hpp; the analytic timeline and optimiser are split.cpp's).
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "worksize/scheduler/format.hpp"
#include "worksize/scheduler/simulate_kernel.hpp"

namespace worksize {

namespace {

/// Whole 4-byte elements for `bytes` (at least one).
std::uint64_t elements_of(double bytes) {
    return std::max<std::uint64_t>(1, std::uint64_t(std::llround(bytes / 4.0)));
}

BufferDecl layout_buffer(const char* name, BufferLayout layout, double bytes, bool input) {
    BufferDecl b;
    b.name = name;
    b.layout = layout;
    b.input = input;
    b.output = !input;
    if (layout == BufferLayout::split)
        b.pitch = elements_of(bytes);
    else
        b.count = elements_of(bytes);
    return b;
}

/// The job's layout as a declaration: the split input, the shared input, the split output.
DataJobSpec layout_spec(const SplitJob& job) {
    DataJobSpec spec;
    spec.name = "layout";
    spec.units = job.total_units;
    if (job.bytes_in_per_unit > 0)
        spec.buffers.push_back(layout_buffer("in", BufferLayout::split, job.bytes_in_per_unit, true));
    if (job.bytes_in_fixed > 0)
        spec.buffers.push_back(layout_buffer("fixed", BufferLayout::shared, job.bytes_in_fixed, true));
    if (job.bytes_out_per_unit > 0)
        spec.buffers.push_back(layout_buffer("out", BufferLayout::split, job.bytes_out_per_unit, false));
    KernelDecl k;
    k.name = "kernel";
    spec.kernels.push_back(std::move(k));
    return spec;
}

/// A phase's cost: predict()'s figure, with its model's fixed part under the same factor.
PhaseCost phase_cost(double total_s, const PhaseModel& m, double factor) {
    return {total_s, m.fixed_s * factor};
}

}  // namespace

std::vector<KernelSliceDecl> layout_slices(const SplitJob& job, const std::vector<std::uint64_t>& units,
                                           const std::vector<int>& ranks) {
    if (ranks.size() != units.size())
        throw InvalidArgument("layout_slices: units and ranks differ in length");
    const DataJobSpec spec = layout_spec(job);
    std::vector<KernelSliceDecl> out;
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < units.size(); ++i) {
        if (units[i] == 0) continue;
        out.push_back({spec, ranks[i], offset, units[i]});
        offset += units[i];
    }
    return out;
}

SplitResult simulate_split(const std::vector<CostModel>& models, const SplitJob& job,
                           const std::vector<std::uint64_t>& units, const std::vector<int>& ranks,
                           const DeclareSlices& declare, KernelSimOptions options) {
    if (ranks.size() != models.size())
        throw InvalidArgument("simulate_split: ranks and models differ in length");
    SplitResult r = evaluate_split(models, job, units);  // each device's phases, prepare and combine
    std::vector<std::size_t> device;                     // slice k -> its device
    for (std::size_t i = 0; i < units.size(); ++i)
        if (units[i] > 0) device.push_back(i);
    if (device.empty()) return r;
    const std::vector<KernelSliceDecl> slices = declare ? declare(units) : layout_slices(job, units, ranks);
    if (slices.size() != device.size())
        throw InvalidArgument("simulate_split: " + std::to_string(slices.size()) + " slices declared for " +
                              std::to_string(device.size()) + " devices with work");
    // One launch per kernel stands for the iterations: back to back on the queue, the same time.
    KernelProgramOptions po;
    po.local_inputs = job.local_inputs;
    std::vector<KernelSliceCost> costs;
    for (std::size_t i : device) {
        const CostModel& m = models[i];
        const Prediction& p = r.predicted[i];
        const double f = device.size() >= 2 ? std::clamp(m.contention, 1.0, kMaxContention) : 1.0;
        costs.push_back({phase_cost(p.send_s, m.send, 1.0), phase_cost(p.h2d_s, m.h2d, f), p.kernel_s,
                         phase_cost(p.d2h_s, m.d2h, f), phase_cost(p.recv_s, m.recv, f), p.host_s});
    }
    options.prepare_s = r.prepare_s;
    options.combine_s = r.combine_s;
    const SimulatedKernelJob sim = simulate_kernel_job(kernel_job_lists(slices, po), costs, options);
    for (std::size_t k = 0; k < device.size(); ++k) {
        r.start_s[device[k]] = sim.start_s[k];
        r.finish_s[device[k]] = sim.finish_s[k];
        r.predicted[device[k]] = sim.busy[k];
    }
    r.makespan_s = sim.makespan_s;
    return r;
}

namespace {

/// The search of optimise_simulated_split: every split it simulates (which devices had work, and
/// its makespan), and the best by the join margin.
class SimulatedSearch {
public:
    SimulatedSearch(const std::vector<CostModel>& models, const SplitJob& job, const std::vector<int>& ranks,
                    const DeclareSlices& declare)
        : models_(models),
          job_(job),
          ranks_(ranks),
          declare_(declare),
          keep_(1.0 + std::max(0.0, job.join_margin)) {}

    /// The simulated makespan of `units`; kept as the best if it wins.
    double consider(const std::vector<std::uint64_t>& units) {
        const double m = simulate(units);
        if (better(m, devices_of(units))) {
            best_ = units;
            best_ms_ = m;
            best_size_ = devices_of(units);
        }
        return m;
    }

    /// Moves blocks of granules from one device to another while the simulated makespan drops
    /// (a device may drop out; with a join margin none joins), coarse blocks first.
    void refine(std::size_t budget) {
        if (best_.empty()) return;
        const std::uint64_t g = std::max<std::uint64_t>(job_.granule, 1);
        const std::uint64_t granules = (job_.total_units + g - 1) / g;
        const std::vector<std::uint64_t> start = best_;
        for (std::uint64_t s = std::max<std::uint64_t>(1, std::bit_floor(granules) / 4); s >= 1; s /= 2) {
            for (bool improved = true; improved && evaluations_ < budget;) {
                improved = false;
                std::vector<std::uint64_t> cur = best_, pick;
                double pick_ms = best_ms_;
                for (std::size_t i = 0; i < cur.size() && evaluations_ < budget; ++i)
                    for (std::size_t j = 0; j < cur.size() && cur[i] > 0 && evaluations_ < budget; ++j) {
                        if (j == i || (job_.join_margin > 0 && start[j] == 0)) continue;
                        std::vector<std::uint64_t> next = cur;
                        const std::uint64_t d = std::min(s * g, next[i]);
                        next[i] -= d;
                        next[j] += d;
                        const double m = simulate(next);
                        if (m < pick_ms * (1 - 1e-12)) {
                            pick_ms = m;
                            pick = next;
                        }
                    }
                if (!pick.empty()) {
                    best_ = pick;
                    best_ms_ = pick_ms;
                    best_size_ = devices_of(pick);
                    improved = true;
                }
            }
            if (s == 1) break;
        }
    }

    /// Simulates device i joining the best split: blocks of 1, 2, 4, ... granules taken from the
    /// device with the most units (which keeps some), so that with(i) says what it would give.
    void probe_join(std::size_t i) {
        const std::uint64_t g = std::max<std::uint64_t>(job_.granule, 1);
        const auto most = std::size_t(std::max_element(best_.begin(), best_.end()) - best_.begin());
        for (std::uint64_t d = g; d < best_[most]; d *= 2) {
            std::vector<std::uint64_t> next = best_;
            next[most] -= d;
            next[i] += d;
            simulate(next);
        }
    }

    const std::vector<std::uint64_t>& best() const { return best_; }
    double best_ms() const { return best_ms_; }
    /// The least simulated makespan of the splits that gave device i work (infinity: none).
    /// The least simulated makespan of the splits that gave work to device i and to every
    /// device of the best (infinity: none).
    double with(std::size_t i) const {
        double m = std::numeric_limits<double>::infinity();
        for (const auto& [working, ms] : seen_) {
            bool all = working[i];
            for (std::size_t j = 0; j < best_.size() && all; ++j) all = best_[j] == 0 || working[j];
            if (all) m = std::min(m, ms);
        }
        return m;
    }

private:
    static std::size_t devices_of(const std::vector<std::uint64_t>& u) {
        return std::size_t(std::count_if(u.begin(), u.end(), [](std::uint64_t x) { return x > 0; }));
    }
    /// The simulated makespan of `units` (the best is not touched).
    double simulate(const std::vector<std::uint64_t>& units) {
        ++evaluations_;
        const double m = simulate_split(models_, job_, units, ranks_, declare_).makespan_s;
        std::vector<bool> working(units.size());
        for (std::size_t i = 0; i < units.size(); ++i) working[i] = units[i] > 0;
        seen_.emplace_back(std::move(working), m);
        return m;
    }
    bool better(double m, std::size_t size) const {
        if (best_.empty()) return true;
        if (size < best_size_) return m <= best_ms_ * keep_;
        if (size > best_size_) return m * keep_ < best_ms_;
        return m < best_ms_;
    }

    const std::vector<CostModel>& models_;
    const SplitJob& job_;
    const std::vector<int>& ranks_;
    const DeclareSlices& declare_;
    double keep_;
    std::vector<std::pair<std::vector<bool>, double>> seen_;
    std::vector<std::uint64_t> best_;
    double best_ms_ = std::numeric_limits<double>::infinity();
    std::size_t best_size_ = 0;
    std::size_t evaluations_ = 0;
};

/// Why device `i` gets no work in a split of simulated makespan `ms`.
std::string simulated_reason(double with, double ms, double join_margin) {
    if (!std::isfinite(with)) return "left out: no simulated split with it could take the job";
    if (with < ms)
        return "left out: with it the simulated makespan is " + format_seconds(with, 4) + " against " +
               format_seconds(ms, 4) + " without it, a gain within the " +
               std::to_string(int(std::lround(join_margin * 100))) + " % join margin";
    return "left out: with it the simulated makespan is " + format_seconds(with, 4) + " against " +
           format_seconds(ms, 4) + " without it (its transfers and fixed costs delay the job)";
}

}  // namespace

SplitResult optimise_simulated_split(const std::vector<CostModel>& models, const SplitJob& job,
                                     const std::vector<int>& ranks, const DeclareSlices& declare) {
    const std::size_t n = models.size();
    std::vector<std::vector<std::uint64_t>> candidates;
    candidates.push_back(optimise_split(models, job).units);  // the analytic optimum, as the job says
    SplitJob serial = job;
    serial.serial_sends = true;  // and with rank 0's sends one after another
    candidates.push_back(optimise_split(models, serial).units);
    for (std::size_t i = 0; i < n; ++i) {  // each device alone
        std::vector<std::uint64_t> alone(n, 0);
        alone[i] = job.total_units;
        candidates.push_back(std::move(alone));
    }
    // Fewer devices first, so that the join margin compares a larger set with the best smaller.
    std::stable_sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
        auto size = [](const auto& u) {
            return std::count_if(u.begin(), u.end(), [](std::uint64_t x) { return x > 0; });
        };
        return size(a) < size(b);
    });
    SimulatedSearch search(models, job, ranks, declare);
    for (const auto& c : candidates) search.consider(c);
    if (search.best().empty()) throw Error("split: no device can take the job under its model");
    search.refine(400);
    SplitResult r = simulate_split(models, job, search.best(), ranks, declare);
    for (std::size_t i = 0; i < n; ++i) {
        if (r.units[i] != 0) continue;
        search.probe_join(i);
        r.reasons[i] = simulated_reason(search.with(i), r.makespan_s, job.join_margin);
    }
    return r;
}

}  // namespace worksize
