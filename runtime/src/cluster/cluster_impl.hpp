// The state a Cluster shares between its parts: the communicator, the devices (rank 0: every
// rank's; others: their own), this rank's device contexts and its pooled payload buffers.
// cluster.cpp builds it (inventory), master.cpp runs jobs on rank 0, worker.cpp serves them.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cluster/fault.hpp"
#include "jobs/input_feed.hpp"
#include "support/clock.hpp"
#include "worksize/runtime/cluster.hpp"
#include "worksize/runtime/host_memory.hpp"
#include "worksize/runtime/mpi.hpp"
#include "worksize/runtime/opencl.hpp"
#include "worksize/scheduler/format.hpp"

namespace worksize {


/// A worker's sign of life for rank 0 (wire::kHeartbeat, an empty object): rank 0 counts a worker
/// lost when it heard nothing from it for --rank-timeout while it waited on it (docs/cluster.md,
/// "The fault model").
inline void send_heartbeat(Comm& comm) { comm.send_json(nlohmann::json::object(), 0, wire::kHeartbeat); }

/// Waits for `f` (work running in another thread) on the main thread (MPI is funneled), telling
/// rank 0 every comm.heartbeat() seconds that this rank is alive, so that long work is not taken
/// for a lost rank.
template <class T>
T wait_beating(Comm& comm, std::future<T>& f) {
    const std::chrono::duration<double> every(comm.heartbeat());
    while (f.wait_for(every) != std::future_status::ready) send_heartbeat(comm);
    return f.get();
}

/// A slice's deadline under --kernel-timeout, set by the thread that executes it and read by the
/// thread that waits on it: infinity while none runs.
struct SliceDeadline {
    std::atomic<double> at{std::numeric_limits<double>::infinity()};
    bool passed() const { return now_s() > at.load(); }
    UserMemoryGuard guard;  ///< rank 0's own slice: its copies of the job's memory
    bool grace = false;     ///< the deadline was moved once for a copy that was running
};

struct Cluster::Impl {
    std::unique_ptr<Comm> owned_comm;  // the MPI world communicator, when built from the environment
    Comm* comm = nullptr;
    std::vector<DeviceInfo> devices;           // rank 0: all; others: own
    std::vector<std::string> hosts;
    std::map<int, std::unique_ptr<DeviceContext>> contexts;  // by local device index
    bool finished = false;
    double rank_timeout_s = 5.0;
    double kernel_timeout_s = 60.0;  // per iteration of a slice (--kernel-timeout)
    /// Local devices held by a kernel past --kernel-timeout (never run on again); once any is,
    /// the Cluster's state is left to the process's end (~Cluster, mpi::end_held).
    std::vector<int> held;
    bool is_held(int device) const { return std::find(held.begin(), held.end(), device) != held.end(); }
    /// A slice's time limit: --kernel-timeout per iteration.
    double slice_limit(const SliceSpec& spec) const {
        return kernel_timeout_s * double(std::max<std::uint64_t>(1, spec.iterations));
    }
    /// The failure of a slice past its limit, for rank 0 to report with the rank and device.
    wire::Failure timed_out(const SliceSpec& spec) const {
        return {"kernel '" + spec.kernel + "' did not finish within " + format_seconds(slice_limit(spec), 3) +
                    " (--kernel-timeout " + format_seconds(kernel_timeout_s, 3) + " per iteration, " +
                    std::to_string(std::max<std::uint64_t>(1, spec.iterations)) +
                    " iteration(s))",
                ErrorReason::timed_out};
    }
    void hold(int device) {
        if (!is_held(device)) held.push_back(device);
        mpi::note_held_device();
    }
    std::vector<int> lost;  // rank 0: lost ranks, in the order found
    std::map<int, std::size_t> owed;  // rank 0: answers of a failed job still to drop, by rank
    bool is_lost(int r) const { return std::find(lost.begin(), lost.end(), r) != lost.end(); }
    std::function<std::string(const std::string&)> collect_handler;
    /// The payload buffers of this rank's devices, kept from job to job: memory that is already
    /// mapped is not zeroed or page-faulted again (docs/models.md, "Data path"). Keyed by
    /// (local device index, slot), slot k holding the device's k-th task of a command; their
    /// memory is the device's pinned host memory (DeviceContext::host_memory), so that the
    /// executor's copies between them and the device run at DMA speed. Declared after
    /// `contexts`, so destroyed before them (the resources are shared, so either order is safe).
    using Pool = std::map<std::pair<int, std::size_t>, Bytes>;
    Pool in_pool, out_pool;

