// A rank's part of a data job (runtime/src/jobs/data_job.cpp): its slices' buffers, programs and
// kernels, set up, uploaded, stepped by the engine's executor (engine/executor.hpp) from the
// instruction lists of StepCompiler, downloaded; the failure and lost-peer bookkeeping of the
// protocol that data_job.cpp describes. Rank 0 and the workers share it.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "cluster/cluster_impl.hpp"
#include "jobs/bounds.hpp"
#include "jobs/data_kernels.hpp"
#include "jobs/device_watchdog.hpp"
#include "jobs/host_copy.hpp"
#include "engine/executor.hpp"
#include "cluster/fault.hpp"
#include "worksize/runtime/data_job.hpp"
#include "worksize/runtime/opencl.hpp"
#include "worksize/scheduler/instructions.hpp"

namespace worksize::data_exec {

using wire::kHalo;
using wire::kReduce;

using engine::kStatusFailed;
using engine::kStatusOk;

using data::Geometry;

/// Rank 0's verdict that a worker of a data job is lost (Watch): ends the job as it is.
struct LostWorker : Error {
    explicit LostWorker(const std::string& what) : Error(ErrorReason::lost_rank, what) {}
};

/// A slice as the command describes it to its rank.
struct SliceDesc {
    int device = 0;  ///< index into rank 0's device list
    int rank = 0;
    int local_index = 0;  ///< the device's index on its rank
    std::uint64_t offset = 0, units = 0;
    LocalSize local;
};


inline std::vector<Assignment> as_assignments(const std::vector<SliceDesc>& v) {
    std::vector<Assignment> out;
    for (const auto& s : v) {
        Assignment a;
        a.device = s.device;
        a.rank = s.rank;
        a.offset = s.offset;
        a.units = s.units;
        a.local = s.local;
        out.push_back(a);
    }
    return out;
}

struct SliceState {
    std::size_t index = 0;  ///< into the layout's slices
    SliceDesc desc;
    DeviceContext* ctx = nullptr;
    std::vector<cl::Buffer> bufs;  ///< per declared buffer
    std::vector<bounds::Guarded> guards;  ///< per declared buffer, with --check-bounds (bufs are their views)
    std::vector<cl::Kernel> kernels;
    std::map<std::pair<std::size_t, std::size_t>, cl::Buffer> records;  ///< (kernel, argument)
    std::set<std::pair<std::size_t, std::size_t>> records_filled;       ///< per-group records filled once
    std::vector<Geometry> geometry;                                     ///< per kernel
    cl::Event first, last;                                              ///< the run's first and last launch
    /// With time_launches: every launch after the first step, with its step.
    std::vector<std::pair<std::uint64_t, cl::Event>> timed;
    /// Per reduce argument (kernel, argument): its device-side combination's kernel and buffers.
    std::map<std::pair<std::size_t, std::size_t>, data::CombineCache> combines;
    std::string last_kernel;  ///< the last kernel launched here (what a wait waits on)
    /// With WORKSIZE_TIMELINE: every launch and final read (step, what: the kernel's name or
    /// "read:<buffer>", host time of its enqueue, event).
    struct Launch {
        std::uint64_t step;
        std::string what;
        double host_s;
        cl::Event ev;
    };
    std::vector<Launch> timeline;
    std::vector<std::vector<std::int64_t>> bound;  ///< per kernel: what its arguments hold (bind_args)
    std::vector<std::int64_t> origins;  ///< per buffer: the global unit in its row 0 (first_held_unit)
    Bytes host_records;  ///< reduction records read back, in this device's pinned memory
    double reduce_s = 0.0;  ///< with time_launches: the timed steps' record reads and combinations
    /// The last of the final gather's reads behind the last launches (Executor's downloads, gather_read()).
    cl::Event final_read;
    /// Host seconds of its setup: buffers (with generated inputs), the program's build, kernels,
    /// and rank 0's writes of its inputs (upload_inputs, where it alone writes them).
    std::array<double, 4> setup_times{};
    /// With WORKSIZE_STEP_LOG: each of rank 0's input writes in upload_inputs, how it went
    /// (pinned, blocking or staged), its host and device times (write_step_log's lines).
    std::vector<std::string> write_notes;
};

/// The file that environment variable `env` names for rank `me`: its value on rank 0, VALUE.rankN
/// on rank N; empty where it is unset or empty.
inline std::string rank_file(const char* env, int me) {
    const char* v = std::getenv(env);
    if (!v || !*v) return {};
    return me == 0 ? std::string(v) : std::string(v) + ".rank" + std::to_string(me);
}

/// A rank's part of a data job: its slices' buffers and kernels, run by the engine's executor
/// (engine/executor.hpp) from the instruction lists of StepCompiler.
class Execution final : public engine::Target {
public:
    Execution(const DataJobSpec& spec, const std::vector<SliceDesc>& slices, Comm& comm,
              const std::function<DeviceContext&(int)>& context_of)
        : spec_(spec), comm_(comm), me_(comm.rank()), step_log_path_(rank_file("WORKSIZE_STEP_LOG", me_)) {
        layout_ = data_layout(spec, as_assignments(slices));
        for (std::size_t i = 0; i < layout_.slices.size(); ++i) {
            const auto& sl = layout_.slices[i];
            rank_of_.push_back(sl.rank);
            if (sl.rank != me_) continue;
            SliceState s;
            s.index = i;
            for (const auto& d : slices)
                if (d.device == sl.device) s.desc = d;
            try {
                s.ctx = &context_of(s.desc.local_index);
            } catch (const std::exception& e) {
                fail(e);
            }
            mine_.push_back(std::move(s));
        }
        for (std::size_t i = 1; i < rank_of_.size(); ++i)
            if (rank_of_[i] < rank_of_[i - 1])
                throw Error("data job '" + spec.name + "': the plan's slices must follow the ranks' order");
        halo_.resize(spec.buffers.size());
        for (std::size_t b = 0; b < spec.buffers.size(); ++b) halo_[b] = halo_rows(spec, int(b));
        values_.resize(spec.buffers.size());
        for (std::size_t b = 0; b < spec.buffers.size(); ++b) values_[b].type = spec.buffers[b].type;
        report_.rank = me_;
        for (const auto& s : mine_) report_.devices.push_back(s.desc.device);
    }

