// The executor's scatter (executor.hpp; StepCompiler::compile_scatter in instructions.hpp):
// rank 0's sends of every worker's input pieces straight from the job's memory, all posted at
// once, and its own slices' uploads while they move; a worker's receives into two pinned slots,
// each piece written onto its device while the next one arrives. Everything is complete when
// the list's run() returns.
#include <thread>

#include "engine/executor.hpp"
#include "engine/executor_parts.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize::engine {

void Target::upload_host(const std::vector<Instruction>& uploads) {
    throw Error("this job has no host memory to upload (" + std::to_string(uploads.size()) + " uploads)");
}

void Executor::scatter(const std::vector<Instruction>& list, std::size_t i) {
    if (!scatter_) {
        scatter_ = std::make_unique<Scatter>();
        // With sends to progress, rank 0's uploads do not block and the sends are tested until
        // they end (MPI moves a message only inside its calls): k-means' setup over two H200
        // ranks took 194 ms against 233 with rank 0 writing in blocking 16 MiB pieces. Alone,
        // the Target uploads them (Execution: a thread per device, through pinned halves onto a
        // GPU).
        for (const auto& in : list) scatter_->direct = scatter_->direct || in.kind == InstrKind::send;
    }
    const Instruction& in = list[i];
    try {
        switch (in.kind) {
            case InstrKind::send:
                target_.with_peer(in.peer, true, [&] {
                    scatter_->sends.emplace_back(
                        in.peer, comm().isend_short(target_.host_bytes(in), in.peer, gather_tag_));
                });
                break;
            case InstrKind::upload: scatter_upload(in, i); break;
            case InstrKind::recv: scatter_recv(in, i); break;
            case InstrKind::write_rows: scatter_write(list, i); break;
            default: throw Error(std::string("a scatter has no ") + to_string(in.kind) + " instructions");
        }
    } catch (...) {
        abandon_scatter();
        throw;
    }
}

void Executor::scatter_upload(const Instruction& in, std::size_t) {
    if (target_.failed()) return;
    if (!scatter_->direct) {
        scatter_->held.push_back(in);
        return;
    }
    DeviceContext& ctx = target_.context(in.slice);
    try {
        const std::span<const std::byte> data = target_.host_bytes(in);
        cl::Event ev;
        ctx.queue().enqueueWriteBuffer(target_.buffer(in.slice, in.buffer), CL_FALSE,
                                       target_.row_offset(in.slice, in.buffer, in.first), in.bytes,
                                       data.data(), nullptr, &ev);
        ctx.queue().flush();
        scatter_->uploads.emplace_back(in.slice, ev);
        target_.host_written(in, data);
    } catch (const cl::Error& e) {
        target_.fail(e, "device '" + ctx.info().name + "', uploading the inputs");
    }
}

void Executor::scatter_recv(const Instruction& in, std::size_t i) {
    Slot& s = bulk_slot(in.staging);
    // The slot's last piece is on its devices before this one comes into it.
    for (auto& [slice, ev] : scatter_->writes[in.staging])
        wait_event(ev, slice, true);  // the next piece moves meanwhile
    scatter_->writes[in.staging].clear();
    if (target_.failed())
        s.in.resize(8 + in.bytes);  // taken and dropped (its device may have no context)
    else
        stage_in(s, in.bytes);
    const auto dest = std::span<std::byte>(s.in).subspan(8, in.bytes);
    target_.with_peer(in.peer, false,
                      [&] { scatter_->recvs[i] = comm().irecv_short(in.peer, gather_tag_, dest); });
}

void Executor::complete_scatter_recv(const std::vector<Instruction>& list, std::size_t i) {
    const auto it = scatter_->recvs.find(i);
    if (it == scatter_->recvs.end()) return;
    const Instruction& in = list[i];
    std::size_t got = 0;
    flush();  // the devices work while this rank waits
    target_.with_peer(in.peer, false, [&] {
        while (!comm().test_short(it->second, &got))
            std::this_thread::yield();  // MPI moves it only inside its calls
    });
    scatter_->recvs.erase(it);
    if (got != in.bytes)
        throw Error("rank " + std::to_string(in.peer) + " sent a piece of " + std::to_string(got) +
                    " bytes where " + std::to_string(in.bytes) + " were expected");
}

