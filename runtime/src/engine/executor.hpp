// The executor: runs a rank's instruction list (worksize/scheduler/instructions.hpp) on its
// devices and over MPI, asynchronously. Per device two in-order queues: launches on the device's
// own queue, row reads and writes on a copy queue, joined by events; rows go through pinned
// staging slots (DeviceContext::staging_memory); receives are posted before anything waits,
// sends after their read, and MPI is polled without sleeping while the devices work. A job gives the executor its devices, buffers,
// launches and host steps through a Target; the executor owns the order, the transfers and the
// failure protocol (every message starts with a status word; a failed rank keeps walking its
// list and sends "failed", so no neighbour waits for a message that will not come).
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "worksize/runtime/bytes.hpp"
#include "worksize/runtime/comm.hpp"
#include "worksize/runtime/opencl.hpp"
#include "worksize/scheduler/instructions.hpp"

namespace worksize::engine {

/// The first word of every message between the ranks of a job: whether its sender still works.
constexpr std::uint64_t kStatusOk = 0, kStatusFailed = 1;

/// What a job gives the executor. Slices are the layout's indexes (Instruction::slice).
class Target {
public:
    virtual ~Target() = default;
    virtual DeviceContext& context(int slice) = 0;
    /// The rank's first device (its pinned memory receives the messages).
    virtual DeviceContext& home() = 0;
    virtual cl::Buffer& buffer(int slice, int b) = 0;
    /// Byte offset in slice's device buffer `b` of global row `row` (halo rows included).
    virtual std::uint64_t row_offset(int slice, int b, std::uint64_t row) const = 0;
    /// Enqueue the launch on context(slice).queue() after `wait`; its event into `done` when
    /// `done` is not null. A device error is the Target's failure (fail()).
    virtual void launch(const Instruction& in, const std::vector<cl::Event>& wait, cl::Event* done) = 0;
    /// A host step (reduce): runs when every launch before it has been enqueued.
    virtual void host_step(const Instruction& in) = 0;
    /// A kernel slice's alloc, upload and download (slice_program.hpp), on the slice's own
    /// queue in list order; a data job has none.
    virtual void allocate(const Instruction& in);
    virtual void upload(const Instruction& in);
    virtual void download(const Instruction& in);
    virtual bool failed() const = 0;
    virtual void fail(const std::exception& e, const std::string& where) = 0;
    /// A neighbour's message said it had failed (or was short).
    virtual void peer_failed(int rank) = 0;
    /// Runs `f`, a message exchange with `peer`: a lost peer is noted and rethrown.
    virtual void with_peer(int peer, bool sending, const std::function<void()>& f) = 0;
    /// Halo traffic, for the report's counters.
    virtual void count(const Instruction& in) = 0;
    /// Rows from another rank have arrived; `interior_done`: the interior launches of this list
    /// had all finished by then (the exchange was hidden), `overlapping`: the list has some.
    virtual void arrived(bool overlapping, bool interior_done) = 0;
    /// Before a message leaves (a test's slow link).
    virtual void before_send() {}
    /// A wait on slice's device begins (`begin`) or ends: --kernel-timeout's watchdog.
    virtual void device_wait(int /*slice*/, bool /*begin*/) {}
    /// WORKSIZE_TIMELINE: whether to trace the halo traffic (profiled copy queues), and the
    /// trace of one instruction: a row read or write with its event, enqueued at host time
    /// `host_s`; a send (posted) or a receive (arrived) with a null event, at `host_s`.
    virtual bool traced() const { return false; }
    virtual void trace(const Instruction& /*in*/, const cl::Event& /*ev*/, double /*host_s*/) {}
    /// A scatter or a gather (Flow::scatter, Flow::gather) on rank 0: the job's host memory that
    /// `in` (Instruction::host) reads or fills, bytes [in.at, in.at + in.bytes) of buffer
    /// in.buffer's. Default: none (throws).
    virtual std::span<std::byte> host_bytes(const Instruction& in);
    /// Rank 0 waits on a scatter's or a gather's message to or from `peer` (a poll: its
    /// deadlines), or one ended (`bytes`: a piece's, 0 for a status word); MPI said `peer` was
    /// lost (`why`): rank 0's verdict (default: the error rethrown).
    virtual void bulk_wait(int /*peer*/) {}
    virtual void bulk_heard(int /*peer*/, std::uint64_t /*bytes*/) {}
    virtual void bulk_lost(int /*peer*/, const std::string& /*why*/) { throw; }
    /// Rank 0's own inputs (`uploads`, Flow::scatter with host) when no message moves beside
    /// them: the Target uploads them as it sees fit (blocking). Default: none (throws).
    virtual void upload_host(const std::vector<Instruction>& uploads);
    /// A scatter's piece was written onto in.slice (the Target may note what it holds).
    virtual void host_written(const Instruction& /*in*/, std::span<const std::byte> /*data*/) {}
    /// A host step (Flow::host, compile_host_step). Rank 0: the application's step after in.first
    /// steps; an error of it is the Target's failure (failed() then says so). Default: none.
    virtual void host_call(const Instruction& /*in*/) {}
    /// This rank's value of shared output in.buffer (its reduction's result) into `into`: rank
    /// 0's download into the job's memory, a worker's send. Default: none (throws).
    virtual void shared_result(const Instruction& in, std::span<std::byte> into);
    /// A host step's upload: `data`, the rewritten in.buffer, onto slice in.slice (blocking on a
    /// worker, whose receive buffer is reused). Default: none (throws).
    virtual void host_upload(const Instruction& in, std::span<const std::byte> data);
    /// A gather's download into the host memory has ended: its event, its enqueue's host time.
    virtual void gather_read(const Instruction& /*in*/, const cl::Event& /*ev*/, double /*host_s*/) {}
};

class Executor {
public:
    /// `comm`: the ranks of the job; null for a list without messages (a kernel slice, run on
    /// a worker's lane thread, which must not call MPI).
    Executor(Target& target, Comm* comm, int tag);
    Executor(const Executor&) = delete;
    Executor& operator=(const Executor&) = delete;
    ~Executor();

