// Declarative data jobs: an application names its OpenCL source, its buffers, the kernels run
// every step and how each kernel argument touches its buffer; worksize plans the split, keeps
// every buffer on its devices for the life of the job, sends each device its rows once (shared
// inputs once per rank), swaps halo rows directly between neighbouring devices between steps
// (MPI point-to-point between ranks, host copies within a rank), combines reductions along the
// slices, and gathers the outputs on rank 0 only at the end (or every N steps).
//
//   DataJob job("heat", read_text_file("heat.cl"), {width, height}, 2);
//   auto t = job.split("t", width, temperature);          // input and output
//   auto next = job.split<float>("next", width);          // device-only
//   auto p = job.split("power", width, power);
//   job.kernel("heat_step", {arg::halo(t, 1), arg::origin(t), arg::in(p), arg::origin(p),
//                            arg::out(next), arg::origin(next), arg::value<int>(width), ...});
//   job.swap(t, next).steps(200).gather(t);
//   DataRunResult r = run(cluster, job);   // rank 0; the other ranks serve()
//
// The declaration (scheduler/data_spec.hpp) travels to the other ranks as JSON; only rank 0
// holds host data. Kernel conventions: the split dimension's work-item ids are global (the
// slice is launched with a global offset), the NDRange is padded to whole work-groups (guard
// with arg::end()), and a split buffer's row 0 on a device holds global unit arg::origin(b).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "worksize/runtime/cluster.hpp"
#include "worksize/scheduler/data_model.hpp"
#include "worksize/scheduler/data_spec.hpp"

