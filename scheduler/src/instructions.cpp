// A data job's steps as per-rank instruction lists (instructions.hpp).
#include "worksize/scheduler/instructions.hpp"

#include <algorithm>
#include <functional>
#include <sstream>

namespace worksize {

const char* to_string(InstrKind k) {
    switch (k) {
        case InstrKind::launch: return "launch";
        case InstrKind::read_rows: return "read";
        case InstrKind::write_rows: return "write";
        case InstrKind::send: return "send";
        case InstrKind::recv: return "recv";
        case InstrKind::reduce: return "reduce";
        case InstrKind::alloc: return "alloc";
        case InstrKind::upload: return "upload";
        case InstrKind::download: return "download";
        case InstrKind::host: return "host";
    }
    return "?";
}

const char* to_string(LaunchPart p) {
    switch (p) {
        case LaunchPart::whole: return "whole";
        case LaunchPart::top: return "top";
        case LaunchPart::bottom: return "bottom";
        case LaunchPart::interior: return "interior";
    }
    return "?";
}

namespace {
bool writes(const KernelDecl& k, int b) {
    return std::any_of(k.args.begin(), k.args.end(), [b](const ArgDecl& a) {
        return (a.kind == ArgKind::write || a.kind == ArgKind::read_write) && a.buffer == b;
    });
}
bool reads_halo(const KernelDecl& k, int b) {
    return std::any_of(k.args.begin(), k.args.end(),
                       [b](const ArgDecl& a) { return a.kind == ArgKind::halo && a.buffer == b; });
}
int swapped(const DataJobSpec& s, int b) {
    for (const auto& [x, y] : s.swaps) {
        if (x == b) return y;
        if (y == b) return x;
    }
    return b;
}
}  // namespace

/// The list under construction: appends an instruction and remembers, per slice, the last launch
/// and the halo writes since it (the dependencies of the next read and the next launch).
struct StepCompiler::Emit {
    std::vector<Instruction> list;
    std::vector<int> last_launch;                  ///< per layout slice, -1: none in this list
    std::vector<std::vector<int>> pending_writes;  ///< per layout slice
    int next_slot = 0;

