// The instruction executor (executor.hpp).
#include "executor.hpp"
#include "executor_parts.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include "support/clock.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize::engine {

struct Executor::PerSlice {
    cl::CommandQueue copy;
    std::shared_ptr<PinnedHostMemory> staging;  ///< the device's (staging slots' rows)
    std::vector<cl::Event> writes;  ///< halo writes since the last launch
    /// The event of the device's last launch, or of a marker behind it; `current`: no launch
    /// without an event since (a read of rows behind a launch without one enqueues a marker).
    cl::Event last_launch;
    bool current = true;
    bool compute_dirty = false, copy_dirty = false;  ///< enqueued since the last flush
};

void Target::allocate(const Instruction& in) { throw Error(std::string("this job has no ") + to_string(in.kind) + " instructions"); }
void Target::upload(const Instruction& in) { allocate(in); }
void Target::download(const Instruction& in) { allocate(in); }

Executor::Executor(Target& target, Comm* comm, int tag) : target_(target), comm_(comm), tag_(tag) {
    // WORKSIZE_HALO_QUEUE=compute (an experiment, docs/testing.md): halo writes on the device's
    // own queue, in order before its next launch, instead of the copy queue and an event.
    // WORKSIZE_HALO_QUEUE=host-wait: the host waits for a device's halo writes to finish before
    // it enqueues the device's next launch, which then has no event from another queue to wait on.
    const char* q = std::getenv("WORKSIZE_HALO_QUEUE");
    writes_on_compute_ = q && std::string(q) == "compute";
    host_waits_writes_ = q && std::string(q) == "host-wait";
    // WORKSIZE_STEP_FLUSH=0 (an experiment): no flush at the end of each run() (a step); the
    // queues are still flushed before every wait.
    const char* f = std::getenv("WORKSIZE_STEP_FLUSH");
    flush_steps_ = !(f && std::string(f) == "0");
    // Whether a halo arrived after the interior launch had finished takes an event of that
    // launch, which costs NVIDIA's driver about 1.5 µs a launch: the first 16 lists and every
    // 32nd are checked (WORKSIZE_OVERLAP_SAMPLE=N: every Nth; 1: every list).
    if (const char* n = std::getenv("WORKSIZE_OVERLAP_SAMPLE"); n && std::atoi(n) > 0) sample_every_ = std::uint64_t(std::atoi(n));
}

bool Executor::samples_overlap() const { return runs_ < 16 || runs_ % sample_every_ == 0; }

Executor::~Executor() {
    // Sends still in flight (a failure between run() and drain()): MPI keeps them.
    for (auto& s : slots_)
        if (s && s->sending) comm_->abandon_send(s->send_id);
    abandon_gather();  // a gather's receives into the job's memory, its sends, its reads
    abandon_scatter();
    for (auto& s : bulk_slots_)
        if (s && s->sending) comm_->abandon_send(s->send_id);
    if (status_slot_ && status_slot_->sending) comm_->abandon_send(status_slot_->send_id);
    // The copy queues outlive this executor (DeviceContext keeps them): their transfers read
    // and write its staging slots, which go now.
    for (auto& p : slices_) {
        if (!p || !p->copy()) continue;
        try {
            p->copy.finish();
        } catch (const cl::Error&) {
            // a device that failed: its error was reported where it happened
        }
    }
}

Executor::PerSlice& Executor::slice(int s) {
    if (std::size_t(s) >= slices_.size()) slices_.resize(std::size_t(s) + 1);
    auto& p = slices_[std::size_t(s)];
    if (!p) p = std::make_unique<PerSlice>();
    return *p;
}

cl::CommandQueue& Executor::copy_queue(int s) {
    PerSlice& p = slice(s);
    if (!p.copy()) p.copy = target_.context(s).copy_queue();  // kept from run to run
    return p.copy;
}

/// A slot's rows in the pinned staging memory of the device that reads them, and a received
/// message's in the rank's first device's (DeviceContext::staging_memory): a halo row of heat
/// 8192² is 32 KiB, under host_memory()'s threshold for pinning.
void Executor::stage_rows(Slot& s, int slice_index, std::uint64_t bytes) {
    PerSlice& p = slice(slice_index);
    if (!p.staging) p.staging = target_.context(slice_index).staging_memory();
    if (s.rows.get_allocator().resource() != p.staging) s.rows = bytes_with(p.staging);
    s.rows.resize(8 + bytes);
}