    /// The pooled buffer of (device, slot), or a new empty one with the device's host memory.
    Bytes take(Pool& pool, int device, std::size_t slot) {
        std::shared_ptr<HostMemoryResource> want;
        if (auto c = contexts.find(device); c != contexts.end()) want = c->second->host_memory();
        if (auto it = pool.find({device, slot}); it != pool.end()) {
            Bytes b = std::move(it->second);
            pool.erase(it);
            // An executor may have swapped in a buffer of its own: keep only the device's memory.
            if (b.get_allocator().resource() == want) return b;
        }
        return bytes_with(std::move(want));
    }
    void put(Pool& pool, int device, std::size_t slot, Bytes&& b) {
        pool.insert_or_assign(std::pair{device, slot}, std::move(b));
    }

    DeviceContext& context(int index) {
        auto it = contexts.find(index);
        if (it == contexts.end())
            throw Error("this rank drives no device with index " + std::to_string(index));
        return *it->second;
    }

    /// Run one task on a local device; returns output bytes and times, or throws. `host_bytes`:
    /// what the slice allocates beside its input (slice_host_bytes), checked first against the
    /// process's memory limit (less the output buffer this rank already holds for it; OpenCL has
    /// started: no reserve for it, check_job_memory() kept one before the inputs were made).
    /// `feed`: the input still arriving (a worker's task), taken part by part by an executor that
    /// streams its input, else awaited whole first.
    /// `parts`: rank 0's own slice's input as the job's memory holds it, for an executor that
    /// streams its input (`in` is then empty; others get it packed); `in_place`: where the job
    /// keeps the slice's output, which such an executor may fill instead of `out` (then empty).
    SliceTimes execute(int device_index, const SliceSpec& spec, std::span<const std::byte> in, Bytes& out,
                       std::uint64_t host_bytes = 0, InputFeed* feed = nullptr, const InputParts* parts = nullptr,
                       std::span<std::byte> in_place = {}, UserMemoryGuard* guard = nullptr) {
        auto& ctx = context(device_index);
        if (host_bytes > out.capacity())
            check_host_memory(host_bytes - out.capacity(),
                              "the slice of '" + spec.kernel + "' (its output and device buffers)", 0);
        fault::before_execute(ctx.info());
        const auto& factory = kernel_job(spec.kernel);
        if (feed && !factory.streams_input) feed->wait(feed->total());
        const InputFeed::Scope streaming(factory.streams_input ? feed : nullptr);
        if (parts && !factory.streams_input) throw Error("kernel '" + spec.kernel + "' takes its input in one buffer");
        const InputParts::Scope own_parts(parts);
        const OutputInPlace::Scope own_output(factory.streams_input ? in_place : std::span<std::byte>());
        const UserMemoryGuard::Scope guarded(guard);
        SliceTimes t = factory.execute(ctx, spec, in, out);
        fault::after_execute(spec, out.empty() && factory.streams_input ? in_place : std::span<std::byte>(out));
        fault::scale_times(spec, t);
        return t;
    }

    /// A slice with rank-local inputs (SliceSpec::local_inputs) on a local device: its input
    /// made into `in` by `job` (run.gen_s), executed (run.times, run.exec_s) and its output
    /// checked here (run.verdict). Throws what execute() throws.
    void run_local(const KernelJob& job, const SliceSpec& spec, int device_index, Bytes& in, Bytes& out,
                   std::uint64_t host_bytes, DeviceRun& run) {
        Assignment a;
        a.offset = spec.offset;
        a.units = spec.units;
        a.global = spec.global;
        a.local = spec.local;
        const double g = now_s();
        job.make_slice_input(a, in);
        const double e = now_s();
        run.gen_s = e - g;
        run.times = execute(device_index, spec, in, out, host_bytes);
        const double c = now_s();
        run.exec_s = c - e;
        run.verdict = job.verify_slice(a, in, out);
        run.check_s = now_s() - c;
    }
};

}  // namespace worksize