    bool participates() const { return !mine_.empty(); }
    /// --kernel-timeout: a wait on a device longer than `s` seconds ends the job (DeviceWatchdog).
    void kernel_timeout(double s) { watchdog_ = std::make_unique<DeviceWatchdog>(s, spec_.name, me_); }
    /// Keep an event of every launch after the first step (RankReport::launch_s).
    void time_launches(bool on) { time_launches_ = on; }
    /// Split launches and exchange halos while the interior computes (ProgramOptions::overlap).
    void overlap(bool on) { overlap_ = on; }
    /// Guard zones around every buffer, checked after each launch (bounds.hpp).
    void check_bounds(bool on) { check_bounds_ = on; }
    const std::vector<SliceState>& mine() const { return mine_; }
    std::vector<SliceState>& mine_mutable() { return mine_; }
    RankReport& report() { return report_; }
    const wire::Failure& failure() const { return failure_; }
    bool failed_here() const { return failed_ && origin_; }
    /// The neighbour whose loss (Error lost_rank) ended this rank's steps, or -1.
    int lost_peer() const { return lost_peer_; }

    /// A worker: tell rank 0 it is alive (heartbeats) during its steps and its waits, and obey
    /// the data-job fault hooks.
    void heartbeats(const fault::DataFault& f) {
        beats_ = true;
        fault_ = f;
        last_beat_ = now_s();
    }
    /// If one is due (comm_.heartbeat() since the last): a heartbeat to rank 0 (a worker) and a
    /// sign of life to each neighbouring rank (wire::kAlive, every rank with slices), which waits
    /// on this rank as long as they come: a slow step is not a lost rank (Comm::silent); takes
    /// theirs that came meanwhile (a rank busy in its own step keeps no backlog of them).
    void beat() {
        if ((!beats_ && !has_neighbours()) || beating_ || now_s() - last_beat_ < comm_.heartbeat()) return;
        beating_ = true;  // the heartbeat's own send may call the pulse again
        last_beat_ = now_s();
        try {
            if (beats_) send_heartbeat(comm_);
            for (const int r : {rank_left(), rank_right()}) {
                if (r == Comm::none) continue;
                try {
                    comm_.send_json(nlohmann::json::object(), r, wire::kAlive);
                } catch (const std::exception&) {
                    // A neighbour gone is found by the waits on it, which name it.
                }
            }
            if (has_neighbours()) comm_.drain_alive();
        } catch (...) {
            beating_ = false;
            throw;
        }
        beating_ = false;
    }
    bool has_neighbours() const { return rank_left() != Comm::none || rank_right() != Comm::none; }

