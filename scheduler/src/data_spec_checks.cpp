// The checks of a data-job declaration (see data_spec.hpp): validate(), whose messages name
// the job, the kernel, the argument and its buffer.
#include "worksize/scheduler/data_spec.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "data_spec_args.hpp"

namespace worksize {

namespace {

using detail::arg_name;

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

/// The job's own fields: its name, source, dimensions, units, steps and ghost zones.
void check_job(const DataJobSpec& s, const std::string& job) {
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
}

/// Each buffer's declaration: its name, layout, type, initial contents and units of its own.
void check_buffers(const DataJobSpec& s, const std::string& job) {
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
}

/// A kernel's own fields: its name, units per item, work-group, launch geometry and steps.
void check_kernel(const DataJobSpec& s, const std::string& job, const KernelDecl& k) {
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
}

/// A scalar argument's value: one that its type holds.
void check_scalar(const ArgDecl& a, const std::string& an) {
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
}

/// Access `a` to buffer `b`: the access the buffer's layout takes, and a halo within the buffer.
void check_access(const DataJobSpec& s, const ArgDecl& a, const BufferDecl& b, const std::string& an) {
    const bool split = b.layout == BufferLayout::split;
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
}

/// A kernel's arguments: each one's kind, index type, value and buffer, then the buffers it writes
/// against those it reads whole or with a halo.
void check_args(const DataJobSpec& s, const KernelDecl& k) {
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
            check_scalar(a, an);
            continue;
        }
        const BufferDecl& b = s.buffers[std::size_t(a.buffer)];
        if (k.whole_arrays && b.units)
            throw InvalidArgument(an + ": '" + b.name + "' has its own units; a kernel of whole arrays indexes the "
                                  "job's rows (declare the buffer without units)");
        check_access(s, a, b, an);
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

/// The swaps: two different split buffers of the same type and pitch, neither of units of its own.
void check_swaps(const DataJobSpec& s, const std::string& job) {
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
}

}  // namespace

void validate(const DataJobSpec& s) {
    const std::string job = "data job '" + s.name + "'";
    check_job(s, job);
    check_buffers(s, job);
    for (const auto& k : s.kernels) {
        check_kernel(s, job, k);
        check_args(s, k);
    }
    check_swaps(s, job);
    for (const auto& b : s.buffers) {
        bool used = false;
        for (const auto& k : s.kernels)
            for (const auto& a : k.args) used = used || (a.buffer >= 0 && s.buffers[std::size_t(a.buffer)].name == b.name);
        if (!used) throw InvalidArgument(job + ", buffer '" + b.name + "': no kernel uses it");
    }
    validate_relative(s);
}

}  // namespace worksize
