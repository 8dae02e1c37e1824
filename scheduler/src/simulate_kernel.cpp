// Simulating a kernel job's instruction lists (simulate_kernel.hpp).
#include "worksize/scheduler/simulate_kernel.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace worksize {

namespace {

/// A phase's share for one instruction of `bytes` among instructions of `all_bytes` in all: the
/// fixed part on the first, the rest by bytes (all of it on the first when none has bytes).
double phase_share(const PhaseCost& p, double bytes, double all_bytes, bool first) {
    const double total = std::max(p.total_s, 0.0);
    const double fixed = std::clamp(p.fixed_s, 0.0, total);
    const double rest = total - fixed;
    const double part = all_bytes > 0 ? rest * bytes / all_bytes : (first ? rest : 0.0);
    return (first ? fixed : 0.0) + part;
}

/// One slice in the simulation: what its lists hold, and its timeline.
struct KernelSimSlice {
    int rank = -1;
    double in_bytes = 0, up_bytes = 0, down_bytes = 0, out_bytes = 0;  ///< per kind, in the lists
    int launches = 0, in_pieces = 0, out_pieces = 0;
    bool up_first = true, down_first = true, in_first = true, out_first = true;
    bool h2d_done = false, kernel_done = false, d2h_done = false;  ///< charged (lumps: see the header)
    double thread = 0, queue = 0;  ///< when its thread and its device's queue are free
    double input_end = 0;          ///< its last input piece's arrival
    double done = 0;               ///< its host rest's end
    double start = 0, finish = 0;
    Prediction busy;
};

/// Key of an input piece: (slice, its offset in the slice's input).
using PieceKey = std::pair<int, std::uint64_t>;

class KernelJobSim {
public:
    KernelJobSim(const KernelLists& lists, const std::vector<KernelSliceCost>& costs,
                 const KernelSimOptions& o)
        : lists_(lists), costs_(costs), o_(o), s_(costs.size()) {}

    SimulatedKernelJob run() {
        scan();
        send_inputs();
        for (const auto& [rank, list] : lists_) run_devices(list);
        for (auto& s : s_) finish_on_device(s);
        answer();
        SimulatedKernelJob out;
        double last = 0;
        bool any = false;
        for (auto& s : s_) {
            s.busy.total_s =
                s.busy.send_s + s.busy.h2d_s + s.busy.kernel_s + s.busy.d2h_s + s.busy.recv_s + s.busy.host_s;
            out.start_s.push_back(s.start);
            out.finish_s.push_back(s.finish);
            out.busy.push_back(s.busy);
            last = std::max(last, s.finish);
            any = any || s.rank >= 0;
        }
        out.makespan_s = any ? last + o_.combine_s : 0.0;
        return out;
    }

private:
    KernelSimSlice& slice(int k) {
        if (k < 0 || std::size_t(k) >= s_.size())
            throw InvalidArgument("kernel job simulation: an instruction of slice " + std::to_string(k) +
                                  " but " + std::to_string(s_.size()) + " slice costs");
        return s_[std::size_t(k)];
    }
    void place(KernelSimSlice& s, int rank, int k) {
        if (s.rank >= 0 && s.rank != rank)
            throw InvalidArgument("kernel job simulation: slice " + std::to_string(k) + " on ranks " +
                                  std::to_string(s.rank) + " and " + std::to_string(rank));
        s.rank = rank;
    }

    /// Each slice's rank and its instructions' bytes and counts per kind.
    void scan() {
        for (const auto& [rank, list] : lists_)
            for (const auto& in : list) {
                KernelSimSlice& s = slice(in.slice);
                const double b = double(in.bytes);
                switch (in.kind) {
                    case InstrKind::send:
                        if (rank == 0 && !in.result) {
                            place(s, in.peer, in.slice);
                            s.in_bytes += b;
                            ++s.in_pieces;
                        } else if (rank != 0 && in.result) {
                            place(s, rank, in.slice);
                            s.out_bytes += b;
                            ++s.out_pieces;
                        }
                        break;
                    case InstrKind::recv: place(s, rank == 0 ? in.peer : rank, in.slice); break;
                    case InstrKind::upload:
                        place(s, rank, in.slice);
                        s.up_bytes += b;
                        break;
                    case InstrKind::launch:
                        place(s, rank, in.slice);
                        ++s.launches;
                        break;
                    case InstrKind::download:
                    case InstrKind::reduce:
                        place(s, rank, in.slice);
                        s.down_bytes += b;
                        break;
                    default: place(s, rank, in.slice); break;
                }
            }
        for (auto& s : s_) s.thread = s.queue = s.start = o_.prepare_s;
    }