    void fail(const std::exception& e) {
        std::lock_guard lock(fail_mutex_);  // the setup's threads, one per device
        if (failure_.empty()) {
            failure_ = wire::failure_of(e);
            origin_ = true;
        }
        failed_ = true;
    }
    void fail(const std::string& what) { fail(Error(what)); }

    /// Run `f`; an OpenCL error in it becomes this rank's failure, in the context `where()` names
    /// (made only then), and so does any other error (e.g. a build of the records' combination).
    /// Returns whether `f` completed.
    template <class F, class W>
    bool guarded(F&& f, W&& where) {
        try {
            f();
            return true;
        } catch (const cl::Error& e) {
            fail(ClError(e.what() ? e.what() : "OpenCL call", e.err(), where()));
        } catch (const std::exception& e) {
            fail(e);
        }
        return false;
    }

    /// Buffers, programs and kernels of this rank's slices, a thread per device.
    void setup();
    void setup_slice(SliceState& s);
    void make_buffers(SliceState& s);
    void make_kernels(SliceState& s, const cl::Program& program);

    /// Buffer `b`'s contents made here by its generator (BufferDecl::generator) into slice `s`:
    /// its rows, halos included, of a split buffer; all of a shared one (made once per rank).
    void generate(SliceState& s, int b);

    /// Rows [first, first + n) of split buffer `b` (or elements from `first` on of shared `b`)
    /// into slice `s`. `blocking` false: `data` must stay as it is until the queue has run the
    /// write (the reduction results, rewritten only after the next step's finish; a scatter's
    /// piece, until `done`, the write's event, is complete).
    void upload(SliceState& s, int b, std::uint64_t first, std::span<const std::byte> data, bool blocking = true,
                cl::Event* done = nullptr) {
        if (failed_) return;
        guarded(
            [&] {
                const auto w = watch(s);
                s.ctx->queue().enqueueWriteBuffer(s.bufs[std::size_t(b)], blocking ? CL_TRUE : CL_FALSE,
                                                  input_offset(s, b, first), data.size(), data.data(), nullptr, done);
                note_value(b, first, data);
            },
            [&] {
                return "device '" + s.ctx->info().name + "', uploading '" +
                       spec_.buffers[std::size_t(b)].name + "'";
            });
    }

    /// An input of a slice: rows of split buffer `b` from global unit `first` (elements of shared
    /// `b` from `first`).
    struct Input {
        int b;
        std::uint64_t first;
        std::span<const std::byte> data;
    };
    /// Every slice's inputs(slice) at once, a thread per device (a write from pageable memory
    /// holds its thread: one after the other, k-means' 1 GiB onto two H200s took as long as onto
    /// one, 140 against 137 ms), through upload_inputs.
    void upload_each_device(const std::function<std::vector<Input>(const SliceState&)>& inputs);
    /// Inputs `in` onto slice `s` through a HostCopy (jobs/host_copy.hpp): pinned ones straight,
    /// ordinary ones of a piece or more onto a GPU (stage_copies) through pinned halves at DMA
    /// speed (from the job's pageable memory NVIDIA's driver copied at 6-12 GB/s, docs/models.md,
    /// and k-means' 1 GiB took 128 ms of a one-H200 setup of 147), the others in one blocking write.
    void upload_inputs(SliceState& s, const std::vector<Input>& in);

