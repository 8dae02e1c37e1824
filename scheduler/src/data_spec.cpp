// The data-job declaration: the names of its types, and what a plan derives from it (the split
// granule, the plan request, the slices' boundaries, checks and layout); its checks are in
// data_spec_checks.cpp, its JSON form in data_spec_json.cpp.
#include "worksize/scheduler/data_spec.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "data_spec_args.hpp"

namespace worksize {

std::size_t elem_size(ElemType t) { return t == ElemType::f64 || t == ElemType::i64 ? 8 : 4; }

const char* to_string(ElemType t) {
    switch (t) {
    case ElemType::f32: return "float";
    case ElemType::f64: return "double";
    case ElemType::i32: return "int";
    case ElemType::u32: return "uint";
    case ElemType::i64: return "long";
    }
    return "?";
}

ElemType parse_elem_type(const std::string& s) {
    for (auto t : {ElemType::f32, ElemType::f64, ElemType::i32, ElemType::u32, ElemType::i64})
        if (s == to_string(t)) return t;
    throw InvalidArgument("unknown element type '" + s + "' (float, double, int, uint, long)");
}

const char* to_string(ReduceOp op) {
    switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::min: return "min";
    case ReduceOp::max: return "max";
    }
    return "?";
}

ReduceOp parse_reduce_op(const std::string& s) {
    for (auto op : {ReduceOp::sum, ReduceOp::min, ReduceOp::max})
        if (s == to_string(op)) return op;
    throw InvalidArgument("unknown reduction '" + s + "' (sum, min, max)");
}

const char* to_string(ArgKind k) {
    switch (k) {
    case ArgKind::read: return "read";
    case ArgKind::write: return "write";
    case ArgKind::read_write: return "read_write";
    case ArgKind::halo: return "halo";
    case ArgKind::all: return "all";
    case ArgKind::reduce: return "reduce";
    case ArgKind::scalar: return "scalar";
    case ArgKind::begin: return "begin";
    case ArgKind::end: return "end";
    case ArgKind::origin: return "origin";
    case ArgKind::local: return "local";
    case ArgKind::step: return "step";
    case ArgKind::expr: return "expr";
    case ArgKind::scratch: return "scratch";
    case ArgKind::value_of: return "value_of";
    }
    return "?";
}

namespace {

using detail::arg_name;

/// The required work-group's extent along the split dimension (0: none).
std::uint64_t required_split_extent(const DataJobSpec& s, const KernelDecl& k) {
    // (a slice_relative kernel's groups tile its held elements, not its units)
    if (k.required_local.is_null() || k.slice_relative) return 0;
    return s.dims == 2 ? k.required_local.y : k.required_local.x;
}

}  // namespace

std::uint64_t data_granule(const DataJobSpec& s) {
    std::uint64_t g = 1;
    for (const auto& k : s.kernels) {
        g = std::lcm(g, k.units_per_item);
        if (const auto r = required_split_extent(s, k)) g = std::lcm(g, r * k.units_per_item);
        if (k.group_units)
            g = std::lcm(g, k.group_units);
        else if (k.whole_arrays)
            g = std::lcm(g, (s.dims == 2 ? kWholeArraysAlignment2D : kWholeArraysAlignment1D) * k.units_per_item);
    }
    return g;
}

LocalSize common_required_local(const DataJobSpec& s) {
    LocalSize common;
    for (const auto& k : s.kernels) {
        if (k.slice_relative) continue;  // its groups tile its held elements, not the plan's units
        if (k.required_local.is_null()) return {};
        const LocalSize r = s.dims == 2 ? k.required_local : LocalSize{k.required_local.x, 1};
        if (!common.is_null() && !(common == r)) return {};
        common = r;
    }
    return common;
}

