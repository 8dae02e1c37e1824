// A declared job's slice on its device (execute_declared, declared_job.hpp): its instruction list
// (scheduler/slice_program.hpp) run by the engine's executor, with the slice as the Target.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "engine/executor.hpp"
#include "jobs/bounds.hpp"
#include "jobs/data_kernels.hpp"
#include "jobs/host_copy.hpp"
#include "jobs/input_feed.hpp"
#include "jobs/job_util.hpp"
#include "transport/pieces.hpp"
#include "worksize/runtime/declared_job.hpp"
#include "worksize/runtime/opencl.hpp"
#include "worksize/scheduler/slice_program.hpp"

namespace worksize {

namespace {

std::mutex library_mutex;
/// The routines by name; entries are never erased (library_call()'s references stay valid).
std::map<std::string, std::unique_ptr<LibraryCall>>& libraries() {
    static std::map<std::string, std::unique_ptr<LibraryCall>> m;
    return m;
}

}  // namespace

void register_library_call(const std::string& name, LibraryCall call) {
    if (name.empty() || !call.call) throw InvalidArgument("register_library_call: needs a name and a call");
    std::lock_guard lock(library_mutex);
    auto& slot = libraries()[name];
    if (slot) *slot = std::move(call);
    else slot = std::make_unique<LibraryCall>(std::move(call));
}

const LibraryCall& library_call(const std::string& name) {
    std::lock_guard lock(library_mutex);
    const auto it = libraries().find(name);
    if (it == libraries().end()) throw InvalidArgument("no library routine '" + name + "' is registered");
    return *it->second;
}

namespace {

/// "(x,y)" of a launch's NDRange, "NULL" for none.
std::string range_text(const cl::NDRange& r) {
    if (r.dimensions() == 0) return "NULL";
    std::string t = "(";
    for (cl_uint d = 0; d < r.dimensions(); ++d) {
        if (d) t += ',';
        t += std::to_string(r.get()[d]);
    }
    t += ')';
    return t;
}

std::vector<std::uint64_t> halos(const DataJobSpec& s) {
    std::vector<std::uint64_t> h;
    for (std::size_t b = 0; b < s.buffers.size(); ++b) h.push_back(halo_rows(s, int(b)));
    return h;
}

/// One declared slice on its device, as the engine's Target: its buffers (the guard zones' views
/// with --check-bounds), the unit in row 0 of each, its kernels (built at the first launch, while
/// the uploads run), their geometries and reduction records, the events of its copies and
/// launches, and what it is doing (`where`, the context of an OpenCL error). Everything runs on
/// the device's own queue, in the list's order.
class SliceTarget final : public engine::Target {
public:
    SliceTarget(const DataJobSpec& spec, DeviceContext& ctx, const SliceSpec& s, std::span<const std::byte> in,
                Bytes& out, std::byte tail)
        : spec_(spec), ctx_(ctx), s_(s), in_(in), out_(out), tail_(tail), halo_(halos(spec)) {
        where_ = "job '" + spec.name + "' on " + ctx.info().name;
        // The unit held in row 0 of each buffer: offset - halo, 0 for one held whole, or a
        // buffer of its own units' first row.
        for (std::size_t b = 0; b < spec.buffers.size(); ++b)
            origins_.push_back(scaled(spec.buffers[b]) ? std::int64_t(input_rows(spec, int(b), s.offset, s.units).first)
                                                       : first_held_unit(spec, int(b), s.offset));
        const std::uint64_t bytes = slice_output_bytes(spec, s.offset, s.units);
        if (const auto dest = OutputInPlace::current(); dest.size() == bytes && bytes > 0 && reductions(spec).empty())
            dest_ = dest;  // rank 0's own slice: its rows straight where the job keeps them
        else
            out.resize(bytes);
    }

