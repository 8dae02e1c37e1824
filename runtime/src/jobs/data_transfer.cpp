// A data job's scatter and gathers in pieces (data_transfer.hpp): the engine runs their lists.
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
    m.x.run_scatter();
    m.x.prepare_steps();
    // Every rank starts its steps together: each worker says it is set up (its inputs are on
    // its devices), then rank 0 says go. Without it, a rank that compiled its program faster
    // waited on its neighbours' setup in the first step, and under load past --rank-timeout.
    for (int r : m.workers) {
        m.watch.await(r, kData);
        (void)m.comm.recv_json(r, kData);
    }
    for (int r : m.workers) m.comm.send_json({{"go", true}}, r, kData);
}

engine::Executor& Execution::executor() {
    if (!executor_) {
        executor_ = std::make_unique<engine::Executor>(*this, &comm_, kHalo);
        executor_->gather_tag(kData);
    }
    return *executor_;
}

void Execution::run_scatter() {
    executor().run(StepCompiler(spec_, layout_, me_, program_options()).compile_scatter());
}

std::span<std::byte> Execution::host_bytes(const Instruction& in) {
    if (!bulk_hooks_.host) return engine::Target::host_bytes(in);
    return bulk_hooks_.host(in.buffer).subspan(in.at, in.bytes);
}

void Execution::bulk_wait(int peer) {
    if (bulk_hooks_.wait) bulk_hooks_.wait(peer);
}

void Execution::bulk_heard(int peer, std::uint64_t bytes) {
    if (bulk_hooks_.heard) bulk_hooks_.heard(peer, bytes);
}

void Execution::bulk_lost(int peer, const std::string& why) {
    if (bulk_hooks_.lost) bulk_hooks_.lost(peer, why);
    throw;
}

void Execution::host_written(const Instruction& in, std::span<const std::byte> data) {
    note_value(in.buffer, in.first, data);
}

void Execution::upload_host(const std::vector<Instruction>& uploads) {
    // Each input in one write, as before the scatter had pieces (on one H200 the driver's copy of
    // 1 GiB of pageable memory was 9-25 ms slower polled or in pieces), each device's in a thread
    // of its own when the rank has several, staged through pinned halves onto a GPU.
    upload_each_device([&](const SliceState& s) {
        std::vector<Input> in;
        for (const auto& u : uploads)
            if (u.slice == int(s.index)) in.push_back({u.buffer, u.first, host_bytes(u)});
        return in;
    });
}

ProgramOptions Execution::program_options() const {
    ProgramOptions o;
    o.overlap = overlap_;
    o.piece_bytes = pieces::piece_bytes();
    return o;
}

void Execution::run_gather(std::uint64_t steps, bool final) {
    // Rank 0 takes the workers in turn, under its own deadlines (its Watch, through the hooks):
    // no wait of a gather runs out of patience.
    const PatienceScope patience(comm_, 0.0);
    final_gather_ = final;
    executor().run(StepCompiler(spec_, layout_, me_, program_options()).compile_gather(steps, final));
}

void Execution::gather_read(const Instruction& in, const cl::Event& ev, double host_s) {
    if (!final_gather_ || !ev()) return;
    SliceState& s = at(in.slice);
    s.final_read = ev;
    if (!timeline_path_.empty())
        s.timeline.push_back({step_, "read:" + spec_.buffers[std::size_t(in.buffer)].name, host_s, ev});
}

}  // namespace worksize::data_exec
