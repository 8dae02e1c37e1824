// Simulating the engine's instruction lists (simulate.hpp).
#include "worksize/scheduler/simulate.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <tuple>

namespace worksize {

namespace {

/// One rank's walk through its lists.
struct RankSim {
    int rank = 0;
    std::vector<std::vector<Instruction>> lists;  ///< per simulated step
    std::vector<std::vector<double>> done;        ///< per step and instruction: its end
    std::size_t step = 0, next = 0;               ///< the next instruction to issue
    double host = 0.0;                            ///< when the host is free to issue it
    std::vector<double> step_end;                 ///< per step: when its last instruction ended
    std::map<int, std::uint64_t> received;        ///< per peer: messages taken so far
};

struct SliceSim {
    double compute = 0.0, copy = 0.0;  ///< when each queue is free
    double last_launch = 0.0;          ///< the end of its last launch
    double writes = 0.0;               ///< the end of the halo writes since its last launch
    double busy = 0.0;                 ///< its launches' time, all simulated steps
};

struct Sim {
    const DataJobSpec& spec;
    const DataLayout& layout;
    const std::vector<DataDeviceRate>& rates;
    LinkCost copy_one_way, mpi;
    std::vector<SliceSim> slices;
    std::map<std::pair<int, int>, std::deque<double>> mail;  ///< (from, to) -> arrival times, in order
    std::map<std::tuple<std::size_t, int, int>, std::map<int, double>> reductions;  ///< (step, kernel, arg) -> rank -> ready
    int ranks = 0;

    /// With ghost zones a whole-slice launch also covers the rows the next steps read.
    double launch_cost(const Instruction& in, std::uint64_t step) const {
        const auto& sl = layout.slices[std::size_t(in.slice)];
        const auto& r = rates[std::size_t(sl.device)];
        double rows = double(in.rows);
        if (in.part == LaunchPart::whole)
            rows += double(ghost_rows(spec, step)) * double((sl.left >= 0) + (sl.right >= 0));
        // A rate covers every kernel of a step: each launch of one of K kernels pays 1/K of it.
        const double kernels = double(std::max<std::size_t>(spec.kernels.size(), 1));
        return (rows * r.unit_s + r.step_s) / kernels;
    }

    /// A kernel slice's alloc (nothing to wait for), upload or download (on its compute queue,
    /// in order with the launches): when it ends.
    double slice_copy(const Instruction& in, const RankSim& x) {
        if (in.kind == InstrKind::alloc) return x.host;
        auto& s = slices[std::size_t(in.slice)];
        s.compute = std::max(s.compute, x.host) + copy_one_way.time(double(in.bytes));
        return s.compute;
    }

