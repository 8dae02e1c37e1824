// The executor's gathers (executor.hpp; StepCompiler::compile_gather in instructions.hpp): a
// worker's status word, its pieces read into its slots on the device's own queue and sent as
// each read ends; rank 0's receives straight into the job's memory, posted a window ahead, and
// the downloads of its own slices. Everything is complete when the list's run() returns.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>
#include <tuple>

#include "engine/executor.hpp"
#include "engine/executor_parts.hpp"
#include "support/clock.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize::engine {

std::span<std::byte> Target::host_bytes(const Instruction& in) {
    throw Error(std::string("this job has no host memory for a gather's ") + to_string(in.kind));
}

Executor::Slot& Executor::bulk_slot(int staging) { return slot_in(bulk_slots_, staging); }

void Executor::bulk_progress() {
    bool sending = false;
    for (auto& s : bulk_slots_)
        if (s && s->sending) {
            sending = true;
            if (comm().test_send(s->send_id)) s->sending = false;  // its slot is free for the next piece
        }
    // Receives posted (the scatter's next piece): a probe moves them too.
    if (!sending && scatter_ && !scatter_->recvs.empty()) (void)comm().iprobe(Comm::any_source, gather_tag_);
}

void Executor::gather(const std::vector<Instruction>& list, std::size_t i) {
    if (!gather_) {
        gather_ = std::make_unique<Gather>();
        failed_senders_.clear();
        // Rank 0's downloads block, as a plain host's do (a blocking read into pageable memory
        // holds its thread, and a queued one takes a slower path in NVIDIA's driver), each in a
        // thread of its own when messages move beside them or the rank has several devices;
        // else here, in list order. They are enqueued behind the slice's launches without a
        // finish before them: the final ones start as the last launch ends (pathfinder's 4 MB:
        // 1.1-1.4 ms after a finish on an H200, against 0.45 ms behind the launches), and their
        // events tell where the steps ended (Target::gather_read).
        std::set<int> slices;
        bool messages = false;
        for (const auto& in : list) {
            if (in.kind == InstrKind::download) slices.insert(in.slice);
            messages = messages || in.kind == InstrKind::recv;
        }
        gather_->threads = messages || slices.size() > 1;
    }
    const Instruction& in = list[i];
    try {
        if (in.kind != InstrKind::download) start_downloads(list);  // while the messages move
        switch (in.kind) {
            case InstrKind::send:
                if (in.buffer < 0)
                    gather_status(in);
                else
                    gather_send(in);
                break;
            case InstrKind::read_rows: gather_read_rows(in); break;
            case InstrKind::recv: gather_recv(list, i); break;
            case InstrKind::download: gather_download(in, i); break;
            default: throw Error(std::string("a gather has no ") + to_string(in.kind) + " instructions");
        }
    } catch (...) {
        abandon_gather();
        throw;
    }
}

void Executor::gather_status(const Instruction& in) {
    gather_->sent_ok = !target_.failed();
    const std::uint64_t word = gather_->sent_ok ? kStatusOk : kStatusFailed;
    if (!status_slot_) status_slot_ = std::make_unique<Slot>();  // kept while MPI may read it
    Slot& s = *status_slot_;
    complete_send(s);
    s.rows.resize(8);
    std::memcpy(s.rows.data(), &word, 8);
    target_.with_peer(in.peer, true, [&] { s.send_id = comm().isend_short(s.rows, in.peer, gather_tag_); });
    s.sending = true;
    s.send_peer = in.peer;
}

void Executor::gather_read_rows(const Instruction& in) {
    if (!gather_->sent_ok) return;  // it said "failed": no pieces follow
    Slot& s = bulk_slot(in.staging);
    complete_send(s);  // the slot's last piece has left
    s.read = cl::Event();
    s.read_slice = in.slice;
    if (target_.failed()) return;  // the piece goes as it is (gather_send); the report says why
    stage_rows(s, in.slice, in.bytes);
    DeviceContext& ctx = target_.context(in.slice);
    try {
        // On the device's own queue: behind the slice's launches without an event of theirs.
        ctx.queue().enqueueReadBuffer(target_.buffer(in.slice, in.buffer), CL_FALSE,
                                      target_.row_offset(in.slice, in.buffer, in.first), in.bytes,
                                      s.rows.data() + 8, nullptr, &s.read);
        ctx.queue().flush();  // under way while the pieces before it move
    } catch (const cl::Error& e) {
        target_.fail(e, "device '" + ctx.info().name + "', reading the outputs");
    }
}

void Executor::gather_send(const Instruction& in) {
    if (!gather_->sent_ok) return;
    Slot& s = bulk_slot(in.staging);
    if (!target_.failed()) wait_event(s.read, s.read_slice, true);  // the pieces before it move meanwhile
    if (s.rows.size() != 8 + in.bytes) s.rows.resize(8 + in.bytes);
    const auto piece = std::span<const std::byte>(s.rows).subspan(8, in.bytes);
    target_.with_peer(in.peer, true, [&] { s.send_id = comm().isend_short(piece, in.peer, gather_tag_); });
    s.sending = true;
    s.send_peer = in.peer;
}

void Executor::gather_recv(const std::vector<Instruction>& list, std::size_t i) {
    const Instruction& in = list[i];
    Gather::Recv& r = gather_->recvs[i];
    if (in.buffer >= 0) {
        // Its status word first (a rank that failed sends no pieces), and the receive a window
        // before it: this one takes its place among the posted ones.
        for (int d : in.deps) complete_gather_recv(list, std::size_t(d));
        for (int d : in.deps)
            if (list[std::size_t(d)].buffer < 0 && !gather_->recvs[std::size_t(d)].ok) return;
    }
    const std::span<std::byte> dest =
        in.buffer < 0 ? std::as_writable_bytes(std::span(&r.status, 1)) : target_.host_bytes(in);
    target_.with_peer(in.peer, false, [&] { r.id = comm().irecv_short(in.peer, gather_tag_, dest); });
    r.posted = true;
}