namespace worksize {

/// A declared buffer of a DataJob.
struct BufferRef {
    int index = -1;
};

template <class T>
constexpr ElemType elem_type_of() {
    if constexpr (std::is_same_v<T, float>) return ElemType::f32;
    else if constexpr (std::is_same_v<T, double>) return ElemType::f64;
    else if constexpr (std::is_same_v<T, std::int32_t>) return ElemType::i32;
    else if constexpr (std::is_same_v<T, std::uint32_t>) return ElemType::u32;
    else if constexpr (std::is_same_v<T, std::int64_t>) return ElemType::i64;  // values and indexes only
    else static_assert(sizeof(T) == 0, "buffer elements are float, double, std::int32_t or std::uint32_t");
}

/// Kernel arguments, in the order of the kernel's parameters.
namespace arg {
inline ArgDecl in(BufferRef b) { return {ArgKind::read, b.index}; }
inline ArgDecl out(BufferRef b) { return {ArgKind::write, b.index}; }
inline ArgDecl inout(BufferRef b) { return {ArgKind::read_write, b.index}; }
/// The slice's rows and `depth` rows on each side (read only).
inline ArgDecl halo(BufferRef b, std::uint64_t depth) { return {ArgKind::halo, b.index, depth}; }
/// A shared buffer, whole, read only.
inline ArgDecl all(BufferRef b) { return {ArgKind::all, b.index}; }
/// Each launched work-item writes one record (the shared buffer's size) into its own place:
/// records[(id - begin) * count + j]; worksize combines all records with `op`.
inline ArgDecl reduce(BufferRef b, ReduceOp op = ReduceOp::sum) {
    ArgDecl a{ArgKind::reduce, b.index};
    a.op = op;
    return a;
}
/// Each work-group reduces in __local memory and writes one record: records[get_group_id(0) *
/// count + j]; worksize combines the groups' records with `op` (ArgDecl::per_group).
inline ArgDecl group_reduce(BufferRef b, ReduceOp op = ReduceOp::sum) {
    ArgDecl a = reduce(b, op);
    a.per_group = true;
    return a;
}
template <class T>
ArgDecl value(T v) {
    ArgDecl a{ArgKind::scalar};
    a.scalar_type = elem_type_of<T>();
    a.value = static_cast<double>(v);
    return a;
}
/// A __local array of `count` elements of T per work-group (e.g. a tile whose size the host
/// chooses from the work-group shape).
template <class T>
ArgDecl local(std::uint64_t count) {
    ArgDecl a{ArgKind::local};
    a.scalar_type = elem_type_of<T>();
    a.value = static_cast<double>(count);
    return a;
}
/// Index arguments are an OpenCL `int` (T = std::int32_t), or a `long` (T = std::int64_t) for a
/// job of more than 2^31-1 items or rows: validate() refuses an int that they do not fit.
template <class T = std::int32_t>
ArgDecl index_arg(ArgKind kind, int buffer = -1) {
    static_assert(std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>,
                  "an index argument is std::int32_t (int) or std::int64_t (long)");
    ArgDecl a{kind, buffer};
    a.index_type = elem_type_of<T>();
    return a;
}
/// The first launched item along the split dimension (global index).
template <class T = std::int32_t>
ArgDecl begin() { return index_arg<T>(ArgKind::begin); }
/// One past the slice's last launched item (global index).
template <class T = std::int32_t>
ArgDecl end() { return index_arg<T>(ArgKind::end); }
/// The global unit held in row 0 of `b` on this device (the slice's first minus the halo).
template <class T = std::int32_t>
ArgDecl origin(BufferRef b) { return index_arg<T>(ArgKind::origin, b.index); }
/// The step's number (0 for the first) times `times` plus `plus`: a time step (`t`), or the first
/// time step of a kernel that advances `times` of them per launch.
template <class T = std::int32_t>
ArgDecl step(std::int64_t times = 1, std::int64_t plus = 0) {
    ArgDecl a = index_arg<T>(ArgKind::step);
    a.step_times = times;
    a.step_plus = plus;
    return a;
}
/// An integer computed per launch from `text` (expr.hpp): the step's number `step`, `steps`, the
/// launch's first unit `begin` and one past its last `end`, the job's `units` and `constants`.
/// E.g. Rodinia's pathfinder: {"min(h, rows - 1 - step * h)", {{"h", 20}, {"rows", 1000}}}.
template <class T = std::int32_t>
ArgDecl expr(std::string text, ExprConstants constants = {}) {
    ArgDecl a = index_arg<T>(ArgKind::expr);
    a.expr = std::move(text);
    a.constants = std::move(constants);
    return a;
}
/// A scratch buffer (DataJob::scratch): each device's own, the kernel may read and write it.
inline ArgDecl scratch(BufferRef b) { return {ArgKind::scratch, b.index}; }
/// The first element of shared buffer `b`, passed by value (its type): a scalar the host step
/// computes between steps, e.g. srad's q0sqr (host_step(n, {b}, ...) writes it; every rank then
/// passes the new value).
inline ArgDecl value_of(BufferRef b) { return {ArgKind::value_of, b.index}; }
}  // namespace arg

/// A generator of a buffer's contents on every rank (rank-local inputs: nothing is sent):
/// fills `out` with elements [first, first + count) of the buffer, counted in units (rows of
/// pitch elements) for a split buffer and in elements for a shared one, from the declaration's
/// `args`.
using Generator = std::function<void(const std::vector<std::int64_t>& args, std::uint64_t first, std::uint64_t count,
                                     std::span<std::byte> out)>;
/// Registers `g` as `name` in this process. Every rank must register the generators its jobs name
/// before cluster_main() (workers never run the application's body). @throws InvalidArgument for
/// a name registered twice.
void register_generator(const std::string& name, Generator g);
/// The generator registered as `name`, or null.
const Generator* find_generator(const std::string& name);

class DataJob {
public:
    /// `size`: {items} for a 1-D job, {width, rows} for a 2-D one (split by rows).
    DataJob(std::string name, std::string source, GlobalSize size, int dims);
    DataJob(std::string name, std::string source, std::uint64_t items) : DataJob(std::move(name), std::move(source), {items, 1}, 1) {}

    /// A split buffer of `pitch` elements per unit. With host data (units × pitch elements,
    /// kept alive and unmoved by the caller until the run ends) it is an input; gather() makes
    /// it an output received into the same memory.
    template <class T>
    BufferRef split(const std::string& name, std::uint64_t pitch, std::span<T> host = {}) {
        return add(name, elem_type_of<std::remove_const_t<T>>(), BufferLayout::split, pitch, 0,
                   std::as_writable_bytes(std::span(const_cast<std::remove_const_t<T>*>(host.data()), host.size())));
    }
    template <class T, class A>
    BufferRef split(const std::string& name, std::uint64_t pitch, std::vector<T, A>& host) {
        return split(name, pitch, std::span<T>(host));
    }
    /// A shared buffer: every device holds all of `host` (its initial contents). The result of a
    /// reduction into it is written back to `host` at the end.
    template <class T, class A>
    BufferRef shared(const std::string& name, std::vector<T, A>& host) {
        return add(name, elem_type_of<T>(), BufferLayout::shared, 1, host.size(), std::as_writable_bytes(std::span(host)));
    }

