// A data job's bulk transfers as instructions (instructions.hpp): the scatter of the inputs
// (StepCompiler::compile_scatter) and the gathers of the outputs (compile_gather).
#include <algorithm>
#include <map>

#include "worksize/scheduler/instructions.hpp"

namespace worksize {

namespace {

/// One message of a gather: `rows` units of `buffer` from `first` (a shared buffer's elements),
/// bytes [at, at + bytes) of the job's host buffer, read from slice `slice`.
struct Piece {
    int slice = -1, buffer = -1;
    std::uint64_t first = 0, rows = 0, at = 0, bytes = 0;
};

/// Whole units of `unit` bytes per piece of at most `piece` bytes, at least one.
std::uint64_t per_piece(std::uint64_t piece, std::uint64_t unit) {
    return std::max<std::uint64_t>(1, piece / std::max<std::uint64_t>(unit, 1));
}

/// Units [first, first + n) of `unit` bytes cut into pieces, appended to `out`.
void cut(std::vector<Piece>& out, int slice, int b, std::uint64_t first, std::uint64_t n, std::uint64_t unit,
         std::uint64_t piece) {
    const std::uint64_t per = per_piece(piece, unit);
    for (std::uint64_t k = 0; k < n; k += per) {
        const std::uint64_t m = std::min(per, n - k);
        out.push_back({slice, b, first + k, m, (first + k) * unit, m * unit});
    }
}

std::vector<int> outputs(const DataJobSpec& spec, BufferLayout layout) {
    std::vector<int> v;
    for (std::size_t b = 0; b < spec.buffers.size(); ++b)
        if (spec.buffers[b].output && spec.buffers[b].layout == layout) v.push_back(int(b));
    return v;
}

/// The buffers rank 0 sends (not those each rank generates).
std::vector<int> inputs(const DataJobSpec& spec, BufferLayout layout) {
    std::vector<int> v;
    for (std::size_t b = 0; b < spec.buffers.size(); ++b)
        if (spec.buffers[b].input && spec.buffers[b].layout == layout) v.push_back(int(b));
    return v;
}

/// Rank `r`'s input pieces in the order rank 0 sends them: each slice's split inputs (its rows
/// with their halos), slice by slice, then the shared inputs once (slice -1: onto each of the
/// rank's devices).
std::vector<Piece> input_pieces(const DataJobSpec& spec, const DataLayout& layout, int r,
                                std::uint64_t piece) {
    std::vector<Piece> out;
    bool any = false;
    for (std::size_t i = 0; i < layout.slices.size(); ++i) {
        const auto& s = layout.slices[i];
        if (s.rank != r) continue;
        any = true;
        for (int b : inputs(spec, BufferLayout::split)) {
            const auto [first, n] = input_rows(spec, b, s.offset, s.units);
            cut(out, int(i), b, first, n, row_bytes(spec.buffers[std::size_t(b)]), piece);
        }
    }
    if (any)
        for (int b : inputs(spec, BufferLayout::shared)) {
            const auto& d = spec.buffers[std::size_t(b)];
            cut(out, -1, b, 0, d.count, elem_size(d.type), piece);
        }
    return out;
}

/// The ranks other than 0 with slices, ascending.
std::vector<int> worker_ranks(const DataLayout& layout) {
    std::vector<int> workers;
    for (const auto& s : layout.slices)
        if (s.rank != 0 && std::find(workers.begin(), workers.end(), s.rank) == workers.end()) workers.push_back(s.rank);
    std::sort(workers.begin(), workers.end());
    return workers;
}

/// The rank that sends the shared outputs at the end: the first with slices, when rank 0 has none
/// (-1 when rank 0 has slices: it reads them itself).
int shared_sender(const DataLayout& layout) {
    int first = -1;
    for (const auto& s : layout.slices) {
        if (s.rank == 0) return -1;
        if (first < 0 || s.rank < first) first = s.rank;
    }
    return first;
}

/// Rank `r`'s pieces in the order it sends them: each slice's split outputs, slice by slice, then
/// (`shared`) the shared outputs from its first slice.
std::vector<Piece> pieces_of(const DataJobSpec& spec, const DataLayout& layout, int r, bool shared,
                             std::uint64_t piece) {
    std::vector<Piece> out;
    int first_slice = -1;
    for (std::size_t i = 0; i < layout.slices.size(); ++i) {
        const auto& s = layout.slices[i];
        if (s.rank != r) continue;
        if (first_slice < 0) first_slice = int(i);
        for (int b : outputs(spec, BufferLayout::split))
            cut(out, int(i), b, s.offset, s.units, row_bytes(spec.buffers[std::size_t(b)]), piece);
    }
    if (shared && first_slice >= 0)
        for (int b : outputs(spec, BufferLayout::shared)) {
            const auto& d = spec.buffers[std::size_t(b)];
            cut(out, first_slice, b, 0, d.count, elem_size(d.type), piece);
        }
    return out;
}

Instruction gather_instr(InstrKind kind, const Piece& p, int peer, std::uint64_t steps,
                         Flow flow = Flow::gather) {
    Instruction in;
    in.kind = kind;
    in.flow = flow;
    in.slice = kind == InstrKind::recv ? -1 : p.slice;
    in.buffer = p.buffer;
    in.first = p.first;
    in.rows = p.rows;
    in.at = p.at;
    in.bytes = p.bytes;
    in.peer = peer;
    in.feeds_step = steps;
    return in;
}

/// A worker's part: its status word, then each piece read into its slice's ring of `depth`
/// slots one read ahead of the sends; a slot's next read after its last send.
void worker_gather(std::vector<Instruction>& list, const std::vector<Piece>& pieces, std::uint64_t steps,
                   int depth) {
    Instruction status = gather_instr(InstrKind::send, Piece{}, 0, steps);
    list.push_back(status);
    std::map<int, int> ring, used;  // slice -> its ring's first slot; slice -> pieces so far
    std::map<int, int> last_send;   // slot -> its last send
    std::vector<int> reads;
    auto send = [&](std::size_t k) {
        Instruction in = gather_instr(InstrKind::send, pieces[k], 0, steps);
        const Instruction& read = list[std::size_t(reads[k])];
        in.staging = read.staging;
        in.deps = {reads[k]};
        list.push_back(in);
        last_send[in.staging] = int(list.size()) - 1;
    };
    for (std::size_t k = 0; k < pieces.size(); ++k) {
        const int sl = pieces[k].slice;
        if (!ring.count(sl)) ring[sl] = int(ring.size()) * depth;
        Instruction in = gather_instr(InstrKind::read_rows, pieces[k], -1, steps);
        in.staging = ring[sl] + used[sl]++ % depth;
        if (last_send.count(in.staging)) in.deps = {last_send[in.staging]};
        list.push_back(in);
        reads.push_back(int(list.size()) - 1);
        if (k > 0) send(k - 1);
    }
    if (!pieces.empty()) send(pieces.size() - 1);
}

/// A worker's part of the scatter: each piece received into one of two slots, one receive ahead
/// of the writes, and written onto its slice (a shared input's onto each of the rank's slices);
/// a slot's next receive after its last writes.
void worker_scatter(std::vector<Instruction>& list, const std::vector<Piece>& pieces,
                    const std::vector<int>& mine) {
    std::vector<int> recvs;
    std::map<int, std::vector<int>> writes;  // slot -> its last writes
    auto recv = [&](std::size_t k) {
        Instruction in = gather_instr(InstrKind::recv, pieces[k], 0, 0, Flow::scatter);
        in.staging = int(k % 2);
        in.deps = writes[in.staging];
        list.push_back(in);
        recvs.push_back(int(list.size()) - 1);
    };
    auto write = [&](std::size_t k) {
        const int slot = int(k % 2);
        writes[slot].clear();
        for (int sl : pieces[k].slice >= 0 ? std::vector<int>{pieces[k].slice} : mine) {
            Instruction in = gather_instr(InstrKind::write_rows, pieces[k], -1, 0, Flow::scatter);
            in.slice = sl;
            in.staging = slot;
            in.deps = {recvs[k]};
            list.push_back(in);
            writes[slot].push_back(int(list.size()) - 1);
        }
    };
    for (std::size_t k = 0; k < pieces.size(); ++k) {
        recv(k);
        if (k > 0) write(k - 1);
    }
    if (!pieces.empty()) write(pieces.size() - 1);
}

}  // namespace

std::vector<Instruction> StepCompiler::compile_scatter() const {
    std::vector<Instruction> list;
    const std::uint64_t piece = std::max<std::uint64_t>(options_.piece_bytes, 1);
    if (rank_ != 0) {
        if (!mine_.empty()) worker_scatter(list, input_pieces(spec_, layout_, rank_, piece), mine_);
        return list;
    }
    // Rank 0: every worker's pieces, posted at once from the job's memory, then its own slices'
    // inputs, each in one upload (from the job's memory too) while they move.
    const std::vector<int> workers = worker_ranks(layout_);
    for (int r : workers)
        for (const Piece& p : input_pieces(spec_, layout_, r, piece)) {
            list.push_back(gather_instr(InstrKind::send, p, r, 0, Flow::scatter));
            list.back().slice = -1;
            list.back().host = true;
        }
    for (int i : mine_) {
        const auto& s = layout_.slices[std::size_t(i)];
        auto upload = [&](int b, std::uint64_t first, std::uint64_t n, std::uint64_t unit) {
            list.push_back(gather_instr(InstrKind::upload, {i, b, first, n, first * unit, n * unit}, -1, 0,
                                        Flow::scatter));
            list.back().host = true;
        };
        for (int b : inputs(spec_, BufferLayout::split)) {
            const auto [first, n] = input_rows(spec_, b, s.offset, s.units);
            upload(b, first, n, row_bytes(spec_.buffers[std::size_t(b)]));
        }
        for (int b : inputs(spec_, BufferLayout::shared)) {
            const auto& d = spec_.buffers[std::size_t(b)];
            upload(b, 0, d.count, elem_size(d.type));
        }
    }
    return list;
}

std::vector<Instruction> StepCompiler::compile_gather(std::uint64_t steps, bool final) const {
    std::vector<Instruction> list;
    const std::uint64_t piece = std::max<std::uint64_t>(options_.piece_bytes, 1);
    const int sender = final ? shared_sender(layout_) : -1;
    if (rank_ != 0) {
        if (!mine_.empty())
            worker_gather(list, pieces_of(spec_, layout_, rank_, rank_ == sender, piece), steps,
                          std::max(options_.send_depth, 1));
        return list;
    }
    // Rank 0: its own slices' rows straight into the job's memory, then each worker's pieces.
    auto download = [&](int slice, int b, std::uint64_t first, std::uint64_t rows, std::uint64_t unit) {
        list.push_back(
            gather_instr(InstrKind::download, {slice, b, first, rows, first * unit, rows * unit}, -1, steps));
        list.back().host = true;
    };
    for (int i : mine_) {
        const auto& s = layout_.slices[std::size_t(i)];
        for (int b : outputs(spec_, BufferLayout::split))
            download(i, b, s.offset, s.units, row_bytes(spec_.buffers[std::size_t(b)]));
    }
    if (final && !mine_.empty())
        for (int b : outputs(spec_, BufferLayout::shared)) {
            const auto& d = spec_.buffers[std::size_t(b)];
            download(mine_.front(), b, 0, d.count, elem_size(d.type));
        }
    const std::vector<int> workers = worker_ranks(layout_);
    const int window = std::max(options_.recv_window, 1);
    for (int r : workers) {
        list.push_back(gather_instr(InstrKind::recv, Piece{}, r, steps));
        const int status = int(list.size()) - 1;
        std::vector<int> recvs;
        for (const Piece& p : pieces_of(spec_, layout_, r, r == sender, piece)) {
            Instruction in = gather_instr(InstrKind::recv, p, r, steps);
            in.host = true;
            in.deps = {status};
            if (recvs.size() >= std::size_t(window))
                in.deps.push_back(recvs[recvs.size() - std::size_t(window)]);
            list.push_back(in);
            recvs.push_back(int(list.size()) - 1);
        }
    }
    return list;
}

std::vector<Instruction> StepCompiler::compile_host_step(std::uint64_t done) const {
    std::vector<Instruction> list;
    const int sender = shared_sender(layout_);
    auto add = [&](InstrKind k, int slice, int b, int peer) -> Instruction& {
        Instruction in;
        in.kind = k;
        in.flow = Flow::host;
        in.slice = slice;
        in.buffer = b;
        in.peer = peer;
        in.first = done;
        if (b >= 0) {
            const auto& d = spec_.buffers[std::size_t(b)];
            in.rows = d.count;
            in.bytes = d.count * elem_size(d.type);
        }
        list.push_back(in);
        return list.back();
    };
    const std::vector<int> workers = worker_ranks(layout_);
    std::vector<int> written;
    for (std::size_t b = 0; b < spec_.buffers.size(); ++b)
        if (spec_.buffers[b].host_written) written.push_back(int(b));
    const bool last = done >= spec_.steps;  // nothing reads the rewritten inputs after it
    if (rank_ == 0) {
        for (int b : outputs(spec_, BufferLayout::shared)) {
            if (!mine_.empty())
                add(InstrKind::download, mine_.front(), b, -1).host = true;
            else if (sender > 0)  // rank 0 has no slices
                add(InstrKind::recv, -1, b, sender).host = true;
        }
        add(InstrKind::host, -1, -1, -1);
        if (last) return list;
        for (int b : written) {
            for (int r : workers) add(InstrKind::send, -1, b, r).host = true;
            for (int i : mine_) add(InstrKind::upload, i, b, -1).host = true;
        }
        return list;
    }
    if (rank_ == sender)  // rank 0 has no slices
        for (int b : outputs(spec_, BufferLayout::shared)) add(InstrKind::send, -1, b, 0);
    if (last || mine_.empty()) return list;
    for (int b : written) {
        add(InstrKind::recv, -1, b, 0);
        const int recv = int(list.size()) - 1;
        for (int i : mine_) add(InstrKind::upload, i, b, -1).deps = {recv};
    }
    return list;
}

std::vector<Instruction> StepCompiler::compile_start() const {
    std::vector<Instruction> list;
    auto add = [&](InstrKind k, int peer) {
        Instruction in;
        in.kind = k;
        in.flow = Flow::start;
        in.peer = peer;
        list.push_back(in);
    };
    if (rank_ != 0) {
        if (mine_.empty()) return list;
        add(InstrKind::send, 0);
        add(InstrKind::recv, 0);
        return list;
    }
    const std::vector<int> workers = worker_ranks(layout_);
    for (int r : workers) add(InstrKind::recv, r);
    for (int r : workers) add(InstrKind::send, r);
    return list;
}

}  // namespace worksize
