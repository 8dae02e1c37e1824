// Running a data job (data_job.hpp) on the cluster; its builder, plan and report are in
// jobs/data_declare.cpp, a rank's part in jobs/data_execution.hpp, rank 0's watch in jobs/data_watch.hpp.
//
// Protocol. Rank 0 checks the declaration and the plan, then sends every rank that has slices
// one command {"cmd":"data","spec":…,"slices":[{device,rank,index,offset,units,local}]}, sets up
// its own slices and scatters the inputs (tag kData; the instructions of
// StepCompiler::compile_scatter, run by the engine's executor): per worker slice, each input
// split buffer's rows with their halo, then each input shared buffer once per rank, in pieces of
// whole rows (all posted at once; a worker uploads each piece while the next one arrives, rank 0
// its own slices' while they move). Each worker answers {"ok"} (kData) once its inputs are on its devices, and rank 0 says
// {"go"} (kData) when all have: the ranks start their steps together. From there every
// participating rank runs, step by step, the instruction list StepCompiler derives from the
// declaration and the layout alone (scheduler/instructions.hpp; engine::Executor runs it):
// launches, halo rows (kHalo: one message per neighbour and buffer, Comm::isend_short, receives
// posted before anything waits, so no line of ranks can deadlock; with overlap, right after the
// boundary launches and beside the interior one), and per reduction a chain along the slices
// (kReduce: totals go right, the grand total comes back left). Each message starts with a status
// word: a rank that failed keeps walking its lists and sends "failed" instead of data, so its
// neighbours learn it and nobody waits for a message that will not come. Gathers (kData: a
// status word, then the output rows of each slice in pieces: the instructions of
// StepCompiler::compile_gather, run by the same executor) go to rank 0 at the end, or every N
// steps; the final one follows each rank's report (kResult). With ghost zones (exchange_every k) the halo
// exchanges happen only on every k-th step, k times as deep, and the launches of the steps
// between cover the rows the next steps will read (ghost_rows()).
//
// Deadlines (docs/cluster.md, "The fault model"): rank 0 waits on a worker only while it hears
// from it (Watch: heartbeats, kHeartbeat, which a worker sends every Comm::heartbeat() seconds (a third of --rank-timeout, at most one) while it
// sets up, steps and waits); neighbours wait on each other at most --rank-timeout; a worker
// whose neighbour stopped answering tells rank 0 (kLost {"lost","error"}) and leaves the job.
#include "worksize/runtime/data_job.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <future>
#include <iostream>
#include <sstream>
#include <thread>

#include "cluster/cluster_impl.hpp"
#include "jobs/data_kernels.hpp"
#include "jobs/data_execution.hpp"
#include "jobs/data_transfer.hpp"
#include "jobs/data_watch.hpp"
#include "jobs/data_wire.hpp"
#include "transport/pieces.hpp"
#include "worksize/scheduler/instructions.hpp"
#include "worksize/runtime/links.hpp"
#include "worksize/runtime/opencl.hpp"
#include "worksize/scheduler/format.hpp"
#include "worksize/scheduler/log.hpp"
#include "worksize/scheduler/strategy.hpp"

