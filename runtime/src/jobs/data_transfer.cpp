// A data job's scatter and gathers in pieces (data_transfer.hpp): the engine runs their lists; and
// rank 0's writes of its own inputs onto its devices (Execution::upload_each_device).
#include "jobs/data_transfer.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <thread>

#include "jobs/host_copy.hpp"
#include "jobs/job_util.hpp"
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
    m.x.run_start();  // every rank starts its steps together (compile_start)
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

void Execution::run_start() { executor().run(StepCompiler(spec_, layout_, me_, program_options()).compile_start()); }

void Execution::run_host_step(std::uint64_t done) {
    executor().run(StepCompiler(spec_, layout_, me_, program_options()).compile_host_step(done));
}

void Execution::host_call(const Instruction& in) {
    if (!on_host_step_) return;
    try {
        on_host_step_(in.first);
    } catch (const std::exception& e) {
        fail(Error(std::string("the host step after step ") + std::to_string(in.first) + ": " + e.what()));
    }
}

void Execution::shared_result(const Instruction& in, std::span<std::byte> into) {
    if (const Bytes* result = last_result(in.buffer); result && result->size() == into.size()) {
        std::memcpy(into.data(), result->data(), result->size());  // no read from a device
        return;
    }
    download(in.slice >= 0 ? at(in.slice) : mine_.front(), in.buffer, into);
}

void Execution::host_upload(const Instruction& in, std::span<const std::byte> data) {
    // Rank 0's memory of the buffer is kept until the next host step; a worker's message is not.
    upload(at(in.slice), in.buffer, 0, data, me_ != 0);
}

void Execution::gather_read(const Instruction& in, const cl::Event& ev, double host_s) {
    if (!final_gather_ || !ev()) return;
    SliceState& s = at(in.slice);
    s.final_read = ev;
    if (!timeline_path_.empty())
        s.timeline.push_back({step_, "read:" + spec_.buffers[std::size_t(in.buffer)].name, host_s, ev});
}

// Rank 0's writes of its own inputs, a thread per device (Execution's, declared in
// data_execution.hpp).
void Execution::upload_each_device(const std::function<std::vector<Input>(const SliceState&)>& inputs) {
    if (failed_) return;
    std::vector<std::vector<Input>> in;
    for (const auto& s : mine_) in.push_back(inputs(s));
    std::vector<std::future<void>> writes;
    for (std::size_t k = 0; k < mine_.size(); ++k)
        writes.push_back(std::async(std::launch::async,
                                    [this, &s = mine_[k], &in = in[k]] { upload_inputs(s, in); }));
    join_each_device(writes, "uploading the inputs");
    if (!failed_)
        for (const auto& i : in.front()) note_value(i.b, i.first, i.data);
}

namespace {
/// One input's writes in upload_inputs, for the step log: how it went, its host times and its
/// first and last write's events.
struct WriteNote {
    std::string name, how;
    std::uint64_t bytes = 0;
    double host_start = 0, host_end = 0;
    cl::Event first, last;
};

/// "input 'points': 536870912 bytes pinned, host 0.001-0.591 ms, device: queued 0.000, start
/// 0.021, end 9.921 ms", the host's times from `t0`, the device's from `base` (the first write's
/// queued time).
std::string write_note(const WriteNote& w, double t0, cl_ulong base) {
    char text[320];
    int n = std::snprintf(text, sizeof text, "input '%s': %llu bytes %s, host %.3f-%.3f ms", w.name.c_str(),
                          static_cast<unsigned long long>(w.bytes), w.how.c_str(), 1e3 * (w.host_start - t0),
                          1e3 * (w.host_end - t0));
    try {
        if (w.first() && base > 0)
            std::snprintf(text + n, sizeof text - std::size_t(n), ", device: queued %.3f, start %.3f, end %.3f ms",
                          1e-6 * double(w.first.getProfilingInfo<CL_PROFILING_COMMAND_QUEUED>() - base),
                          1e-6 * double(w.first.getProfilingInfo<CL_PROFILING_COMMAND_START>() - base),
                          1e-6 * double(w.last.getProfilingInfo<CL_PROFILING_COMMAND_END>() - base));
    } catch (const cl::Error&) {
        // a queue without profiling: the host times only
    }
    return text;
}
}  // namespace

void Execution::upload_inputs(SliceState& s, const std::vector<Input>& in) {
    HostCopy copy(*s.ctx, stage_copies(*s.ctx), pieces::piece_bytes());  // one pair of halves for all of the slice's inputs
    std::vector<cl::Event> writes;
    std::vector<WriteNote> notes;
    const double t0 = now_s();
    try {
        for (const auto& i : in) {
            auto& note = notes.emplace_back(WriteNote{spec_.buffers[std::size_t(i.b)].name, "", i.data.size(), now_s(), 0, {}, {}});
            const std::size_t first = writes.size();
            note.how = copy.write(s.ctx->queue(), s.bufs[std::size_t(i.b)], input_offset(s, i.b, i.first), i.data, writes);
            note.host_end = now_s();
            if (writes.size() > first) {
                note.first = writes[first];
                note.last = writes.back();
            }
        }
        if (!writes.empty()) cl::Event::waitForEvents(writes);
        s.setup_times[3] = now_s() - t0;
    } catch (...) {
        // A write still reading a half must end before the half goes.
        try {
            s.ctx->queue().finish();
        } catch (const cl::Error&) {
            // the device failed: its error is the one rethrown
        }
        throw;
    }
    if (step_log_path_.empty()) return;
    cl_ulong first_queued = 0;
    for (const auto& w : notes)
        if (w.first()) {
            try {
                const cl_ulong q = w.first.getProfilingInfo<CL_PROFILING_COMMAND_QUEUED>();
                first_queued = first_queued == 0 ? q : std::min(first_queued, q);
            } catch (const cl::Error&) {
                break;
            }
        }
    for (const auto& w : notes) s.write_notes.push_back(write_note(w, t0, first_queued));
}

}  // namespace worksize::data_exec