    /// The steps' and the final gather's staging, made before the ranks start their steps
    /// (run_steps() relies on it).
    void prepare_steps();

    /// Rank 0's ends of the scatter and the gathers (Target hooks): buffer `b`'s host memory, a
    /// wait on a worker (its deadlines), a message that ended (a gather's piece's bytes, else 0).
    struct BulkHooks {
        std::function<std::span<std::byte>(int)> host;
        std::function<void(int)> wait;
        std::function<void(int, std::uint64_t)> heard;
        std::function<void(int, const std::string&)> lost;  ///< MPI lost a worker: rank 0's verdict
    };
    void bulk_hooks(BulkHooks h) { bulk_hooks_ = std::move(h); }
    /// The scatter, or the gather after `steps` steps (`final`: the run's end, with the shared
    /// outputs), StepCompiler's list on this rank's executor, complete when it returns.
    void run_scatter();
    void run_gather(std::uint64_t steps, bool final);
    /// The host step after `done` steps (compile_host_step on this rank's executor), complete when
    /// it returns; rank 0 runs `host_steps()`' callback in it.
    void run_host_step(std::uint64_t done);
    /// The ranks' start after the scatter (compile_start): a worker's status to rank 0, rank 0's go.
    void run_start();
    /// Rank 0: the application's host step (DataJob::on_host_step), null: none.
    void host_steps(std::function<void(std::uint64_t)> step) { on_host_step_ = std::move(step); }
    /// Whether every worker's status word in the last gather said it works (rank 0).
    bool gather_ok() const { return !executor_ || executor_->failed_senders().empty(); }
    ProgramOptions program_options() const;  ///< overlap, the pieces (pieces::piece_bytes())
    /// The steps, with a gather on rank 0's request every gather_every steps.
    /// `host_point(done)`: after every host_every-th step (DataJobSpec::host_every), the last too.
    /// `before_finish()`: after the last step's instructions, before the queues are finished (the
    /// final gather behind the last launches: run_gather(steps, true)).
    void run_steps(const std::function<void(std::uint64_t)>& gather_point,
                   const std::function<void(std::uint64_t)>& host_point = {},
                   const std::function<void()>& before_finish = {});