void Executor::stage_in(Slot& s, std::uint64_t bytes) {
    if (!home_staging_) home_staging_ = target_.home().staging_memory();
    if (s.in.get_allocator().resource() != home_staging_) s.in = bytes_with(home_staging_);
    s.in.resize(8 + bytes);
}

void Executor::prepare(const std::vector<Instruction>& list) {
    for (const Instruction& in : list) {
        try {
            if (in.flow != Flow::step) {  // a worker's gather pieces' slots, at their largest
                if (in.kind == InstrKind::read_rows && !target_.failed() &&
                    bulk_slot(in.staging).rows.size() < 8 + in.bytes)
                    stage_rows(bulk_slot(in.staging), in.slice, in.bytes);
            } else if (in.kind == InstrKind::read_rows) {
                stage_rows(slot(in), in.slice, in.bytes);
                copy_queue(in.slice);
            } else if (in.kind == InstrKind::recv) {
                stage_in(slot(in), in.bytes);
            } else if (in.kind == InstrKind::write_rows && !writes_on_compute_) {
                copy_queue(in.slice);
            }
        } catch (const cl::Error& e) {
            // The run walks its lists all the same (failed), so that no neighbour waits.
            target_.fail(e, "device '" + target_.context(in.slice).info().name + "', its halo queue");
            return;
        }
    }
}

Comm& Executor::comm() {
    if (!comm_) throw Error("an instruction list with messages needs the job's ranks (the executor has none)");
    return *comm_;
}

/// Two slots per staging id, by the parity of the step the rows feed: reusing a slot waits for
/// its last send to leave and its last write to read it, and those of the step before may
/// still be in flight (on two H200s over MPI the interior launch was enqueued 28 µs late,
/// behind those waits).
Executor::Slot& Executor::slot(const Instruction& in) { return slot(2 * in.staging + int(in.feeds_step % 2)); }

Executor::Slot& Executor::slot(int id) { return slot_in(slots_, id); }

Executor::Slot& Executor::slot_in(std::vector<std::unique_ptr<Slot>>& slots, int id) {
    if (std::size_t(id) >= slots.size()) slots.resize(std::size_t(id) + 1);
    auto& p = slots[std::size_t(id)];
    if (!p) p = std::make_unique<Slot>();
    return *p;
}

void Executor::flush() {
    for (auto& p : slices_) {
        if (!p) continue;
        try {
            if (p->compute_dirty) target_.context(int(&p - slices_.data())).queue().flush();
            if (p->copy_dirty && p->copy()) p->copy.flush();
        } catch (const cl::Error& e) {
            target_.fail(e, "flushing a queue");
        }
        p->compute_dirty = p->copy_dirty = false;
    }
}

void Executor::wait_event(const cl::Event& ev, int s, bool bulk) {
    if (!ev()) return;
    flush();
    // Polled, not clWaitForEvents: the wait is short (a boundary launch and its rows), a
    // blocking wait may sleep past it, and the polls keep MPI and the heartbeats going.
    std::optional<cl::Error> error;
    target_.device_wait(s, true);
    try {
        cl_int status = CL_QUEUED;
        while ((status = ev.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>()) > CL_COMPLETE) {
            if (bulk) bulk_progress();
            if (comm_) comm_->pulse();
            std::this_thread::yield();
        }
        if (status < 0) error = cl::Error(status, bulk ? "a piece's copy" : "a halo transfer");
    } catch (const cl::Error& e) {
        error = e;
    }
    target_.device_wait(s, false);
    if (!error) return;
    if (bulk) target_.fail(*error, "device '" + target_.context(s).info().name + "', moving the inputs or outputs");
    else target_.fail(*error, s < 0 ? std::string("a halo write") : "device '" + target_.context(s).info().name + "'");
}

