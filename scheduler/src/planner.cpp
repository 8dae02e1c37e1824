// The work-size planner: compute classes and the correction k, the paper's pair rule (the split
// strategies themselves are in strategy.cpp), rounding of shares to
// whole rows or items, the paper's local-size rules with their fallbacks, and make_plan which
// puts them together. METHOD.md section 1 is the specification; docs/method.md says how it is
// implemented here and which ambiguities were decided how.
#include "worksize/scheduler/planner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <sstream>

#include "worksize/scheduler/local_policy.hpp"
#include "worksize/scheduler/strategy.hpp"

namespace worksize {

namespace {

constexpr double small_max_ops = 4e8;
constexpr double large_min_ops = 8e11;

/// The smaller of two limits, where 0 means "unknown" (no constraint).
std::uint64_t min_known(std::uint64_t a, std::uint64_t b) {
    if (a == 0) return b == 0 ? std::numeric_limits<std::uint64_t>::max() : b;
    if (b == 0) return a;
    return std::min(a, b);
}

/// Work-group size limit of a device (unbounded when unknown).
std::uint64_t wg_limit(const DeviceInfo& dev) {
    return dev.max_work_group_size == 0 ? std::numeric_limits<std::uint64_t>::max()
                                        : dev.max_work_group_size;
}

std::string gib(double bytes) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
    return buf;
}

std::string size_text(GlobalSize g, int dims) {
    return dims == 2 ? std::to_string(g.x) + "x" + std::to_string(g.y) : std::to_string(g.x);
}

/// Product with overflow detection.
bool mul_overflows(std::uint64_t a, std::uint64_t b) {
    return a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a;
}

}  // namespace

ComputeClass classify(double ops) {
    if (ops <= small_max_ops) return ComputeClass::small;
    if (ops >= large_min_ops) return ComputeClass::large;
    return ComputeClass::medium;
}

double correction_k(ComputeClass c) {
    switch (c) {
        case ComputeClass::large: return 0.25;
        case ComputeClass::medium: return 0.75;
        case ComputeClass::small: return 1.25;
    }
    return 1.0;
}

double paper_pair_share(std::uint64_t pes_small, std::uint64_t pes_large, double k) {
    if (pes_small > pes_large) return 1.0 - paper_pair_share(pes_large, pes_small, k);
    if (pes_small == 0) return pes_large == 0 ? 0.5 : 0.0;
    // Closer than 2:3 (PE_S / PE_L > 2/3): the devices count as equal. Exact integer compare.
    const unsigned __int128 lhs = static_cast<unsigned __int128>(pes_small) * 3u;
    const unsigned __int128 rhs = static_cast<unsigned __int128>(pes_large) * 2u;
    if (lhs > rhs) return 0.5;
    const double ratio = double(pes_small) / (double(pes_small) + double(pes_large));
    // Decision: the smaller device never gets more than the larger one. With PE_S/PE_L <= 2/3
    // the ratio is <= 0.4 and k <= 1.25, so this only guards against rounding and custom k.
    return std::clamp(ratio * k, 0.0, 0.5);
}

namespace {

/// The sum of `weights`. @throws InvalidArgument if empty, negative, not finite or all zero.
double checked_weight_sum(const std::vector<double>& weights) {
    if (weights.empty()) throw InvalidArgument("rounding: no weights");
    double sum = 0.0;
    for (double w : weights) {
        if (!std::isfinite(w) || w < 0.0)
            throw InvalidArgument("rounding: weights must be finite and non-negative");
        sum += w;
    }
    if (!(sum > 0.0)) throw InvalidArgument("rounding: weights sum to zero");
    return sum;
}

}  // namespace