PlanRequest data_plan_request(const DataJobSpec& s) {
    PlanRequest r;
    r.required_local = common_required_local(s);
    r.kernel.name = s.name;
    r.kernel.dims = s.dims;
    double in = 0, out = 0, fixed = 0, elems = 0;
    for (std::size_t b = 0; b < s.buffers.size(); ++b) {
        const auto& d = s.buffers[b];
        if (d.layout == BufferLayout::shared) {
            if (d.input) fixed += double(d.count * elem_size(d.type));
            continue;
        }
        const double row = double(d.pitch * elem_size(d.type));
        elems += double(d.pitch);
        if (d.input) in += d.units ? row * double(d.units) / double(s.units) : row;  // its rows per job unit
        if (d.output) out += d.units ? row * double(d.units) / double(s.units) : row;
    }
    // Per work-item of the NDRange: a 2-D job's unit is a row of `width` items.
    const double items_per_unit = double(s.width);
    r.kernel.ops_per_item = (s.ops_per_unit > 0 ? s.ops_per_unit : std::max(elems, 1.0)) / items_per_unit;
    r.kernel.bytes_in_per_item = in / items_per_unit;
    r.kernel.bytes_out_per_item = out / items_per_unit;
    r.kernel.bytes_in_fixed = fixed;
    r.global = s.dims == 2 ? GlobalSize{s.width, s.units} : GlobalSize{s.units, 1};
    r.iterations = s.steps;
    r.granule = data_granule(s);
    // Kernels of a launch geometry of their own take no work-group from the plan: whole groups
    // of theirs are the granule already.
    for (const auto& k : s.kernels) r.align_1d_to_groups = r.align_1d_to_groups && k.group_units == 0;
    r.pad_ndrange = true;  // the kernels guard with `end` (and rows past the slice are not read back)
    return r;
}

void balance_ghost_rows(const DataJobSpec& s, std::vector<Assignment>& assignments) {
    const double g = s.exchange_every > 1 ? double(s.exchange_every - 1) * double(deepest_halo(s)) / 2.0 : 0.0;
    std::vector<Assignment*> used;
    for (auto& a : assignments)
        if (a.units > 0) used.push_back(&a);
    if (g <= 0 || used.size() < 2) return;
    std::sort(used.begin(), used.end(), [](const Assignment* x, const Assignment* y) { return x->offset < y->offset; });
    // Own rows u_i plus redundant rows g·n_i (n_i neighbours) in proportion to share w_i:
    // u_i + g·n_i = w_i·T with Σu_i = U, so T = (U + g·Σn_i) / Σw_i.
    double total = 0, weights = 0, redundant = 0;
    std::vector<double> n(used.size());
    for (std::size_t i = 0; i < used.size(); ++i) {
        n[i] = double((i > 0) + (i + 1 < used.size()));
        total += double(used[i]->units);
        weights += used[i]->share;
        redundant += g * n[i];
    }
    if (!(weights > 0)) return;
    const double t = (total + redundant) / weights;
    std::vector<std::uint64_t> units(used.size());
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < used.size(); ++i) {
        const double u = std::floor(used[i]->share * t - g * n[i]);
        if (u < 1) return;  // a slice this small: leave the plan as it is
        units[i] = std::uint64_t(u);
        sum += units[i];
    }
    if (sum > std::uint64_t(total)) return;
    units.back() += std::uint64_t(total) - sum;  // rounding, to the last slice
    std::uint64_t offset = used.front()->offset;
    for (std::size_t i = 0; i < used.size(); ++i) {
        used[i]->units = units[i];
        used[i]->offset = offset;
        offset += units[i];
        used[i]->global = s.dims == 2 ? GlobalSize{s.width, units[i]} : GlobalSize{units[i], 1};
    }
}

void align_slices(const DataJobSpec& s, std::vector<Assignment>& assignments) {
    const std::uint64_t granule = data_granule(s);
    if (granule <= 1) return;
    std::uint64_t carry = 0, offset = 0;
    Assignment* last = nullptr;
    for (auto& a : assignments)
        if (a.units > 0) last = &a;
    const std::uint64_t total = [&] {
        std::uint64_t t = 0;
        for (const auto& a : assignments) t += a.units;
        return t;
    }();
    for (auto& a : assignments) {
        if (a.units > 0 && &a != last) {
            carry += a.units % granule;
            a.units -= a.units % granule;
        } else if (&a == last) {
            a.units += carry;
        }
        a.offset = offset;
        offset += a.units;
        a.global = s.dims == 2 ? GlobalSize{s.width, a.units} : GlobalSize{a.units, 1};
        if (total > 0) a.share = double(a.units) / double(total);
    }
    round_chunk_boundaries(s, assignments);
}

