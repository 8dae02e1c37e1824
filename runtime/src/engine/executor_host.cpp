// The executor's host steps (executor.hpp; StepCompiler::compile_host_step in instructions.hpp):
// rank 0 takes the shared outputs (its own slice's, or the first rank's with slices), runs the
// application's step, sends each rewritten shared input to every rank with slices after a status
// word and uploads it onto its own slices; a worker sends the shared outputs when it is that
// first rank, receives each rewritten input and uploads it. Each instruction is done when it
// returns: the application's step reads what came before it. The ranks' start before the steps
// (compile_start) runs here too: status words to rank 0, then its go.
#include <chrono>
#include <cstring>
#include <thread>

#include "engine/executor.hpp"
#include "support/clock.hpp"

namespace worksize::engine {

void Target::shared_result(const Instruction& in, std::span<std::byte> /*into*/) {
    throw Error(std::string("this job has no shared outputs for a host step's ") + to_string(in.kind));
}

void Target::host_upload(const Instruction& in, std::span<const std::byte> /*data*/) {
    throw Error(std::string("this job has no host steps (") + to_string(in.kind) + ")");
}

void Executor::host_message_memory() {
    if (!host_message_.get_allocator().resource()) host_message_ = bytes_with(target_.home().host_memory());
}

void Executor::host_instruction(const Instruction& in) {
    switch (in.kind) {
        case InstrKind::download: target_.shared_result(in, target_.host_bytes(in)); break;
        case InstrKind::host:
            host_ok_ = !target_.failed();
            if (host_ok_) target_.host_call(in);
            host_ok_ = !target_.failed();
            break;
        case InstrKind::recv: host_recv(in); break;
        case InstrKind::send: host_send(in); break;
        case InstrKind::upload:
            if (!host_ok_) break;  // rank 0's step failed: the job ends with its error
            if (in.host)
                target_.host_upload(in, target_.host_bytes(in));
            else
                target_.host_upload(in, std::span<const std::byte>(host_message_).subspan(8));
            break;
        default: throw Error(std::string("a host step has no ") + to_string(in.kind) + " instruction");
    }
}

void Executor::await_message(int peer) {
    const double start = now_s();
    while (!comm().iprobe(peer, gather_tag_)) {
        target_.bulk_wait(peer);  // rank 0's deadline on it
        // The first 2 ms without sleeping, then no core spun: a worker may take seconds (its
        // programs' build before the start, its steps before a host step).
        if (now_s() - start < 0.002)
            std::this_thread::yield();
        else
            std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

void Executor::start_message(const Instruction& in) {
    std::uint64_t status = target_.failed() ? kStatusFailed : kStatusOk;
    const auto word = std::as_writable_bytes(std::span(&status, 1));
    if (in.kind == InstrKind::send) {
        target_.with_peer(in.peer, true, [&] { comm().send_bytes(word, in.peer, gather_tag_); });
        return;
    }
    const bool rank0 = in.peer != 0;  // rank 0's list: its peers are the workers
    if (rank0) await_message(in.peer);  // a worker's setup, under rank 0's deadline on it
    target_.with_peer(in.peer, false, [&] { comm().recv_bytes_exact(word, in.peer, gather_tag_); });
    if (rank0) target_.bulk_heard(in.peer, 0);
}

void Executor::host_recv(const Instruction& in) {
    if (in.flow == Flow::start) {
        start_message(in);
        return;
    }
    if (in.host) {  // rank 0: a shared output from the first rank with slices, raw
        const auto dest = target_.host_bytes(in);
        target_.with_peer(in.peer, false, [&] {
            await_message(in.peer);
            target_.bulk_heard(in.peer, 0);
            comm().recv_bytes_exact(dest, in.peer, gather_tag_);
        });
        return;
    }
    // A worker: [status word, contents] from rank 0.
    host_message_memory();
    target_.with_peer(in.peer, false, [&] { comm().recv_bytes_into(host_message_, in.peer, gather_tag_); });
    std::uint64_t status = kStatusFailed;
    if (host_message_.size() == 8 + in.bytes) std::memcpy(&status, host_message_.data(), 8);
    host_ok_ = status == kStatusOk;
    if (!host_ok_) target_.peer_failed(in.peer);
}

void Executor::host_send(const Instruction& in) {
    if (in.flow == Flow::start) {
        start_message(in);
        return;
    }
    if (in.host) {  // rank 0: [status word, contents] (rank 0's memory of it is kept until the next host step)
        const std::uint64_t status = host_ok_ ? kStatusOk : kStatusFailed;
        const std::span<const std::byte> parts[2] = {std::as_bytes(std::span(&status, 1)), target_.host_bytes(in)};
        target_.with_peer(in.peer, true, [&] { comm().send_parts(parts, in.peer, gather_tag_); });
        return;
    }
    // The first rank with slices when rank 0 has none: its shared output, raw.
    host_message_memory();
    host_message_.resize(in.bytes);
    target_.shared_result(in, host_message_);
    target_.with_peer(in.peer, true, [&] { comm().send_bytes(host_message_, in.peer, gather_tag_); });
}

}  // namespace worksize::engine