std::vector<std::uint64_t> round_to_unit_multiples(const std::vector<double>& weights, std::uint64_t total_units,
                                                   const std::vector<std::uint64_t>& multiples) {
    const double sum = checked_weight_sum(weights);
    const std::size_t n = weights.size();
    if (multiples.size() != n)
        throw InvalidArgument("rounding: " + std::to_string(multiples.size()) + " unit multiples for " +
                              std::to_string(n) + " weights");
    for (auto m : multiples)
        if (m == 0) throw InvalidArgument("rounding: unit multiples must be at least 1");
    // 1. Each device: the multiple nearest to its quota.
    std::vector<double> quota(n);
    std::vector<std::uint64_t> units(n, 0);
    std::uint64_t given = 0;
    for (std::size_t i = 0; i < n; ++i) {
        quota[i] = weights[i] / sum * double(total_units);
        units[i] = std::uint64_t(std::llround(quota[i] / double(multiples[i]))) * multiples[i];
        given += units[i];
    }
    // 2. Too much: take whole multiples from the device furthest above its quota (in multiples)
    //    whose multiple is not more than the excess; too little: give them to the one furthest
    //    below. Ties: the lower index.
    auto pick = [&](std::uint64_t room, bool above) {
        std::size_t best = n;
        double key_best = -std::numeric_limits<double>::infinity();
        for (std::size_t i = 0; i < n; ++i) {
            if (weights[i] <= 0.0 || multiples[i] > room || (above && units[i] < multiples[i])) continue;
            const double off = (double(units[i]) - quota[i]) / double(multiples[i]);
            const double key = above ? off : -off;
            if (key > key_best) {
                key_best = key;
                best = i;
            }
        }
        return best;
    };
    while (given > total_units) {
        const std::size_t i = pick(given - total_units, true);
        if (i == n) break;
        units[i] -= multiples[i];
        given -= multiples[i];
    }
    while (given < total_units) {
        const std::size_t i = pick(total_units - given, false);
        if (i == n) break;
        units[i] += multiples[i];
        given += multiples[i];
    }
    // 3. A rest smaller than every multiple that could still move: the largest weight takes it
    //    (or gives it back, then the largest slices), unaligned.
    const auto big = std::size_t(std::max_element(weights.begin(), weights.end()) - weights.begin());
    if (given < total_units) units[big] += total_units - given;
    for (std::uint64_t excess = given > total_units ? given - total_units : 0; excess > 0;) {
        const auto j = units[big] > 0 ? big : std::size_t(std::max_element(units.begin(), units.end()) - units.begin());
        const std::uint64_t take = std::min(excess, units[j]);
        units[j] -= take;
        excess -= take;
    }
    return units;
}

std::vector<std::uint64_t> round_to_units(const std::vector<double>& weights,
                                          std::uint64_t total_units, std::uint64_t granule) {
    if (granule == 0) throw InvalidArgument("rounding: granule must be at least 1");
    const double sum = checked_weight_sum(weights);

    const std::size_t n = weights.size();
    const std::uint64_t granules = total_units / granule;
    const std::uint64_t partial = total_units % granule;

    // Largest remainder over whole granules; ties go to the lower index (deterministic).
    std::vector<std::uint64_t> g(n, 0);
    std::vector<double> rem(n, 0.0);
    std::uint64_t given = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double quota = weights[i] / sum * double(granules);
        double fl = std::floor(quota);
        if (fl > double(granules)) fl = double(granules);
        g[i] = static_cast<std::uint64_t>(fl);
        rem[i] = quota - fl;
        given += g[i];
    }
    // Guard against floating error pushing the floors above the total.
    while (given > granules) {
        std::size_t j = 0;
        for (std::size_t i = 1; i < n; ++i)
            if (g[i] > 0 && (g[j] == 0 || rem[i] < rem[j])) j = i;
        --g[j];
        --given;
    }
    std::vector<std::size_t> idx(n);
    std::iota(idx.begin(), idx.end(), std::size_t{0});
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
        if (rem[a] != rem[b]) return rem[a] > rem[b];
        return weights[a] > weights[b];
    });
    for (std::size_t j = 0; given < granules; j = (j + 1) % n) {
        if (weights[idx[j]] > 0.0) {
            ++g[idx[j]];
            ++given;
        }
    }

    std::vector<std::uint64_t> units(n);
    for (std::size_t i = 0; i < n; ++i) units[i] = g[i] * granule;
    if (partial > 0) {
        // The last partial granule goes to the device with the largest weight (lowest index
        // on ties): it affects that device's share least.
        const auto big = std::max_element(weights.begin(), weights.end()) - weights.begin();
        units[static_cast<std::size_t>(big)] += partial;
    }
    return units;
}