    DeviceContext& context(int) override { return ctx_; }
    DeviceContext& home() override { return ctx_; }
    cl::Buffer& buffer(int, int b) override { return bufs_.at(std::size_t(b)); }
    std::uint64_t row_offset(int, int b, std::uint64_t row) const override {
        return std::uint64_t(std::int64_t(row) - origins_[std::size_t(b)]) * row_bytes(spec_.buffers[std::size_t(b)]);
    }
    bool failed() const override { return false; }
    /// An error of the executor's own (a flush): thrown at once, as every error of this slice.
    void fail(const std::exception& e, const std::string& where) override {
        if (const auto* c = dynamic_cast<const cl::Error*>(&e)) rethrow_cl(*c, where_ + ", " + where);
        throw Error(where_ + ", " + where + ": " + e.what());
    }
    void peer_failed(int) override {}
    void with_peer(int, bool, const std::function<void()>& f) override { f(); }
    void count(const Instruction&) override {}
    void arrived(bool, bool) override {}

    void allocate(const Instruction& in) override;
    void upload(const Instruction& in) override;
    void launch(const Instruction& in, const std::vector<cl::Event>& wait, cl::Event* done) override;
    void download(const Instruction& in) override;
    /// A reduction's records (per-group ones first tree-combined on the device) read back and
    /// combined into the slice's output as doubles.
    void host_step(const Instruction& in) override;

    const std::string& where() const { return where_; }
    SliceTimes times() const {
        SliceTimes t;
        for (const auto& e : h2d_) t.h2d += event_seconds(e);
        for (const auto& e : runs_) t.kernel += event_seconds(e);
        for (const auto& e : d2h_) t.d2h += event_seconds(e);
        t.kernel += combine_s_ + library_s_ + library_seconds();
        return t;
    }

private:
    cl::CommandQueue& q() { return ctx_.queue(); }
    void check_alloc(const std::string& what, std::uint64_t bytes) const;
    void build();

