// Declared jobs (declared_job.hpp): rank 0's side from the declaration, and the one executor of
// their slices.
#include "worksize/runtime/declared_job.hpp"

#include <algorithm>
#include <cstring>

#include "jobs/bounds.hpp"
#include "jobs/data_kernels.hpp"
#include "jobs/input_feed.hpp"
#include "jobs/job_util.hpp"
#include "transport/pieces.hpp"
#include "worksize/runtime/opencl.hpp"

namespace worksize {

std::vector<std::pair<std::size_t, std::size_t>> reductions(const DataJobSpec& s) {
    std::vector<std::pair<std::size_t, std::size_t>> v;
    for (std::size_t k = 0; k < s.kernels.size(); ++k)
        for (std::size_t i = 0; i < s.kernels[k].args.size(); ++i)
            if (s.kernels[k].args[i].kind == ArgKind::reduce) v.emplace_back(k, i);
    return v;
}

namespace {


std::vector<std::uint64_t> halos(const DataJobSpec& s) {
    std::vector<std::uint64_t> h;
    for (std::size_t b = 0; b < s.buffers.size(); ++b) h.push_back(halo_rows(s, int(b)));
    return h;
}

const BufferDecl& reduced_buffer(const DataJobSpec& s, std::pair<std::size_t, std::size_t> r) {
    return s.buffers[std::size_t(s.kernels[r.first].args[r.second].buffer)];
}

/// The only split output of a job without reductions, else -1.
int sole_split_output(const DataJobSpec& s) {
    if (!reductions(s).empty()) return -1;
    int found = -1;
    for (std::size_t b = 0; b < s.buffers.size(); ++b) {
        if (!s.buffers[b].output) continue;
        if (s.buffers[b].layout != BufferLayout::split || found >= 0) return -1;
        found = int(b);
    }
    return found;
}

/// "(x,y)" of a launch's NDRange, "NULL" for none.
std::string range_text(const cl::NDRange& r) {
    if (r.dimensions() == 0) return "NULL";
    std::string t = "(";
    for (cl_uint d = 0; d < r.dimensions(); ++d) {
        if (d) t += ',';
        t += std::to_string(r.get()[d]);
    }
    t += ')';
    return t;
}

/// The rows [first, first + count) of split output `b` that the slice [offset, offset + units)
/// computes: its own, or a buffer of its own units' rows of the slice (input_rows(), no halo).
std::pair<std::uint64_t, std::uint64_t> own_rows(const DataJobSpec& s, int b, std::uint64_t offset, std::uint64_t units) {
    return scaled(s.buffers[std::size_t(b)]) ? input_rows(s, b, offset, units) : std::pair{offset, units};
}

}  // namespace

void DeclaredJob::partition(std::vector<Assignment>& assignments) {
    align_slices(declaration(), assignments);
    check_slices(declaration(), assignments);
}

namespace {

/// One part of a slice's input: buffer `b`'s bytes [first, first + bytes).
struct InputPart {
    int b;
    std::uint64_t first, bytes;
};

/// The parts of slice [offset, offset + units)'s input, in the order they travel: each split
/// input's rows (with halos), then each shared input whole.
std::vector<InputPart> input_layout(const DataJobSpec& spec, std::uint64_t offset, std::uint64_t units) {
    std::vector<InputPart> parts;
    for (std::size_t b = 0; b < spec.buffers.size(); ++b) {
        const auto& d = spec.buffers[b];
        if (!d.input || d.layout != BufferLayout::split) continue;
        const auto [first, n] = input_rows(spec, int(b), offset, units);
        parts.push_back({int(b), first * row_bytes(d), n * row_bytes(d)});
    }
    for (std::size_t b = 0; b < spec.buffers.size(); ++b) {
        const auto& d = spec.buffers[b];
        if (d.input && d.layout == BufferLayout::shared) parts.push_back({int(b), 0, d.count * elem_size(d.type)});
    }
    return parts;
}

}  // namespace

std::vector<std::span<const std::byte>> DeclaredJob::input_parts(const Assignment& a) const {
    const DataJobSpec& spec = declaration();
    std::vector<std::span<const std::byte>> parts;
    for (const auto& p : input_layout(spec, a.offset, a.units)) {
        const auto& d = spec.buffers[std::size_t(p.b)];
        const auto host = host_input(p.b);
        if (p.first + p.bytes > host.size())
            throw Error("job '" + spec.name + "': buffer '" + d.name + "' holds " + std::to_string(host.size()) +
                        " bytes on rank 0; the slice at unit " + std::to_string(a.offset) + " needs " +
                        std::to_string(p.first + p.bytes));
        parts.push_back(host.subspan(p.first, p.bytes));
    }
    if (parts.empty()) parts.emplace_back();  // nothing to send: one empty part
    return parts;
}

void DeclaredJob::make_slice_input(const Assignment& a, Bytes& in) const {
    const auto parts = input_layout(declaration(), a.offset, a.units);
    std::uint64_t n = 0;
    for (const auto& p : parts) n += p.bytes;
    in.resize(n);
    std::uint64_t at = 0;
    for (const auto& p : parts) {
        fill_input(p.b, p.first, std::span(in.data() + at, p.bytes));
        at += p.bytes;
    }
}

void DeclaredJob::fill_input(int b, std::uint64_t first, std::span<std::byte> out) const {
    (void)b;
    (void)first;
    (void)out;
    throw InvalidArgument("job '" + declaration().name + "' cannot make its inputs on each rank");
}

Bytes DeclaredJob::slice_input(const Assignment& a) const {
    Bytes b;
    for (const auto& p : input_parts(a)) b.insert(b.end(), p.begin(), p.end());
    return b;
}

std::span<std::byte> DeclaredJob::output_target(const Assignment& a) {
    const DataJobSpec& spec = declaration();
    const int b = sole_split_output(spec);
    if (b < 0) return {};
    const auto row = row_bytes(spec.buffers[std::size_t(b)]);
    const auto host = host_output(b);
    const auto [first, n] = own_rows(spec, b, a.offset, a.units);
    if ((first + n) * row > host.size()) return {};  // accept_output names the problem
    return host.subspan(first * row, n * row);
}

void DeclaredJob::accept_output(const Assignment& a, std::span<const std::byte> out) {
    const DataJobSpec& spec = declaration();
    std::uint64_t o = 0;
    auto too_short = [&](std::uint64_t need) {
        return Error("job '" + spec.name + "': the output of the slice at unit " + std::to_string(a.offset) + " holds " +
                     std::to_string(out.size()) + " bytes, fewer than the " + std::to_string(need) +
                     " its declaration gives");
    };
    for (std::size_t b = 0; b < spec.buffers.size(); ++b) {
        const auto& d = spec.buffers[b];
        if (!d.output || d.layout != BufferLayout::split) continue;
        const auto [first, rows] = own_rows(spec, int(b), a.offset, a.units);
        const std::uint64_t n = rows * row_bytes(d);
        if (o + n > out.size()) throw too_short(o + n);
        const auto host = host_output(int(b));
        if ((first + rows) * row_bytes(d) > host.size())
            throw Error("job '" + spec.name + "': output buffer '" + d.name + "' on rank 0 is too small for rows up to " +
                        std::to_string(first + rows));
        std::byte* dst = host.data() + first * row_bytes(d);
        if (n && dst != out.data() + o) std::memcpy(dst, out.data() + o, n);  // output_target: in place
        o += n;
    }
    std::vector<std::vector<double>> parts;
    for (const auto& r : reductions(spec)) {
        const auto& d = reduced_buffer(spec, r);
        std::vector<double> v(d.count);
        if (o + d.count * sizeof(double) > out.size()) throw too_short(o + d.count * sizeof(double));
        std::memcpy(v.data(), out.data() + o, d.count * sizeof(double));
        o += d.count * sizeof(double);
        parts.push_back(std::move(v));
    }
    partials_[a.offset] = std::move(parts);
}

void DeclaredJob::finish() {
    const DataJobSpec& spec = declaration();
    const auto reds = reductions(spec);
    reduced_.assign(reds.size(), {});
    for (std::size_t r = 0; r < reds.size(); ++r) {
        const auto& a = spec.kernels[reds[r].first].args[reds[r].second];
        const auto& d = reduced_buffer(spec, reds[r]);
        std::vector<double> total(d.count, data::identity(a.op));
        for (const auto& [offset, parts] : partials_)  // slice order
            for (std::size_t j = 0; j < d.count; ++j) total[j] = data::combine(a.op, total[j], parts[r][j]);
        const auto host = host_output(a.buffer);
        if (host.size() >= d.count * elem_size(d.type))
            for (std::size_t j = 0; j < d.count; ++j) data::store(host.data(), d.type, j, total[j]);
        reduced_[r] = std::move(total);
    }
    partials_.clear();
}

namespace {

/// One declared slice on its device, as execute_declared() runs it in phases: its buffers (the
/// guard zones' views with --check-bounds), the unit in row 0 of each, its kernels, their
/// geometries and reduction records, the events of its copies and launches, and what it is
/// doing (`where`, the context of an OpenCL error).
struct DeclaredSlice {
    const DataJobSpec& spec;
    DeviceContext& ctx;
    const SliceSpec& s;
    std::string where;
    std::vector<cl::Buffer> bufs{};
    std::vector<bounds::Guarded> guards{};
    std::vector<std::int64_t> origins{};
    std::vector<cl::Kernel> kernels{};
    std::vector<data::Geometry> geo{};
    std::map<std::pair<std::size_t, std::size_t>, cl::Buffer> records{};
    std::vector<cl::Event> h2d{}, runs{}, d2h{};

