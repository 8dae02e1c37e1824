// The data-job declaration: its JSON form, its checks and what a plan derives from it.
#include "worksize/scheduler/data_spec.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

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

namespace {
bool is_buffer_access(ArgKind k) {
    return k == ArgKind::read || k == ArgKind::write || k == ArgKind::read_write || k == ArgKind::halo ||
           k == ArgKind::all || k == ArgKind::reduce || k == ArgKind::scratch || k == ArgKind::value_of;
}
/// A buffer of its own units with a whole number of rows per job unit (e.g. map [R, 1]): slices
/// hold disjoint rows of it.
bool whole_rows_per_unit(const DataJobSpec& s, const BufferDecl& b) {
    const std::uint64_t num = b.map_num ? b.map_num : b.units, den = b.map_den ? b.map_den : s.units;
    return den != 0 && num % den == 0;
}

bool writes(ArgKind k) { return k == ArgKind::write || k == ArgKind::read_write || k == ArgKind::reduce; }

}  // namespace

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

std::string arg_name(const DataJobSpec& s, const KernelDecl& k, std::size_t i) {
    std::string n = "kernel '" + k.name + "', argument " + std::to_string(i);
    const int b = k.args[i].buffer;
    if (b >= 0 && static_cast<std::size_t>(b) < s.buffers.size()) n += " ('" + s.buffers[std::size_t(b)].name + "')";
    return n;
}

/// The required work-group's extent along the split dimension (0: none).
std::uint64_t required_split_extent(const DataJobSpec& s, const KernelDecl& k) {
    // (a slice_relative kernel's groups tile its held elements, not its units)
    if (k.required_local.is_null() || k.slice_relative) return 0;
    return s.dims == 2 ? k.required_local.y : k.required_local.x;
}

/// An index argument's type holds every value the runtime may bind: begin and end up to the
/// kernel's items (ceil(units / units_per_item)), origin from minus the halo up to the buffer's
/// rows.
void check_index(const DataJobSpec& s, const KernelDecl& k, const ArgDecl& a, const std::string& an) {
    if (a.index_type != ElemType::i32 && a.index_type != ElemType::i64)
        throw InvalidArgument(an + ": " + to_string(a.kind) + " is an int or a long, not a " + to_string(a.index_type));
    if (a.kind == ArgKind::expr) {
        try {
            check_expr(a.expr, a.constants);  // its values depend on the launch: checked when bound
        } catch (const InvalidArgument& e) {
            throw InvalidArgument(an + ": " + e.what());
        }
        return;
    }
    if (a.kind == ArgKind::step) {
        // s * times + plus for s in [0, steps): both ends within the type
        const double lo = double(a.step_plus), hi = double(a.step_plus) + double(s.steps - 1) * double(a.step_times);
        const double lim = a.index_type == ElemType::i64 ? 0x1p63 : 0x1p31;
        if (std::min(lo, hi) < -lim || std::max(lo, hi) >= lim)
            throw InvalidArgument(an + ": step * " + std::to_string(a.step_times) + " + " + std::to_string(a.step_plus) +
                                  " leaves " + (a.index_type == ElemType::i64 ? "a long" : "an int") + " within " +
                                  std::to_string(s.steps) + " steps" +
                                  (a.index_type == ElemType::i64 ? "" : "; declare it long (arg::step<std::int64_t>())"));
        return;
    }
    if (a.index_type == ElemType::i64) return;
    std::uint64_t most = 0;
    std::string what;
    if (a.kind == ArgKind::origin) {
        if (a.buffer < 0 || static_cast<std::size_t>(a.buffer) >= s.buffers.size()) return;  // refused below
        const BufferDecl& b = s.buffers[std::size_t(a.buffer)];
        most = b.units ? b.units : s.units;
        what = " rows of '" + b.name + "'";
    } else {
        most = k.units_per_item ? (s.units + k.units_per_item - 1) / k.units_per_item : s.units;
        what = " items";
    }
    if (most <= std::uint64_t(INT32_MAX)) return;
    std::string m = an;
    m += ": ";
    m += to_string(a.kind);
    m += " is an int, at most 2^31-1 (2147483647), but the job has ";
    m += std::to_string(most);
    m += what;
    m += "; declare it long (arg::";
    m += to_string(a.kind);
    m += "<std::int64_t>(), in a job file \"type\": \"long\") and take a long in the kernel";
    throw InvalidArgument(m);
}

}  // namespace