std::vector<std::uint64_t> divisors_within(std::uint64_t global, std::uint64_t limit) {
    std::vector<std::uint64_t> out;
    if (global == 0 || limit == 0) return out;
    const std::uint64_t top = std::min(global, limit);
    // Cheapest of: walk 1..top, or walk 1..sqrt(global) taking both halves of each pair.
    if (top <= (1u << 20) || top / 2 <= global / top) {
        for (std::uint64_t d = 1; d <= top; ++d)
            if (global % d == 0) out.push_back(d);
        return out;
    }
    for (std::uint64_t d = 1; d <= global / d; ++d) {
        if (global % d != 0) continue;
        if (d <= limit) out.push_back(d);
        const std::uint64_t e = global / d;
        if (e != d && e <= limit) out.push_back(e);
    }
    std::sort(out.begin(), out.end());
    return out;
}

LocalSize paper_local_1d(const DeviceInfo& dev, std::uint64_t global, std::string* rule) {
    const std::uint64_t limit = min_known(wg_limit(dev), dev.max_work_item_sizes[0]);
    const auto divs = divisors_within(global, limit);
    if (divs.empty()) {
        if (rule) *rule = "none: no work";
        return {};
    }
    const std::uint64_t pes = dev.pes_per_cu;
    for (std::uint64_t d : divs) {
        if (d >= pes) {
            if (rule)
                *rule = "paper-1d: smallest divisor >= PEs/CU (" + std::to_string(pes) + ")";
            return {d, 1};
        }
    }
    if (rule)
        *rule = "paper-1d fallback: largest divisor (none >= PEs/CU " + std::to_string(pes) +
                " within the limits)";
    return {divs.back(), 1};
}

LocalSize paper_local_2d(const DeviceInfo& dev, GlobalSize global, Priority priority,
                         std::string* rule) {
    const std::uint64_t wg = wg_limit(dev);
    const auto xs = divisors_within(global.x, min_known(wg, dev.max_work_item_sizes[0]));
    const auto ys = divisors_within(global.y, min_known(wg, dev.max_work_item_sizes[1]));
    if (xs.empty() || ys.empty()) {
        if (rule) *rule = "none: no work";
        return {};
    }
    bool found = false;
    LocalSize best{};
    for (std::uint64_t x : xs) {
        for (std::uint64_t y : ys) {
            const std::uint64_t xy = x * y;  // both <= limits, no overflow in practice
            if (mul_overflows(x, y) || xy > wg || xy >= 1024 || xy % 16 != 0) continue;
            const std::uint64_t first = priority == Priority::x ? x : y;
            const std::uint64_t best_first = priority == Priority::x ? best.x : best.y;
            if (!found || first > best_first ||
                (first == best_first && xy > best.x * best.y)) {
                best = {x, y};
                found = true;
            }
        }
    }
    if (found) {
        if (rule)
            *rule = std::string("paper-2d ") + to_string(priority) + "-priority: largest " +
                    to_string(priority) + ", then largest x*y (x*y < 1024, multiple of 16)";
        return best;
    }
    if (priority == Priority::x) {
        if (rule) *rule = "paper-2d fallback: no pair passes; (largest settable x, 1)";
        return {xs.back(), 1};
    }
    if (rule) *rule = "paper-2d fallback: no pair passes; (1, largest settable y)";
    return {1, ys.back()};
}

std::uint64_t pad_quantum(const DeviceInfo& dev) {
    const std::uint64_t limit = min_known(wg_limit(dev), dev.max_work_item_sizes[0]);
    std::uint64_t q = 1;
    while (q < dev.pes_per_cu && q <= limit / 2) q *= 2;
    return q;
}

namespace {
std::uint64_t round_up(std::uint64_t a, std::uint64_t m) { return m <= 1 ? a : (a + m - 1) / m * m; }
}  // namespace