    const DataJobSpec& spec_;
    DeviceContext& ctx_;
    const SliceSpec& s_;
    std::span<const std::byte> in_;
    Bytes& out_;
    std::byte tail_;
    std::vector<std::uint64_t> halo_;
    const InputFeed* feed_ = InputFeed::current();
    const InputParts* parts_ = InputParts::current();  ///< set: the input is these parts, not in_
    std::span<std::byte> dest_;  ///< set: the output goes here, not into out_ (OutputInPlace)
    UserMemoryGuard* guard_ = UserMemoryGuard::current();  ///< rank 0's: copies of the job's memory
    std::optional<HostCopy> host_copy_;  ///< the copies of the job's memory (parts_, dest_)
    HostCopy& host_copy() {
        if (!host_copy_) host_copy_.emplace(ctx_, stage_copies(ctx_), pieces::piece_bytes());
        return *host_copy_;
    }
    /// With guard_: a copy of the job's memory begins (after what is queued before it, when
    /// `after_queue`), or throws if rank 0 gave the slice up; the returned object ends it.
    struct Copying {
        UserMemoryGuard* g;
        ~Copying() {
            if (g) g->leave();
        }
    };
    Copying begin_copy(bool after_queue);
    std::string where_;
    std::vector<cl::Buffer> bufs_;
    std::vector<bounds::Guarded> guards_;
    std::vector<std::int64_t> origins_;
    std::vector<cl::Kernel> kernels_;
    std::vector<data::Geometry> geo_;
    std::map<std::pair<std::size_t, std::size_t>, cl::Buffer> records_;
    std::vector<cl::Event> h2d_, runs_, d2h_;
    double combine_s_ = 0.0;
    /// Per kernel that is a library routine (KernelDecl::library): the routine, its arguments'
    /// values and buffers, and the state its prepare() made; resolved once, at build().
    struct Routine {
        const LibraryCall* call = nullptr;
        std::vector<double> values;
        std::vector<cl::Buffer> buffers;
        std::shared_ptr<void> state;
        std::string where;  ///< names the routine, the job and the device
    };
    std::vector<Routine> routines_;
    /// Each library call not yet timed: the marker enqueued just before it, and what it enqueued.
    std::vector<std::pair<cl::Event, LibraryRun>> library_runs_;
    double library_s_ = 0.0;  ///< the calls timed so far
    void call_library(std::size_t k);
    double library_seconds() const;
};

void SliceTarget::check_alloc(const std::string& what, std::uint64_t bytes) const {
    const auto most = ctx_.info().max_alloc_bytes;
    if (most && bytes > most)
        throw Error(ErrorReason::device_limit, "job '" + spec_.name + "': a slice of " + std::to_string(s_.units) +
                                                   " units needs " + detail::size_text(bytes) + " for " + what +
                                                   ", more than the " + detail::size_text(most) +
                                                   " CL_DEVICE_MAX_MEM_ALLOC_SIZE of " + ctx_.info().name);
}

/// Buffer `b` (a shared one with its tail of `tail` bytes); an output or device-only buffer
/// zeroed unless the kernels write it whole.
void SliceTarget::allocate(const Instruction& in) {
    const auto& bd = spec_.buffers[std::size_t(in.buffer)];
    check_alloc("buffer '" + bd.name + "'", in.bytes);
    const std::uint64_t tail_bytes = data::tail_bytes(bd, in.bytes, ctx_.info().max_alloc_bytes);
    if (bounds::enabled()) {  // guard zones (bounds.hpp), a shared buffer's tail first in the zone after
        guards_.push_back(bounds::make_for(ctx_, spec_, in.buffer, in.bytes, tail_));
        bufs_.push_back(guards_.back().view);
    } else {
        bufs_.emplace_back(ctx_.context(), CL_MEM_READ_WRITE, std::max<std::uint64_t>(in.bytes + tail_bytes, 1));
        if (tail_bytes) data::write_tail(q(), bufs_.back(), in.bytes, tail_bytes, tail_);  // what a read past the end finds
    }
    if (!bd.input) data::initial_fill(q(), bufs_.back(), bd, in.bytes);
}

SliceTarget::Copying SliceTarget::begin_copy(bool after_queue) {
    if (!guard_) return {nullptr};
    if (after_queue) q().finish();  // the launches before it: rank 0 may give up meanwhile
    if (!guard_->enter()) throw Error(where_ + ": given up past --kernel-timeout");
    return {guard_};
}

/// The input's bytes [at, at + bytes), without blocking; while the input arrives (InputFeed), as
/// soon as they are there, so that they go onto the device while the next ones move. Rank 0's own
/// slice (InputParts): from the job's memory, done before it returns.
void SliceTarget::upload(const Instruction& in) {
    const bool split = spec_.buffers[std::size_t(in.buffer)].layout == BufferLayout::split;
    const std::uint64_t dest = split ? row_offset(0, in.buffer, in.first) : in.first;
    if (parts_) {  // rank 0's own slice: each run straight from the job's memory, done before it returns
        const Copying copying = begin_copy(false);
        const std::size_t first = h2d_.size();
        parts_->each(in.at, in.bytes, [&](std::span<const std::byte> run, std::uint64_t at) {
            host_copy().write(q(), bufs_.at(std::size_t(in.buffer)), dest + (at - in.at), run, h2d_);
        });
        if (guard_ && h2d_.size() > first)
            cl::Event::waitForEvents(std::vector<cl::Event>(h2d_.begin() + std::ptrdiff_t(first), h2d_.end()));
        return;
    }
    if (in.at + in.bytes > in_.size())
        throw Error("job '" + spec_.name + "': the slice's input holds " + std::to_string(in_.size()) +
                    " bytes, fewer than its declaration needs");
    if (feed_) feed_->wait(in.at + in.bytes);
    h2d_.emplace_back();
    q().enqueueWriteBuffer(bufs_.at(std::size_t(in.buffer)), CL_FALSE, dest, in.bytes, in_.data() + in.at, nullptr,
                           &h2d_.back());
    if (feed_) q().flush();
}

bool library_buffer(ArgKind k) {
    return k == ArgKind::read || k == ArgKind::write || k == ArgKind::read_write || k == ArgKind::halo ||
           k == ArgKind::all;
}

/// The values of a library routine's arguments, in order (it takes buffers and values only).
std::vector<double> library_values(const KernelDecl& kd, const std::string& job) {
    std::vector<double> v;
    for (const auto& a : kd.args) {
        if (a.kind == ArgKind::scalar) v.push_back(a.value);
        else if (!library_buffer(a.kind))
            throw InvalidArgument("job '" + job + "': library routine '" + kd.library +
                                  "' takes buffers and values only, not a '" + to_string(a.kind) + "' argument");
    }
    return v;
}

/// The program and its kernels (a library routine: prepared instead), each one's geometry on
/// the slice and its reduction records.
void SliceTarget::build() {
    cl::Program program;
    const bool any_kernel =
        std::any_of(spec_.kernels.begin(), spec_.kernels.end(), [](const KernelDecl& k) { return k.library.empty(); });
    if (any_kernel) program = ctx_.program_from_source(spec_.source, data::program_options(spec_.build_options));
    for (std::size_t k = 0; k < spec_.kernels.size(); ++k) {
        const auto& kd = spec_.kernels[k];
        routines_.emplace_back();
        if (!kd.library.empty()) {
            Routine& r = routines_.back();
            r.call = &library_call(kd.library);
            r.values = library_values(kd, spec_.name);
            for (const auto& a : kd.args)
                if (library_buffer(a.kind)) r.buffers.push_back(bufs_.at(std::size_t(a.buffer)));
            r.where = "library routine '" + kd.library + "' of job '" + spec_.name + "' on " + ctx_.info().name;
            where_ = r.where;
            r.state = r.call->prepare ? r.call->prepare(ctx_, r.values, where_) : nullptr;
            kernels_.emplace_back();
            geo_.emplace_back();
            continue;
        }
        kernels_.push_back(data::make_kernel(program, kd));
        geo_.push_back(data::geometry(spec_, kd, s_.offset, s_.units,
                                      data::launch_local(kd, s_.local, kernels_.back(), ctx_.device())));
        data::check_required_local(kd, geo_.back(), kernels_.back(), ctx_.device());
    }
    for (const auto& [k, i] : reductions(spec_)) {
        const auto& bd = spec_.buffers[std::size_t(spec_.kernels[k].args[i].buffer)];
        const std::uint64_t bytes = data::record_count(spec_.kernels[k].args[i], geo_[k]) * bd.count * elem_size(bd.type);
        check_alloc("the records of '" + bd.name + "'", bytes);
        records_.emplace(std::pair{k, i}, cl::Buffer(ctx_.context(), CL_MEM_READ_WRITE, bytes));
    }
}

void SliceTarget::call_library(std::size_t k) {
    Routine& r = routines_[k];
    where_ = r.where;
    if (library_runs_.size() >= 64) {  // bounded event lists: `iterations` may be in the thousands
        q().finish();
        library_s_ += library_seconds();
        library_runs_.clear();
    }
    cl::Event marker;
    q().enqueueMarkerWithWaitList(nullptr, &marker);
    LibraryRun run = r.call->call(ctx_, r.buffers, r.values, r.state.get(), where_);
    library_runs_.emplace_back(marker, std::move(run));
}

/// The calls' kernels where a routine names them; else each call from its marker to its last
/// command's end, where the markers have profiling times that fit (the span at least the last
/// command's own), else the last commands' own.
double SliceTarget::library_seconds() const {
    double kernels = 0.0, span = 0.0, own = 0.0;
    bool markers_timed = true;
    for (const auto& [marker, run] : library_runs_) {
        if (!run.kernels.empty()) {
            for (const auto& e : run.kernels) kernels += event_seconds(e);
            continue;
        }
        if (!run.last()) continue;
        const double e = event_seconds(run.last);
        own += e;
        try {
            const double s = double(run.last.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                    marker.getProfilingInfo<CL_PROFILING_COMMAND_END>()) * 1e-9;
            if (s < e) markers_timed = false;
            span += s;
        } catch (const cl::Error&) {
            markers_timed = false;
        }
    }
    return kernels + (markers_timed ? span : own);
}

void SliceTarget::launch(const Instruction& in, const std::vector<cl::Event>& wait, cl::Event* done) {
    if (kernels_.empty()) build();
    const std::size_t k = std::size_t(in.kernel);
    const auto& kd = spec_.kernels[k];
    if (!kd.library.empty()) {  // in order after the uploads on the device's queue; `wait` is empty here
        call_library(k);
        if (done) *done = library_runs_.back().second.last;
        if (!guards_.empty()) bounds::check_writes(q(), spec_, kd, guards_, "", "");
        return;
    }
    where_ = "kernel '" + kd.name + "' of job '" + spec_.name + "' on " + ctx_.info().name + " (global " +
             range_text(geo_[k].global) + ", local " + range_text(geo_[k].local) + ")";
    // Per-item records are refilled before every launch; per-group ones once (every group
    // writes its record each launch; no fill in the timed loop of quad).
    for (std::size_t i = 0; i < kd.args.size(); ++i)
        if (kd.args[i].kind == ArgKind::reduce && (in.feeds_step == 0 || !kd.args[i].per_group))
            data::fill_identity(q(), records_.at({k, i}), spec_.buffers[std::size_t(kd.args[i].buffer)], kd.args[i].op,
                                data::record_count(kd.args[i], geo_[k]));
    data::bind_args(kernels_[k], kd, bufs_, [&](std::size_t i) -> const cl::Buffer& { return records_.at({k, i}); },
                    geo_[k], s_.offset, halo_, nullptr, &origins_,
                    ExprScope{0, 1, 0, 0, std::int64_t(spec_.units), nullptr});
    runs_.emplace_back();
    q().enqueueNDRangeKernel(kernels_[k], geo_[k].offset, geo_[k].global, geo_[k].local,
                             wait.empty() ? nullptr : &wait, &runs_.back());
    if (done) *done = runs_.back();
    if (!guards_.empty())
        bounds::check_writes(q(), spec_, kd, guards_, "",
                             "; a kernel that indexes whole arrays by global ids needs \"arrays\": \"whole\" "
                             "(C++: whole_arrays())");
}

void SliceTarget::download(const Instruction& in) {
    where_ = "job '" + spec_.name + "' on " + ctx_.info().name + ", reading the results";
    if (dest_.empty()) {
        q().enqueueReadBuffer(bufs_.at(std::size_t(in.buffer)), CL_FALSE, row_offset(0, in.buffer, in.first), in.bytes,
                              out_.data() + in.at, nullptr, &d2h_.emplace_back());
        return;
    }
    // Into the job's memory (through pinned halves where it is ordinary memory on a GPU), done
    // before it returns, and only while rank 0 waits.
    const Copying copying = begin_copy(true);
    host_copy().read(q(), bufs_.at(std::size_t(in.buffer)), row_offset(0, in.buffer, in.first),
                     dest_.subspan(in.at, in.bytes), d2h_);
}

void SliceTarget::host_step(const Instruction& in) {
    const std::size_t k = std::size_t(in.kernel), i = std::size_t(in.arg);
    const auto& a = spec_.kernels[k].args[i];
    const auto& bd = spec_.buffers[std::size_t(a.buffer)];
    std::uint64_t count = data::record_count(a, geo_[k]);
    cl::Buffer& buf = records_.at({k, i});
    if (a.per_group) {
        where_ = "job '" + spec_.name + "' on " + ctx_.info().name + ", combining the records of '" + bd.name + "'";
        data::combine_on_device(ctx_, buf, count, bd, a.op, combine_s_);
    }
    where_ = "job '" + spec_.name + "' on " + ctx_.info().name + ", reading the results";
    Bytes rec(count * bd.count * elem_size(bd.type));
    d2h_.emplace_back();
    q().enqueueReadBuffer(buf, CL_TRUE, 0, rec.size(), rec.data(), nullptr, &d2h_.back());
    std::vector<double> total(bd.count, data::identity(a.op));
    data::combine_records(a.op, bd.type, rec.data(), count, total);
    std::memcpy(out_.data() + in.at, total.data(), total.size() * sizeof(double));
}

}  // namespace

SliceTimes execute_declared(const DataJobSpec& spec, DeviceContext& ctx, const SliceSpec& s,
                            std::span<const std::byte> in, Bytes& out, std::byte tail) {
    out.clear();
    SliceTarget target(spec, ctx, s, in, out, tail);
    try {
        const std::uint64_t piece = InputFeed::current() ? pieces::piece_bytes() : 0;
        const auto list = compile_slice(spec, s.offset, s.units, {0, s.iterations, piece});
        {
            engine::Executor executor(target, nullptr, 0);
            executor.run(list);
        }
        ctx.queue().finish();
        return target.times();
    } catch (const cl::Error& e) {
        finish_quietly(ctx.queue());  // the copies already enqueued read `in` and write `out`
        out.clear();
        rethrow_cl(e, target.where());
    } catch (...) {
        finish_quietly(ctx.queue());
        out.clear();
        throw;
    }
}

}  // namespace worksize
