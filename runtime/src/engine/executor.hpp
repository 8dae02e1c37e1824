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

private:
    struct Slot;
    struct PerSlice;
    PerSlice& slice(int s);
    cl::CommandQueue& copy_queue(int s);
    Comm& comm();
    Slot& slot(int id);
    Slot& slot(const Instruction& in);
    void read_rows(const Instruction& in);
    void write_rows(const Instruction& in, const std::vector<Instruction>& list);
    void post_recv(const Instruction& in);
    void send(const Instruction& in);
    void complete_recv(Slot& s);
    void stage_rows(Slot& s, int slice, std::uint64_t bytes);
    void stage_in(Slot& s, std::uint64_t bytes);
    void complete_send(Slot& s);
    void wait_event(const cl::Event& ev, int s);
    bool samples_overlap() const;

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
};

}  // namespace worksize::engine