    /// A split buffer of `pitch` elements per unit made on every rank by the registered generator
    /// `generator` (each device its rows, halos included) instead of sent from rank 0.
    template <class T>
    BufferRef split_generated(const std::string& name, std::uint64_t pitch, const std::string& generator,
                              std::vector<std::int64_t> args = {}) {
        return generated(add(name, elem_type_of<T>(), BufferLayout::split, pitch, 0, {}), generator, std::move(args));
    }
    /// A shared buffer of `count` elements made on every rank by the registered generator.
    template <class T>
    BufferRef shared_generated(const std::string& name, std::uint64_t count, const std::string& generator,
                               std::vector<std::int64_t> args = {}) {
        return generated(add(name, elem_type_of<T>(), BufferLayout::shared, 1, count, {}), generator, std::move(args));
    }

    /// A buffer of `count` elements of T that each device holds for its kernels alone (zeros at the
    /// start; never moved, combined or gathered): a kernel's debug output, a workspace.
    template <class T>
    BufferRef scratch(const std::string& name, std::uint64_t count) {
        return add(name, elem_type_of<T>(), BufferLayout::shared, 1, count, {});
    }

    /// A kernel run every step (unless first_step_only(), last_step_only() or every() say
    /// otherwise), in the order of the calls.
    DataJob& kernel(const std::string& name, std::vector<ArgDecl> args);
    /// The last kernel covers `n` units per launched work-item (e.g. a chunk it reduces).
    DataJob& units_per_item(std::uint64_t n);
    /// The last kernel must run with this work-group shape (e.g. 16x16 __local tiles).
    DataJob& required_local(LocalSize local);
    /// The last kernel is an application's kernel as it is: it indexes whole arrays by global
    /// ids (`A[i * nj + j]`, i = get_global_id(1)) and stops only at the problem's end. Every
    /// split buffer it touches is then held at its whole extent on each device, and each launch
    /// covers exactly its slice's rows (KernelDecl::whole_arrays; docs/porting.md).
    DataJob& whole_arrays();
    /// The last kernel is an application's kernel that indexes its buffers from their start by
    /// work-group ids (ported from CUDA: ei = get_group_id(0) * N + get_local_id(0)) and checks
    /// an element count it takes as an argument (pass expr("(end - begin) * pitch")). Each launch
    /// covers every row the device holds of its split buffers, halos included, from offset 0, in
    /// work-groups of its required_local() size (KernelDecl::slice_relative; docs/porting.md).
    DataJob& slice_relative();
    /// The last kernel launches work-groups of `items` work-items that each cover `units` units
    /// (1-D jobs; a pyramid stencil's 256 items per 216 columns): KernelDecl::group_items.
    DataJob& groups(std::uint64_t items, std::uint64_t units);
    /// The last kernel runs in the first step only (before the kernels declared after it): a
    /// setup kernel, e.g. a transpose of the inputs (KernelDecl::runs).
    DataJob& first_step_only();
    /// The last kernel runs in the last step only (after the kernels declared before it).
    DataJob& last_step_only();
    /// The last kernel runs in every step but the first (a first step that only prepares: srad's
    /// reduction ahead of its first update).
    DataJob& after_first_step();
    /// The last kernel runs in every n-th step (steps n-1, 2n-1, ...).
    DataJob& every(std::uint64_t n);
    DataJob& swap(BufferRef a, BufferRef b);
    DataJob& steps(std::uint64_t n);
    /// Rank 0 gets split buffer `b` back at the end (and every gather_every steps): into the
    /// host data it was declared with, or, for a buffer declared without (an output only), into
    /// memory the job allocates (result()).
    DataJob& gather(BufferRef b);
    /// Buffer `b` needs no initial contents: the kernels write every element before anything
    /// reads it, so the devices skip its zero-fill (BufferDecl::no_init). On a buffer declared
    /// with host data, that memory then only receives (gather(), a reduction's result) and
    /// nothing of it is sent: an output such as k-means' labels, not an input.
    DataJob& no_init(BufferRef b);
    /// Ghost zones: exchange halos every k steps, k times as deep, computing the rows between
    /// redundantly (a job of one kernel without reductions; DataJobSpec::exchange_every).
    DataJob& exchange_every(std::uint64_t k);
    /// Also gather the outputs after every n-th step and call `on_gather(step)` on rank 0.
    DataJob& gather_every(std::uint64_t n, std::function<void(std::uint64_t)> on_gather);
    /// A host step: after every n-th step (the last one too) rank 0 calls `step(s)` (s: the steps
    /// done), with the shared outputs (reduction results) of that step in their host memory;
    /// `step` may rewrite the shared inputs in `writes`, which then go to every device before the
    /// next step (k-means' centres from the summed points). Split outputs need gather_every().
    DataJob& host_step(std::uint64_t n, std::vector<BufferRef> writes, std::function<void(std::uint64_t)> step);
    DataJob& build_options(std::string options);
    DataJob& ops_per_unit(double ops);