void round_chunk_boundaries(const DataJobSpec& s, std::vector<Assignment>& assignments) {
    // Only kernels of several units per item that leave their work-group to worksize gain: their
    // slices' item counts are what the work-group must divide (no padding: they need not guard).
    std::uint64_t chunk = 0;
    for (const auto& k : s.kernels)
        if (k.units_per_item > 1 && k.required_local.is_null()) chunk = std::max(chunk, k.units_per_item);
    if (s.dims != 1 || chunk == 0) return;
    const std::uint64_t granule = std::max<std::uint64_t>(data_granule(s), 1);
    std::vector<Assignment*> used;
    for (auto& a : assignments)
        if (a.units > 0) used.push_back(&a);
    if (used.size() < 2) return;
    // Each boundary between two slices moves to the nearest multiple of granule·2^j for the
    // largest j up to kChunkAlignment's that moves it by at most 1/64 of the smaller slice.
    std::vector<std::uint64_t> ends;
    for (auto* a : used) ends.push_back(a->offset + a->units);
    std::uint64_t begin = used.front()->offset;
    for (std::size_t i = 0; i + 1 < used.size(); ++i) {
        const std::uint64_t b = ends[i], lo = i ? ends[i - 1] : begin, hi = ends[i + 1];
        const std::uint64_t tolerance = std::min(b - lo, hi - b) / 64;
        for (std::uint64_t m = granule * kChunkAlignment; m > granule; m /= 2) {
            const std::uint64_t down = b / m * m, up = down + m;
            const std::uint64_t to = b - down <= up - b ? down : up;
            if ((to > b ? to - b : b - to) <= tolerance && to > lo && to < hi) {
                ends[i] = to;
                break;
            }
        }
    }
    for (std::size_t i = 0; i < used.size(); ++i) {
        used[i]->offset = i ? ends[i - 1] : begin;
        used[i]->units = ends[i] - used[i]->offset;
        used[i]->global = GlobalSize{used[i]->units, 1};
    }
    std::uint64_t total = 0;
    for (const auto* a : used) total += a->units;
    for (auto* a : used) a->share = double(a->units) / double(total);
}

void check_slices(const DataJobSpec& s, const std::vector<Assignment>& assignments) {
    const DataLayout layout = data_layout(s, assignments);
    for (const auto& sl : layout.slices) {
        for (const auto& k : s.kernels)
            for (std::size_t i = 0; i < k.args.size(); ++i) {
                const ArgDecl& a = k.args[i];
                if (a.kind != ArgKind::halo || (sl.left < 0 && sl.right < 0)) continue;  // alone: edges only
                if (s.buffers[std::size_t(a.buffer)].units) continue;  // its own rows, read from rank 0's whole
                const std::uint64_t h = halo_rows(s, a.buffer);
                if (h > sl.units)
                    throw InvalidArgument(arg_name(s, k, i) + ": a halo of " + std::to_string(h) +
                                          " rows is deeper than the slice of device " + std::to_string(sl.device) +
                                          " (rank " + std::to_string(sl.rank) + ", " + std::to_string(sl.units) +
                                          " rows): its neighbours would need rows of slices beyond it");
            }
        for (const auto& k : s.kernels)
            if (sl.offset % k.units_per_item != 0)
                throw InvalidArgument("kernel '" + k.name + "': the slice of device " + std::to_string(sl.device) +
                                      " starts at unit " + std::to_string(sl.offset) + ", not a multiple of the " +
                                      std::to_string(k.units_per_item) + " units one work-item covers");
        for (const auto& k : s.kernels) {
            const std::uint64_t r = required_split_extent(s, k);
            if (r && sl.units % (r * k.units_per_item) != 0 && sl.offset + sl.units != s.units)
                throw InvalidArgument("kernel '" + k.name + "': its required work-group of " + std::to_string(r) +
                                      " along the split does not divide the slice of device " +
                                      std::to_string(sl.device) + " (" + std::to_string(sl.units) + " units)");
        }
    }
}