GlobalSize rule_global(const DeviceInfo& dev, GlobalSize slice, bool pad) {
    if (pad && slice.x > 0) slice.x = round_up(slice.x, pad_quantum(dev));
    return slice;
}

GlobalSize launch_global(const DeviceInfo& dev, GlobalSize slice, LocalSize local, int dims, bool pad) {
    if (!pad || slice.x == 0 || slice.y == 0) return slice;
    if (local.is_null()) return rule_global(dev, slice, true);
    return {round_up(slice.x, local.x), dims == 2 ? round_up(slice.y, local.y) : slice.y};
}

namespace {
/// Why device `i` got no units: a weight of 0 (the strategy, or given weights, leave it out) or
/// a share under one granule.
std::string idle_note(const std::vector<double>& weights, std::size_t i, std::uint64_t total_units,
                      std::uint64_t granule, const std::string& strategy) {
    double sum = 0;
    for (double w : weights) sum += w;
    if (i >= weights.size() || weights[i] <= 0 || sum <= 0)
        return "no work: the " + (strategy.empty() ? std::string("given") : "'" + strategy + "'") +
               " split gives it none";
    const double share = weights[i] / sum * double(total_units);
    std::ostringstream o;
    o.precision(3);
    o << "no work: its share, " << share << " units, is under the split's granule of " << granule << " units";
    return o.str();
}
}  // namespace

std::uint64_t split_granule(const std::vector<DeviceInfo>& devices, const PlanRequest& request) {
    std::uint64_t granule = request.granule;
    if (!request.align_1d_to_groups || request.kernel.dims != 1 || request.local_policy == LocalPolicy::null)
        return granule;
    // Whole work-groups (METHOD.md 1.1 allows it): a power of two >= the largest PEs per CU,
    // within every device's work-group limit, so the 1-D rule finds a divisor >= PEs/CU on
    // every slice instead of falling back to tiny local sizes on awkward slice lengths.
    std::uint64_t pes = 1, limit = ~std::uint64_t{0};
    for (const auto& d : devices) {
        pes = std::max<std::uint64_t>(pes, d.pes_per_cu);
        if (d.max_work_group_size > 0) limit = std::min(limit, d.max_work_group_size);
        if (d.max_work_item_sizes[0] > 0) limit = std::min(limit, d.max_work_item_sizes[0]);
    }
    std::uint64_t g = 1;
    while (g < pes && g * 2 <= limit) g *= 2;
    const std::uint64_t total = request.global.x;
    if (total < g * devices.size()) return granule;  // too small to align: keep whole items
    return std::lcm(granule, g);
}

std::string library_local_rule(const std::string& backend) {
    std::string r = "chosen by ";
    r.append(backend).append(" (library backend)");
    return r;
}

