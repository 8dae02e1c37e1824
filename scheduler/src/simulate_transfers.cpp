// Simulating a data job's scatter and final gather (simulate.hpp, simulate_data_transfers): the
// lists of StepCompiler::compile_scatter and compile_gather, with the links' costs.
#include <algorithm>
#include <map>

#include "worksize/scheduler/simulate.hpp"

namespace worksize {

namespace {

struct Costs {
    LinkCost copy, mpi;  ///< one way over a device copy; MPI beyond it (simulate.hpp)
};

/// Rank 0's own slices' uploads or downloads: each slice's in order on its queue (a thread per
/// device), all slices at once; when the last ends.
double own_copies(const std::vector<Instruction>& list, InstrKind kind, const Costs& c) {
    std::map<int, double> queue;
    double end = 0.0;
    for (const auto& in : list)
        if (in.kind == kind) end = std::max(end, queue[in.slice] += c.copy.time(double(in.bytes)));
    return end;
}

/// One worker's gather list after rank 0's link is free at `link` (rank 0 takes the workers in
/// turn, one message at a time): its pieces read on its device's queue into its slots, each sent
/// once read and its slot free again once the piece has arrived. Rank 0's link afterwards.
double worker_gather(const std::vector<Instruction>& list, double link, const Costs& c) {
    double host = 0.0, queue = 0.0;
    std::map<int, double> slot_free, read_end;
    link += c.mpi.time(8.0);  // the status word
    for (const auto& in : list) {
        if (in.buffer < 0) continue;
        if (in.kind == InstrKind::read_rows) {
            host = std::max(host, slot_free[in.staging]);  // its slot's last send has left
            queue = std::max(queue, host) + c.copy.time(double(in.bytes));
            read_end[in.staging] = queue;
        } else if (in.kind == InstrKind::send) {
            host = std::max(host, read_end[in.staging]);
            link = std::max(link, host) + c.mpi.time(double(in.bytes));
            slot_free[in.staging] = link;
        }
    }
    return link;
}

/// One worker's scatter list, rank 0's link free at `link`: each piece received into a slot once
/// the slot's writes have ended, then written onto its devices' queues. (When its last write
/// ends, rank 0's link afterwards.)
std::pair<double, double> worker_scatter(const std::vector<Instruction>& list, double link, const Costs& c) {
    double host = 0.0, end = 0.0;
    std::map<int, double> slot_free, arrived, queue;
    for (const auto& in : list) {
        if (in.kind == InstrKind::recv) {
            host = std::max(host, slot_free[in.staging]);  // posted once the slot is free
            link = std::max(link, host) + c.mpi.time(double(in.bytes));
            arrived[in.staging] = link;
            slot_free[in.staging] = 0.0;
        } else if (in.kind == InstrKind::write_rows) {
            host = std::max(host, arrived[in.staging]);
            double& q = queue[in.slice];
            q = std::max(q, host) + c.copy.time(double(in.bytes));
            slot_free[in.staging] = std::max(slot_free[in.staging], q);
            end = std::max(end, q);
        }
    }
    return {end, link};
}

}  // namespace

SimulatedTransfers simulate_data_transfers(const DataJobSpec& spec, const DataLayout& layout,
                                           const DataLinks& links, ProgramOptions options) {
    const Costs c{{links.same_rank.byte_s / 2, links.same_rank.message_s / 2},
                  {std::max(0.0, links.between_ranks.byte_s - links.same_rank.byte_s),
                   std::max(0.0, links.between_ranks.message_s - links.same_rank.message_s)}};
    std::vector<int> workers;
    for (const auto& s : layout.slices)
        if (s.rank != 0 && std::find(workers.begin(), workers.end(), s.rank) == workers.end())
            workers.push_back(s.rank);
    std::sort(workers.begin(), workers.end());
    SimulatedTransfers out;
    const StepCompiler zero(spec, layout, 0, options);
    out.scatter_s = own_copies(zero.compile_scatter(), InstrKind::upload, c);
    double link = 0.0;
    for (int r : workers) {
        const auto [end, after] =
            worker_scatter(StepCompiler(spec, layout, r, options).compile_scatter(), link, c);
        out.scatter_s = std::max(out.scatter_s, end);
        link = after;
    }
    out.gather_s = own_copies(zero.compile_gather(spec.steps, true), InstrKind::download, c);
    link = 0.0;
    for (int r : workers)
        link =
            worker_gather(StepCompiler(spec, layout, r, options).compile_gather(spec.steps, true), link, c);
    out.gather_s = std::max(out.gather_s, link);
    return out;
}

}  // namespace worksize
