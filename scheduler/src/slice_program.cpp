// A declared kernel job's slices as instruction lists (slice_program.hpp).
#include "worksize/scheduler/slice_program.hpp"

#include <algorithm>
#include <set>
#include <sstream>

namespace worksize {

std::vector<SliceInputPart> slice_input_parts(const DataJobSpec& spec, std::uint64_t offset, std::uint64_t units) {
    std::vector<SliceInputPart> parts;
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

std::pair<std::uint64_t, std::uint64_t> own_rows(const DataJobSpec& spec, int b, std::uint64_t offset,
                                                 std::uint64_t units) {
    return scaled(spec.buffers[std::size_t(b)]) ? input_rows(spec, b, offset, units) : std::pair{offset, units};
}

std::vector<std::pair<std::size_t, std::size_t>> reductions(const DataJobSpec& spec) {
    std::vector<std::pair<std::size_t, std::size_t>> v;
    for (std::size_t k = 0; k < spec.kernels.size(); ++k)
        for (std::size_t i = 0; i < spec.kernels[k].args.size(); ++i)
            if (spec.kernels[k].args[i].kind == ArgKind::reduce) v.emplace_back(k, i);
    return v;
}

namespace {
const BufferDecl& reduced(const DataJobSpec& spec, std::pair<std::size_t, std::size_t> r) {
    return spec.buffers[std::size_t(spec.kernels[r.first].args[r.second].buffer)];
}
}  // namespace

std::uint64_t slice_output_bytes(const DataJobSpec& spec, std::uint64_t offset, std::uint64_t units) {
    std::uint64_t n = 0;
    for (std::size_t b = 0; b < spec.buffers.size(); ++b)
        if (spec.buffers[b].output && spec.buffers[b].layout == BufferLayout::split)
            n += own_rows(spec, int(b), offset, units).second * row_bytes(spec.buffers[b]);
    for (const auto& r : reductions(spec)) n += reduced(spec, r).count * sizeof(double);
    return n;
}

std::uint64_t slice_buffer_bytes(const DataJobSpec& spec, int b, std::uint64_t offset, std::uint64_t units) {
    const auto& bd = spec.buffers[std::size_t(b)];
    if (bd.layout == BufferLayout::shared) return bd.count * elem_size(bd.type);
    if (scaled(bd)) return input_rows(spec, b, offset, units).second * row_bytes(bd);
    return held_elements(spec, b, units) * elem_size(bd.type);
}

namespace {

/// A list under construction; push() returns the instruction's index.
struct List {
    std::vector<Instruction> v;
    int push(Instruction in) {
        v.push_back(std::move(in));
        return int(v.size()) - 1;
    }
};

/// Buffer `b`'s uploads of `total` units (rows of a split buffer, bytes of a shared one) of
/// `unit_bytes` each, from `first` on, in pieces of at most `piece` bytes (at least one unit).
void uploads(List& l, int slice, int b, int alloc, std::uint64_t first, std::uint64_t total, std::uint64_t unit_bytes,
             std::uint64_t piece, std::uint64_t& at, std::vector<int>& done) {
    const std::uint64_t per = piece ? std::max<std::uint64_t>(piece / unit_bytes, 1) : total;
    for (std::uint64_t u = 0; u < total; u += per) {
        Instruction in;
        in.kind = InstrKind::upload;
        in.slice = slice;
        in.buffer = b;
        in.first = first + u;
        in.rows = std::min(per, total - u);
        in.at = at;
        in.bytes = in.rows * unit_bytes;
        in.deps = {alloc};
        at += in.bytes;
        done.push_back(l.push(std::move(in)));
    }
}

}  // namespace

std::vector<Instruction> compile_slice(const DataJobSpec& spec, std::uint64_t offset, std::uint64_t units,
                                       const SliceProgramOptions& o) {
    List l;
    std::vector<int> allocs, ups;
    std::uint64_t at = 0;
    for (std::size_t b = 0; b < spec.buffers.size(); ++b) {
        Instruction a;
        a.kind = InstrKind::alloc;
        a.slice = o.slice;
        a.buffer = int(b);
        a.bytes = slice_buffer_bytes(spec, int(b), offset, units);
        allocs.push_back(l.push(std::move(a)));
        const auto& bd = spec.buffers[b];
        if (bd.input && bd.layout == BufferLayout::split) {
            const auto [first, n] = input_rows(spec, int(b), offset, units);
            uploads(l, o.slice, int(b), allocs.back(), first, n, row_bytes(bd), o.piece_bytes, at, ups);
        }
    }
    for (std::size_t b = 0; b < spec.buffers.size(); ++b) {
        const auto& bd = spec.buffers[b];
        if (bd.input && bd.layout == BufferLayout::shared)
            uploads(l, o.slice, int(b), allocs[b], 0, bd.count * elem_size(bd.type), 1, o.piece_bytes, at, ups);
    }
    std::vector<int> last(spec.kernels.size(), -1);
    int prev = -1;
    for (std::uint64_t it = 0; it < std::max<std::uint64_t>(o.iterations, 1); ++it)
        for (std::size_t k = 0; k < spec.kernels.size(); ++k) {
            Instruction in;
            in.kind = InstrKind::launch;
            in.slice = o.slice;
            in.kernel = int(k);
            in.first = offset;
            in.rows = units;
            in.feeds_step = it;
            in.deps = prev >= 0 ? std::vector<int>{prev} : ups.empty() ? allocs : ups;
            prev = last[k] = l.push(std::move(in));
        }
    std::uint64_t out = 0;
    for (std::size_t b = 0; b < spec.buffers.size(); ++b) {
        const auto& bd = spec.buffers[b];
        if (!bd.output || bd.layout != BufferLayout::split) continue;
        const auto [first, rows] = own_rows(spec, int(b), offset, units);
        Instruction in;
        in.kind = InstrKind::download;
        in.slice = o.slice;
        in.buffer = int(b);
        in.first = first;
        in.rows = rows;
        in.at = out;
        in.bytes = rows * row_bytes(bd);
        in.deps = {prev};
        out += in.bytes;
        l.push(std::move(in));
    }
    for (const auto& [k, i] : reductions(spec)) {
        Instruction in;
        in.kind = InstrKind::reduce;
        in.slice = o.slice;
        in.kernel = int(k);
        in.arg = int(i);
        in.result = true;
        in.at = out;
        in.bytes = reduced(spec, {k, i}).count * sizeof(double);
        in.deps = {last[k]};
        out += in.bytes;
        l.push(std::move(in));
    }
    return std::move(l.v);
}

namespace {

/// The messages of slice `slice`'s input (its parts, each in pieces) or output (in pieces).
std::vector<Instruction> messages(const KernelSliceDecl& s, int slice, bool output, InstrKind kind, int peer,
                                  std::uint64_t piece) {
    std::vector<std::uint64_t> sizes;
    if (output) sizes.push_back(slice_output_bytes(s.spec, s.offset, s.units));
    else
        for (const auto& p : slice_input_parts(s.spec, s.offset, s.units)) sizes.push_back(p.bytes);
    std::vector<Instruction> v;
    std::uint64_t at = 0;
    for (std::uint64_t n : sizes) {
        for (std::uint64_t o = 0; o < n; o += piece) {
            Instruction in;
            in.kind = kind;
            in.slice = slice;
            in.peer = peer;
            in.result = output;
            in.at = at + o;
            in.bytes = std::min(piece, n - o);
            v.push_back(std::move(in));
        }
        at += n;
    }
    return v;
}

/// Appends `list` to `l`, its dependencies moved by where it starts; that start.
int append(List& l, std::vector<Instruction> list) {
    const int base = int(l.v.size());
    for (auto& in : list) {
        for (int& d : in.deps) d += base;
        l.push(std::move(in));
    }
    return base;
}

/// A worker's part for slice `i`: its input's pieces, the slice (each upload also after the
/// pieces it reads), its output's pieces after the downloads and reductions.
void worker_slice(List& l, const KernelSliceDecl& s, int i, const KernelProgramOptions& o) {
    const std::uint64_t piece = std::max<std::uint64_t>(o.piece_bytes, 1);
    const int first_recv = int(l.v.size());
    if (!o.local_inputs)
        for (auto& in : messages(s, i, false, InstrKind::recv, 0, piece)) l.push(std::move(in));
    const int base = append(l, compile_slice(s.spec, s.offset, s.units, {i, o.iterations, o.local_inputs ? 0 : piece}));
    std::vector<int> results;
    for (int id = base; id < int(l.v.size()); ++id) {
        Instruction& in = l.v[std::size_t(id)];
        if (in.kind == InstrKind::upload)  // also after the pieces holding its bytes
            for (int r = first_recv; r < base; ++r) {
                const Instruction& piece_in = l.v[std::size_t(r)];
                if (piece_in.at + piece_in.bytes > in.at && piece_in.at < in.at + in.bytes) in.deps.push_back(r);
            }
        if (in.kind == InstrKind::download || in.kind == InstrKind::reduce) results.push_back(id);
    }
    if (o.local_inputs) return;
    for (auto& in : messages(s, i, true, InstrKind::send, 0, piece)) {
        in.deps = results;
        l.push(std::move(in));
    }
}

std::vector<int> ranks_of(const std::vector<KernelSliceDecl>& slices) {
    std::set<int> r{0};
    for (const auto& s : slices) r.insert(s.rank);
    return {r.begin(), r.end()};
}

}  // namespace

std::vector<std::pair<int, std::vector<Instruction>>> kernel_job_lists(const std::vector<KernelSliceDecl>& slices,
                                                                       const KernelProgramOptions& o) {
    const std::uint64_t piece = std::max<std::uint64_t>(o.piece_bytes, 1);
    std::vector<std::pair<int, std::vector<Instruction>>> out;
    for (int r : ranks_of(slices)) {
        List l;
        if (r != 0) {
            for (std::size_t i = 0; i < slices.size(); ++i)
                if (slices[i].rank == r) worker_slice(l, slices[i], int(i), o);
            out.emplace_back(r, std::move(l.v));
            continue;
        }
        if (!o.local_inputs)
            for (std::size_t i = 0; i < slices.size(); ++i)
                if (slices[i].rank != 0)
                    for (auto& in : messages(slices[i], int(i), false, InstrKind::send, slices[i].rank, piece))
                        l.push(std::move(in));
        for (std::size_t i = 0; i < slices.size(); ++i)
            if (slices[i].rank == 0)
                append(l, compile_slice(slices[i].spec, slices[i].offset, slices[i].units, {int(i), o.iterations, 0}));
        if (!o.local_inputs)
            for (std::size_t i = 0; i < slices.size(); ++i)
                if (slices[i].rank != 0)
                    for (auto& in : messages(slices[i], int(i), true, InstrKind::recv, slices[i].rank, piece))
                        l.push(std::move(in));
        out.emplace_back(0, std::move(l.v));
    }
    return out;
}

std::string format_kernel_instructions(const std::vector<KernelSliceDecl>& slices, const KernelProgramOptions& o) {
    std::ostringstream t;
    for (const auto& [rank, list] : kernel_job_lists(slices, o)) {
        t << "rank " << rank << ":\n";
        for (std::size_t i = 0; i < list.size(); ++i)
            t << "  " << i << ": " << describe(list[i], slices[std::size_t(list[i].slice)].spec) << '\n';
    }
    return t.str();
}

nlohmann::json kernel_instructions_to_json(const std::vector<KernelSliceDecl>& slices, const KernelProgramOptions& o) {
    nlohmann::json ranks = nlohmann::json::array();
    for (const auto& [rank, list] : kernel_job_lists(slices, o)) {
        nlohmann::json js = nlohmann::json::array();
        for (const auto& in : list) js.push_back(instruction_to_json(in, slices[std::size_t(in.slice)].spec));
        ranks.push_back({{"rank", rank}, {"list", std::move(js)}});
    }
    return {{"schema", "worksize.instructions/1"},
            {"job", slices.empty() ? std::string() : slices.front().spec.name},
            {"ranks", std::move(ranks)}};
}

}  // namespace worksize
