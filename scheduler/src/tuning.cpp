// Local-size candidates and the analytic wave/occupancy ranking of local sizes and of kernel
// parameter sets (see tuning.hpp and docs/models.md); the tuner's search, its checks and the
// record it stores are tuning_search.cpp.
#include "worksize/scheduler/tuning.hpp"

#include <algorithm>
#include <random>
#include <cmath>
#include <limits>

namespace worksize {

namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

std::uint64_t or_default(std::uint64_t v, std::uint64_t dflt) { return v ? v : dflt; }

/// Sizes allowed along one dimension: divisors of `global` within `limit`, or every size up
/// to `limit` when `any` (non-uniform groups or bounds-checked kernels).
std::vector<std::uint64_t> sizes_1d(std::uint64_t global, std::uint64_t limit, bool any) {
    std::vector<std::uint64_t> out;
    const std::uint64_t top = any ? limit : std::min(global, limit);
    for (std::uint64_t d = 1; d <= top; ++d)
        if (any || global % d == 0) out.push_back(d);
    return out;
}

/// The figures rank_candidates() scores every candidate with: the device's and the kernel's,
/// and the occupancy parameters.
struct Scoring {
    const KernelLimits& limits;
    Priority priority;
    const OccupancyParams& occ;
    bool gpu;
    std::uint64_t tpc, max_groups, warp, local_mem, cus;
    double simd, sat, gpu_lo, gpu_hi, coalesce_x, cpu_lo, cpu_hi;

    /// The time of `s.candidate` on a GPU, relative, before the size and shape factors, which
    /// it sets in `s` with the warp efficiency, the resident groups and the waves.
    double gpu_time(CandidateScore& s, std::uint64_t items, bool two_d) const;
    /// The same on a CPU device.
    double cpu_time(CandidateScore& s, std::uint64_t items, bool two_d) const;
};

Scoring scoring(const DeviceInfo& device, const KernelLimits& limits, Priority priority,
                const OccupancyParams& occ) {
    const bool gpu = device.type == DeviceType::gpu;
    const std::uint64_t tpc = or_default(occ.threads_per_cu, gpu ? 2048 : std::max<std::uint64_t>(1, device.max_work_group_size));
    const std::uint64_t max_groups = or_default(occ.max_groups_per_cu, gpu ? 32 : 1);
    const std::uint64_t warp = std::max<std::uint64_t>(1, or_default(limits.preferred_multiple, device.preferred_wg_multiple));
    const std::uint64_t local_mem = or_default(limits.device_local_mem_bytes, device.local_mem_bytes);
    const std::uint64_t cus = std::max<std::uint32_t>(1, device.compute_units);
    // SIMD lanes of one CPU core (PEs/CU from the native vector width), at least 2.
    const double simd = double(std::max<std::uint32_t>(2, device.pes_per_cu));
    // GPU: threads an SM needs in flight to hide latency (a share of its thread limit).
    const double sat = std::max(1.0, occ.saturation * double(tpc));
    // GPU group-size sweet spot, in warps of the preferred multiple: 4-8 warps (128-256 threads
    // at 32). Below it the per-SM group limit caps occupancy and each barrier has little to
    // overlap; above it one barrier stalls more warps, and registers / local memory are held
    // in larger blocks (fewer resident groups, a longer tail).
    const double gpu_lo = double(occ.gpu_group_warps_lo * warp), gpu_hi = double(occ.gpu_group_warps_hi * warp);
    // GPU coalescing: consecutive work-items in x read consecutive words; a row of fewer than
    // half a warp (16 floats = 64 B, two 32-byte sectors) wastes memory transactions.
    const double coalesce_x = std::max(1.0, double(warp) / 2);
    // CPU (PoCL pthread-like: a work-group is one task on one core, its items a loop the
    // compiler vectorises along x): a group of items near the vector width, from half of it
    // (LLVM prefers 256-bit vectors on AVX-512 cores, i.e. half the native float lanes) to the
    // full width. Smaller groups leave lanes idle and pay the per-group overhead more often;
    // larger ones grow the per-group context (work-item loops with local arrays) out of L1.
    const double cpu_lo = std::max(1.0, simd / 2), cpu_hi = simd;
    return {limits, priority, occ, gpu, tpc, max_groups, warp, local_mem, cus,
            simd, sat, gpu_lo, gpu_hi, coalesce_x, cpu_lo, cpu_hi};
}

double Scoring::gpu_time(CandidateScore& s, std::uint64_t items, bool two_d) const {
    const Candidate& c = s.candidate;
    const std::uint64_t padded = ceil_div(items, warp) * warp;
    s.warp_efficiency = double(items) / double(padded);
    std::uint64_t resident = std::min(tpc / padded, max_groups);
    const std::uint64_t lm = limits.local_mem_fixed_bytes + limits.local_mem_per_item_bytes * items;
    if (lm > 0 && local_mem > 0) resident = std::min(resident, local_mem / lm);
    s.resident = std::max<std::uint64_t>(1, resident);
    const std::uint64_t slots = cus * s.resident;
    s.waves = ceil_div(c.groups, slots);
    const std::uint64_t last = c.groups - (s.waves - 1) * slots;
    s.last_wave_efficiency = double(last) / double(slots);
    const double full_wave = std::max(1.0, double(s.resident * padded) / sat);
    const double last_wave = std::max(1.0, double(ceil_div(last, cus) * padded) / sat);
    const double time = double(s.waves - 1) * full_wave + last_wave;
    const double it = double(items);
    s.size_factor = it < gpu_lo ? std::pow(gpu_lo / it, 0.25 * occ.size_weight)
                  : it > gpu_hi ? std::pow(it / gpu_hi, 0.25 * occ.size_weight) : 1.0;
    double shape = std::pow(std::max(1.0, coalesce_x / double(c.local.x)), 0.5 * occ.shape_weight);
    if (two_d) {
        if (priority == Priority::x) {
            // x-priority: a warp spanning several rows splits its accesses.
            const double rows = std::ceil(double(std::min(warp, items)) / double(c.local.x));
            shape *= std::pow(rows, 0.5 * occ.shape_weight);
        } else {
            // y-priority: rows share cache, so the tallest group whose x still coalesces.
            shape *= std::pow(std::max(1.0, double(c.local.x) / coalesce_x), 0.125 * occ.shape_weight);
        }
    }
    s.shape_factor = shape;
    return time;
}

double Scoring::cpu_time(CandidateScore& s, std::uint64_t items, bool two_d) const {
    const Candidate& c = s.candidate;
    // One group per core at a time; the time is the busiest core's items (the last
    // wave's imbalance: few groups per core leave cores idle), scaled by the group-size
    // prior around the SIMD width.
    s.resident = 1;
    s.waves = ceil_div(c.groups, cus);
    const std::uint64_t last = c.groups - (s.waves - 1) * cus;
    s.last_wave_efficiency = double(last) / double(cus);
    const double per_core = double(c.launch_global.x) * double(c.launch_global.y) / double(cus);
    const double time = std::max(1.0, double(s.waves) * double(items) / std::max(1.0, per_core));
    const double it = double(items);
    s.size_factor = it < cpu_lo ? std::pow(cpu_lo / it, 0.5 * occ.size_weight)
                  : it > cpu_hi ? std::pow(it / cpu_hi, 0.1 * occ.size_weight) : 1.0;
    if (two_d) {
        if (priority == Priority::x) {
            // The vectorised loop runs along x: a group that is not one row splits it.
            const double rows = std::ceil(std::min(simd, it) / double(c.local.x));
            s.shape_factor = std::pow(rows, 0.5 * occ.shape_weight);
        } else {
            s.shape_factor = std::pow(std::max(1.0, double(c.local.x) / double(c.local.y)),
                                      0.25 * occ.shape_weight);
        }
    }
    return time;
}

}  // namespace

