// Where a device holds each buffer of a data job (data_spec.hpp): its halos (halo_rows(), ghost
// zones, the rows an input sends: input_rows()), slice rows with their halos, or
// the whole extent for the kernels that index whole arrays (KernelDecl::whole_arrays); and the
// steps each kernel runs in (KernelDecl::runs).
#include "worksize/scheduler/data_spec.hpp"

#include <algorithm>
#include <set>

namespace worksize {

const char* to_string(KernelRuns r) {
    switch (r) {
    case KernelRuns::every: return "every";
    case KernelRuns::first_step: return "first";
    case KernelRuns::last_step: return "last";
    case KernelRuns::after_first: return "after_first";
    }
    return "?";
}

bool runs_in(const KernelDecl& k, std::uint64_t step, std::uint64_t steps) {
    switch (k.runs) {
    case KernelRuns::first_step: return step == 0;
    case KernelRuns::last_step: return step + 1 == steps;
    case KernelRuns::after_first: return step > 0;
    case KernelRuns::every: return k.every <= 1 || (step + 1) % k.every == 0;
    }
    return true;
}

std::uint64_t deepest_halo(const DataJobSpec& s) {
    std::uint64_t h = 0;
    for (const auto& k : s.kernels)
        for (const auto& a : k.args)
            if (a.kind == ArgKind::halo) h = std::max(h, a.depth);
    return h;
}

std::uint64_t ghost_rows(const DataJobSpec& s, std::uint64_t step) {
    if (s.exchange_every <= 1) return 0;
    return (s.exchange_every - 1 - step % s.exchange_every) * deepest_halo(s);
}

std::uint64_t halo_rows(const DataJobSpec& s, int b) {
    if (s.exchange_every > 1 && s.buffers[std::size_t(b)].layout == BufferLayout::split)
        return s.exchange_every * deepest_halo(s);
    auto own = [&](int x) {
        std::uint64_t h = 0;
        for (const auto& k : s.kernels)
            for (const auto& a : k.args)
                if (a.kind == ArgKind::halo && a.buffer == x) h = std::max(h, a.depth);
        return h;
    };
    std::uint64_t h = own(b);
    // A swap partner holds the same contents a step later: both get the deeper halo. Pairs may
    // chain (a<->b, b<->c), so follow them to a fixed point.
    std::set<int> group = {b};
    for (bool grew = true; grew;) {
        grew = false;
        for (const auto& [x, y] : s.swaps) {
            if (group.count(x) && !group.count(y)) grew = group.insert(y).second;
            if (group.count(y) && !group.count(x)) grew = group.insert(x).second;
        }
    }
    for (int x : group) h = std::max(h, own(x));
    return std::max(h, relative_halo(s, b));
}

std::pair<std::uint64_t, std::uint64_t> input_rows(const DataJobSpec& s, int b, std::uint64_t offset,
                                                   std::uint64_t units) {
    const std::uint64_t h = halo_rows(s, b);
    if (const auto& d = s.buffers[std::size_t(b)]; scaled(d)) {
        if (units == 0) return {0, 0};
        using u128 = unsigned __int128;
        const u128 num = d.map_num ? d.map_num : d.units, den = d.map_den ? d.map_den : s.units;
        const u128 lo = u128(offset) * num / den, hi = (u128(offset + units) * num + den - 1) / den + h;
        const std::uint64_t last = hi < d.units ? std::uint64_t(hi) : d.units;
        const std::uint64_t first = std::min<std::uint64_t>(lo > h ? std::uint64_t(lo - h) : 0, last);
        return {first, last - first};
    }
    const std::uint64_t lo = offset >= h ? offset - h : 0, hi = std::min(s.units, offset + units + h);
    return {lo, hi - lo};
}

bool held_whole(const DataJobSpec& spec, int b) {
    if (spec.buffers.at(std::size_t(b)).layout != BufferLayout::split) return false;
    for (const auto& k : spec.kernels) {
        if (!k.whole_arrays) continue;
        for (const auto& a : k.args)
            if (a.buffer == b && a.kind != ArgKind::origin) return true;
    }
    return false;
}

std::int64_t first_held_unit(const DataJobSpec& spec, int b, std::uint64_t offset) {
    if (held_whole(spec, b)) return 0;
    const std::uint64_t h = halo_rows(spec, b);
    // A slice_relative kernel's buffers start at their first row within the problem: the kernel's
    // index 0 is then a real row, and a generator's first row is the buffer's row 0.
    if (relative_halo(spec, b) > 0) return std::int64_t(offset > h ? offset - h : 0);
    return std::int64_t(offset) - std::int64_t(h);
}

std::uint64_t held_elements(const DataJobSpec& spec, int b, std::uint64_t units) {
    const BufferDecl& d = spec.buffers.at(std::size_t(b));
    if (d.layout == BufferLayout::shared) return d.count;
    if (held_whole(spec, b)) return spec.units * d.pitch;
    return (units + 2 * halo_rows(spec, b)) * d.pitch;
}

std::uint64_t held_bytes(const DataJobSpec& spec, std::uint64_t units) {
    std::uint64_t total = 0;
    for (std::size_t b = 0; b < spec.buffers.size(); ++b)
        total += held_elements(spec, int(b), units) * elem_size(spec.buffers[b].type);
    return total;
}

namespace {
bool touches(const KernelDecl& k, int b) {
    return std::any_of(k.args.begin(), k.args.end(), [b](const ArgDecl& a) { return a.buffer == b; });
}
/// A buffer's halo from the halo() reads of it (and of its swap partners): halo_rows() without
/// the slice_relative rule.
std::uint64_t read_halo(const DataJobSpec& s, int b) {
    std::uint64_t h = 0;
    for (const auto& k : s.kernels)
        for (const auto& a : k.args)
            if (a.kind == ArgKind::halo && (a.buffer == b || std::any_of(s.swaps.begin(), s.swaps.end(), [&](const auto& p) {
                    return (p.first == b && p.second == a.buffer) || (p.second == b && p.first == a.buffer);
                })))
                h = std::max(h, a.depth);
    return h;
}
}  // namespace

std::uint64_t relative_halo(const DataJobSpec& spec, int b) {
    if (spec.buffers.at(std::size_t(b)).layout != BufferLayout::split || spec.exchange_every > 1) return 0;
    // Every split buffer of any slice_relative kernel that touches b (one group: the kernels share
    // buffers in a port, e.g. srad's image), held with the deepest halo among them.
    bool relative = false;
    std::uint64_t h = 0;
    for (const auto& k : spec.kernels)
        if (k.slice_relative && touches(k, b)) relative = true;
    if (!relative) return 0;
    for (const auto& k : spec.kernels) {
        if (!k.slice_relative) continue;
        for (const auto& a : k.args)
            if (a.buffer >= 0 && spec.buffers[std::size_t(a.buffer)].layout == BufferLayout::split)
                h = std::max(h, read_halo(spec, a.buffer));
    }
    return h;
}

std::uint64_t widest_pitch(const DataJobSpec& spec, const KernelDecl& k) {
    std::uint64_t p = 0;
    for (const auto& a : k.args)
        if (a.buffer >= 0 && spec.buffers.at(std::size_t(a.buffer)).layout == BufferLayout::split)
            p = std::max(p, spec.buffers[std::size_t(a.buffer)].pitch);
    return p;
}

void validate_relative(const DataJobSpec& s) {
    const std::string job = "data job '" + s.name + "'";
    for (const auto& k : s.kernels) {
        const std::string kn = job + ", kernel '" + k.name + "'";
        for (std::size_t i = 0; i < k.args.size(); ++i) {
            const ArgDecl& a = k.args[i];
            const std::string an = kn + ", argument " + std::to_string(i);
            if (a.kind == ArgKind::value_of) {
                const BufferDecl& b = s.buffers.at(std::size_t(a.buffer));
                if (b.layout != BufferLayout::shared || b.count == 0)
                    throw InvalidArgument(an + " (value_of): takes a shared buffer of at least one element; '" + b.name +
                                          "' is " + (b.layout == BufferLayout::split ? "split" : "empty"));
            }
            if (k.slice_relative && a.kind == ArgKind::reduce && a.per_group)
                throw InvalidArgument(an + " (reduce): a slice-relative kernel writes one record per element "
                                      "(its work-groups' records would mix its own rows with its halo's)");
            if (k.slice_relative && (a.kind == ArgKind::begin || a.kind == ArgKind::end || a.kind == ArgKind::origin))
                throw InvalidArgument(an + " (" + to_string(a.kind) + "): a slice-relative kernel indexes from its buffers' "
                                      "start; pass the held elements with expr(\"(end - begin) * pitch\")");
        }
        if (!k.slice_relative) continue;
        if (s.dims != 1 || k.whole_arrays || k.group_units || k.units_per_item != 1 || s.exchange_every > 1)
            throw InvalidArgument(kn + ": a slice-relative kernel is for 1-D jobs, without whole_arrays, groups, "
                                  "units_per_item or ghost zones");
        if (k.required_local.is_null())
            throw InvalidArgument(kn + ": a slice-relative kernel needs its work-group size (required_local): it "
                                  "computes its index from group ids");
        if (widest_pitch(s, k) == 0)
            throw InvalidArgument(kn + ": a slice-relative kernel needs a split buffer (its launch covers its rows)");
    }
}

}  // namespace worksize