void validate(const DataJobSpec& s) {
    const std::string job = "data job '" + s.name + "'";
    if (s.name.empty()) throw InvalidArgument("a data job needs a name");
    if (s.source.empty()) throw InvalidArgument(job + ": no kernel source");
    if (s.dims != 1 && s.dims != 2) throw InvalidArgument(job + ": dims must be 1 or 2, not " + std::to_string(s.dims));
    if (s.units == 0) throw InvalidArgument(job + ": the split dimension has no units");
    if (s.width == 0) throw InvalidArgument(job + ": width 0");
    if (s.dims == 1 && s.width != 1) throw InvalidArgument(job + ": a 1-D job has width 1");
    if (s.steps == 0) throw InvalidArgument(job + ": steps must be at least 1");
    if (s.exchange_every == 0) throw InvalidArgument(job + ": exchange_every must be at least 1");
    if (s.exchange_every > 1) {
        bool reduces = false;
        for (const auto& k : s.kernels)
            for (const auto& a : k.args) reduces = reduces || a.kind == ArgKind::reduce;
        if (s.kernels.size() != 1 || s.kernels[0].units_per_item != 1 || reduces)
            throw InvalidArgument(job + ": ghost zones (exchange_every " + std::to_string(s.exchange_every) +
                                  ") need a job of one kernel of one unit per item, without reductions");
    }
    if (s.kernels.empty()) throw InvalidArgument(job + ": no kernel");
    std::set<std::string> names;
    for (const auto& b : s.buffers) {
        const std::string bn = job + ", buffer '" + b.name + "'";
        if (b.name.empty()) throw InvalidArgument(job + ": a buffer without a name");
        if (!names.insert(b.name).second) throw InvalidArgument(bn + ": declared twice");
        if (b.layout == BufferLayout::split && b.pitch == 0) throw InvalidArgument(bn + ": pitch 0");
        if (b.layout == BufferLayout::shared && b.count == 0) throw InvalidArgument(bn + ": no elements");
        if (b.type == ElemType::i64)
            throw InvalidArgument(bn + ": buffers of long are not supported (float, double, int or uint; long is for "
                                  "index arguments and scalar values)");
        if ((b.map_num || b.map_den) && !b.units) throw InvalidArgument(bn + ": a map needs the buffer's own units");
        if (b.no_init && b.input)
            throw InvalidArgument(bn + ": \"init\": \"none\" on an input (its initial contents come from rank 0; "
                                       "\"none\" is for a buffer the kernels write whole)");
        if (!b.generator.empty() && (b.input || b.units || b.host_written))
            throw InvalidArgument(bn + ": generated on every rank (generator '" + b.generator +
                                  "'), so neither rank 0's input, nor of its own units, nor written by a host step");
        if (b.host_written && (b.layout != BufferLayout::shared || !b.input || s.host_every == 0))
            throw InvalidArgument(bn + ": a host step writes shared inputs only, in a job with host steps");
        if (!b.units) continue;
        // A buffer of its own units, in a one-step job: an input of another resolution, or (a
        // whole number of its rows per job unit) an output whose last unit may be partial.
        if (b.layout != BufferLayout::split) throw InvalidArgument(bn + ": its own units need a split buffer");
        if ((b.map_num == 0) != (b.map_den == 0))
            throw InvalidArgument(bn + ": a map needs both num and den above 0");
        if (s.steps > 1 || s.exchange_every > 1)
            throw InvalidArgument(bn + ": a buffer of its own units is read by one-step jobs only (steps " +
                                  std::to_string(s.steps) + "): its rows would need exchanges at another resolution");
    }
    for (const auto& k : s.kernels) {
        if (k.name.empty()) throw InvalidArgument(job + ": a kernel without a name");
        if (k.units_per_item == 0) throw InvalidArgument(job + ", kernel '" + k.name + "': units_per_item 0");
        if (!k.required_local.is_null() && (k.required_local.x == 0 || (s.dims == 2 && k.required_local.y == 0)))
            throw InvalidArgument(job + ", kernel '" + k.name + "': a required work-group size needs every extent");
        if ((k.group_items == 0) != (k.group_units == 0))
            throw InvalidArgument(job + ", kernel '" + k.name + "': a launch geometry needs both items and units per group");
        if (k.group_units && (s.dims != 1 || k.units_per_item != 1 || !k.required_local.is_null() || s.exchange_every > 1))
            throw InvalidArgument(job + ", kernel '" + k.name + "': a launch geometry of its own (" +
                                  std::to_string(k.group_items) + " items per " + std::to_string(k.group_units) +
                                  " units) is for 1-D jobs, without units_per_item, a required work-group or ghost zones");
        if (k.every == 0) throw InvalidArgument(job + ", kernel '" + k.name + "': runs every 0th step (every >= 1)");
        if (k.runs != KernelRuns::every && k.every != 1)
            throw InvalidArgument(job + ", kernel '" + k.name + "': runs in the " + to_string(k.runs) +
                                  " step only, so not every " + std::to_string(k.every) + " steps as well");
        if (!runs_every_step(k) && s.exchange_every > 1)
            throw InvalidArgument(job + ", kernel '" + k.name + "': a kernel that skips steps runs without ghost zones "
                                  "(exchange_every " + std::to_string(s.exchange_every) + ")");
        if (k.whole_arrays && s.exchange_every > 1)
            throw InvalidArgument(job + ", kernel '" + k.name + "': a kernel of whole arrays runs without ghost zones "
                                  "(exchange_every " + std::to_string(s.exchange_every) + "): its launches cover its rows exactly");
        std::set<int> written, halo_read;
        for (std::size_t i = 0; i < k.args.size(); ++i) {
            const ArgDecl& a = k.args[i];
            const std::string an = arg_name(s, k, i);
            const bool needs_buffer = is_buffer_access(a.kind) || a.kind == ArgKind::origin;
            if (a.per_group && a.kind != ArgKind::reduce)
                throw InvalidArgument(an +
                                      ": one record per work-group ('per': 'group') is for reduce(), not " +
                                      to_string(a.kind));
            if (needs_buffer && (a.buffer < 0 || static_cast<std::size_t>(a.buffer) >= s.buffers.size()))
                throw InvalidArgument(an + ": names no declared buffer");
            if (!is_index(a.kind) && a.index_type != ElemType::i32)
                throw InvalidArgument(an + ": an index type ('" + to_string(a.index_type) + "') is for begin, end, origin and step, not " +
                                      to_string(a.kind));
            if (is_index(a.kind)) check_index(s, k, a, an);
            if (a.kind == ArgKind::local && (a.value < 1 || a.value != std::floor(a.value) || a.value > double(1u << 30)))
                throw InvalidArgument(an + ": a __local array needs a whole number of elements >= 1, not " +
                                      nlohmann::json(a.value).dump());
            if (!needs_buffer) {
                // (2^63: the double nearest INT64_MAX is 2^63 itself, outside a long)
                if (a.kind == ArgKind::scalar && a.scalar_type == ElemType::i64 &&
                    (a.value != std::floor(a.value) || a.value < -0x1p63 || a.value >= 0x1p63))
                    throw InvalidArgument(an + ": " + nlohmann::json(a.value).dump() + " is not a long");
                if (a.kind == ArgKind::scalar && (a.scalar_type == ElemType::i32 || a.scalar_type == ElemType::u32)) {
                    const double lo = a.scalar_type == ElemType::i32 ? double(INT32_MIN) : 0.0;
                    const double hi = a.scalar_type == ElemType::i32 ? double(INT32_MAX) : double(UINT32_MAX);
                    if (a.value != std::floor(a.value) || a.value < lo || a.value > hi)
                        throw InvalidArgument(an + ": " + std::to_string(a.value) + " is not a " + to_string(a.scalar_type));
                }
                // (the runtime converts the value to the argument's type: a float must hold it)
                if (a.kind == ArgKind::scalar &&
                    (a.scalar_type == ElemType::f32 ? !(std::abs(a.value) <= double(std::numeric_limits<float>::max()))
                                                    : !std::isfinite(a.value)))
                    throw InvalidArgument(an + ": " + nlohmann::json(a.value).dump() + " is not a " + to_string(a.scalar_type));
                continue;
            }
            const BufferDecl& b = s.buffers[std::size_t(a.buffer)];
            const bool split = b.layout == BufferLayout::split;
            if (k.whole_arrays && b.units)
                throw InvalidArgument(an + ": '" + b.name + "' has its own units; a kernel of whole arrays indexes the "
                                      "job's rows (declare the buffer without units)");
            switch (a.kind) {
            case ArgKind::read:
            case ArgKind::write:
            case ArgKind::read_write:
            case ArgKind::origin:
                if (!split)
                    throw InvalidArgument(an + ": '" + to_string(a.kind) + "' takes a split buffer; '" + b.name +
                                          "' is shared (read it with all(), write it with reduce())");
                break;
            case ArgKind::halo:
                if (!split) throw InvalidArgument(an + ": a halo needs a split buffer; '" + b.name + "' is shared");
                if (a.depth == 0) throw InvalidArgument(an + ": a halo of depth 0 (use read())");
                if (b.units && (b.output || !b.input))
                    throw InvalidArgument(an + ": '" + b.name + "' has its own units: a halo of it reads rank 0's "
                                          "input (an input, not an output)");
                if (!b.units && a.depth >= s.units)
                    throw InvalidArgument(an + ": a halo of " + std::to_string(a.depth) + " rows reads past the buffer (" +
                                          std::to_string(s.units) + " rows in all)");
                break;
            case ArgKind::all:
                if (split) throw InvalidArgument(an + ": all() takes a shared buffer; '" + b.name + "' is split");
                break;
            case ArgKind::scratch:
                if (split) throw InvalidArgument(an + ": scratch() takes a shared buffer; '" + b.name + "' is split");
                if (b.input || b.output)
                    throw InvalidArgument(an + ": '" + b.name + "' is scratch on each device; it can be neither an input "
                                          "nor an output");
                break;
            case ArgKind::reduce:
                if (split) throw InvalidArgument(an + ": reduce() writes a shared buffer; '" + b.name + "' is split");
                if (s.dims != 1) throw InvalidArgument(an + ": reductions need a 1-D job");
                break;
            default:
                break;
            }
            if (b.units && writes(a.kind) && !whole_rows_per_unit(s, b))
                throw InvalidArgument(an + ": '" + b.name + "' has its own " + std::to_string(b.units) +
                                      " units, mapped onto the job's by a fraction: neighbouring slices share "
                                      "rows of it, so it can only be read (written, it needs a map [R, 1])");
            if (b.host_written && a.kind == ArgKind::reduce)
                throw InvalidArgument(an + ": the host step writes '" + b.name + "'; a reduction into it would race it");
            if (writes(a.kind) && !written.insert(a.buffer).second)
                throw InvalidArgument(an + ": overlapping writes: the kernel writes '" + b.name + "' twice");
            if (a.kind == ArgKind::halo) halo_read.insert(a.buffer);
        }
        for (std::size_t i = 0; i < k.args.size(); ++i) {
            const ArgDecl& a = k.args[i];
            if (a.kind == ArgKind::all && written.count(a.buffer))
                throw InvalidArgument(arg_name(s, k, i) + ": the kernel reads '" + s.buffers[std::size_t(a.buffer)].name +
                                      "' whole and reduces into it");
            if (writes(a.kind) && halo_read.count(a.buffer))
                throw InvalidArgument(arg_name(s, k, i) + ": overlapping writes: the kernel reads '" +
                                      s.buffers[std::size_t(a.buffer)].name +
                                      "' with a halo and writes it, so a neighbour's rows would change under it; "
                                      "write another buffer and swap them");
        }
    }
    for (const auto& [a, b] : s.swaps) {
        if (a < 0 || b < 0 || std::size_t(a) >= s.buffers.size() || std::size_t(b) >= s.buffers.size() || a == b)
            throw InvalidArgument(job + ": a swap must name two different declared buffers");
        const auto &x = s.buffers[std::size_t(a)], &y = s.buffers[std::size_t(b)];
        if (x.units || y.units)
            throw InvalidArgument(job + ": swap of '" + x.name + "' and '" + y.name + "': a buffer of its own units cannot swap");
        if (x.layout != BufferLayout::split || y.layout != BufferLayout::split || x.pitch != y.pitch || x.type != y.type)
            throw InvalidArgument(job + ": swap of '" + x.name + "' and '" + y.name +
                                  "': both must be split buffers of the same type and pitch");
    }
    for (const auto& b : s.buffers) {
        bool used = false;
        for (const auto& k : s.kernels)
            for (const auto& a : k.args) used = used || (a.buffer >= 0 && s.buffers[std::size_t(a.buffer)].name == b.name);
        if (!used) throw InvalidArgument(job + ", buffer '" + b.name + "': no kernel uses it");
    }
    validate_relative(s);
}

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