    /// Rank 0's input pieces, all posted after prepare: in turns by destination rank over one
    /// link, or each rank's over its own. A worker's slice with a send phase but no piece (no
    /// input) sends it as one piece of no bytes; its thread starts when that arrives. One of rank
    /// 0's own with a send phase waits that long, off the link.
    void send_inputs() {
        // Per destination rank, ascending as post_to_workers posts them: (slice, piece or none).
        std::map<int, std::vector<std::pair<int, const Instruction*>>> by_rank;
        for (const auto& [rank, list] : lists_)
            if (rank == 0)
                for (const auto& in : list)
                    if (in.kind == InstrKind::send && !in.result) by_rank[in.peer].push_back({in.slice, &in});
        for (std::size_t k = 0; k < s_.size(); ++k) {
            KernelSimSlice& s = s_[k];
            if (s.rank < 0 || s.in_pieces > 0 || !(costs_[k].send.total_s > 0)) continue;
            if (s.rank > 0) {
                by_rank[s.rank].push_back({int(k), nullptr});
                continue;
            }
            s.busy.send_s = costs_[k].send.total_s;  // a slice of rank 0's own: not over MPI
            s.thread = s.queue = o_.prepare_s + s.busy.send_s;
        }
        std::map<int, std::size_t> next;
        std::map<int, double> link;  // per destination (or one, at key -1, when shared)
        for (bool more = true; more;) {
            more = false;
            for (auto& [dest, pieces] : by_rank) {
                std::size_t& n = next[dest];
                if (n == pieces.size()) continue;
                more = true;
                const auto [k, in] = pieces[n++];
                KernelSimSlice& s = s_[std::size_t(k)];
                double& t = link.try_emplace(o_.shared_link ? -1 : dest, o_.prepare_s).first->second;
                if (s.in_first) s.start = t;
                const double cost = phase_share(costs_[std::size_t(k)].send, in ? double(in->bytes) : 0.0,
                                                s.in_bytes, s.in_first);
                s.in_first = false;
                t += cost;
                s.busy.send_s += cost;
                s.input_end = std::max(s.input_end, t);
                if (in)
                    arrival_[{k, in->at}] = t;
                else
                    s.thread = s.queue = t;  // its send phase, before it starts
            }
        }
    }

    /// Charges the phases a slice has no instruction for, up to (and with `with_d2h`, including)
    /// the downloads, on its queue.
    void lumps(KernelSimSlice& s, const KernelSliceCost& c, bool with_kernel, bool with_d2h) {
        auto charge = [&](bool& done, double cost, double& busy) {
            if (done) return;
            done = true;
            s.queue = std::max(s.queue, s.thread) + cost;
            busy += cost;
        };
        charge(s.h2d_done, std::max(c.h2d.total_s, 0.0), s.busy.h2d_s);
        if (with_kernel) charge(s.kernel_done, std::max(c.kernel_s, 0.0), s.busy.kernel_s);
        if (with_d2h) charge(s.d2h_done, std::max(c.d2h.total_s, 0.0), s.busy.d2h_s);
    }