    /// Issues rank `x`'s next instruction if it can; false when it waits on another rank.
    bool advance(RankSim& x) {
        const Instruction& in = x.lists[x.step][x.next];
        double& end = x.done[x.step][x.next];
        switch (in.kind) {
            case InstrKind::launch: {
                auto& s = slices[std::size_t(in.slice)];
                const double start = std::max({s.compute, s.writes, x.host});
                const double cost = launch_cost(in, x.step);
                end = start + cost;
                s.busy += cost;
                s.compute = s.last_launch = end;
                s.writes = 0.0;
                break;
            }
            case InstrKind::read_rows: {
                auto& s = slices[std::size_t(in.slice)];
                end = std::max({s.copy, s.last_launch, x.host}) + copy_one_way.time(double(in.bytes));
                s.copy = end;
                break;
            }
            case InstrKind::send: {
                x.host = std::max(x.host, x.done[x.step][std::size_t(in.deps.at(0))]);
                end = x.host;
                mail[{x.rank, in.peer}].push_back(x.host + mpi.time(double(in.bytes)));
                break;
            }
            case InstrKind::recv:
                end = x.host;  // posted; the write after it waits for the message
                break;
            case InstrKind::write_rows: {
                const Instruction& from = x.lists[x.step][std::size_t(in.deps.at(0))];
                if (from.kind == InstrKind::recv) {
                    auto& box = mail[{from.peer, x.rank}];
                    const std::uint64_t k = x.received[from.peer];
                    if (box.size() <= k) return false;  // its sender has not sent it yet
                    x.received[from.peer] = k + 1;
                    x.host = std::max(x.host, box[k]);
                } else {
                    x.host = std::max(x.host, x.done[x.step][std::size_t(in.deps.at(0))]);
                }
                auto& s = slices[std::size_t(in.slice)];
                end = std::max(s.copy, x.host) + copy_one_way.time(double(in.bytes));
                s.copy = end;
                s.writes = std::max(s.writes, end);
                break;
            }
            case InstrKind::alloc:  // a kernel job's slice (slice_program.hpp): no data job has these
            case InstrKind::upload:
            case InstrKind::download: end = slice_copy(in, x); break;
            case InstrKind::host: break;  // a host step's list (Flow::host): not in a step's
            case InstrKind::reduce: {
                double ready = x.host;
                for (int d : in.deps) ready = std::max(ready, x.done[x.step][std::size_t(d)]);
                auto& r = reductions[{x.step, in.kernel, in.arg}];
                r.emplace(x.rank, ready);
                int participants = 0;
                for (const auto& rs : ranks_with_slices) participants += rs ? 1 : 0;
                if (int(r.size()) < participants) return false;
                double all = 0.0;
                for (const auto& [rank, t] : r) all = std::max(all, t);
                end = all + 2.0 * double(participants - 1) * mpi.message_s + copy_one_way.message_s;
                x.host = end;
                break;
            }
        }
        ++x.next;
        if (x.next == x.lists[x.step].size()) {
            double e = x.host;
            for (double t : x.done[x.step]) e = std::max(e, t);
            x.step_end.push_back(e);
            ++x.step;
            x.next = 0;
        }
        return true;
    }
    std::vector<bool> ranks_with_slices;
};

}  // namespace

SimulatedSteps simulate_data_steps(const DataJobSpec& spec, const DataLayout& layout,
                                   const std::vector<DataDeviceRate>& rates, const DataLinks& links,
                                   ProgramOptions options, std::uint64_t steps) {
    for (const auto& sl : layout.slices)
        if (sl.device < 0 || std::size_t(sl.device) >= rates.size() || !rates[std::size_t(sl.device)].known())
            throw InvalidArgument("data job '" + spec.name + "': no rate for device " + std::to_string(sl.device) +
                                  ", which has a slice");
    const std::uint64_t n = std::max<std::uint64_t>(1, std::min(steps, spec.steps));
    Sim sim{spec, layout, rates, {links.same_rank.byte_s / 2, links.same_rank.message_s / 2},
            {std::max(0.0, links.between_ranks.byte_s - links.same_rank.byte_s),
             std::max(0.0, links.between_ranks.message_s - links.same_rank.message_s)},
            std::vector<SliceSim>(layout.slices.size()), {}, {}, 0, {}};
    std::vector<RankSim> ranks;
    for (const auto& sl : layout.slices)
        if (std::none_of(ranks.begin(), ranks.end(), [&](const RankSim& r) { return r.rank == sl.rank; })) {
            RankSim r;
            r.rank = sl.rank;
            ranks.push_back(std::move(r));
        }
    std::sort(ranks.begin(), ranks.end(), [](const RankSim& a, const RankSim& b) { return a.rank < b.rank; });
    sim.ranks_with_slices.assign(ranks.size(), true);
    for (auto& r : ranks) {
        StepCompiler c(spec, layout, r.rank, options);
        for (std::uint64_t s = 0; s < n; ++s) {
            r.lists.push_back(c.compile_step(s));
            r.done.emplace_back(r.lists.back().size(), 0.0);
        }
        // Empty steps end at once.
        while (r.step < r.lists.size() && r.lists[r.step].empty()) {
            r.step_end.push_back(r.host);
            ++r.step;
        }
    }
    // Round-robin: each rank issues what it can; a rank waiting on a message or a reduction
    // yields to the others. Correct lists never deadlock (the compiler pairs every receive with a send).
    for (bool moved = true; moved;) {
        moved = false;
        for (auto& r : ranks)
            while (r.step < r.lists.size() && sim.advance(r)) {
                moved = true;
                while (r.step < r.lists.size() && r.lists[r.step].empty()) {
                    r.step_end.push_back(r.host);
                    ++r.step;
                }
            }
    }
    SimulatedSteps out;
    for (const auto& sl : sim.slices) out.slice_busy_s.push_back(sl.busy / double(n));
    for (const auto& r : ranks) {
        if (r.step < r.lists.size())
            throw InvalidArgument("data job '" + spec.name + "': the instruction lists of rank " +
                                  std::to_string(r.rank) + " wait forever in the simulation");
        out.rank_end.push_back(r.step_end.back());
        out.first_step_s = std::max(out.first_step_s, r.step_end.front());
        const double steady = n > 1 ? (r.step_end.back() - r.step_end.front()) / double(n - 1) : r.step_end.back();
        out.step_s = std::max(out.step_s, steady);
    }
    return out;
}

}  // namespace worksize