void Executor::complete_gather_recv(const std::vector<Instruction>& list, std::size_t i) {
    const auto it = gather_->recvs.find(i);
    if (it == gather_->recvs.end() || !it->second.posted || it->second.done) return;
    Gather::Recv& r = it->second;
    const Instruction& in = list[i];
    std::size_t got = 0;
    flush();  // the devices work while this rank waits
    target_.with_peer(in.peer, false, [&] {
        try {
            while (!comm().test_short(r.id, &got)) {
                target_.bulk_wait(in.peer);  // rank 0's deadlines on the worker
                std::this_thread::yield();   // not a sleep: MPI moves a message only inside its calls
            }
        } catch (const Error& e) {
            r.done = true;  // forgotten by the Comm
            if (e.reason() != ErrorReason::lost_rank) throw;
            target_.bulk_lost(in.peer, e.what());
            throw;
        }
    });
    r.done = true;
    if (in.buffer < 0) {
        r.ok = got == 8 && r.status == kStatusOk;
        if (!r.ok) failed_senders_.push_back(in.peer);
        target_.bulk_heard(in.peer, 0);
        return;
    }
    if (got != in.bytes)
        throw Error("rank " + std::to_string(in.peer) + " sent a piece of " + std::to_string(got) +
                    " bytes where " + std::to_string(in.bytes) + " were expected");
    target_.bulk_heard(in.peer, got);
}

void Executor::gather_download(const Instruction& in, std::size_t i) {
    if (target_.failed()) return;
    auto& all = gather_->downloads;
    auto it =
        std::find_if(all.begin(), all.end(), [&](const Gather::Download& x) { return x.slice == in.slice; });
    if (it == all.end()) {
        it = all.emplace(all.end());
        it->slice = in.slice;
        it->host_s = now_s();
    }
    it->index.push_back(i);
    if (gather_->threads) return;  // started with the first message, or at the end
    DeviceContext& ctx = target_.context(in.slice);
    cl::Event& ev = it->evs.emplace_back();  // one per index, empty if the read failed
    try {
        const auto dest = target_.host_bytes(in);
        target_.device_wait(in.slice, true);
        ctx.queue().enqueueReadBuffer(target_.buffer(in.slice, in.buffer), CL_TRUE,
                                      target_.row_offset(in.slice, in.buffer, in.first), dest.size(),
                                      dest.data(), nullptr, &ev);
        target_.device_wait(in.slice, false);
    } catch (const cl::Error& e) {
        target_.device_wait(in.slice, false);
        target_.fail(e, "device '" + ctx.info().name + "', reading the outputs");
    }
}

void Executor::start_downloads(const std::vector<Instruction>& list) {
    if (!gather_->threads || gather_->started) return;
    gather_->started = true;
    for (auto& d : gather_->downloads) {
        // A slice's reads in list order, each blocking, in a thread that touches only its slice.
        std::vector<std::tuple<cl::Buffer, std::uint64_t, std::span<std::byte>>> reads;
        for (std::size_t i : d.index) {
            const Instruction& in = list[i];
            reads.emplace_back(target_.buffer(in.slice, in.buffer),
                               target_.row_offset(in.slice, in.buffer, in.first), target_.host_bytes(in));
        }
        d.thread = std::async(std::launch::async, [&ctx = target_.context(d.slice), reads] {
            std::vector<cl::Event> evs;
            for (const auto& [buf, at, dest] : reads)
                ctx.queue().enqueueReadBuffer(buf, CL_TRUE, at, dest.size(), dest.data(), nullptr,
                                              &evs.emplace_back());
            return evs;
        });
    }
}

void Executor::finish_gather(const std::vector<Instruction>& list) {
    try {
        start_downloads(list);
        for (auto& [i, r] : gather_->recvs) complete_gather_recv(list, i);
        for (auto& d : gather_->downloads) {
            if (d.thread.valid()) {
                target_.device_wait(d.slice, true);
                while (d.thread.wait_for(std::chrono::milliseconds(1)) != std::future_status::ready)
                    if (comm_) comm_->pulse();
                target_.device_wait(d.slice, false);
                try {
                    d.evs = d.thread.get();
                } catch (const cl::Error& e) {
                    target_.fail(
                        e, "device '" + target_.context(d.slice).info().name + "', reading the outputs");
                    continue;
                }
            }
            for (std::size_t k = 0; k < d.evs.size() && k < d.index.size(); ++k)
                target_.gather_read(list[d.index[k]], d.evs[k], d.host_s);
        }
        for (auto& s : bulk_slots_)
            if (s) complete_send(*s);
        if (status_slot_) complete_send(*status_slot_);
    } catch (...) {
        abandon_gather();
        throw;
    }
    gather_.reset();
}

void Executor::abandon_gather() {
    if (!gather_) return;
    // Nothing writes into the job's memory, or reads a slot, after this.
    for (auto& [i, r] : gather_->recvs)
        if (r.posted && !r.done && comm_) comm_->abandon_short(r.id);
    for (auto& d : gather_->downloads)
        if (d.thread.valid()) try {
                d.thread.get();
            } catch (const std::exception&) {
                // the job ends with the error that brought it here
            }
    gather_.reset();
}

}  // namespace worksize::engine
