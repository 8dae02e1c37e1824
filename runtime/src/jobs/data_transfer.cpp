// A data job's scatter and gathers in pieces (data_transfer.hpp).
#include "jobs/data_transfer.hpp"

#include <algorithm>
#include <array>
#include <thread>

#include "transport/pieces.hpp"

namespace worksize::data_exec {

using wire::kData;

std::uint64_t piece_rows(std::uint64_t row) {
    return std::max<std::uint64_t>(1, pieces::piece_bytes() / std::max<std::uint64_t>(row, 1));
}

namespace {

/// `bytes` (units of `unit` bytes) as the pieces piece_rows() cuts: f(first unit, piece).
template <class F>
void for_pieces(std::span<const std::byte> bytes, std::uint64_t unit, F&& f) {
    const std::uint64_t per = piece_rows(unit) * unit;
    for (std::uint64_t at = 0; at < bytes.size(); at += per)
        f(at / unit, bytes.subspan(at, std::min<std::uint64_t>(per, bytes.size() - at)));
}

/// Rank 0's bytes of input `b` for a slice at [offset, offset + units): its rows with their
/// halos (split), or all of it (shared); their unit's size in *unit, the first unit in *first.
std::span<const std::byte> input_of(MasterRun& m, int b, std::uint64_t offset, std::uint64_t units,
                                    std::uint64_t* unit, std::uint64_t* first) {
    const auto& d = m.spec.buffers[std::size_t(b)];
    const auto host = std::span<const std::byte>(m.job.host(b));
    if (d.layout == BufferLayout::shared) {
        *unit = elem_size(d.type);
        *first = 0;
        return host;
    }
    const auto [from, n] = input_rows(m.spec, b, offset, units);
    *unit = m.x.row_bytes(b);
    *first = from;
    return host.subspan(from * *unit, n * *unit);
}

/// The split inputs of a slice, then (once per rank) the shared ones: the order of the scatter.
std::vector<int> inputs_of(const DataJobSpec& spec, BufferLayout layout) {
    std::vector<int> v;
    for (std::size_t b = 0; b < spec.buffers.size(); ++b)
        if (spec.buffers[b].input && spec.buffers[b].layout == layout) v.push_back(int(b));
    return v;
}

}  // namespace

void await_uploads(Execution& x, std::vector<cl::Event>& evs, const std::function<void()>& progress) {
    for (auto& ev : evs) {
        if (!ev()) continue;  // not enqueued (this rank had failed)
        try {
            cl_int st;
            while ((st = ev.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>()) > CL_COMPLETE) {
                progress();
                std::this_thread::yield();
            }
            if (st < 0) throw cl::Error(st, "clEnqueueWriteBuffer");
        } catch (const cl::Error& e) {
            x.fail(e, "uploading the inputs");
        }
    }
    evs.clear();
}

Stager::Stager(Execution& x, std::shared_ptr<HostMemoryResource> pinned, std::function<void()> progress)
    : x_(x), progress_(std::move(progress)), half_{Half{bytes_with(pinned), {}}, Half{bytes_with(pinned), {}}} {}

Bytes& Stager::next(std::uint64_t bytes) {
    Half& h = half_[std::size_t(next_)];
    next_ ^= 1;
    current_ = &h;
    await_uploads(x_, h.uploads, progress_);
    h.bytes.resize(bytes);
    return h.bytes;
}

void Stager::upload(SliceState& s, int b, std::uint64_t first) {
    x_.upload(s, b, first, current_->bytes, false, &current_->uploads.emplace_back());
    if (!x_.failed()) s.ctx->queue().flush();  // under way while the next piece is made
}

void Stager::finish() {
    for (auto& h : half_) await_uploads(x_, h.uploads, progress_);
}

void scatter(MasterRun& m) {
    const DataJobSpec& spec = m.spec;
    const auto split = inputs_of(spec, BufferLayout::split), shared = inputs_of(spec, BufferLayout::shared);
    std::uint64_t unit = 0, first = 0;
    // Every worker's pieces, posted at once: each of its slices' split inputs, then the shared
    // inputs once per rank. A worker sends heartbeats while it sets up, before it takes them.
    std::vector<std::pair<int, std::size_t>> sends;  // (worker, handle)
    auto post = [&](int r, std::span<const std::byte> bytes) {
        for_pieces(bytes, unit, [&](std::uint64_t, std::span<const std::byte> piece) {
            sends.emplace_back(r, m.comm.isend_short(piece, r, kData));
        });
    };
    for (int r : m.workers) {
        for (const auto& s : m.slices)
            if (s.rank == r)
                for (int b : split) post(r, input_of(m, b, s.offset, s.units, &unit, &first));
        for (int b : shared) post(r, input_of(m, b, 0, 0, &unit, &first));
    }
    // Rank 0's own slices while they move: each input in one write (the job's memory stays as
    // it is until the run ends). With sends to progress, the writes are not blocking and the
    // sends are tested until they end (MPI moves a message only inside its calls): k-means'
    // setup over two H200 ranks took 194 ms against 233 with rank 0 writing in blocking 16 MiB
    // pieces. Without, each write blocks, as before the scatter had pieces (on one H200 the
    // driver's copy of 1 GiB of pageable memory was 9-25 ms slower polled or in pieces), each
    // device's in a thread of its own when the rank has several.
    auto own_inputs = [&](const SliceState& s) {  // a slice's split inputs, then the shared ones
        std::vector<Execution::Input> in;
        for (const auto& list : {split, shared})
            for (int b : list) {
                const auto bytes = input_of(m, b, s.desc.offset, s.desc.units, &unit, &first);
                in.push_back({b, first, bytes});
            }
        return in;
    };
    std::vector<cl::Event> uploads;
    const bool blocking = sends.empty();
    if (blocking)
        m.x.upload_each_device(own_inputs);
    else
        for (auto& s : m.x.mine_mutable()) {
            for (const auto& i : own_inputs(s))
                m.x.upload(s, i.b, i.first, i.data, blocking, blocking ? nullptr : &uploads.emplace_back());
            if (!blocking && !m.x.failed()) s.ctx->queue().flush();
        }
    await_uploads(m.x, uploads, [&] { m.watch.test_sends(sends); });
    m.watch.await_sends(sends);
    // Every rank starts its steps together: each worker says it is set up (its inputs are on
    // its devices), then rank 0 says go. Without it, a rank that compiled its program faster
    // waited on its neighbours' setup in the first step, and under load past --rank-timeout.
    for (int r : m.workers) {
        m.watch.await(r, kData);
        (void)m.comm.recv_json(r, kData);
    }
    for (int r : m.workers) m.comm.send_json({{"go", true}}, r, kData);
}

void receive_inputs(Execution& x, const DataJobSpec& spec, Comm& comm) {
    std::shared_ptr<HostMemoryResource> pinned;
    if (!x.mine().empty() && x.mine().front().ctx) pinned = x.mine().front().ctx->host_memory();
    // Piece k + 1 arrives while piece k is uploaded (to each device of the rank, for a shared
    // input). Pinning two halves costs little; a scatter of gigabytes pinned no more.
    Stager stage(x, pinned, [&] { comm.pulse(); });
    auto receive = [&](std::uint64_t bytes) { pieces::receive_all(comm, 0, kData, stage.next(bytes)); };
    for (auto& s : x.mine_mutable())
        for (int b : inputs_of(spec, BufferLayout::split)) {
            const auto [first, n] = input_rows(spec, b, s.desc.offset, s.desc.units);
            const std::uint64_t row = x.row_bytes(b), per = piece_rows(row);
            for (std::uint64_t p = 0; p < n; p += per) {
                receive(std::min(per, n - p) * row);
                stage.upload(s, b, first + p);
            }
        }
    for (int b : inputs_of(spec, BufferLayout::shared)) {
        const auto& d = spec.buffers[std::size_t(b)];
        const std::uint64_t elem = elem_size(d.type), per = piece_rows(elem);
        for (std::uint64_t e = 0; e < d.count; e += per) {
            receive(std::min(per, d.count - e) * elem);
            for (auto& s : x.mine_mutable()) stage.upload(s, b, e);
        }
    }
    stage.finish();
}

std::vector<int> split_outputs(const DataJobSpec& spec) {
    std::vector<int> v;
    for (std::size_t b = 0; b < spec.buffers.size(); ++b)
        if (spec.buffers[b].output && spec.buffers[b].layout == BufferLayout::split) v.push_back(int(b));
    return v;
}

PieceSender::PieceSender(Comm& comm, const std::shared_ptr<HostMemoryResource>& pinned, std::uint64_t reserve)
    : comm_(comm) {
    for (auto& b : buffers_) {
        b.bytes = bytes_with(pinned);
        b.bytes.reserve(reserve);
    }
}

PieceSender::~PieceSender() {
    for (auto& b : buffers_)
        if (b.sending) comm_.abandon_send(b.id);
}

void PieceSender::complete(Buffer& b) {
    // Every send is tested, not b's alone: MPI moves a message only inside its calls.
    for (progress(); b.sending; progress()) {
        comm_.pulse();  // this rank's signs of life
        std::this_thread::yield();
    }
}

Bytes& PieceSender::next(std::uint64_t bytes) {
    Buffer& b = buffers_[next_];
    next_ = (next_ + 1) % buffers_.size();
    complete(b);
    b.bytes.resize(bytes);
    current_ = &b;
    return b.bytes;
}

void PieceSender::send() {
    current_->id = comm_.isend_short(current_->bytes, 0, kData);
    current_->sending = true;
}

void PieceSender::progress() {
    for (auto& b : buffers_)
        if (b.sending && comm_.test_send(b.id)) b.sending = false;
}

void PieceSender::finish() {
    for (auto& b : buffers_) complete(b);
}

std::uint64_t largest_gather_piece(const Execution& x, const DataJobSpec& spec) {
    std::uint64_t most = 0;
    for (const auto& s : x.mine())
        for (int b : split_outputs(spec)) {
            const std::uint64_t row = x.row_bytes(b);
            most = std::max(most, std::min(piece_rows(row), s.desc.units) * row);
        }
    return most;
}

void send_outputs(Execution& x, const DataJobSpec& spec, Comm& comm, PieceSender& pieces) {
    comm.send_json({{"ok", !x.failed()}}, 0, kData);
    if (x.failed()) return;
    for (auto& s : x.mine_mutable())
        for (int b : split_outputs(spec)) {
            const std::uint64_t row = x.row_bytes(b), per = piece_rows(row);
            for (std::uint64_t first = 0; first < s.desc.units; first += per) {
                Bytes& buf = pieces.next(std::min(per, s.desc.units - first) * row);
                // A failure now sends what is there; the report says so.
                x.download(s, b, buf, first, [&] { pieces.progress(); });
                pieces.send();
            }
        }
    pieces.finish();
}

namespace {

/// Where each of rank `r`'s gather pieces goes in the job's host memory, in the order it sends them.
std::vector<std::span<std::byte>> gather_pieces(DataJob& job, const std::vector<SliceDesc>& slices, int r) {
    const auto& spec = job.spec();
    std::vector<std::span<std::byte>> pieces;
    for (const auto& s : slices) {
        if (s.rank != r) continue;
        for (int b : split_outputs(spec)) {
            const auto& d = spec.buffers[std::size_t(b)];
            const std::uint64_t row = d.pitch * elem_size(d.type), per = piece_rows(row);
            for (std::uint64_t first = 0; first < s.units; first += per)
                pieces.push_back(job.host(b).subspan((s.offset + first) * row, std::min(per, s.units - first) * row));
        }
    }
    return pieces;
}

/// Rank `r`'s pieces into their places, in order (pieces::Inbound), under rank 0's deadline on
/// `r` (its heartbeats), not the message's.
void receive_pieces(Comm& comm, Watch& watch, int r, std::vector<std::span<std::byte>> places, GatherTally* tally) {
    const PatienceScope patience(comm, 0.0);
    if (tally && tally->first_s == 0.0) tally->first_s = now_s();
    pieces::Inbound in(comm, r, kData, std::move(places));
    while (!in.done()) {
        bool arrived = false;
        try {
            arrived = in.poll();
        } catch (const Error& e) {
            if (e.reason() == ErrorReason::lost_rank) watch.lose(r, e.what());
            throw;
        }
        if (arrived) {
            watch.heard(r);
            continue;
        }
        watch.listen(r);
        std::this_thread::yield();  // not a sleep: MPI moves a message only inside its calls
    }
    if (tally) {
        tally->bytes += in.total();
        tally->last_s = now_s();
    }
}

}  // namespace

bool recv_outputs(DataJob& job, const std::vector<SliceDesc>& slices, int r, Comm& comm, Watch& watch,
                  GatherTally* tally) {
    watch.await(r, kData);
    const auto hdr = comm.recv_json(r, kData);
    if (!hdr.at("ok").get<bool>()) return false;
    receive_pieces(comm, watch, r, gather_pieces(job, slices, r), tally);
    return true;
}

/// Rank 0's own slices' outputs, read from its devices into the job's host memory.
void read_own_outputs(DataJob& job, Execution& x, bool final) {
    x.download_all(
        split_outputs(job.spec()),
        [&](const SliceState& s, int b) {
            const std::uint64_t row = x.row_bytes(b);
            return job.host(b).subspan(s.desc.offset * row, s.desc.units * row);
        },
        final);
}

}  // namespace worksize::data_exec