    cl::CommandQueue& q() { return ctx.queue(); }
    void check_alloc(const std::string& what, std::uint64_t bytes) const {
        const auto most = ctx.info().max_alloc_bytes;
        if (most && bytes > most)
            throw Error(ErrorReason::device_limit, "job '" + spec.name + "': a slice of " + std::to_string(s.units) +
                                                       " units needs " + detail::size_text(bytes) + " for " + what +
                                                       ", more than the " + detail::size_text(most) +
                                                       " CL_DEVICE_MAX_MEM_ALLOC_SIZE of " + ctx.info().name);
    }
};

/// The slice's input as input_parts() sends it, taken buffer by buffer; on a worker, while it
/// arrives (InputFeed).
struct InputCursor {
    const DataJobSpec& spec;
    std::span<const std::byte> in;
    std::size_t at = 0;
    const InputFeed* feed = InputFeed::current();
    const std::byte* take(std::size_t n) {
        if (at + n > in.size())
            throw Error("job '" + spec.name + "': the slice's input holds " + std::to_string(in.size()) +
                        " bytes, fewer than its declaration needs");
        const std::byte* p = in.data() + at;
        at += n;
        return p;
    }
};

/// The cursor's next `n` bytes into `buf` from byte `offset` on, without blocking. While the
/// input arrives, piece by piece as each is there, so that it goes onto the device while the
/// next one moves.
void write_input(DeclaredSlice& d, cl::Buffer& buf, std::uint64_t offset, std::uint64_t n, InputCursor& in) {
    const std::uint64_t start = in.at;
    const std::byte* p = in.take(n);
    const std::uint64_t piece = in.feed ? pieces::piece_bytes() : std::max<std::uint64_t>(n, 1);
    for (std::uint64_t o = 0; o < n; o += piece) {
        const std::uint64_t c = std::min(piece, n - o);
        if (in.feed) in.feed->wait(start + o + c);
        d.h2d.emplace_back();
        d.q().enqueueWriteBuffer(buf, CL_FALSE, offset + o, c, p + o, nullptr, &d.h2d.back());
        if (in.feed) d.q().flush();
    }
}

/// Every buffer allocated (a shared one with its tail of `tail` bytes), the split inputs'
/// rows written, outputs and device-only buffers zeroed unless written whole; then the shared
/// inputs written.
void allocate_and_upload(DeclaredSlice& d, InputCursor& in, std::byte tail) {
    const DataJobSpec& spec = d.spec;
    // The unit held in row 0 of each buffer: offset - halo, 0 for one held whole, or a buffer
    // of its own units' first row.
    for (std::size_t b = 0; b < spec.buffers.size(); ++b)
        d.origins.push_back(scaled(spec.buffers[b]) ? std::int64_t(input_rows(spec, int(b), d.s.offset, d.s.units).first)
                                                    : first_held_unit(spec, int(b), d.s.offset));
    for (std::size_t b = 0; b < spec.buffers.size(); ++b) {
        const auto& bd = spec.buffers[b];
        const bool shared = bd.layout == BufferLayout::shared;
        const std::uint64_t bytes = shared ? bd.count * elem_size(bd.type)
                                    : scaled(bd) ? input_rows(spec, int(b), d.s.offset, d.s.units).second * row_bytes(bd)
                                                 : held_elements(spec, int(b), d.s.units) * elem_size(bd.type);
        d.check_alloc("buffer '" + bd.name + "'", bytes);
        const std::uint64_t tail_bytes = data::tail_bytes(bd, bytes, d.ctx.info().max_alloc_bytes);
        if (bounds::enabled()) {  // guard zones (bounds.hpp), a shared buffer's tail first in the zone after
            d.guards.push_back(bounds::make_for(d.ctx, spec, int(b), bytes, tail));
            d.bufs.push_back(d.guards.back().view);
        } else {
            d.bufs.emplace_back(d.ctx.context(), CL_MEM_READ_WRITE, std::max<std::uint64_t>(bytes + tail_bytes, 1));
            if (tail_bytes) data::write_tail(d.q(), d.bufs.back(), bytes, tail_bytes, tail);  // what a read past the end finds
        }
        if (!bd.input) {
            // Outputs and device-only buffers start as zeros, unless the kernels write them
            // whole (no_init).
            data::initial_fill(d.q(), d.bufs.back(), bd, bytes);
            continue;
        }
        if (bd.layout == BufferLayout::split) {
            const auto [first, n] = input_rows(spec, int(b), d.s.offset, d.s.units);
            write_input(d, d.bufs.back(), std::uint64_t(std::int64_t(first) - d.origins[b]) * row_bytes(bd),
                        n * row_bytes(bd), in);
        }
    }
    for (std::size_t b = 0; b < spec.buffers.size(); ++b) {
        const auto& bd = spec.buffers[b];
        if (bd.input && bd.layout == BufferLayout::shared) write_input(d, d.bufs[b], 0, bd.count * elem_size(bd.type), in);
    }
}

/// The program and its kernels, each one's geometry on the slice and its reduction records.
void build_kernels(DeclaredSlice& d) {
    const DataJobSpec& spec = d.spec;
    cl::Program program = d.ctx.program_from_source(spec.source, data::program_options(spec.build_options));
    for (std::size_t k = 0; k < spec.kernels.size(); ++k) {
        d.kernels.push_back(data::make_kernel(program, spec.kernels[k]));
        d.geo.push_back(data::geometry(spec, spec.kernels[k], d.s.offset, d.s.units,
                                       data::launch_local(spec.kernels[k], d.s.local, d.kernels.back(), d.ctx.device())));
        data::check_required_local(spec.kernels[k], d.geo.back(), d.kernels.back(), d.ctx.device());
    }
    for (const auto& [k, i] : reductions(spec)) {
        const auto& bd = reduced_buffer(spec, {k, i});
        const std::uint64_t bytes = data::record_count(spec.kernels[k].args[i], d.geo[k]) * bd.count * elem_size(bd.type);
        d.check_alloc("the records of '" + bd.name + "'", bytes);
        d.records.emplace(std::pair{k, i}, cl::Buffer(d.ctx.context(), CL_MEM_READ_WRITE, bytes));
    }
}

/// The kernels in order, `iterations` times.
void launch_all(DeclaredSlice& d) {
    const DataJobSpec& spec = d.spec;
    const auto halo = halos(spec);
    for (std::uint64_t it = 0; it < std::max<std::uint64_t>(d.s.iterations, 1); ++it)
        for (std::size_t k = 0; k < spec.kernels.size(); ++k) {
            const auto& kd = spec.kernels[k];
            d.where = "kernel '" + kd.name + "' of job '" + spec.name + "' on " + d.ctx.info().name + " (global " +
                      range_text(d.geo[k].global) + ", local " + range_text(d.geo[k].local) + ")";
            // Per-item records are refilled before every launch; per-group ones once (every
            // group writes its record each launch; no fill in the timed loop of quad).
            for (std::size_t i = 0; i < kd.args.size(); ++i)
                if (kd.args[i].kind == ArgKind::reduce && (it == 0 || !kd.args[i].per_group))
                    data::fill_identity(d.q(), d.records.at({k, i}), spec.buffers[std::size_t(kd.args[i].buffer)],
                                        kd.args[i].op, data::record_count(kd.args[i], d.geo[k]));
            data::bind_args(d.kernels[k], kd, d.bufs,
                            [&](std::size_t i) -> const cl::Buffer& { return d.records.at({k, i}); }, d.geo[k],
                            d.s.offset, halo, nullptr, &d.origins,
                            ExprScope{0, 1, 0, 0, std::int64_t(spec.units), nullptr});
            d.runs.emplace_back();
            d.q().enqueueNDRangeKernel(d.kernels[k], d.geo[k].offset, d.geo[k].global, d.geo[k].local, nullptr,
                                       &d.runs.back());
            if (!d.guards.empty())
                bounds::check_writes(d.q(), spec, kd, d.guards, "",
                                     "; a kernel that indexes whole arrays by global ids needs \"arrays\": \"whole\" "
                                     "(C++: whole_arrays())");
        }
}

/// Into `out`: each split output's own rows, then each reduction's combined record as doubles
/// (per-group records first tree-combined on the device).
void read_results(DeclaredSlice& d, Bytes& out, SliceTimes& t) {
    const DataJobSpec& spec = d.spec;
    d.where = "job '" + spec.name + "' on " + d.ctx.info().name + ", reading the results";
    const auto reds = reductions(spec);
    std::uint64_t n = 0;
    for (std::size_t b = 0; b < spec.buffers.size(); ++b)
        if (spec.buffers[b].output && spec.buffers[b].layout == BufferLayout::split)
            n += own_rows(spec, int(b), d.s.offset, d.s.units).second * row_bytes(spec.buffers[b]);
    for (const auto& r : reds) n += reduced_buffer(spec, r).count * sizeof(double);
    out.resize(n);
    std::uint64_t o = 0;
    for (std::size_t b = 0; b < spec.buffers.size(); ++b) {
        const auto& bd = spec.buffers[b];
        if (!bd.output || bd.layout != BufferLayout::split) continue;
        const auto [first, rows] = own_rows(spec, int(b), d.s.offset, d.s.units);
        d.d2h.emplace_back();
        d.q().enqueueReadBuffer(d.bufs[b], CL_FALSE, std::uint64_t(std::int64_t(first) - d.origins[b]) * row_bytes(bd),
                                rows * row_bytes(bd), out.data() + o, nullptr, &d.d2h.back());
        o += rows * row_bytes(bd);
    }
    for (const auto& [k, i] : reds) {
        const auto& a = spec.kernels[k].args[i];
        const auto& bd = reduced_buffer(spec, {k, i});
        std::uint64_t count = data::record_count(a, d.geo[k]);
        cl::Buffer& buf = d.records.at({k, i});
        if (a.per_group) {
            d.where = "job '" + spec.name + "' on " + d.ctx.info().name + ", combining the records of '" + bd.name + "'";
            data::combine_on_device(d.ctx, buf, count, bd, a.op, t.kernel);
        }
        Bytes rec(count * bd.count * elem_size(bd.type));
        d.d2h.emplace_back();
        d.q().enqueueReadBuffer(buf, CL_TRUE, 0, rec.size(), rec.data(), nullptr, &d.d2h.back());
        std::vector<double> total(bd.count, data::identity(a.op));
        data::combine_records(a.op, bd.type, rec.data(), count, total);
        std::memcpy(out.data() + o, total.data(), total.size() * sizeof(double));
        o += total.size() * sizeof(double);
    }
}

}  // namespace

SliceTimes execute_declared(const DataJobSpec& spec, DeviceContext& ctx, const SliceSpec& s,
                            std::span<const std::byte> in, Bytes& out, std::byte tail) {
    SliceTimes t;
    out.clear();
    DeclaredSlice d{spec, ctx, s, "job '" + spec.name + "' on " + ctx.info().name};
    try {
        InputCursor cursor{spec, in};
        allocate_and_upload(d, cursor, tail);
        build_kernels(d);
        launch_all(d);
        read_results(d, out, t);
        d.q().finish();
        for (const auto& e : d.h2d) t.h2d += event_seconds(e);
        for (const auto& e : d.runs) t.kernel += event_seconds(e);
        for (const auto& e : d.d2h) t.d2h += event_seconds(e);
    } catch (const cl::Error& e) {
        finish_quietly(d.q());  // the copies already enqueued read `in` and write `out`
        out.clear();
        rethrow_cl(e, d.where);
    } catch (...) {
        finish_quietly(d.q());
        out.clear();
        throw;
    }
    return t;
}

}  // namespace worksize