std::vector<Candidate> local_candidates(const DeviceInfo& device, const KernelLimits& limits,
                                        GlobalSize global, int dims) {
    if (dims != 1 && dims != 2) throw InvalidArgument("local_candidates: dims must be 1 or 2");
    if (global.x == 0 || global.y == 0) throw InvalidArgument("local_candidates: global size is 0");
    if (dims == 1 && global.y != 1) throw InvalidArgument("local_candidates: 1-D global with y != 1");
    std::uint64_t max_wg = device.max_work_group_size;
    if (limits.max_work_group_size) max_wg = max_wg ? std::min(max_wg, limits.max_work_group_size)
                                                    : limits.max_work_group_size;
    if (max_wg == 0) max_wg = 1;
    const std::uint64_t lim_x = std::min(max_wg, or_default(device.max_work_item_sizes[0], max_wg));
    const std::uint64_t lim_y = dims == 1 ? 1 : std::min(max_wg, or_default(device.max_work_item_sizes[1], max_wg));
    const std::uint64_t local_mem = or_default(limits.device_local_mem_bytes, device.local_mem_bytes);
    const bool any = limits.supports_non_uniform || limits.bounds_checked;

    std::vector<Candidate> out;
    const auto xs = sizes_1d(global.x, lim_x, any);
    const auto ys = sizes_1d(global.y, lim_y, any);
    for (std::uint64_t y : ys) {
        for (std::uint64_t x : xs) {
            if (x * y > max_wg) break;
            const std::uint64_t lm = limits.local_mem_fixed_bytes + limits.local_mem_per_item_bytes * x * y;
            if (local_mem > 0 && lm > local_mem) continue;  // 0: unknown, not checked
            Candidate c;
            c.local = {x, y};
            c.launch_global = global;
            if (limits.bounds_checked && !limits.supports_non_uniform)
                c.launch_global = {ceil_div(global.x, x) * x, ceil_div(global.y, y) * y};
            c.groups = ceil_div(global.x, x) * ceil_div(global.y, y);
            out.push_back(c);
        }
    }
    return out;
}