DataLayout data_layout(const DataJobSpec& s, const std::vector<Assignment>& assignments) {
    DataLayout l;
    std::vector<Assignment> sorted;
    for (const auto& a : assignments)
        if (a.units > 0) sorted.push_back(a);
    std::sort(sorted.begin(), sorted.end(), [](const Assignment& x, const Assignment& y) { return x.offset < y.offset; });
    std::uint64_t next = 0;
    for (const auto& a : sorted) {
        if (a.offset != next)
            throw InvalidArgument("the plan's slices do not tile the " + std::to_string(s.units) + " units (a slice starts at " +
                                  std::to_string(a.offset) + ", not " + std::to_string(next) + ")");
        next = a.offset + a.units;
        SliceLayout sl;
        sl.device = a.device;
        sl.rank = a.rank;
        sl.offset = a.offset;
        sl.units = a.units;
        l.slices.push_back(sl);
    }
    if (next != s.units)
        throw InvalidArgument("the plan's slices cover " + std::to_string(next) + " of " + std::to_string(s.units) + " units");
    for (std::size_t i = 0; i < l.slices.size(); ++i) {
        l.slices[i].left = i > 0 ? int(i) - 1 : -1;
        l.slices[i].right = i + 1 < l.slices.size() ? int(i) + 1 : -1;
    }
    // The steady state: walk two exchanges with the runtime's rules (with ghost zones, the steps
    // that exchange); count the second.
    l.halo_bytes_per_step.assign(l.slices.size(), 0);
    std::vector<bool> dirty(s.buffers.size(), false);
    for (std::uint64_t step = 0; step < 2 * s.exchange_every; ++step) {
        const bool exchanges = step % s.exchange_every == 0;
        for (std::size_t k = 0; k < s.kernels.size(); ++k) {
            if (!runs_steadily(s.kernels[k])) continue;  // the steady state: the kernels of every step
            if (!exchanges) {
                mark_written(s, k, dirty);
                continue;
            }
            for (int b : halo_exchanges_before(s, k, dirty)) {
                if (step == 0) continue;
                const auto& d = s.buffers[std::size_t(b)];
                const std::uint64_t rows = halo_rows(s, b), bytes = rows * d.pitch * elem_size(d.type);
                for (std::size_t i = 0; i < l.slices.size(); ++i)
                    l.halo_bytes_per_step[i] += bytes * ((l.slices[i].left >= 0) + (l.slices[i].right >= 0));
            }
            mark_written(s, k, dirty);
        }
        apply_swaps(s, dirty);
    }
    return l;
}

std::vector<int> halo_exchanges_before(const DataJobSpec& s, std::size_t k, std::vector<bool>& dirty) {
    std::vector<int> out;
    for (const auto& a : s.kernels[k].args)
        if (a.kind == ArgKind::halo && dirty[std::size_t(a.buffer)] &&
            std::find(out.begin(), out.end(), a.buffer) == out.end()) {
            out.push_back(a.buffer);
            dirty[std::size_t(a.buffer)] = false;
        }
    return out;
}

void mark_written(const DataJobSpec& s, std::size_t k, std::vector<bool>& dirty) {
    for (const auto& a : s.kernels[k].args)
        if ((a.kind == ArgKind::write || a.kind == ArgKind::read_write) && a.buffer >= 0) dirty[std::size_t(a.buffer)] = true;
}

void apply_swaps(const DataJobSpec& s, std::vector<bool>& dirty) {
    for (const auto& [a, b] : s.swaps) {
        const bool t = dirty[std::size_t(a)];
        dirty[std::size_t(a)] = dirty[std::size_t(b)];
        dirty[std::size_t(b)] = t;
    }
}

}  // namespace worksize
