// Data jobs (data_job.hpp) before and after they run: the declaration's builder, the plan
// (plan_data_job: a strategy's split, or --strategy model's probe and the simulation of the
// engine's instruction lists) and the text report. Running one is jobs/data_job.cpp.
#include "worksize/runtime/data_job.hpp"

#include <algorithm>
#include <fstream>
#include <mutex>
#include <sstream>

#include "worksize/runtime/cluster.hpp"
#include "worksize/scheduler/format.hpp"
#include "worksize/scheduler/local_policy.hpp"
#include "worksize/scheduler/log.hpp"
#include "worksize/scheduler/simulate.hpp"
#include "worksize/scheduler/strategy.hpp"

namespace worksize {

// ---------------------------------------------------------------------------------------------
// The declaration's builder.

DataJob::DataJob(std::string name, std::string source, GlobalSize size, int dims) {
    spec_.name = std::move(name);
    spec_.source = std::move(source);
    spec_.dims = dims;
    spec_.width = dims == 2 ? size.x : 1;
    spec_.units = dims == 2 ? size.y : size.x;
}

BufferRef DataJob::add(const std::string& name, ElemType type, BufferLayout layout, std::uint64_t pitch,
                       std::uint64_t count, std::span<std::byte> host) {
    BufferDecl b;
    b.name = name;
    b.type = type;
    b.layout = layout;
    b.pitch = pitch;
    b.count = count;
    b.input = !host.empty();
    spec_.buffers.push_back(b);
    host_.push_back(host);
    return {int(spec_.buffers.size()) - 1};
}

namespace {
std::mutex& generators_mutex() {
    static std::mutex m;
    return m;
}
std::map<std::string, Generator>& generators() {
    static std::map<std::string, Generator> g;
    return g;
}
}  // namespace

void register_generator(const std::string& name, Generator g) {
    std::lock_guard lock(generators_mutex());
    if (!generators().emplace(name, std::move(g)).second)
        throw InvalidArgument("register_generator(): '" + name + "' is registered already");
}

const Generator* find_generator(const std::string& name) {
    std::lock_guard lock(generators_mutex());
    const auto it = generators().find(name);
    return it == generators().end() ? nullptr : &it->second;
}

BufferRef DataJob::generated(BufferRef b, const std::string& generator, std::vector<std::int64_t> args) {
    BufferDecl& d = spec_.buffers[std::size_t(b.index)];
    d.generator = generator;
    d.generator_args = std::move(args);
    return b;
}

DataJob& DataJob::kernel(const std::string& name, std::vector<ArgDecl> args) {
    KernelDecl k;
    k.name = name;
    k.args = std::move(args);
    // A reduction's result is the shared buffer's new contents: rank 0 gets it back.
    for (const auto& a : k.args)
        if (a.kind == ArgKind::reduce && a.buffer >= 0 && std::size_t(a.buffer) < spec_.buffers.size())
            spec_.buffers[std::size_t(a.buffer)].output = true;
    spec_.kernels.push_back(std::move(k));
    return *this;
}

DataJob& DataJob::units_per_item(std::uint64_t n) {
    if (spec_.kernels.empty()) throw InvalidArgument("units_per_item(): declare a kernel first");
    spec_.kernels.back().units_per_item = n;
    return *this;
}

DataJob& DataJob::required_local(LocalSize local) {
    if (spec_.kernels.empty()) throw InvalidArgument("required_local(): declare a kernel first");
    spec_.kernels.back().required_local = local;
    return *this;
}

DataJob& DataJob::slice_relative() {
    if (spec_.kernels.empty()) throw InvalidArgument("slice_relative(): declare a kernel first");
    spec_.kernels.back().slice_relative = true;
    return *this;
}

DataJob& DataJob::whole_arrays() {
    if (spec_.kernels.empty()) throw InvalidArgument("whole_arrays(): declare a kernel first");
    spec_.kernels.back().whole_arrays = true;
    return *this;
}

DataJob& DataJob::groups(std::uint64_t items, std::uint64_t units) {
    if (spec_.kernels.empty()) throw InvalidArgument("groups(): declare a kernel first");
    spec_.kernels.back().group_items = items;
    spec_.kernels.back().group_units = units;
    return *this;
}

DataJob& DataJob::first_step_only() {
    if (spec_.kernels.empty()) throw InvalidArgument("first_step_only(): declare a kernel first");
    spec_.kernels.back().runs = KernelRuns::first_step;
    return *this;
}

DataJob& DataJob::last_step_only() {
    if (spec_.kernels.empty()) throw InvalidArgument("last_step_only(): declare a kernel first");
    spec_.kernels.back().runs = KernelRuns::last_step;
    return *this;
}

DataJob& DataJob::after_first_step() {
    if (spec_.kernels.empty()) throw InvalidArgument("after_first_step(): declare a kernel first");
    spec_.kernels.back().runs = KernelRuns::after_first;
    return *this;
}

DataJob& DataJob::every(std::uint64_t n) {
    if (spec_.kernels.empty()) throw InvalidArgument("every(): declare a kernel first");
    spec_.kernels.back().every = n;
    return *this;
}

DataJob& DataJob::swap(BufferRef a, BufferRef b) {
    spec_.swaps.emplace_back(a.index, b.index);
    return *this;
}

DataJob& DataJob::steps(std::uint64_t n) {
    spec_.steps = n;
    return *this;
}

DataJob& DataJob::gather(BufferRef b) {
    if (b.index < 0 || std::size_t(b.index) >= spec_.buffers.size())
        throw InvalidArgument("gather(): not a buffer of data job '" + spec_.name + "'");
    BufferDecl& d = spec_.buffers[std::size_t(b.index)];
    d.output = true;
    if (host_[std::size_t(b.index)].empty() && d.layout == BufferLayout::split) {
        // An output only: rank 0 receives it into memory of the job's own.
        owned_.push_back(std::make_shared<std::vector<std::byte>>(spec_.units * d.pitch * elem_size(d.type)));
        host_[std::size_t(b.index)] = std::span(*owned_.back());
    }
    return *this;
}

void DataJob::check_result(BufferRef b, ElemType t) const {
    if (b.index < 0 || std::size_t(b.index) >= spec_.buffers.size())
        throw InvalidArgument("result(): not a buffer of data job '" + spec_.name + "'");
    const BufferDecl& d = spec_.buffers[std::size_t(b.index)];
    if (d.type != t)
        throw InvalidArgument("result(): buffer '" + d.name + "' of data job '" + spec_.name + "' holds " +
                              to_string(d.type) + ", not " + to_string(t));
    if (host_[std::size_t(b.index)].empty())
        throw InvalidArgument("result(): buffer '" + d.name + "' of data job '" + spec_.name +
                              "' stays on the devices; gather() it to get it back");
}

DataJob& DataJob::no_init(BufferRef b) {
    if (b.index < 0 || std::size_t(b.index) >= spec_.buffers.size())
        throw InvalidArgument("no_init(): not a buffer of data job '" + spec_.name + "'");
    BufferDecl& d = spec_.buffers[std::size_t(b.index)];
    d.no_init = true;
    d.input = false;  // host data declared with it only receives (the gather, a reduction's result)
    return *this;
}

DataJob& DataJob::exchange_every(std::uint64_t k) {
    spec_.exchange_every = k;
    return *this;
}

DataJob& DataJob::gather_every(std::uint64_t n, std::function<void(std::uint64_t)> on_gather) {
    spec_.gather_every = n;
    on_gather_ = std::move(on_gather);
    return *this;
}

DataJob& DataJob::host_step(std::uint64_t n, std::vector<BufferRef> writes, std::function<void(std::uint64_t)> step) {
    spec_.host_every = n;
    for (const BufferRef b : writes) {
        if (b.index < 0 || std::size_t(b.index) >= spec_.buffers.size())
            throw InvalidArgument("host_step(): not a buffer of data job '" + spec_.name + "'");
        spec_.buffers[std::size_t(b.index)].host_written = true;
    }
    on_host_step_ = std::move(step);
    return *this;
}

DataJob& DataJob::build_options(std::string options) {
    spec_.build_options = std::move(options);
    return *this;
}

DataJob& DataJob::ops_per_unit(double ops) {
    spec_.ops_per_unit = ops;
    return *this;
}

DataJob DataJob::probe(std::uint64_t steps) const {
    DataJob p = *this;
    p.spec_.steps = steps;
    p.spec_.gather_every = 0;
    p.spec_.exchange_every = 1;
    for (auto& b : p.spec_.buffers) b.output = false;
    p.on_gather_ = nullptr;
    p.spec_.host_every = 0;  // the probe times the kernels: no host steps
    for (auto& b : p.spec_.buffers) b.host_written = false;
    p.on_host_step_ = nullptr;
    return p;
}

std::string read_text_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw Error("cannot read '" + path + "'");
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

namespace {
std::string mib(std::uint64_t bytes) {
    std::ostringstream o;
    o.setf(std::ios::fixed);
    o.precision(1);
    o << double(bytes) / double(1 << 20) << " MiB";
    return o.str();
}

/// Each slice's buffers (held_bytes(): whole arrays count whole) fit its device's memory.
void check_memory(const DataJobSpec& spec, const std::vector<DeviceInfo>& devices,
                  const std::vector<Assignment>& assignments) {
    for (const auto& a : assignments) {
        if (a.units == 0 || a.device < 0 || std::size_t(a.device) >= devices.size()) continue;
        const DeviceInfo& d = devices[std::size_t(a.device)];
        const std::uint64_t need = held_bytes(spec, a.units);
        if (d.global_mem_bytes == 0 || need <= d.global_mem_bytes) continue;
        std::string whole;
        for (std::size_t b = 0; b < spec.buffers.size(); ++b)
            if (held_whole(spec, int(b))) whole += (whole.empty() ? "" : ", ") + spec.buffers[b].name;
        throw InvalidArgument("data job '" + spec.name + "': device " + std::to_string(a.device) + " ('" + d.name +
                              "', rank " + std::to_string(a.rank) + ") has " + mib(d.global_mem_bytes) +
                              " of memory; its slice of " + std::to_string(a.units) + " units holds " + mib(need) +
                              (whole.empty() ? std::string() : " (held whole on every device: " + whole + ")") +
                              "; leave it out with --select");
    }
}
}  // namespace

namespace {

/// --strategy model: the closed-form split (`plan`, from `split`) against each device alone, both
/// run through the simulator of the engine's instruction lists (overlap included): the run whose
/// scatter, steps and final gather end first is the plan, with each slice's predicted time (its
/// own launches', at most the step) and the steps' predicted time as its makespan.
void choose_by_simulation(const DataJobSpec& spec, const std::vector<DeviceInfo>& devices, const PlanRequest& req,
                          const DataSplit& split, const DataRunOptions& options, Plan& plan) {
    const ProgramOptions po{options.overlap};
    auto simulated = [&](const std::vector<Assignment>& a) {
        const DataLayout layout = data_layout(spec, a);
        const auto moves = simulate_data_transfers(spec, layout, options.links, po);
        return simulate_data_steps(spec, layout, options.rates, options.links, po).step_s * double(spec.steps) +
               moves.scatter_s + moves.gather_s;
    };
    double best = simulated(plan.assignments);
    int alone = -1;
    for (std::size_t d = 0; d < devices.size(); ++d) {
        if (!options.rates[d].known()) continue;
        PlanRequest one = req;
        std::vector<double> w(devices.size(), 0.0);
        w[d] = 1.0;
        one.weights = w;
        Plan p1 = make_plan(devices, one);
        align_slices(spec, p1.assignments);
        if (const double t = simulated(p1.assignments); t < best * 0.999) {
            best = t;
            alone = int(d);
            plan = std::move(p1);
        }
    }
    const DataLayout layout = data_layout(spec, plan.assignments);
    const auto sim = simulate_data_steps(spec, layout, options.rates, options.links, po);
    for (auto& a : plan.assignments) {
        if (a.units == 0 && alone >= 0 && a.device != alone)
            a.note = "left out: the simulated run (scatter, steps and gather) is faster on device " +
                     std::to_string(alone) + " alone";
        else if (a.units == 0 && alone < 0 && !split.left_out[std::size_t(a.device)].empty())
            a.note = split.left_out[std::size_t(a.device)];
        for (std::size_t i = 0; i < layout.slices.size(); ++i)
            if (layout.slices[i].device == a.device) a.predicted_s = sim.slice_busy_s[i] * double(spec.steps);
    }
    plan.predicted_makespan_s = sim.step_s * double(spec.steps);
}

/// Kernels that require a shape of their own (not the plan's) or launch groups of their own
/// geometry run with it; the report says so.
void note_own_shapes(const DataJobSpec& spec, Plan& plan) {
    for (const auto& k : spec.kernels) {
        if (k.required_local.is_null() && k.group_units == 0) continue;
        std::string note = "kernel '" + k.name + "' ";
        if (k.group_units) {
            note += "launches groups of " + std::to_string(k.group_items) + " items per ";
            note += std::to_string(k.group_units) + " units";
        } else {
            note += "requires " + std::to_string(k.required_local.x);
        }
        if (spec.dims == 2 && k.group_units == 0) {  // appended piece by piece: GCC 12 misreads "x" + s (-Wrestrict)
            note += 'x';
            note += std::to_string(k.required_local.y);
        }
        for (auto& a : plan.assignments) {
            if (a.units == 0) continue;
            if (!a.local_rule.empty()) a.local_rule += "; ";
            a.local_rule += note;
        }
    }
}

}  // namespace

Plan plan_data_job(const std::vector<DeviceInfo>& devices, const DataJob& job,
                   const DataRunOptions& options) {
    const DataJobSpec& spec = job.spec();
    validate(spec);
    PlanRequest req = data_plan_request(spec);
    req.strategy = parse_strategy(options.strategy);
    req.local_policy = options.local == LocalPolicy::tuned ? LocalPolicy::paper : options.local;
    if (req.strategy == "oracle")
        throw InvalidArgument(
            "data job '" + spec.name + "': --strategy oracle searches one-step kernel jobs by " +
            "running them; a data job is planned by --strategy model (a short probe run and " +
            "the data-job cost model), paper, even or pe-ratio");
    const bool model = req.strategy == "model";
    DataSplit split;
    if (model) {
        if (options.rates.size() != devices.size())
            throw InvalidArgument("data job '" + spec.name +
                                  "': --strategy model needs a measured rate for each of the " +
                                  std::to_string(devices.size()) + " devices (run() measures them; " +
                                  std::to_string(options.rates.size()) + " given)");
        std::vector<int> ranks;
        for (const auto& d : devices) ranks.push_back(d.rank);
        split = plan_data_split(spec, ranks, options.rates, options.links, split_granule(devices, req));
        req.weights = split.weights;
    }
    Plan plan = make_plan(devices, req);
    if (!model) balance_ghost_rows(spec, plan.assignments);  // the model counts ghost rows itself
    align_slices(spec, plan.assignments);
    if (model) choose_by_simulation(spec, devices, req, split, options, plan);
    check_memory(spec, devices, plan.assignments);
    if (req.required_local.is_null()) note_own_shapes(spec, plan);
    return plan;
}

DataProbe probe_data_job(Cluster& cluster, const DataJob& job, const DataRunOptions& options,
                         std::uint64_t steps) {
    if (steps < 2)
        throw InvalidArgument("a probe of a data job runs at least 2 steps (the first is not timed)");
    DataJob probe = job.probe(steps);
    DataRunOptions o;
    o.strategy = "even";
    o.local = options.local;
    o.time_launches = true;
    const DataRunResult r = cluster.run(probe, o);
    const double timed = double(steps - 1);
    DataProbe out;
    out.rates.resize(cluster.devices().size());
    out.slices = r.plan.assignments;
    // A device's rate: the work of its slice that grows with its units, per unit and step: its
    // launches (the median timed step's events) and, with reductions, the reading and combining
    // of its records (the timed steps' mean). Not the rank's wall time: that includes waiting on
    // slower neighbours, and on a node whose CPU device runs beside a GPU, the GPU rank's host
    // loop slowed by the CPU device's threads, which a plan without the CPU does not pay.
    std::vector<std::pair<double, double>> parts(out.rates.size());  // per device: launches, reductions per step
    for (const auto& rep : r.ranks) {
        out.step_s = std::max(out.step_s, rep.timed_steps_s / timed);
        for (std::size_t j = 0; j < rep.devices.size() && j < rep.launch_s.size(); ++j) {
            const int d = rep.devices[j];
            const double reduce = j < rep.reduce_s.size() ? rep.reduce_s[j] : 0.0;
            for (const auto& a : r.plan.assignments)
                if (a.device == d && a.units > 0 && rep.launch_s[j] > 0) {
                    out.rates.at(std::size_t(d)).unit_s = (rep.launch_s[j] + reduce) / double(a.units);
                    parts.at(std::size_t(d)) = {rep.launch_s[j], reduce};
                }
        }
    }
    {
        auto line = log::debug();
        line << "data job '" << job.spec().name << "', probe of " << steps << " steps: step "
             << out.step_s * 1e3 << " ms;";
        for (std::size_t d = 0; d < out.rates.size(); ++d)
            if (out.rates[d].known())
                line << " device " << d << " " << out.rates[d].unit_s * 1e6 << " us/unit (launches "
                     << parts[d].first * 1e3 << " ms, reductions " << parts[d].second * 1e3 << " ms a step);";
    }
    return out;
}

// ---------------------------------------------------------------------------------------------

std::string format_report(const DataRunResult& r, const std::vector<DeviceInfo>& devices) {
    std::ostringstream o;
    o.setf(std::ios::fixed);
    o.precision(3);
    const double steps = double(std::max<std::uint64_t>(r.plan.iterations, 1));
    for (const auto& a : r.plan.assignments) {
        const std::string name =
            std::size_t(a.device) < devices.size() ? devices[std::size_t(a.device)].name : a.device_name;
        if (a.units == 0) {
            if (!a.note.empty())
                o << "  device " << a.device << " (rank " << a.rank << ", " << name << "): " << a.note
                  << "\n";
            continue;
        }
        o << "  device " << a.device << " (rank " << a.rank << ", " << name << "): units " << a.offset << ".."
          << a.offset + a.units << ", local " << a.local.x << "x" << a.local.y << " (" << a.local_rule << ")";
        for (std::size_t i = 0; i < r.plan.assignments.size() && i < r.held_bytes.size(); ++i)
            if (&r.plan.assignments[i] == &a) o << ", memory " << mib(r.held_bytes[i]);
        if (a.predicted_s >= 0) o << ", predicted step " << a.predicted_s / steps * 1e3 << " ms";
        o << "\n";
    }
    o << "  setup " << r.setup_s * 1e3 << " ms, steps " << r.steps_s * 1e3 << " ms, gather "
      << r.gather_s * 1e3 << " ms (steps and gather " << r.run_s * 1e3 << " ms), total " << r.total_s * 1e3
      << " ms\n";
    if (r.gathered_bytes && r.gathered_s > 0)
        o << "  final gather from the other ranks: " << mib(r.gathered_bytes) << " in " << r.gathered_s * 1e3 << " ms ("
          << double(r.gathered_bytes) / r.gathered_s * 1e-9 << " GB/s)\n";
    if (r.probe_s > 0) o << "  probe (before the plan, not in the total) " << r.probe_s * 1e3 << " ms\n";
    if (!r.links_note.empty()) o << "  " << r.links_note << "\n";
    if (r.plan.predicted_makespan_s >= 0)
        o << "  step: predicted " << r.plan.predicted_makespan_s / steps * 1e3 << " ms, measured "
          << r.steps_s / steps * 1e3 << " ms (steps / " << r.plan.iterations << ")\n";
    for (const auto& k : r.ranks) {
        std::uint64_t first = k.sent_per_step.empty() ? 0 : k.sent_per_step.front(), most = 0, halo = 0;
        for (auto v : k.sent_per_step) most = std::max(most, v);
        for (auto v : k.halo_per_step) halo = std::max(halo, v);
        o << "  rank " << k.rank << ": steps " << k.steps_s * 1e3 << " ms, kernels " << k.kernel_s * 1e3
          << " ms, bytes sent to other ranks per step: first " << first << ", at most " << most
          << "; halo bytes per step (to neighbours) at most " << halo << "\n";
        if (k.halo_arrivals > 0)
            o << "  overlap on rank " << k.rank << ": halo rows from other ranks arrived " << k.halo_arrivals
              << " times; of those checked (the first 16 steps, then every 32nd), " << k.halo_overlapped
              << " beside an interior launch: " << k.halo_overlapped - k.interior_first
              << " while it ran (hidden), " << k.interior_first << " after it had finished (waited on the link)\n";
    }
    return o.str();
}

}  // namespace worksize