std::vector<CandidateScore> rank_candidates(const DeviceInfo& device, const KernelLimits& limits,
                                            const std::vector<Candidate>& candidates,
                                            Priority priority, const OccupancyParams& occ) {
    const Scoring sc = scoring(device, limits, priority, occ);
    std::vector<CandidateScore> out;
    for (const Candidate& c : candidates) {
        CandidateScore s;
        s.candidate = c;
        const std::uint64_t items = c.local.x * c.local.y;
        const bool two_d = c.local.y > 1 || c.launch_global.y > 1;
        const double time = sc.gpu ? sc.gpu_time(s, items, two_d) : sc.cpu_time(s, items, two_d);
        s.predicted_rel = time * s.size_factor * s.shape_factor;
        out.push_back(s);
    }
    double best = std::numeric_limits<double>::infinity();
    for (const auto& s : out) best = std::min(best, s.predicted_rel);
    for (auto& s : out) s.predicted_rel /= best;
    std::stable_sort(out.begin(), out.end(), [&](const CandidateScore& a, const CandidateScore& b) {
        if (a.predicted_rel != b.predicted_rel) return a.predicted_rel < b.predicted_rel;
        const auto la = a.candidate.local, lb = b.candidate.local;
        if (la.x * la.y != lb.x * lb.y) return la.x * la.y > lb.x * lb.y;
        return priority == Priority::x ? la.x > lb.x : la.y > lb.y;
    });
    return out;
}

const char* to_string(SearchStrategy s) {
    return s == SearchStrategy::exhaustive ? "exhaustive" : "guided";
}

std::vector<ParamScore> rank_param_candidates(const DeviceInfo& device, const std::vector<ParamCandidate>& candidates,
                                              const OccupancyParams& occ) {
    const bool gpu = device.type == DeviceType::gpu;
    const std::uint64_t tpc = or_default(occ.threads_per_cu, gpu ? 2048 : std::max<std::uint64_t>(1, device.max_work_group_size));
    const std::uint64_t max_groups = or_default(occ.max_groups_per_cu, gpu ? 32 : 1);
    const std::uint64_t cus = std::max<std::uint32_t>(1, device.compute_units);
    const double sat = std::max(1.0, occ.saturation * double(tpc));
    std::vector<ParamScore> out;
    for (const ParamCandidate& c : candidates) {
        if (!c.invalid.empty()) continue;
        ParamScore s;
        s.candidate = c;
        const std::uint64_t items = std::max<std::uint64_t>(1, c.group.x * std::max<std::uint64_t>(1, c.group.y));
        const std::uint64_t groups = std::max<std::uint64_t>(1, c.groups);
        // The tile's loads from global memory, per output: the larger the tile, the fewer.
        const double traffic = 1.0 + 8.0 * c.traffic;
        // Every CU computes its groups; the busiest has ceil(groups / CUs) of them (imbalance).
        const std::uint64_t per_cu = ceil_div(groups, cus);
        const double imbalance = double(per_cu * cus) / double(groups);
        double time = 0;
        if (gpu) {
            std::uint64_t resident = std::min(tpc / items, max_groups);
            if (c.local_mem_bytes > 0 && device.local_mem_bytes > 0)
                resident = std::min(resident, device.local_mem_bytes / c.local_mem_bytes);
            s.resident = std::max<std::uint64_t>(1, resident);
            s.occupancy = double(s.resident * items) / double(tpc);
            // Latency is hidden by the work-items in flight on a CU (its resident groups, or
            // fewer when it has fewer groups) and by each one's independent outputs.
            const double in_flight = double(std::min(s.resident, per_cu) * items);
            const double hiding = std::min(1.0, in_flight * std::min(4.0, std::sqrt(double(c.outputs_per_item))) / sat);
            time = imbalance * traffic / hiding;
        } else {
            s.resident = 1;
            s.occupancy = 1;
            time = imbalance * traffic;
        }
        s.predicted_rel = time;
        out.push_back(s);
    }
    if (out.empty()) return out;
    const double best = std::min_element(out.begin(), out.end(), [](const auto& a, const auto& b) {
                            return a.predicted_rel < b.predicted_rel;
                        })->predicted_rel;
    for (auto& s : out) s.predicted_rel /= best;
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.predicted_rel < b.predicted_rel; });
    return out;
}

std::vector<std::size_t> param_search_order(std::size_t n, const TuneOptions& options, std::uint64_t seed) {
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    const std::size_t budget = guided_budget(n, options);
    if (options.strategy == SearchStrategy::exhaustive || budget >= n) return order;
    // The model's best half of the budget, then a random sample of the rest.
    const std::size_t top = std::max<std::size_t>(1, budget / 2);
    std::vector<std::size_t> rest(order.begin() + std::ptrdiff_t(top), order.end());
    std::mt19937_64 rng(seed);
    std::shuffle(rest.begin(), rest.end(), rng);
    order.resize(top);
    order.insert(order.end(), rest.begin(), rest.begin() + std::ptrdiff_t(budget - top));
    return order;
}

std::size_t guided_budget(std::size_t n, const TuneOptions& o) {
    const auto frac = std::size_t(std::floor(o.budget_fraction * double(n)));
    return std::min(n, std::max(o.min_budget, frac));
}

}  // namespace worksize