void Executor::complete_send(Slot& s) {
    if (!s.sending) return;
    const double start = now_s();
    target_.with_peer(s.send_peer, true, [&] {
        while (!comm().test_send(s.send_id)) {
            if (comm().patience() > 0 && now_s() - start > comm().patience())
                throw Error(ErrorReason::lost_rank, "rank " + std::to_string(s.send_peer) +
                                                        " took nothing sent to it for " +
                                                        std::to_string(comm().patience()) + " s (--rank-timeout)");
            comm().pulse();
            std::this_thread::yield();
        }
    });
    s.sending = false;
}

void Executor::complete_recv(Slot& s) {
    if (!s.receiving) return;
    flush();  // the devices work while this rank waits
    target_.with_peer(s.recv_peer, false, [&] {
        while (!comm().test_short(s.recv_id, &s.got)) std::this_thread::yield();
    });
    s.receiving = false;
    if (target_.traced()) {
        Instruction arrived;
        arrived.kind = InstrKind::recv;
        arrived.peer = s.recv_peer;
        target_.trace(arrived, cl::Event(), now_s());
    }
    std::uint64_t status = kStatusFailed;
    if (s.got >= 8) std::memcpy(&status, s.in.data(), 8);
    s.received_ok = status == kStatusOk && s.got == 8 + s.want;
    if (!s.received_ok) {
        target_.peer_failed(s.recv_peer);
        return;
    }
    bool done = true;
    try {
        for (const auto& ev : interior_)
            done = done && ev.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() == CL_COMPLETE;
    } catch (const cl::Error&) {
        done = false;
    }
    target_.arrived(!interior_.empty(), !interior_.empty() && done);
}

void Executor::post_recv(const Instruction& in) {
    Slot& s = slot(in);
    wait_event(s.write, -1);  // the previous write from this slot has read it
    s.write = cl::Event();
    stage_in(s, in.bytes);
    s.want = in.bytes;
    s.recv_peer = in.peer;
    s.received_ok = false;
    s.got = 0;
    target_.with_peer(in.peer, false, [&] { s.recv_id = comm().irecv_short(in.peer, tag_, s.in); });
    s.receiving = true;
}

void Executor::read_rows(const Instruction& in) {
    Slot& s = slot(in);
    complete_send(s);  // its last send has left
    wait_event(s.write, in.slice);
    s.write = cl::Event();
    s.read = cl::Event();
    s.read_slice = in.slice;
    target_.count(in);
    if (target_.failed()) return;
    PerSlice& p = slice(in.slice);
    auto& ctx = target_.context(in.slice);
    stage_rows(s, in.slice, in.bytes);
    std::vector<cl::Event> wait;
    try {
        if (!p.current) {  // the last launch kept no event: a marker behind it
            target_.context(in.slice).queue().enqueueMarkerWithWaitList(nullptr, &p.last_launch);
            p.current = true;
        }
        if (p.last_launch()) wait.push_back(p.last_launch);
        const double enqueued = now_s();
        copy_queue(in.slice).enqueueReadBuffer(target_.buffer(in.slice, in.buffer), CL_FALSE,
                                 target_.row_offset(in.slice, in.buffer, in.first), in.bytes, s.rows.data() + 8,
                                 wait.empty() ? nullptr : &wait, &s.read);
        p.copy_dirty = true;
        if (target_.traced()) target_.trace(in, s.read, enqueued);
    } catch (const cl::Error& e) {
        target_.fail(e, "device '" + ctx.info().name + "', reading halo rows");
    }
}

void Executor::send(const Instruction& in) {
    Slot& s = slot(in);
    if (!target_.failed()) wait_event(s.read, s.read_slice);
    const bool ok = !target_.failed() && s.rows.size() == 8 + in.bytes;
    const std::uint64_t status = ok ? kStatusOk : kStatusFailed;
    if (s.rows.size() < 8) s.rows.resize(8);
    std::memcpy(s.rows.data(), &status, 8);
    const auto message = std::span<const std::byte>(s.rows).first(ok ? 8 + in.bytes : 8);
    target_.before_send();
    target_.with_peer(in.peer, true, [&] { s.send_id = comm().isend_short(message, in.peer, tag_); });
    if (target_.traced()) target_.trace(in, cl::Event(), now_s());
    s.sending = true;
    s.send_peer = in.peer;
    if (ok) target_.count(in);
}