    /// Enqueues and completes the list's instructions in order, returning once every transfer
    /// of the list has been handed to a queue or to MPI (launches may still run).
    void run(const std::vector<Instruction>& list);
    /// Makes what `list` (a step's list) will use before it runs: its staging slots, pinned,
    /// and the copy queues (the first steps of a run paid for them otherwise).
    void prepare(const std::vector<Instruction>& list);
    /// Every queue flushed (devices run side by side).
    void flush();
    /// Waits for every send still in flight (before the staging slots go away).
    void drain();
    /// The tag of a scatter's and a gather's messages (the constructor's tag is the steps').
    void gather_tag(int tag) { gather_tag_ = tag; }
    /// The ranks whose status word in the last gather run() said they had failed (they sent no
    /// pieces).
    const std::vector<int>& failed_senders() const { return failed_senders_; }

private:
    struct Slot;
    struct PerSlice;
    PerSlice& slice(int s);
    cl::CommandQueue& copy_queue(int s);
    Comm& comm();
    Slot& slot(int id);
    /// Slot `id` of `slots`, made at its first use.
    static Slot& slot_in(std::vector<std::unique_ptr<Slot>>& slots, int id);
    Slot& slot(const Instruction& in);
    void read_rows(const Instruction& in);
    void write_rows(const Instruction& in, const std::vector<Instruction>& list);
    void post_recv(const Instruction& in);
    void send(const Instruction& in);
    void complete_recv(Slot& s);
    void stage_rows(Slot& s, int slice, std::uint64_t bytes);
    void stage_in(Slot& s, std::uint64_t bytes);
    void complete_send(Slot& s);
    /// Polls `ev` to its end on slice `s` (-1: a halo write), the heartbeats going; `bulk`: a
    /// piece's read or write, the scatter's and gathers' messages moving too (bulk_progress()).
    void wait_event(const cl::Event& ev, int s, bool bulk = false);
    bool samples_overlap() const;
    // A gather's instructions (executor_gather.cpp): run in list order, completed at its end.
    struct Gather;
    Slot& bulk_slot(int staging);
    void gather(const std::vector<Instruction>& list, std::size_t i);
    void gather_status(const Instruction& in);
    void gather_read_rows(const Instruction& in);
    void gather_send(const Instruction& in);
    void gather_recv(const std::vector<Instruction>& list, std::size_t i);
    void gather_download(const Instruction& in, std::size_t i);
    void start_downloads(const std::vector<Instruction>& list);
    void complete_gather_recv(const std::vector<Instruction>& list, std::size_t i);
    void finish_gather(const std::vector<Instruction>& list);
    void abandon_gather();
    // A host step's instructions (executor_host.cpp), in list order, each done when it returns.
    void host_instruction(const Instruction& in);
    void host_recv(const Instruction& in);
    void host_send(const Instruction& in);
    void host_message_memory();  ///< host_message_ in the home device's pinned memory
    void start_message(const Instruction& in);
    /// Rank 0: until a message from `peer` is there, under its deadline on it (bulk_wait).
    void await_message(int peer);
    // The scatter's (executor_scatter.cpp), likewise.
    struct Scatter;
    void scatter(const std::vector<Instruction>& list, std::size_t i);
    void scatter_upload(const Instruction& in, std::size_t i);
    void scatter_recv(const Instruction& in, std::size_t i);
    void scatter_write(const std::vector<Instruction>& list, std::size_t i);
    void complete_scatter_recv(const std::vector<Instruction>& list, std::size_t i);
    void finish_scatter(const std::vector<Instruction>& list);
    void abandon_scatter();
    /// Whether the send of handle `id` to `peer` is done; a lost peer is rank 0's verdict.
    bool test_bulk_send(int peer, std::size_t id);
    void bulk_progress();

    Target& target_;
    Comm* comm_;
    int tag_;
    std::vector<std::unique_ptr<PerSlice>> slices_;
    std::vector<std::unique_ptr<Slot>> slots_;
    std::shared_ptr<PinnedHostMemory> home_staging_;  ///< received messages' staging
    std::vector<cl::Event> interior_;  ///< the current list's interior launches so far (sampled lists)
    std::uint64_t runs_ = 0;           ///< lists run so far
    std::uint64_t sample_every_ = 32;  ///< WORKSIZE_OVERLAP_SAMPLE: a list in how many checks its overlap
    bool writes_on_compute_ = false, host_waits_writes_ = false;
    bool flush_steps_ = true;  ///< WORKSIZE_STEP_FLUSH (an experiment)
    int gather_tag_ = -1;
    std::vector<std::unique_ptr<Slot>> bulk_slots_;    ///< a worker's pieces (Instruction::staging)
    std::unique_ptr<Slot> status_slot_;                ///< a worker's gather status word (8 bytes)
    std::unique_ptr<Gather> gather_;                   ///< the gather list being run
    std::unique_ptr<Scatter> scatter_;                 ///< the scatter list being run
    std::vector<int> failed_senders_;
    Bytes host_message_;   ///< a host step's message: a worker's received input or sent output
    bool host_ok_ = true;  ///< the current host step's status (rank 0's, or the one a worker received)
};

}  // namespace worksize::engine