    /// One rank's device instructions, each slice on its own thread and queue.
    void run_devices(const std::vector<Instruction>& list) {
        for (const auto& in : list) {
            KernelSimSlice& s = s_[std::size_t(in.slice)];
            const KernelSliceCost& c = costs_[std::size_t(in.slice)];
            switch (in.kind) {
                case InstrKind::upload: {
                    double ready = o_.streams_input ? 0.0 : s.input_end;
                    for (int d : in.deps) {
                        const Instruction& dep = list[std::size_t(d)];
                        if (dep.kind != InstrKind::recv) continue;
                        const auto it = arrival_.find({dep.slice, dep.at});
                        if (it == arrival_.end())
                            throw InvalidArgument("kernel job simulation: an input piece of slice " +
                                                  std::to_string(dep.slice) + " that rank 0 does not send");
                        ready = std::max(ready, it->second);
                    }
                    s.thread = std::max(s.thread, ready);  // the thread waits for the piece (InputFeed)
                    const double cost = phase_share(c.h2d, double(in.bytes), s.up_bytes, s.up_first);
                    s.up_first = false;
                    s.h2d_done = true;
                    s.queue = std::max(s.queue, s.thread) + cost;
                    s.busy.h2d_s += cost;
                    break;
                }
                case InstrKind::launch: {
                    lumps(s, c, false, false);
                    const double cost = std::max(c.kernel_s, 0.0) / double(std::max(s.launches, 1));
                    s.kernel_done = true;
                    s.queue = std::max(s.queue, s.thread) + cost;
                    s.busy.kernel_s += cost;
                    break;
                }
                case InstrKind::download:
                case InstrKind::reduce: {
                    lumps(s, c, true, false);
                    const double cost = phase_share(c.d2h, double(in.bytes), s.down_bytes, s.down_first);
                    s.down_first = false;
                    s.d2h_done = true;
                    s.queue = std::max(s.queue, s.thread) + cost;
                    s.busy.d2h_s += cost;
                    break;
                }
                default: break;  // alloc: nothing to wait for; messages: send_inputs and answer
            }
        }
    }

    /// The end of a slice on its device: what was not charged yet, then its host rest.
    void finish_on_device(KernelSimSlice& s) {
        if (s.rank < 0) return;  // a slice the lists do not hold
        const KernelSliceCost& c = costs_[std::size_t(&s - s_.data())];
        lumps(s, c, true, true);
        const double host = std::max(c.host_s, 0.0);
        s.done = std::max(s.queue, s.thread) + host;
        s.busy.host_s += host;
    }

    /// Each worker, once all of its slices are done, sends their outputs slice after slice over
    /// its own link to rank 0; rank 0's own slices end where they are (their way back, if any,
    /// after them).
    void answer() {
        std::map<int, double> ready;  // per rank: its last slice's end
        for (const auto& s : s_)
            if (s.rank >= 0) ready[s.rank] = std::max(ready[s.rank], s.done);
        std::map<int, std::vector<int>> order;  // per rank: its slices in the order of its list
        for (const auto& [rank, list] : lists_)
            for (const auto& in : list) {
                auto& v = order[rank];
                if (s_[std::size_t(in.slice)].rank == rank &&
                    std::find(v.begin(), v.end(), in.slice) == v.end())
                    v.push_back(in.slice);
            }
        for (auto& [rank, slices] : order) {
            double t = rank == 0 ? 0.0 : ready[rank];
            for (int k : slices) {
                KernelSimSlice& s = s_[std::size_t(k)];
                if (rank == 0) t = s.done;
                for (const auto& [r, list] : lists_)
                    if (r == rank)
                        for (const auto& in : list)
                            if (in.kind == InstrKind::send && in.result && in.slice == k)
                                t += back(s, k, double(in.bytes));
                if (s.out_pieces == 0) t += back(s, k, 0.0);
                s.finish = t;
            }
        }
    }
    double back(KernelSimSlice& s, int k, double bytes) {
        const double cost = phase_share(costs_[std::size_t(k)].recv, bytes, s.out_bytes, s.out_first);
        s.out_first = false;
        s.busy.recv_s += cost;
        return cost;
    }

    const KernelLists& lists_;
    const std::vector<KernelSliceCost>& costs_;
    const KernelSimOptions& o_;
    std::vector<KernelSimSlice> s_;
    std::map<PieceKey, double> arrival_;
};

}  // namespace

SimulatedKernelJob simulate_kernel_job(const KernelLists& lists, const std::vector<KernelSliceCost>& costs,
                                       const KernelSimOptions& options) {
    return KernelJobSim(lists, costs, options).run();
}

}  // namespace worksize