void Executor::write_rows(const Instruction& in, const std::vector<Instruction>& list) {
    const Instruction& from = list[std::size_t(in.deps.at(0))];
    Slot& s = slot(in);
    const std::byte* src = nullptr;
    if (from.kind == InstrKind::recv) {
        complete_recv(s);
        if (s.received_ok) src = s.in.data() + 8;
    } else {
        if (!target_.failed()) wait_event(s.read, s.read_slice);  // another device's copy queue
        src = s.rows.size() == 8 + in.bytes ? s.rows.data() + 8 : nullptr;
    }
    if (target_.failed() || !src) return;
    PerSlice& p = slice(in.slice);
    try {
        auto& q = writes_on_compute_ ? target_.context(in.slice).queue() : copy_queue(in.slice);
        const double enqueued = now_s();
        q.enqueueWriteBuffer(target_.buffer(in.slice, in.buffer), CL_FALSE,
                             target_.row_offset(in.slice, in.buffer, in.first), in.bytes, src, nullptr, &s.write);
        if (target_.traced()) target_.trace(in, s.write, enqueued);
        (writes_on_compute_ ? p.compute_dirty : p.copy_dirty) = true;
        if (!writes_on_compute_) p.writes.push_back(s.write);
    } catch (const cl::Error& e) {
        target_.fail(e, "device '" + target_.context(in.slice).info().name + "', writing halo rows");
    }
}

void Executor::run(const std::vector<Instruction>& list) {
    interior_.clear();
    // A launch keeps its event when a later instruction of the list waits on it, or when it is an
    // interior launch of a list that checks the overlap. A read of the next list that finds its
    // device's last launch without one enqueues a marker (read_rows): on NVIDIA's driver an
    // event per launch cost pathfinder's 90 launches of 65 µs about 0.45 ms (measured on the
    // plain host, traced against not).
    const bool sampled = samples_overlap();
    ++runs_;
    std::vector<bool> keep(list.size(), false);
    for (std::size_t i = 0; i < list.size(); ++i) {
        for (int d : list[i].deps) keep[std::size_t(d)] = true;
        if (sampled && list[i].kind == InstrKind::launch && list[i].part == LaunchPart::interior) keep[i] = true;
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        const Instruction& in = list[i];
        if (in.flow == Flow::host || in.flow == Flow::start) {
            host_instruction(in);
            continue;
        }
        if (in.flow != Flow::step) {
            in.flow == Flow::gather ? gather(list, i) : scatter(list, i);
            continue;
        }
        switch (in.kind) {
            case InstrKind::launch: {
                PerSlice& p = slice(in.slice);
                cl::Event done;
                if (host_waits_writes_) {
                    for (const auto& w : p.writes) wait_event(w, in.slice);
                    p.writes.clear();
                }
                target_.launch(in, p.writes, keep[i] ? &done : nullptr);
                p.writes.clear();
                p.compute_dirty = true;
                p.current = keep[i] && done();
                if (p.current) {
                    p.last_launch = done;
                    if (in.part == LaunchPart::interior) interior_.push_back(done);
                }
                break;
            }
            case InstrKind::read_rows: read_rows(in); break;
            case InstrKind::write_rows: write_rows(in, list); break;
            case InstrKind::recv: post_recv(in); break;
            case InstrKind::send: send(in); break;
            case InstrKind::reduce:
                flush();
                target_.host_step(in);
                break;
            case InstrKind::alloc: target_.allocate(in); break;
            case InstrKind::upload:
                target_.upload(in);
                slice(in.slice).compute_dirty = true;
                break;
            case InstrKind::download:
                target_.download(in);
                slice(in.slice).compute_dirty = true;
                break;
            case InstrKind::host: host_instruction(in); break;  // Flow::host only
        }
    }
    if (flush_steps_) flush();
    if (gather_) finish_gather(list);
    if (scatter_) finish_scatter(list);
}

void Executor::drain() {
    for (auto& s : slots_)
        if (s) complete_send(*s);
}

}  // namespace worksize::engine