    /// Slice `s`'s own rows of split buffer `b` (all of shared `b`) into `dest`, once every
    /// device's queue is done.
    void download(SliceState& s, int b, std::span<std::byte> dest);

private:
    /// The engine's launch: kernel in.kernel over the instruction's units on its slice (a whole
    /// slice with ghost zones covers the rows the next steps read).
    void launch(const Instruction& in, const std::vector<cl::Event>& wait, cl::Event* done) override;

public:
    // The engine's view (engine::Target).
    SliceState& at(int slice) {
        for (auto& s : mine_)
            if (int(s.index) == slice) return s;
        throw Error("data job '" + spec_.name + "': slice " + std::to_string(slice) + " is not on rank " +
                    std::to_string(me_));
    }
    DeviceContext& context(int slice) override { return *at(slice).ctx; }
    DeviceContext& home() override { return *mine_.front().ctx; }
    cl::Buffer& buffer(int slice, int b) override { return at(slice).bufs[std::size_t(b)]; }
    std::uint64_t row_offset(int slice, int b, std::uint64_t row) const override {
        for (const auto& s : mine_)
            if (int(s.index) == slice) return input_offset(s, b, row);  // a shared buffer's element `row`
        return 0;
    }
    /// The row of slice `s`'s buffer `b` that holds global unit `unit`.
    static std::uint64_t device_row(const SliceState& s, int b, std::uint64_t unit) {
        return std::uint64_t(std::int64_t(unit) - s.origins[std::size_t(b)]);
    }
    std::uint64_t row_bytes(int b) const { return worksize::row_bytes(spec_.buffers[std::size_t(b)]); }
    void host_step(const Instruction& in) override { reduce(std::size_t(in.kernel), std::size_t(in.arg)); }
    bool failed() const override { return failed_; }
    void fail(const std::exception& e, const std::string& where) override {
        if (const auto* c = dynamic_cast<const cl::Error*>(&e)) {
            try {
                rethrow_cl(*c, where);
            } catch (const std::exception& x) {
                fail(x);
            }
            return;
        }
        fail(e);
    }
    void peer_failed(int rank) override {
        std::lock_guard lock(fail_mutex_);
        if (failed_) return;
        failed_ = true;
        origin_ = false;
        failure_ = {"rank " + std::to_string(rank) + " failed", ErrorReason::generic};
    }
    void with_peer(int peer, bool sending, const std::function<void()>& f) override {
        with_peers(sending ? peer : Comm::none, sending ? Comm::none : peer, f);
    }
    void device_wait(int slice, bool begin) override {
        if (!begin) return watchdog_->end();
        const SliceState* s = nullptr;
        for (const auto& m : mine_)
            if (int(m.index) == slice) s = &m;
        watchdog_->begin(s ? s->last_kernel : "?", s && s->ctx ? s->ctx->info().name : "a halo write", pending_steps());
    }
    void arrived(bool overlapping, bool interior_done) override {
        ++report_.halo_arrivals;
        if (overlapping) ++report_.halo_overlapped;
        if (overlapping && interior_done) ++report_.interior_first;
    }
    void before_send() override {
        if (!beats_ || fault_.link_s <= 0) return;
        const double until = now_s() + fault_.link_s;
        while (now_s() < until) {
            comm_.pulse();
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }
    bool traced() const override { return !timeline_path_.empty(); }
    void trace(const Instruction& in, const cl::Event& ev, double host_s) override;  ///< halo rows and messages
    // The scatter's and the gathers' ends (BulkHooks; data_transfer.cpp).
    std::span<std::byte> host_bytes(const Instruction& in) override;
    void bulk_wait(int peer) override;
    void bulk_heard(int peer, std::uint64_t bytes) override;
    void bulk_lost(int peer, const std::string& why) override;
    void upload_host(const std::vector<Instruction>& uploads) override;  ///< upload_each_device()
    void host_written(const Instruction& in, std::span<const std::byte> data) override;
    // A host step's ends (data_transfer.cpp).
    void host_call(const Instruction& in) override;
    void shared_result(const Instruction& in, std::span<std::byte> into) override;
    void host_upload(const Instruction& in, std::span<const std::byte> data) override;
    /// The final gather's reads behind the last launches: where the steps ended
    /// (final_reads_tail()), in the timeline with WORKSIZE_TIMELINE.
    void gather_read(const Instruction& in, const cl::Event& ev, double host_s) override;
    void count(const Instruction& in) override {
        if (in.feeds_step >= spec_.steps) return;
        if (in.kind == InstrKind::send) report_.sent_per_step[in.feeds_step] += in.bytes;
        if (in.kind == InstrKind::read_rows) report_.halo_per_step[in.feeds_step] += in.bytes;
    }

private:
    /// --check-bounds: after kernel `kd`'s launch on `s`, the guard zones of what it writes.
    void check_guards(SliceState& s, const KernelDecl& kd);

    /// After a step's list: the fault's slow link, the buffers swapped, a gather or a host
    /// step when one is due.
    void after_step(engine::Executor& executor, std::uint64_t step, const std::function<void(std::uint64_t)>& gather_point,
                    const std::function<void(std::uint64_t)>& host_point);
    /// The report's device times: each device's span from its first launch to its last, and
    /// with time_launches its median timed step and reduction.
    void report_device_times();
    /// Joins `threads`, one per slice of mine_ in order, within --kernel-timeout; a thread's
    /// error is this rank's failure, at `what` on its device.
    void join_each_device(std::vector<std::future<void>>& threads, const std::string& what);
    /// How long the final reads ran after the last launches (device clocks; the least of the
    /// devices', so that the steps are never reported shorter than they were).
    double final_reads_tail() const;
    void finish_queues() {
        for (auto& s : mine_) {
            if (failed_) {
                // What was enqueued still ends before the rank does: a process that exits while
                // PoCL compiles a launch in its own thread crashes in LLVM's teardown.
                try {
                    const auto w = watch(s);
                    if (s.ctx) s.ctx->queue().finish();
                } catch (const std::exception&) {
                }
                continue;
            }
            guarded(
                [&] {
                    const auto w = watch(s);
                    wait_devices([&] { s.ctx->queue().finish(); });
                },
                    [&] { return "device '" + s.ctx->info().name + "'"; });
        }
    }

    /// Runs `f`, a wait on this rank's devices: where steps are slow, on a worker or a rank with
    /// neighbours, in another thread while this one (MPI is funneled) beats (beat(): rank 0 and
    /// the neighbours hear it every comm_.heartbeat() seconds); else here (a thread per wait
    /// would cost fast steps more than they take).
    template <class F>
    void wait_devices(F&& f) {
        if ((!beats_ && !has_neighbours()) || !slow_) {
            f();
            return;
        }
        auto done = std::async(std::launch::async, [&f] { f(); });
        const std::chrono::duration<double> every(comm_.heartbeat());
        while (done.wait_for(every) != std::future_status::ready) beat();
        done.get();
    }

    /// Runs `f`, a message exchange with `dest` and `source` (either may be none); a lost peer
    /// (Error lost_rank) is noted (lost_peer()) and rethrown: the job ends (a worker tells rank
    /// 0, wire::kLost). Rank 0's own verdict on a worker (LostWorker, from its pulse) passes.
    template <class F>
    void with_peers(int dest, int source, F&& f) {
        try {
            f();
        } catch (const LostWorker&) {
            throw;
        } catch (const Error& e) {
            if (e.reason() != ErrorReason::lost_rank) throw;
            // send_recv receives first, then completes its sends ("took nothing sent to it").
            const bool send_side = source == Comm::none ||
                                   (dest != Comm::none && std::string(e.what()).find("took nothing") != std::string::npos);
            lost_peer_ = send_side ? dest : source;
            throw;
        }
    }

    /// The rank of the slice before this rank's first one and after its last one, if another.
    int rank_left() const {
        if (mine_.empty()) return Comm::none;
        const int l = layout_.slices[mine_.front().index].left;
        return l >= 0 && rank_of_[std::size_t(l)] != me_ ? rank_of_[std::size_t(l)] : Comm::none;
    }
    int rank_right() const {
        if (mine_.empty()) return Comm::none;
        const int r = layout_.slices[mine_.back().index].right;
        return r >= 0 && rank_of_[std::size_t(r)] != me_ ? rank_of_[std::size_t(r)] : Comm::none;
    }

    /// A message from `from` opened by its status word; false (and this rank failed) when the
    /// sender had failed or the message is short.
    bool accept(const Bytes& msg, int from, std::size_t want) {
        std::uint64_t status = kStatusFailed;
        if (msg.size() >= 8) std::memcpy(&status, msg.data(), 8);
        if (status == kStatusOk && msg.size() == 8 + want) return true;
        peer_failed(from);
        return false;
    }

    void reduce(std::size_t k, std::size_t i);
    /// Reduction (k, i) over this rank's slices, in slice order: each device's records
    /// (per-group ones first combined on the device) read back and combined here.
    std::vector<double> local_total(std::size_t k, std::size_t i);

    const DataJobSpec& spec_;
    Comm& comm_;
    int me_;
    DataLayout layout_;
    std::vector<int> rank_of_;  // per slice
    std::vector<SliceState> mine_;
    std::vector<std::uint64_t> halo_;
    RankReport report_;
    wire::Failure failure_;
    std::atomic<bool> failed_ = false;
    std::mutex fail_mutex_;
    bool origin_ = false, time_launches_ = false, overlap_ = true, check_bounds_ = false;
    std::uint64_t step_ = 0;
    int lost_peer_ = -1;
    bool beats_ = false, beating_ = false, slow_ = true;
    /// WORKSIZE_TIMELINE: where write_timeline() puts every launch's times (empty: nowhere).
    std::string timeline_path_;
    /// With WORKSIZE_TIMELINE: the host's moments at the run's end (what, now_s()).
    std::vector<std::pair<std::string, double>> marks_;
    void mark(const char* what) { if (!timeline_path_.empty()) marks_.emplace_back(what, now_s()); }
    data::Values values_;  ///< per buffer: its first element's bytes on this rank (value_of)
    std::unique_ptr<DeviceWatchdog> watchdog_ = std::make_unique<DeviceWatchdog>(0.0, "", 0);
    /// The scope of a wait on slice `s`'s device, behind the steps enqueued since the last wait.
    /// Byte offset in slice `s`'s buffer `b` of global unit `first` (split) or element `first`.
    std::uint64_t input_offset(const SliceState& s, int b, std::uint64_t first) const {
        const auto& d = spec_.buffers[std::size_t(b)];
        return d.layout == BufferLayout::split ? device_row(s, b, first) * row_bytes(b) : first * elem_size(d.type);
    }
    /// A shared buffer's first element, written: the value of value_of arguments (rank-local).
    void note_value(int b, std::uint64_t first, std::span<const std::byte> data) {
        const auto& d = spec_.buffers[std::size_t(b)];
        if (d.layout == BufferLayout::shared && first == 0 && data.size() >= elem_size(d.type))
            values_[std::size_t(b)].bytes.assign(data.begin(), data.begin() + std::ptrdiff_t(elem_size(d.type)));
    }
    DeviceWatchdog::Scope watch(const SliceState& s) {
        return {*watchdog_, s.last_kernel, s.ctx ? s.ctx->info().name : "?", pending_steps()};
    }
    /// The steps enqueued since the last wait began (at least 1); this wait sees them end.
    std::uint64_t pending_steps() {
        const std::uint64_t pending = step_ + 1 > waited_steps_ ? step_ + 1 - waited_steps_ : 1;
        waited_steps_ = step_ + 1;
        return pending;
    }
    std::uint64_t waited_steps_ = 0;  ///< steps whose device work a wait has seen end
    void write_timeline(double t0) const;
    /// WORKSIZE_STEP_LOG=FILE (FILE, FILE.rankN): the setup's lines, rank 0's input writes
    /// (upload_inputs) and the host's moment at the start of each step.
    std::string step_log_path_;
    std::vector<double> step_starts_;
    void write_step_log(double t0, double end) const;
    double last_beat_ = 0;
    fault::DataFault fault_;
    Bytes inbox_;
    /// Per shared buffer: the last reduction's result (its elements), which the host steps read
    /// instead of the devices.
    std::map<int, Bytes> results_;

public:
    /// Buffer `b`'s last reduction result on this rank, or null.
    const Bytes* last_result(int b) const {
        const auto it = results_.find(b);
        return it == results_.end() ? nullptr : &it->second;
    }

private:
    double setup_own_s_ = 0.0;  ///< setup()'s wall time
    std::mutex generated_mutex_;
    std::map<int, Bytes> generated_;  ///< shared buffers' generated contents, made once per rank
    /// The engine of this rank's lists, the scatter's to the final gather's (made at the first).
    std::unique_ptr<engine::Executor> executor_;
    engine::Executor& executor();
    BulkHooks bulk_hooks_;
    std::function<void(std::uint64_t)> on_host_step_;  ///< rank 0's: host_steps()
    bool final_gather_ = false;  ///< the gather being run is the run's last
};


}  // namespace worksize::data_exec