    const DataJobSpec& spec() const { return spec_; }
    /// A copy that runs `steps` steps without ghost zones and brings nothing back to rank 0 (its
    /// outputs stay on the devices, its inputs are read as they are): what `--strategy model`
    /// runs to measure the devices (probe_data_job).
    DataJob probe(std::uint64_t steps) const;
    /// Rank 0's memory of buffer `b` (empty for device-only buffers).
    std::span<std::byte> host(int b) const { return host_.at(std::size_t(b)); }
    /// Rank 0's copy of buffer `b` after a run, as elements of T (its declared type): the host
    /// data it was declared with, or the job's own memory of a gathered output-only buffer.
    /// @throws InvalidArgument for a buffer rank 0 has no copy of, or of another element type.
    template <class T>
    std::span<const T> result(BufferRef b) const {
        check_result(b, elem_type_of<T>());
        const auto bytes = host(b.index);
        return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
    }
    const std::function<void(std::uint64_t)>& on_gather() const { return on_gather_; }
    const std::function<void(std::uint64_t)>& on_host_step() const { return on_host_step_; }

private:
    BufferRef add(const std::string& name, ElemType type, BufferLayout layout, std::uint64_t pitch,
                  std::uint64_t count, std::span<std::byte> host);
    void check_result(BufferRef b, ElemType t) const;
    BufferRef generated(BufferRef b, const std::string& generator, std::vector<std::int64_t> args);
    DataJobSpec spec_;
    std::vector<std::span<std::byte>> host_;
    /// Memory the job allocated for output-only buffers (gather()); shared by copies (probe()).
    std::vector<std::shared_ptr<std::vector<std::byte>>> owned_;
    std::function<void(std::uint64_t)> on_gather_, on_host_step_;
};

/// One rank's part of a data run, as it measured it.
struct RankReport {
    int rank = 0;
    std::vector<int> devices;               ///< the devices (Cluster::devices() indexes) it ran slices on
    double setup_s = 0.0;                   ///< buffers, program builds, inputs received and uploaded
    double steps_s = 0.0;                   ///< from its first step to its last one completed (rank 0: with its own slices' final reads, queued behind their last launches)
    /// Device span of its steps: from its first kernel's start to its last one's end (profiling
    /// events), summed over its devices; includes what the devices did between (halo copies).
    double kernel_s = 0.0;
    /// Bytes it sent to other ranks in each step (halo rows and reduction totals); rank 0's
    /// setup scatter and the gathers are not steps.
    std::vector<std::uint64_t> sent_per_step;
    /// Bytes its slices sent to their neighbours per step (MPI or copies within the rank).
    std::vector<std::uint64_t> halo_per_step;
    /// Bytes of reduction records its slices read back from their devices in each step: one
    /// record per launched item, or, for per-group records, one per slice and reduction (the
    /// groups' records combined on the device first).
    std::vector<std::uint64_t> records_per_step;
    /// Per device of `devices`: its launches' time in a step (profiling events), the median over
    /// the steps after the first; only when DataRunOptions::time_launches, else empty.
    std::vector<double> launch_s;
    /// With DataRunOptions::time_launches: the rank's wall time of the steps after the first.
    double timed_steps_s = 0.0;
    /// Per device of `devices`, with DataRunOptions::time_launches: its reduction records' reads
    /// (profiling events) and combinations on the host, per step after the first (the mean).
    std::vector<double> reduce_s;
    /// Halo messages from other ranks it received; of them, those that came while this rank had
    /// interior launches beside the exchange (overlap), and those that found the interior already
    /// finished (the step then waited on the link; the others were hidden behind the compute).
    std::uint64_t halo_arrivals = 0, halo_overlapped = 0, interior_first = 0;
    std::string error;                      ///< the first failure on this rank, if any
};

struct DataRunResult {
    Plan plan;
    DataLayout layout;
    double setup_s = 0.0;    ///< rank 0: commands, its own buffers and builds, the scatter
    double steps_s = 0.0;    ///< the slowest rank's steps, until their last launches end (RankReport::steps_s)
    double run_s = 0.0;      ///< rank 0: from the end of its setup until every output is in
    double gather_s = 0.0;   ///< run_s - steps_s: what the final gather adds
    /// The final gather's messages from the other ranks: their bytes, and the time from the first
    /// worker's header (its read of its first piece follows) to the last byte.
    std::uint64_t gathered_bytes = 0;
    double gathered_s = 0.0;
    double total_s = 0.0;    ///< rank 0: the whole run
    double probe_s = 0.0;    ///< --strategy model: the probe before the plan (not in total_s)
    std::vector<RankReport> ranks;  ///< the ranks that ran slices, by rank
    /// Per assignment of the plan: bytes of device memory its slice holds (held_bytes()).
    std::vector<std::uint64_t> held_bytes;
    /// --strategy model: which links the model used ("links: calibrated", or "links: defaults
    /// (why), run `worksize calibrate --links`"); "" for other strategies.
    std::string links_note;
};

struct DataRunOptions {
    std::string strategy = "paper";
    LocalPolicy local = LocalPolicy::paper;
    /// A plan to use as it is (its assignments must tile the job's units); empty: plan here.
    std::optional<Plan> plan;
    /// strategy "model": each device's rate (Cluster::devices() order); empty: run() measures
    /// them first with a probe (probe_data_job).
    std::vector<DataDeviceRate> rates;
    /// The links' costs: with stored_links, those `worksize calibrate --links` stored in the
    /// database `db` ("" : $WORKSIZE_DB, else the default path) for the devices and hosts
    /// involved, when it holds them all (links.hpp, stored_data_links); else these (by default
    /// data_model.hpp's).
    DataLinks links;
    bool stored_links = true;
    std::string db;
    /// Time every launch after the first step (RankReport::launch_s); the probe sets it.
    bool time_launches = false;
    /// Split launches so that halos move while the interior rows compute (ProgramOptions::overlap;
    /// `--overlap off` for comparison).
    bool overlap = true;
    /// Guard zones around every device buffer, checked after each launch: a kernel that writes
    /// outside its buffer (or, declared for slices, indexes whole arrays) ends the run with a line
    /// naming the kernel, the buffer and the device (`--check-bounds`; WORKSIZE_CHECK_BOUNDS=1).
    /// Every launch then waits for the device: for finding bugs, not for timing.
    bool check_bounds = false;
    /// "text" or "json": run() prints each rank's instruction lists for the first two steps to
    /// standard output and throws DryRunDone instead of running (`--instructions`).
    std::string instructions;
};

/// run()'s dry run has printed the instruction lists (DataRunOptions::instructions); cluster_main
/// ends the program with exit code 0.
struct DryRunDone : std::exception {
    const char* what() const noexcept override { return "dry run: instruction lists printed"; }
};

/// The plan of `job` over `devices`: the strategy's split, on the job's granule, with each
/// device's local size (the kernels' required one where they declare it). Strategy "model"
/// splits by plan_data_split() over `options.rates` (required here) and fills the assignments'
/// predicted_s and the plan's predicted_makespan_s (the predicted step times the steps);
/// "oracle" is refused.
Plan plan_data_job(const std::vector<DeviceInfo>& devices, const DataJob& job, const DataRunOptions& options = {});
/// The same, by the name both kinds of job are planned with (plan_job.hpp has the kernel job's).
inline Plan plan_job(const std::vector<DeviceInfo>& devices, const DataJob& job, const DataRunOptions& options = {}) {
    return plan_data_job(devices, job, options);
}

/// What `--strategy model` learns from a probe run.
struct DataProbe {
    std::vector<DataDeviceRate> rates;  ///< per device of Cluster::devices() (unknown: no slice in the probe)
    double step_s = 0.0;             ///< the probe's measured step (its slowest rank, steps after the first)
    std::vector<Assignment> slices;  ///< the probe's (even) split
};

/// `--strategy model`'s measurement: `job.probe(steps)` on the even split, every launch timed. A
/// device's rate is its launches' time per unit in its median step (steps after the first). What the
/// probe's step took beyond the model's step with `options.links` (launch latencies, the host's
/// loop, waits) becomes every device's fixed cost per step (DataDeviceRate::step_s): the same
/// for all, it leaves the split as it is. Devices the even split gives nothing have no rate
/// (DataDeviceRate::known() is false). @throws InvalidArgument for steps < 2.
DataProbe probe_data_job(Cluster& cluster, const DataJob& job, const DataRunOptions& options = {},
                         std::uint64_t steps = 5);

/// Rank 0: run the job; the other ranks serve() it. The declaration is checked on rank 0 before
/// any rank does work. @throws InvalidArgument for a bad declaration, Error naming the rank,
/// device and kernel that failed (every rank has finished the job's protocol by then).
DataRunResult run(Cluster& cluster, DataJob& job, const DataRunOptions& options = {});

/// A summary for people: the plan, the phases and each rank's traffic per step.
std::string format_report(const DataRunResult& r, const std::vector<DeviceInfo>& devices);

/// The whole text of a file. @throws Error naming the file.
std::string read_text_file(const std::string& path);

}  // namespace worksize