namespace {

/// Refuses a request that cannot be planned: no devices, a kernel of other than 1 or 2
/// dimensions, a size that is empty, of the wrong shape or too large, no iterations, a granule of
/// 0, or backends that are not one per device.
void check_plan_request(const std::vector<DeviceInfo>& devices, const PlanRequest& request) {
    const KernelDescriptor& kd = request.kernel;
    const GlobalSize g = request.global;
    if (devices.empty()) throw InvalidArgument("plan: no devices to plan for");
    if (kd.dims != 1 && kd.dims != 2)
        throw InvalidArgument("plan: kernel '" + kd.name + "' has " + std::to_string(kd.dims) +
                              " dimensions; only 1-D and 2-D NDRanges are supported");
    if (g.x == 0 || g.y == 0)
        throw InvalidArgument("plan: problem size " + size_text(g, 2) +
                              " has no work items; sizes must be positive");
    if (kd.dims == 1 && g.y != 1)
        throw InvalidArgument("plan: kernel '" + kd.name + "' is 1-D but the size is " +
                              size_text(g, 2));
    if (mul_overflows(g.x, g.y))
        throw InvalidArgument("plan: problem size " + size_text(g, 2) + " overflows");
    // Shares are computed in double and slices padded to whole work-groups: beyond 2^53 work-items
    // neither is exact (at 2^64 - 1 the rounding of the shares wrapped and never ended).
    if (g.items() > kMaxPlanItems)
        throw InvalidArgument("plan: problem size " + size_text(g, kd.dims) + " has more than 2^53 (" +
                              std::to_string(kMaxPlanItems) + ") work-items");
    if (request.iterations == 0) throw InvalidArgument("plan: iterations must be at least 1");
    if (request.granule == 0) throw InvalidArgument("plan: granule must be at least 1");
    if (!request.backends.empty() && request.backends.size() != devices.size())
        throw InvalidArgument("plan: " + std::to_string(request.backends.size()) + " backends for " +
                              std::to_string(devices.size()) + " devices");
}

/// Refuses a problem that the devices' memory cannot hold: all of it on all devices together, or
/// its smallest slice on the largest device. Only checked when every device reports its memory.
void check_plan_memory(const std::vector<DeviceInfo>& devices, const PlanRequest& request) {
    const KernelDescriptor& kd = request.kernel;
    const GlobalSize g = request.global;
    const double items = double(g.items());
    const bool mem_known = std::all_of(devices.begin(), devices.end(),
                                       [](const DeviceInfo& d) { return d.global_mem_bytes > 0; });
    if (mem_known) {
        double sum_mem = 0.0, max_mem = 0.0;
        for (const auto& d : devices) {
            sum_mem += double(d.global_mem_bytes);
            max_mem = std::max(max_mem, double(d.global_mem_bytes));
        }
        const double per_item = kd.bytes_in_per_item + kd.bytes_out_per_item;
        const double need = per_item * items + kd.bytes_in_fixed;
        if (need > sum_mem)
            throw InvalidArgument("plan: '" + kd.name + "' over a global range of " + size_text(g, kd.dims) +
                                  " work-items needs " + gib(need) + " but the " +
                                  std::to_string(devices.size()) + " device(s) hold " +
                                  gib(sum_mem) + " together");
        const double unit_items = kd.dims == 2 ? double(g.x) : 1.0;
        const double one_unit = per_item * unit_items * double(request.granule) + kd.bytes_in_fixed;
        if (one_unit > max_mem)
            throw InvalidArgument(
                std::string("plan: ") + (kd.dims == 2 ? "width " + std::to_string(g.x) : "size") +
                " of '" + kd.name + "' needs " + gib(one_unit) + " on a single device for its " +
                "smallest slice, more than the largest device's " + gib(max_mem));
    }
}

/// The weights of the split: the request's own (one per device) or its strategy's for the
/// compute class.
std::vector<double> plan_weights(const std::vector<DeviceInfo>& devices, const PlanRequest& request,
                                 ComputeClass compute_class) {
    std::vector<double> weights;
    if (request.weights) {
        weights = *request.weights;
        if (weights.size() != devices.size())
            throw InvalidArgument("plan: " + std::to_string(weights.size()) +
                                  " weights given for " + std::to_string(devices.size()) +
                                  " devices");
    } else {
        weights = split_weights(devices, request.strategy, compute_class);
    }
    return weights;
}

/// Each device's units: the weights rounded to whole granules, or to each device's unit multiple
/// (made a multiple of the granule too) where the request gives them.
std::vector<std::uint64_t> plan_units(const std::vector<DeviceInfo>& devices, const PlanRequest& request,
                                      const std::vector<double>& weights, std::uint64_t total_units,
                                      std::uint64_t granule) {
    std::vector<std::uint64_t> units;
    if (request.unit_multiples.empty()) {
        units = round_to_units(weights, total_units, granule);
    } else {
        if (request.unit_multiples.size() != devices.size())
            throw InvalidArgument("plan: " + std::to_string(request.unit_multiples.size()) + " unit multiples for " +
                                  std::to_string(devices.size()) + " devices");
        std::vector<std::uint64_t> multiples;
        for (auto m : request.unit_multiples) multiples.push_back(std::lcm(granule, std::max<std::uint64_t>(m, 1)));
        units = round_to_unit_multiples(weights, total_units, multiples);
    }
    return units;
}

/// The local size of slice `a` (with work) on device `i`, `dev`, and the rule that chose it: the
/// library's own for a library backend, the kernel's required one, else the plan's policy.
void choose_local(Assignment& a, const DeviceInfo& dev, std::size_t i, const PlanRequest& request,
                  const Plan& plan, const LocalSizePolicy& local) {
    const KernelDescriptor& kd = request.kernel;
    if (a.backend != "kernel") {
        a.local = {};  // the library's own work-groups, on the slice as it is
        a.local_rule = library_local_rule(a.backend);
    } else if (!request.required_local.is_null()) {
        const LocalSize r = request.required_local;
        const std::uint64_t items = r.x * (kd.dims == 2 ? std::max<std::uint64_t>(r.y, 1) : 1);
        if (dev.max_work_group_size > 0 && items > dev.max_work_group_size)
            throw InvalidArgument("kernel '" + kd.name + "' requires work-groups of " + std::to_string(items) +
                                  " items; device " + std::to_string(i) + " (" + dev.name + ") allows at most " +
                                  std::to_string(dev.max_work_group_size));
        a.local = kd.dims == 2 ? r : LocalSize{r.x, 1};
        a.local_rule = kRequiredLocalRule;
        // The runtime launches whole groups of the required shape, whatever the plan pads.
        a.padded_global = launch_global(dev, a.global, a.local, kd.dims, true);
    } else {
        a.local = local.local(dev, rule_global(dev, a.global, plan.padded), kd.dims, plan.priority, a.local_rule);
        a.padded_global = launch_global(dev, a.global, a.local, kd.dims, plan.padded);
    }
}

}  // namespace