namespace worksize {

// ---------------------------------------------------------------------------------------------
// The protocol's messages around the steps (the command, the scatter, the gathers, the reports).
// What one rank does with its slices, Execution, is in jobs/data_execution.hpp.

using namespace data_exec;

namespace {

using wire::kData;
using wire::kResult;

}  // namespace

// ---------------------------------------------------------------------------------------------
// Rank 0.

namespace {

/// Rank 0's host data against the declaration: every input and output holds exactly its bytes.
void check_host_data(const DataJob& job) {
    const DataJobSpec& spec = job.spec();
    for (const auto& d : spec.buffers)
        if (scaled(d))
            throw InvalidArgument("data job '" + spec.name + "', buffer '" + d.name +
                                  "': a buffer of its own units runs as a declared one-step job (DeclaredJob), "
                                  "not in the multi-step runtime");
    for (std::size_t b = 0; b < spec.buffers.size(); ++b) {
        const auto& d = spec.buffers[b];
        const std::uint64_t want =
            (d.layout == BufferLayout::split ? spec.units * d.pitch : d.count) * elem_size(d.type);
        const auto have = job.host(int(b)).size();
        if ((d.input || d.output) && have != want)
            throw InvalidArgument("data job '" + spec.name + "', buffer '" + d.name +
                                  "': rank 0's data holds " + std::to_string(have) +
                                  " bytes; the declaration reads " + std::to_string(want) +
                                  (have < want ? " (past its end)" : ""));
    }
}

/// The plan (after --strategy model's probe), its layout and each slice's memory; with
/// options.instructions, the dry run's lists printed and DryRunDone thrown.
DataRunResult plan_run(Cluster& cluster, DataJob& job, const DataRunOptions& options) {
    const DataJobSpec& spec = job.spec();
    DataRunResult result;
    DataRunOptions linked = options;
    if (!options.plan && parse_strategy(options.strategy) == "model") {
        result.links_note = "links: given";
        if (options.stored_links) {
            const StoredLinks stored = stored_data_links(options.db, cluster.devices());
            if (stored.calibrated) linked.links = stored.links;
            result.links_note = stored.note;
        }
        log::debug(result.links_note);
    }
    if (!options.plan && options.rates.empty() && parse_strategy(options.strategy) == "model") {
        DataRunOptions measured = linked;
        const double p0 = now_s();
        const DataProbe probe = probe_data_job(cluster, job, options);
        result.probe_s = now_s() - p0;
        measured.rates = probe.rates;
        result.plan = plan_data_job(cluster.devices(), job, measured);
    } else {
        result.plan = options.plan ? *options.plan : plan_data_job(cluster.devices(), job, linked);
    }
    check_slices(spec, result.plan.assignments);
    result.layout = data_layout(spec, result.plan.assignments);
    for (const auto& as : result.plan.assignments) result.held_bytes.push_back(held_bytes(spec, as.units));
    if (!options.instructions.empty()) {
        ProgramOptions po;
        po.overlap = options.overlap;
        po.piece_bytes = pieces::piece_bytes();  // the gathers' pieces, as the run cuts them
        if (options.instructions == "json")
            std::cout << instructions_to_json(spec, result.layout, 2, po).dump(2) << '\n';
        else
            std::cout << format_instructions(spec, result.layout, 2, po);
        std::cout.flush();
        throw DryRunDone();
    }
    return result;
}

/// The plan's non-empty slices as the command describes them.
std::vector<SliceDesc> slices_of(const Plan& plan, const std::vector<DeviceInfo>& devs) {
    std::vector<SliceDesc> slices;
    for (const auto& a : plan.assignments) {
        if (a.units == 0) continue;
        if (a.device < 0 || std::size_t(a.device) >= devs.size())
            throw InvalidArgument("the plan names device " + std::to_string(a.device) + " of " +
                                  std::to_string(devs.size()));
        const auto& d = devs[std::size_t(a.device)];
        slices.push_back({a.device, d.rank, d.index, a.offset, a.units, a.local});
    }
    return slices;
}

/// The ranks other than 0 that run slices, in order.
std::vector<int> worker_ranks(const std::vector<SliceDesc>& slices) {
    std::vector<int> workers;
    for (const auto& s : slices)
        if (s.rank != 0 && std::find(workers.begin(), workers.end(), s.rank) == workers.end())
            workers.push_back(s.rank);
    std::sort(workers.begin(), workers.end());
    return workers;
}

/// The steps: rank 0 takes part with its own slices (waiting on its neighbours at most
/// --rank-timeout at a time, as they wait on it), and takes the gathers it asked for and runs the
/// host steps, from workers that send heartbeats while their steps run.
void master_steps(MasterRun& m) {
    struct PulseScope {
        Comm& comm;
        ~PulseScope() { comm.set_pulse({}); }
    } pulse{m.comm};
    m.comm.set_pulse([&m] {  // hears the workers while it steps; its neighbours hear it (kAlive)
        m.watch.pulse();
        m.x.beat();
    });
    try {
        m.x.host_steps(m.job.on_host_step());
        m.x.run_steps(
            [&](std::uint64_t step) {
                m.x.run_gather(step, false);
                if (!m.x.failed() && m.x.gather_ok() && m.job.on_gather()) m.job.on_gather()(step);
            },
            [&m](std::uint64_t done) { m.x.run_host_step(done); },
            [&m] {
                // Alone, rank 0 runs the final gather (its own slices' reads) behind their last
                // launches. With workers it runs it in collect_reports(), after their reports.
                if (!m.workers.empty()) return;
                m.x.run_gather(m.spec.steps, true);
                m.own_outputs_read = true;
            });
    } catch (const LostWorker&) {
        throw;
    } catch (const Error& e) {
        if (e.reason() != ErrorReason::lost_rank || m.x.lost_peer() < 0) throw;
        m.watch.settle(m.x.lost_peer(), e.what());
    }
}

/// The end: every worker's report, then the final gather (its list: the workers' outputs and
/// rank 0's own, unless it ran alone behind its last launches). Raises the failure that started
/// it all (a rank's own before the ones it caused); else the ranks' reports, by rank.
std::vector<RankReport> collect_reports(MasterRun& m) {
    std::vector<std::pair<RankReport, wire::Failure>> reports;
    std::vector<bool> origins;
    for (int r : m.workers) {
        m.watch.await(r, kResult);
        const auto j = m.comm.recv_json(r, kResult);
        RankReport rep = report_from_json(j);
        wire::Failure f;
        if (!j.at("ok").get<bool>()) f = wire::failure_from_json(j);
        reports.push_back({rep, f});
        origins.push_back(j.value("origin", false));
    }
    if (!m.own_outputs_read) {
        m.counting = true;
        m.x.run_gather(m.spec.steps, true);
        m.counting = false;
    }
    if (m.x.participates()) {
        RankReport own = m.x.report();
        own.error = m.x.failure().message;
        reports.insert(reports.begin(), {own, m.x.failure()});  // rank 0 first, as it steps first
        origins.insert(origins.begin(), m.x.failed_here());
    }
    m.watch.poll();  // the last heartbeats
    m.comm.drain_alive();  // and the neighbours' last signs of life
    for (int pass = 0; pass < 2; ++pass)
        for (std::size_t i = 0; i < reports.size(); ++i) {
            const auto& [rep, f] = reports[i];
            if (f.empty() || (pass == 0 && !origins[i])) continue;
            f.raise("data job '" + m.spec.name + "', rank " + std::to_string(rep.rank) + ": ");
        }
    std::vector<RankReport> ranks;
    for (auto& [rep, f] : reports) ranks.push_back(rep);
    std::sort(ranks.begin(), ranks.end(), [](const RankReport& a, const RankReport& b) { return a.rank < b.rank; });
    return ranks;
}

}  // namespace

DataRunResult Cluster::run(DataJob& job, const DataRunOptions& options) {
    if (!is_master()) throw Error("Cluster::run is for rank 0");
    const DataJobSpec& spec = job.spec();
    validate(spec);
    check_host_data(job);
    DataRunResult result = plan_run(*this, job, options);
    Comm& comm = *impl_->comm;
    const std::vector<SliceDesc> slices = slices_of(result.plan, impl_->devices);
    const std::vector<int> workers = worker_ranks(slices);
    // Every wait on a worker has a deadline (Watch): --rank-timeout of silence while rank 0
    // listens. A lost worker ends the job at once; the cluster is not used again.
    Watch watch(
        comm, impl_->rank_timeout_s, [this](int r) { return describe_rank(r); },
        [this](int r) {
            if (!impl_->is_lost(r)) impl_->lost.push_back(r);
            mpi::note_lost_peer();
        });
    const PatienceScope patient(comm, impl_->rank_timeout_s);
    const double t0 = now_s();
    const std::string cmd = nlohmann::json{{"cmd", "data"},
                                           {"spec", to_json(spec)},
                                           {"slices", slices_to_json(slices)},
                                           {"time_launches", options.time_launches},
                                           {"overlap", options.overlap},
                                           {"check_bounds", options.check_bounds || bounds::enabled()}}
                                .dump();
    std::vector<std::pair<int, std::size_t>> sends;  // (worker, handle)
    const auto cmd_bytes = std::as_bytes(std::span(cmd.data(), cmd.size()));
    for (int r : workers) sends.emplace_back(r, comm.isend_parts({&cmd_bytes, 1}, r, wire::kCmd));
    watch.await_sends(sends);

    Execution x(spec, slices, comm, [this](int i) -> DeviceContext& { return impl_->context(i); });
    x.time_launches(options.time_launches);
    x.kernel_timeout(impl_->kernel_timeout_s);
    x.overlap(options.overlap);
    x.check_bounds(options.check_bounds || bounds::enabled());
    x.setup();
    MasterRun m{job, spec, comm, watch, x, slices, workers};
    // The scatter's and the gathers' ends on rank 0: the job's memory, its deadlines on the
    // workers, the final gather's tally.
    x.bulk_hooks({[&job](int b) { return std::span<std::byte>(job.host(b)); },
                  [&watch](int r) { watch.listen(r); },
                  [&m](int r, std::uint64_t bytes) {
                      m.watch.heard(r);
                      if (!m.counting) return;
                      if (m.final_gather.first_s == 0.0) m.final_gather.first_s = now_s();
                      m.final_gather.bytes += bytes;
                      if (bytes) m.final_gather.last_s = now_s();
                  },
                  [&watch](int r, const std::string& why) { watch.lose(r, why); }});
    scatter(m);
    x.report().setup_s = now_s() - t0;
    result.setup_s = x.report().setup_s;
    const double s0 = now_s();
    master_steps(m);
    result.ranks = collect_reports(m);
    const double end = now_s();
    result.total_s = end - t0;
    result.run_s = end - s0;
    result.steps_s = 0;
    for (const auto& r : result.ranks) result.steps_s = std::max(result.steps_s, r.steps_s);
    result.gather_s = std::max(0.0, result.run_s - result.steps_s);
    result.gathered_bytes = m.final_gather.bytes;
    result.gathered_s = m.final_gather.last_s - m.final_gather.first_s;
    return result;
}

DataRunResult run(Cluster& cluster, DataJob& job, const DataRunOptions& options) {
    return cluster.run(job, options);
}

// ---------------------------------------------------------------------------------------------
// The other ranks.

void Cluster::serve_data(const nlohmann::json& cmd) {
    Comm& comm = *impl_->comm;
    const DataJobSpec spec = data_job_from_json(cmd.at("spec"));
    const auto slices = slices_from_json(cmd.at("slices"));
    const double t0 = now_s();
    const auto fault = fault::data_fault();
    comm.drain_alive();  // an earlier job's signs of life are no news of this one's neighbours
    Execution x(spec, slices, comm, [this](int i) -> DeviceContext& { return impl_->context(i); });
    x.time_launches(cmd.value("time_launches", false));
    x.kernel_timeout(impl_->kernel_timeout_s);
    x.overlap(cmd.value("overlap", true));
    x.check_bounds(cmd.value("check_bounds", false));
    // This rank tells rank 0 that it is alive (wire::kHeartbeat, every Comm::heartbeat() seconds) while it
    // sets up, steps, and waits on its neighbours or its devices: rank 0 counts a worker lost
    // after --rank-timeout without a sign of life (docs/cluster.md, "The fault model").
    x.heartbeats(fault);
    struct PulseScope {
        Comm& comm;
        ~PulseScope() { comm.set_pulse({}); }
    } pulse{comm};
    {
        // The setup's thread calls no MPI (funneled): this thread sends the heartbeats.
        auto setup = std::async(std::launch::async, [&x] { x.setup(); });
        wait_beating(comm, setup);
    }
    comm.set_pulse([&x] { x.beat(); });
    fault::hang_data(fault, "scatter");
    x.run_scatter();
    x.prepare_steps();
    x.run_start();  // set up; every rank starts its steps on rank 0's word
    x.report().setup_s = now_s() - t0;
    {
        // Between steps a worker waits on its neighbours at most --rank-timeout at a time: a
        // hung neighbour is lost (this rank tells rank 0, which names it and ends the job). The
        // gathers to rank 0 (which takes the ranks in turn) wait as long as it takes.
        const PatienceScope patience(comm, impl_->rank_timeout_s);
        try {
            x.run_steps([&](std::uint64_t step) { x.run_gather(step, false); },
                        [&](std::uint64_t done) {
                            const PatienceScope wait(comm, 0.0);  // rank 0's host step takes what it takes
                            x.run_host_step(done);
                        });
        } catch (const Error& e) {
            if (e.reason() != ErrorReason::lost_rank || x.lost_peer() < 0) throw;
            comm.send_json({{"lost", x.lost_peer()}, {"error", e.what()}}, 0, wire::kLost);
            return;  // rank 0 ends the job; this rank goes back to serving
        }
    }
    fault::hang_data(fault, "gather");
    comm.send_json(report_to_json(x.report(), x.failure(), x.failed_here()), 0, kResult);
    // Its outputs (and the shared ones, from the first rank with slices when rank 0 has none).
    x.run_gather(spec.steps, true);
}

}  // namespace worksize