void Executor::scatter_write(const std::vector<Instruction>& list, std::size_t i) {
    const Instruction& in = list[i];
    complete_scatter_recv(list, std::size_t(in.deps.at(0)));
    if (target_.failed()) return;  // the pieces still come, and go nowhere
    Slot& s = bulk_slot(in.staging);
    const auto data = std::span<const std::byte>(s.in).subspan(8, in.bytes);
    DeviceContext& ctx = target_.context(in.slice);
    try {
        // On the device's own queue: before its first launch, without an event.
        cl::Event ev;
        ctx.queue().enqueueWriteBuffer(target_.buffer(in.slice, in.buffer), CL_FALSE,
                                       target_.row_offset(in.slice, in.buffer, in.first), in.bytes,
                                       data.data(), nullptr, &ev);
        ctx.queue().flush();  // under way while the next piece arrives
        scatter_->writes[in.staging].emplace_back(in.slice, ev);
        target_.host_written(in, data);
    } catch (const cl::Error& e) {
        target_.fail(e, "device '" + ctx.info().name + "', uploading the inputs");
    }
}

bool Executor::test_bulk_send(int peer, std::size_t id) {
    try {
        return comm().test_send(id);
    } catch (const Error& e) {
        if (e.reason() != ErrorReason::lost_rank) throw;
        target_.bulk_lost(peer, e.what());
        throw;
    }
}

void Executor::finish_scatter(const std::vector<Instruction>& list) {
    try {
        for (auto& [slot, writes] : scatter_->writes)
            for (auto& [slice, ev] : writes) wait_event(ev, slice, true);
        if (!scatter_->held.empty()) target_.upload_host(scatter_->held);
        // Rank 0: until every send and every upload has ended, each looked at in turn.
        auto& sends = scatter_->sends;
        auto& uploads = scatter_->uploads;
        while (!sends.empty() || !uploads.empty()) {
            bool progress = false;
            for (auto it = sends.begin(); it != sends.end();)
                if (test_bulk_send(it->first, it->second)) {
                    target_.bulk_heard(it->first, 0);
                    it = sends.erase(it);
                    progress = true;
                } else {
                    ++it;
                }
            for (auto it = uploads.begin(); it != uploads.end();) {
                cl_int st = CL_COMPLETE;
                try {
                    st = it->second.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>();
                    if (st < 0) throw cl::Error(st, "clEnqueueWriteBuffer");
                } catch (const cl::Error& e) {
                    target_.fail(
                        e, "device '" + target_.context(it->first).info().name + "', uploading the inputs");
                    st = CL_COMPLETE;
                }
                if (st == CL_COMPLETE) {
                    it = uploads.erase(it);
                    progress = true;
                } else {
                    ++it;
                }
            }
            if (progress) continue;
            for (const auto& [peer, id] : sends) target_.bulk_wait(peer);  // rank 0's deadlines on them
            if (comm_) comm_->pulse();
            std::this_thread::yield();
        }
    } catch (...) {
        abandon_scatter();
        throw;
    }
    for (auto& s : bulk_slots_)
        if (s) Bytes().swap(s->in);  // the two received pieces' pinned memory, not held through the steps
    scatter_.reset();
    (void)list;
}

void Executor::abandon_scatter() {
    if (!scatter_) return;
    // Nothing reads a slot or the job's memory, or writes into a slot, after this.
    for (auto& [i, id] : scatter_->recvs)
        if (comm_) comm_->abandon_short(id);
    for (auto& [peer, id] : scatter_->sends)
        if (comm_) comm_->abandon_send(id);
    auto wait = [](cl::Event& ev) {
        try {
            if (ev()) ev.wait();
        } catch (const cl::Error&) {
            // the device failed: its error was reported where it happened
        }
    };
    for (auto& [slot, writes] : scatter_->writes)
        for (auto& [slice, ev] : writes) wait(ev);
    for (auto& [slice, ev] : scatter_->uploads) wait(ev);
    scatter_.reset();
}

}  // namespace worksize::engine