    explicit Emit(std::size_t slices) : last_launch(slices, -1), pending_writes(slices) {}
    int add(Instruction in) {
        list.push_back(std::move(in));
        return int(list.size()) - 1;
    }
    int launch(int slice, int k, std::uint64_t first, std::uint64_t rows, LaunchPart part) {
        Instruction in;
        in.kind = InstrKind::launch;
        in.slice = slice;
        in.kernel = k;
        in.first = first;
        in.rows = rows;
        in.part = part;
        in.deps = pending_writes[std::size_t(slice)];
        pending_writes[std::size_t(slice)].clear();
        const int id = add(std::move(in));
        last_launch[std::size_t(slice)] = id;
        return id;
    }
};

StepCompiler::StepCompiler(const DataJobSpec& spec, const DataLayout& layout, int rank, ProgramOptions options)
    : spec_(spec), layout_(layout), rank_(rank), options_(options), dirty_(spec.buffers.size(), false) {
    for (std::size_t i = 0; i < layout.slices.size(); ++i)
        if (layout.slices[i].rank == rank) mine_.push_back(int(i));
    for (std::size_t b = 0; b < spec.buffers.size(); ++b) halo_.push_back(halo_rows(spec, int(b)));
}

bool StepCompiler::splittable(std::size_t k) const {
    const KernelDecl& kd = spec_.kernels[k];
    return options_.overlap && spec_.exchange_every <= 1 && kd.units_per_item == 1 && kd.group_units == 0 && !kd.slice_relative &&
           std::none_of(kd.args.begin(), kd.args.end(), [](const ArgDecl& a) { return a.kind == ArgKind::reduce; });
}

bool StepCompiler::splits(std::size_t k) const {
    if (!splittable(k)) return false;
    for (std::uint64_t s = 0; s < std::min<std::uint64_t>(spec_.steps, 2); ++s)
        if (!eager_exchanges(k, s).empty()) return true;
    return false;
}

std::vector<std::pair<int, std::uint64_t>> StepCompiler::eager_exchanges(std::size_t k, std::uint64_t step) const {
    std::vector<std::pair<int, std::uint64_t>> out;
    if (!options_.overlap || spec_.exchange_every > 1 || layout_.slices.size() < 2) return out;
    for (std::size_t b = 0; b < spec_.buffers.size(); ++b) {
        if (!writes(spec_.kernels[k], int(b)) || halo_[b] == 0) continue;
        // Follow the buffer through the rest of this step, its swap, and the next step: the
        // first launch that touches it must read its halo (then this kernel was its last writer).
        int cur = int(b);
        bool found = false, done = false;
        std::uint64_t feeds = step;
        std::size_t j = k + 1;
        for (std::uint64_t s = step; s < spec_.steps && s <= step + 1 && !done; ++s, j = 0) {
            for (; j < spec_.kernels.size(); ++j) {
                if (!runs_in(spec_.kernels[j], s, spec_.steps)) continue;
                if (reads_halo(spec_.kernels[j], cur)) {
                    found = done = true;
                    feeds = s;
                    break;
                }
                if (writes(spec_.kernels[j], cur)) {
                    done = true;
                    break;
                }
            }
            if (!done) cur = swapped(spec_, cur);
        }
        if (found) out.emplace_back(int(b), feeds);
    }
    return out;
}

namespace {
struct ExchangeRows {
    const DataJobSpec& spec;
    const DataLayout& layout;
    int rank;
    const std::vector<int>& mine;
};

/// The exchange of buffer `b`'s `h` halo rows among this rank's slices and with its neighbours:
/// receives posted, boundary rows read back, then (after `between`, e.g. the interior launches)
/// sent, and the halo rows written.
void emit_exchange(const ExchangeRows& x, StepCompiler::Emit& e, int b, std::uint64_t h, std::uint64_t feeds,
                   const std::function<void()>& between) {
    const std::uint64_t row = row_bytes(x.spec.buffers[std::size_t(b)]), n = h * row;
    auto io = [&](InstrKind kind, int slice, std::uint64_t first, int slot, int peer) {
        Instruction in;
        in.kind = kind;
        in.slice = slice;
        in.buffer = b;
        in.first = first;
        in.rows = h;
        in.staging = slot;
        in.peer = peer;
        in.bytes = n;
        in.feeds_step = feeds;
        return in;
    };
    const auto& S = x.layout.slices;
    const int first = x.mine.front(), last = x.mine.back();
    const int left_rank = S[std::size_t(first)].left >= 0 ? S[std::size_t(S[std::size_t(first)].left)].rank : -1;
    const int right_rank = S[std::size_t(last)].right >= 0 ? S[std::size_t(S[std::size_t(last)].right)].rank : -1;
    int recv_left = -1, recv_right = -1;
    if (left_rank >= 0) recv_left = e.add(io(InstrKind::recv, -1, S[std::size_t(first)].offset - h, e.next_slot++, left_rank));
    if (right_rank >= 0) {
        const auto& s = S[std::size_t(last)];
        recv_right = e.add(io(InstrKind::recv, -1, s.offset + s.units, e.next_slot++, right_rank));
    }
    std::vector<int> top(S.size(), -1), bottom(S.size(), -1);
    for (int i : x.mine) {
        const auto& s = S[std::size_t(i)];
        auto read = [&](std::uint64_t at) {
            Instruction in = io(InstrKind::read_rows, i, at, e.next_slot++, -1);
            if (e.last_launch[std::size_t(i)] >= 0) in.deps.push_back(e.last_launch[std::size_t(i)]);
            return e.add(std::move(in));
        };
        if (s.left >= 0) top[std::size_t(i)] = read(s.offset);
        if (s.right >= 0) bottom[std::size_t(i)] = read(s.offset + s.units - h);
    }
    between();
    auto send = [&](int read_id, int peer) {
        Instruction in = io(InstrKind::send, -1, e.list[std::size_t(read_id)].first, e.list[std::size_t(read_id)].staging, peer);
        in.deps.push_back(read_id);
        e.add(std::move(in));
    };
    if (right_rank >= 0) send(bottom[std::size_t(last)], right_rank);  // rightward first, as the old schedule
    if (left_rank >= 0) send(top[std::size_t(first)], left_rank);
    auto write = [&](int slice, std::uint64_t at, int from) {
        Instruction in = io(InstrKind::write_rows, slice, at, e.list[std::size_t(from)].staging, -1);
        in.deps.push_back(from);
        e.pending_writes[std::size_t(slice)].push_back(e.add(std::move(in)));
    };
    for (std::size_t j = 0; j + 1 < x.mine.size(); ++j) {
        const int l = x.mine[j], r = x.mine[j + 1];
        write(r, S[std::size_t(r)].offset - h, bottom[std::size_t(l)]);
        write(l, S[std::size_t(l)].offset + S[std::size_t(l)].units, top[std::size_t(r)]);
    }
    if (recv_left >= 0) write(first, S[std::size_t(first)].offset - h, recv_left);
    if (recv_right >= 0) write(last, S[std::size_t(last)].offset + S[std::size_t(last)].units, recv_right);
}
}  // namespace

std::vector<Instruction> StepCompiler::compile_step(std::uint64_t step) {
    Emit e(layout_.slices.size());
    if (mine_.empty()) return {};
    const ExchangeRows x{spec_, layout_, rank_, mine_};
    const bool exchanges = step % std::max<std::uint64_t>(spec_.exchange_every, 1) == 0;
    const std::function<void()> nothing = [] {};
    for (std::size_t k = 0; k < spec_.kernels.size(); ++k) {
        if (!runs_in(spec_.kernels[k], step, spec_.steps)) continue;  // not one of this step's
        // Halos still due before this launch: without overlap, or with ghost zones (every k-th
        // step). The inputs came with their halo rows: nothing is due before it is written.
        if (exchanges)
            for (int b : halo_exchanges_before(spec_, k, dirty_))
                emit_exchange(x, e, b, halo_[std::size_t(b)], step, nothing);
        const auto eager = eager_exchanges(k, step);
        std::uint64_t h = 0;
        for (const auto& [b, feeds] : eager) h = std::max(h, halo_[std::size_t(b)]);
        std::vector<std::pair<int, std::uint64_t>> interior;  // (slice, first) of the interior launches
        std::vector<std::uint64_t> interior_rows;
        // A kernel that requires a work-group launches its boundary rows in whole groups along
        // the split (the slices start on them): h rounded up to the group's extent there.
        const LocalSize req = spec_.kernels[k].required_local;
        const std::uint64_t ext = req.is_null() ? 1 : std::max<std::uint64_t>(spec_.dims == 2 ? req.y : req.x, 1);
        const std::uint64_t edge = (h + ext - 1) / ext * ext;
        for (int i : mine_) {
            const auto& s = layout_.slices[std::size_t(i)];
            const std::uint64_t top = s.left >= 0 ? edge : 0, bottom = s.right >= 0 ? edge : 0;
            if (eager.empty() || !splittable(k) || s.units <= top + bottom) {
                e.launch(i, int(k), s.offset, s.units, LaunchPart::whole);
                continue;
            }
            if (top) e.launch(i, int(k), s.offset, top, LaunchPart::top);
            if (bottom) e.launch(i, int(k), s.offset + s.units - bottom, bottom, LaunchPart::bottom);
            interior.emplace_back(i, s.offset + top);
            interior_rows.push_back(s.units - top - bottom);
        }
        const auto& args = spec_.kernels[k].args;
        for (std::size_t a = 0; a < args.size(); ++a)
            if (args[a].kind == ArgKind::reduce) {
                Instruction in;
                in.kind = InstrKind::reduce;
                in.kernel = int(k);
                in.arg = int(a);
                for (int i : mine_) in.deps.push_back(e.last_launch[std::size_t(i)]);
                e.add(std::move(in));
            }
        mark_written(spec_, k, dirty_);
        const std::function<void()> interiors = [&] {
            for (std::size_t j = 0; j < interior.size(); ++j)
                e.launch(interior[j].first, int(k), interior[j].second, interior_rows[j], LaunchPart::interior);
        };
        bool launched = false;
        for (const auto& [b, feeds] : eager) {
            emit_exchange(x, e, b, halo_[std::size_t(b)], feeds, launched ? nothing : interiors);
            launched = true;
            dirty_[std::size_t(b)] = false;  // its halo rows are fresh
        }
        if (!launched) interiors();
    }
    apply_swaps(spec_, dirty_);
    return std::move(e.list);
}

namespace {
/// "[a, b)" of `n` from `a`.
std::string range(std::uint64_t a, std::uint64_t n) {
    return "[" + std::to_string(a) + ", " + std::to_string(a + n) + ")";
}
/// What rows or bytes of its buffer an upload or download moves, and from or into where.
void describe_copy(std::ostream& o, const Instruction& in, const DataJobSpec& spec) {
    const auto& bd = spec.buffers[std::size_t(in.buffer)];
    o << ' ' << bd.name << " slice " << in.slice << (bd.layout == BufferLayout::split ? " rows " : " bytes ")
      << range(in.first, in.rows) << (in.kind == InstrKind::upload ? " from input " : " into output ")
      << range(in.at, in.bytes) << ' ' << in.bytes << " B";
}
}  // namespace

namespace {
/// A scatter's or a gather's instruction (compile_scatter, compile_gather): a status word, a
/// piece through a slot, or a piece from or into the job's host memory.
void describe_gather(std::ostream& o, const Instruction& in, const DataJobSpec& spec) {
    const bool message = in.kind == InstrKind::send || in.kind == InstrKind::recv;
    const char* dir = in.kind == InstrKind::send ? " to rank " : " from rank ";
    if (in.buffer < 0) {
        o << " status" << dir << in.peer;
        return;
    }
    const auto& d = spec.buffers[std::size_t(in.buffer)];
    o << ' ' << d.name;
    if (message) o << dir << in.peer;
    if (in.slice >= 0) o << " slice " << in.slice;
    o << (d.layout == BufferLayout::split ? " rows " : " elements ") << range(in.first, in.rows);
    const bool from_host = in.kind == InstrKind::send || in.kind == InstrKind::upload;
    if (in.host)
        o << (from_host ? " from host bytes " : " into host bytes ") << range(in.at, in.bytes);
    else
        o << " slot " << in.staging;
    o << ' ' << in.bytes << " B";
}
/// A host step's instruction (compile_host_step): "host step after step 5", "recv centroids
/// from rank 1 into rank 0's memory 1024 B", "upload centroids slice 0 from rank 0's memory".
void describe_host(std::ostringstream& o, const Instruction& in, const DataJobSpec& spec) {
    if (in.kind == InstrKind::host) {
        o << " step after step " << in.first;
        return;
    }
    o << ' ' << spec.buffers[std::size_t(in.buffer)].name;
    if (in.slice >= 0) o << " slice " << in.slice;
    if (in.kind == InstrKind::send) o << " to rank " << in.peer;
    if (in.kind == InstrKind::recv) o << " from rank " << in.peer;
    if (in.host) o << (in.kind == InstrKind::upload || in.kind == InstrKind::send ? " from" : " into") << " rank 0's memory";
    if (in.kind == InstrKind::send && in.host) o << " after a status word";
    o << ' ' << in.bytes << " B";
}
}  // namespace

std::string describe(const Instruction& in, const DataJobSpec& spec) {
    std::ostringstream o;
    o << to_string(in.kind);
    if (in.flow == Flow::start) {
        o << (in.peer != 0 ? (in.kind == InstrKind::recv ? " status from rank " : " go to rank ")
                             : (in.kind == InstrKind::send ? " status to rank " : " go from rank "))
          << in.peer;
        return o.str();
    }
    if (in.flow == Flow::host) {
        describe_host(o, in, spec);
        if (!in.deps.empty()) o << " after";
        for (int d : in.deps) o << ' ' << d;
        return o.str();
    }
    if (in.flow != Flow::step) {
        describe_gather(o, in, spec);
        if (!in.deps.empty()) o << " after";
        for (int d : in.deps) o << ' ' << d;
        return o.str();
    }
    auto buf = [&] { return spec.buffers[std::size_t(in.buffer)].name; };
    const bool message = in.kind == InstrKind::send || in.kind == InstrKind::recv;
    switch (in.kind) {
        case InstrKind::launch:
            o << ' ' << spec.kernels[std::size_t(in.kernel)].name << " slice " << in.slice << " units [" << in.first
              << ", " << in.first + in.rows << ") " << to_string(in.part);
            if (!spec.kernels[std::size_t(in.kernel)].library.empty()) o << " (library)";
            break;
        case InstrKind::read_rows:
        case InstrKind::write_rows:
            o << ' ' << buf() << " slice " << in.slice << " rows [" << in.first << ", " << in.first + in.rows
              << ") slot " << in.staging << ' ' << in.bytes << " B";
            break;
        case InstrKind::send:
        case InstrKind::recv:
            if (in.buffer < 0) {  // a kernel slice's input or output
                o << (in.result ? " output" : " input") << " of slice " << in.slice
                  << (in.kind == InstrKind::send ? " to rank " : " from rank ") << in.peer << ' ' << range(in.at, in.bytes)
                  << ' ' << in.bytes << " B";
                break;
            }
            o << ' ' << buf() << (in.kind == InstrKind::send ? " to rank " : " from rank ") << in.peer << " rows ["
              << in.first << ", " << in.first + in.rows << ") slot " << in.staging << ' ' << in.bytes << " B";
            break;
        case InstrKind::reduce:
            o << ' ' << spec.kernels[std::size_t(in.kernel)].name << " argument " << in.arg << " into "
              << spec.buffers[std::size_t(spec.kernels[std::size_t(in.kernel)].args[std::size_t(in.arg)].buffer)].name;
            if (in.result) o << " slice " << in.slice << ", output " << range(in.at, in.bytes);
            break;
        case InstrKind::alloc: o << ' ' << buf() << " slice " << in.slice << ' ' << in.bytes << " B"; break;
        case InstrKind::upload:
        case InstrKind::download: describe_copy(o, in, spec); break;
        case InstrKind::host: break;  // Flow::host: describe_host
    }
    if (in.kind == InstrKind::read_rows || in.kind == InstrKind::write_rows || (message && in.buffer >= 0))
        o << " for step " << in.feeds_step;
    if (!in.deps.empty()) {
        o << " after";
        for (int d : in.deps) o << ' ' << d;
    }
    return o.str();
}

nlohmann::json instruction_to_json(const Instruction& in, const DataJobSpec& spec) {
    nlohmann::json j = {{"kind", to_string(in.kind)}, {"deps", in.deps}};
    if (in.flow == Flow::start) {
        j["flow"] = "start";
        j["peer"] = in.peer;
        j["status"] = true;
        return j;
    }
    if (in.flow == Flow::host) {
        j["flow"] = "host";
        j["after"] = in.first;
        if (in.slice >= 0) j["slice"] = in.slice;
        if (in.peer >= 0) j["peer"] = in.peer;
        if (in.buffer >= 0) {
            j["buffer"] = spec.buffers[std::size_t(in.buffer)].name;
            j["bytes"] = in.bytes;
            j["host"] = in.host;
        }
        return j;
    }
    if (in.flow != Flow::step) {
        j["flow"] = in.flow == Flow::gather ? "gather" : "scatter";
        if (in.slice >= 0) j["slice"] = in.slice;
        if (in.peer >= 0) j["peer"] = in.peer;
        if (in.buffer < 0) {
            j["status"] = true;
            return j;
        }
        j["buffer"] = spec.buffers[std::size_t(in.buffer)].name;
        j["first"] = in.first;
        j["rows"] = in.rows;
        j["bytes"] = in.bytes;
        if (in.host) j["host_at"] = in.at;
        if (in.staging >= 0) j["staging"] = in.staging;
        return j;
    }
    if (in.slice >= 0) j["slice"] = in.slice;
    if (in.kernel >= 0) j["kernel"] = spec.kernels[std::size_t(in.kernel)].name;
    if (in.kind == InstrKind::reduce) j["arg"] = in.arg;
    if (in.buffer >= 0) j["buffer"] = spec.buffers[std::size_t(in.buffer)].name;
    if (in.kind == InstrKind::launch) j["part"] = to_string(in.part);
    if (in.kind == InstrKind::launch || (in.kind != InstrKind::reduce && in.kind != InstrKind::alloc && in.buffer >= 0)) {
        j["first"] = in.first;
        j["rows"] = in.rows;
    }
    if (in.peer >= 0) j["peer"] = in.peer;
    if (in.staging >= 0) {
        j["staging"] = in.staging;
        j["bytes"] = in.bytes;
        j["feeds_step"] = in.feeds_step;
    }
    const bool kernel_slice = in.kind == InstrKind::alloc || in.kind == InstrKind::upload ||
                              in.kind == InstrKind::download || in.result || (in.buffer < 0 && in.peer >= 0);
    if (kernel_slice) {
        j["bytes"] = in.bytes;
        if (in.kind != InstrKind::alloc) j["at"] = in.at;
        if (in.kind == InstrKind::send || in.kind == InstrKind::recv) j["stream"] = in.result ? "output" : "input";
    }
    return j;
}

namespace {
/// The ranks with slices, and rank 0 (which takes the gathers), ascending.
std::vector<int> ranks_of(const DataLayout& layout) {
    std::vector<int> r{0};
    for (const auto& s : layout.slices)
        if (std::find(r.begin(), r.end(), s.rank) == r.end()) r.push_back(s.rank);
    std::sort(r.begin(), r.end());
    return r;
}
/// Whether a host step follows step `done` (DataJobSpec::host_every).
bool host_due(const DataJobSpec& spec, std::uint64_t done) { return spec.host_every && done % spec.host_every == 0; }
std::uint64_t shown_steps(const DataJobSpec& spec, std::uint64_t steps) {
    return steps == 0 ? spec.steps : std::min(steps, spec.steps);
}
/// The gathers that follow the shown steps: (steps done, final) for each gather point among them
/// (DataJobSpec::gather_every), then the final one.
std::vector<std::pair<std::uint64_t, bool>> shown_gathers(const DataJobSpec& spec, std::uint64_t steps) {
    std::vector<std::pair<std::uint64_t, bool>> g;
    for (std::uint64_t s = 1; spec.gather_every && s <= shown_steps(spec, steps) && s < spec.steps; ++s)
        if (s % spec.gather_every == 0) g.emplace_back(s, false);
    g.emplace_back(spec.steps, true);
    return g;
}
}  // namespace

std::string format_instructions(const DataJobSpec& spec, const DataLayout& layout, std::uint64_t steps,
                                ProgramOptions options) {
    std::ostringstream o;
    // "  TITLE:" and the list's numbered lines; an empty list only with `even_empty` (a step).
    auto section = [&](const std::string& title, const std::vector<Instruction>& list, bool even_empty = false) {
        if (list.empty() && !even_empty) return;
        o << "  " << title << ":\n";
        for (std::size_t i = 0; i < list.size(); ++i) o << "    " << i << ": " << describe(list[i], spec) << '\n';
    };
    for (int r : ranks_of(layout)) {
        o << "rank " << r << ":\n";
        StepCompiler c(spec, layout, r, options);
        section("scatter", c.compile_scatter());
        section("start", c.compile_start());
        for (std::uint64_t s = 0; s < shown_steps(spec, steps); ++s) {
            section("step " + std::to_string(s), c.compile_step(s), true);
            if (host_due(spec, s + 1)) section("host step after step " + std::to_string(s + 1), c.compile_host_step(s + 1));
        }
        for (const auto& [after, final] : shown_gathers(spec, steps))
            section(std::string(final ? "final gather" : "gather") + " after step " + std::to_string(after),
                    c.compile_gather(after, final));
    }
    return o.str();
}

nlohmann::json instructions_to_json(const DataJobSpec& spec, const DataLayout& layout, std::uint64_t steps,
                                    ProgramOptions options) {
    nlohmann::json ranks = nlohmann::json::array();
    for (int r : ranks_of(layout)) {
        StepCompiler c(spec, layout, r, options);
        nlohmann::json js = nlohmann::json::array();
        for (std::uint64_t s = 0; s < shown_steps(spec, steps); ++s) {
            nlohmann::json list = nlohmann::json::array();
            for (const auto& in : c.compile_step(s)) list.push_back(instruction_to_json(in, spec));
            js.push_back(std::move(list));
        }
        nlohmann::json hosts = nlohmann::json::array();
        for (std::uint64_t s = 1; s <= shown_steps(spec, steps); ++s) {
            if (!host_due(spec, s)) continue;
            nlohmann::json list = nlohmann::json::array();
            for (const auto& in : c.compile_host_step(s)) list.push_back(instruction_to_json(in, spec));
            if (!list.empty()) hosts.push_back({{"after", s}, {"list", std::move(list)}});
        }
        nlohmann::json gathers = nlohmann::json::array();
        for (const auto& [after, final] : shown_gathers(spec, steps)) {
            nlohmann::json list = nlohmann::json::array();
            for (const auto& in : c.compile_gather(after, final))
                list.push_back(instruction_to_json(in, spec));
            gathers.push_back({{"after", after}, {"final", final}, {"list", std::move(list)}});
        }
        nlohmann::json scatter = nlohmann::json::array();
        for (const auto& in : c.compile_scatter()) scatter.push_back(instruction_to_json(in, spec));
        nlohmann::json rank = {{"rank", r},
                               {"scatter", std::move(scatter)},
                               {"steps", std::move(js)},
                               {"gathers", std::move(gathers)}};
        if (!hosts.empty()) rank["hosts"] = std::move(hosts);
        nlohmann::json start = nlohmann::json::array();
        for (const auto& in : c.compile_start()) start.push_back(instruction_to_json(in, spec));
        if (!start.empty()) rank["start"] = std::move(start);
        ranks.push_back(std::move(rank));
    }
    return {{"schema", "worksize.instructions/1"}, {"job", spec.name}, {"ranks", std::move(ranks)}};
}

}  // namespace worksize