Plan make_plan(const std::vector<DeviceInfo>& devices, const PlanRequest& request) {
    const KernelDescriptor& kd = request.kernel;
    const GlobalSize g = request.global;
    check_plan_request(devices, request);

    const double items = double(g.items());
    const double ops =
        request.ops ? *request.ops : kd.ops_per_item * items * double(request.iterations);
    if (!std::isfinite(ops) || ops < 0.0)
        throw InvalidArgument("plan: compute amount must be a finite non-negative number");

    // Size beyond every device: only checked when every device reports its memory.
    check_plan_memory(devices, request);

    Plan plan;
    plan.kernel = kd.name;
    plan.global = g;
    plan.dims = kd.dims;
    plan.ops = ops;
    plan.iterations = request.iterations;
    plan.compute_class = classify(ops);
    const SplitStrategy& strategy = find_strategy(request.strategy);
    plan.strategy = strategy.name();
    plan.k = !request.weights ? strategy.correction(plan.compute_class) : 1.0;
    plan.local_policy = request.local_policy;
    plan.priority = request.priority.value_or(kd.default_priority);
    plan.padded = request.pad_ndrange;

    const std::vector<double> weights = plan_weights(devices, request, plan.compute_class);
    const std::uint64_t total_units = kd.dims == 2 ? g.y : g.x;
    const std::uint64_t granule = split_granule(devices, request);
    const std::vector<std::uint64_t> units = plan_units(devices, request, weights, total_units, granule);

    const LocalSizePolicy& local = local_policy(request.local_policy);
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < devices.size(); ++i) {
        const DeviceInfo& dev = devices[i];
        Assignment a;
        a.device = int(i);
        a.rank = dev.rank;
        a.device_name = dev.name;
        a.units = units[i];
        a.offset = offset;
        offset += units[i];
        a.share = double(units[i]) / double(total_units);
        a.global = kd.dims == 2 ? GlobalSize{g.x, units[i]} : GlobalSize{units[i], 1};
        a.padded_global = a.global;
        if (!request.backends.empty() && !request.backends[i].empty()) a.backend = request.backends[i];
        if (units[i] == 0) {
            a.local = {};
            a.local_rule = "none";
            a.note = idle_note(weights, i, total_units, granule, request.weights ? std::string() : request.strategy);
        } else {
            choose_local(a, dev, i, request, plan, local);
        }
        plan.assignments.push_back(std::move(a));
    }
    return plan;
}

}  // namespace worksize
