// The step cost of a data job and the split minimising it (data_model.hpp).
#include "worksize/scheduler/data_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "worksize/scheduler/format.hpp"
#include "worksize/scheduler/planner.hpp"

namespace worksize {

HaloTraffic halo_traffic(const DataJobSpec& s) {
    // data_layout's walk: two exchanges of the steady state (with ghost zones, the steps that
    // exchange), the second counted; the first reads the scattered rows.
    HaloTraffic t;
    t.every = std::max<std::uint64_t>(s.exchange_every, 1);
    std::vector<bool> dirty(s.buffers.size(), false);
    for (std::uint64_t step = 0; step < 2 * t.every; ++step) {
        for (std::size_t k = 0; k < s.kernels.size(); ++k) {
            if (!runs_steadily(s.kernels[k])) continue;  // the steady state: the kernels of every step
            if (step % t.every == 0)
                for (int b : halo_exchanges_before(s, k, dirty)) {
                    if (step == 0) continue;
                    t.bytes += halo_rows(s, b) * row_bytes(s.buffers[std::size_t(b)]);
                    ++t.messages;
                }
            mark_written(s, k, dirty);
        }
        apply_swaps(s, dirty);
    }
    return t;
}

double mean_ghost_rows(const DataJobSpec& s) {
    const std::uint64_t k = std::max<std::uint64_t>(s.exchange_every, 1);
    double sum = 0;
    for (std::uint64_t step = 0; step < k; ++step) sum += double(ghost_rows(s, step));
    return sum / double(k);
}

namespace {

/// Per step: what one exchange with a neighbour over `link` costs, amortised.
double halo_cost(const HaloTraffic& t, const LinkCost& link) {
    if (t.messages == 0) return 0.0;
    return (double(t.messages) * link.message_s + double(t.bytes) * link.byte_s) / double(t.every);
}

/// The devices of a candidate set, in slice order, with what their neighbours cost them.
struct Member {
    std::size_t device = 0;
    double halo_s = 0.0, ghost = 0.0, units = 0.0;
};

struct Solution {
    std::vector<Member> members;
    double step_s = std::numeric_limits<double>::infinity();
    bool valid = false;
};

class Solver {
public:
    Solver(const DataJobSpec& s, const std::vector<int>& ranks, const std::vector<DataDeviceRate>& rates,
           const DataLinks& links, std::uint64_t granule)
        : ranks_(ranks),
          rates_(rates),
          links_(links),
          traffic_(halo_traffic(s)),
          ghost_(mean_ghost_rows(s)),
          total_(double(s.units)),
          min_alone_(double(granule)) {
        // With a neighbour a slice holds at least a granule and the deepest halo (check_slices).
        std::uint64_t h = 0;
        for (std::size_t b = 0; b < s.buffers.size(); ++b)
            if (s.buffers[b].layout == BufferLayout::split) h = std::max(h, halo_rows(s, int(b)));
        min_shared_ = double(std::max(granule, h));
    }

    /// The equal-finish solution of the devices in `set` (ascending).
    Solution solve(const std::vector<std::size_t>& set) const {
        Solution sol;
        if (set.empty()) return sol;
        double num = total_, den = 0;
        for (std::size_t j = 0; j < set.size(); ++j) {
            Member m;
            m.device = set[j];
            for (int side : {-1, 1}) {
                const std::ptrdiff_t n = std::ptrdiff_t(j) + side;
                if (n < 0 || n >= std::ptrdiff_t(set.size())) continue;
                const bool same = ranks_[set[std::size_t(n)]] == ranks_[m.device];
                m.halo_s += halo_cost(traffic_, same ? links_.same_rank : links_.between_ranks);
                m.ghost += ghost_;
            }
            const auto& r = rates_[m.device];
            num += m.ghost + (r.step_s + m.halo_s) / r.unit_s;
            den += 1.0 / r.unit_s;
            sol.members.push_back(m);
        }
        sol.step_s = num / den;
        const double least = set.size() > 1 ? min_shared_ : min_alone_;
        sol.valid = true;
        for (auto& m : sol.members) {
            const auto& r = rates_[m.device];
            m.units = (sol.step_s - r.step_s - m.halo_s) / r.unit_s - m.ghost;
            if (set.size() > 1 && m.units < least) sol.valid = false;
        }
        return sol;
    }

private:
    const std::vector<int>& ranks_;
    const std::vector<DataDeviceRate>& rates_;
    const DataLinks& links_;
    HaloTraffic traffic_;
    double ghost_, total_, min_alone_, min_shared_ = 1;
};

bool better(const Solution& a, const Solution& b) {
    if (!a.valid) return false;
    if (!b.valid) return true;
    const double eps = 1e-12 * std::max(std::abs(a.step_s), std::abs(b.step_s));
    if (a.step_s < b.step_s - eps) return true;
    return a.step_s <= b.step_s + eps && a.members.size() > b.members.size();  // a tie: more devices
}

/// The best solution over sets of the `known` devices: every set for up to 8 devices, else
/// backward elimination from all of them (drop the device whose removal helps most, while one does).
Solution best_data_solution(const Solver& solver, const std::vector<std::size_t>& known) {
    Solution best;
    if (known.size() <= 8) {
        for (std::uint64_t mask = 1; mask < (std::uint64_t(1) << known.size()); ++mask) {
            std::vector<std::size_t> set;
            for (std::size_t j = 0; j < known.size(); ++j)
                if (mask >> j & 1) set.push_back(known[j]);
            const Solution sol = solver.solve(set);
            if (better(sol, best)) best = sol;
        }
    } else {
        std::vector<std::size_t> set = known;
        best = solver.solve(set);
        for (bool dropped = true; dropped && set.size() > 1;) {
            dropped = false;
            Solution next;
            std::size_t drop = 0;
            for (std::size_t j = 0; j < set.size(); ++j) {
                auto fewer = set;
                fewer.erase(fewer.begin() + std::ptrdiff_t(j));
                const Solution sol = solver.solve(fewer);
                if (better(sol, next)) {
                    next = sol;
                    drop = j;
                }
            }
            if (better(next, best) || !best.valid) {
                best = next;
                set.erase(set.begin() + std::ptrdiff_t(drop));
                dropped = true;
            }
        }
    }
    if (!best.valid) best = solver.solve({known.front()});  // not reached: one device alone is valid
    return best;
}

/// Why device `i`, which has a measured rate, is left out of the `best` solution over the
/// devices `chosen` (ascending): with it the step is slower, or it would get too few units.
std::string left_out_note(const Solver& solver, const std::vector<std::size_t>& chosen, const Solution& best,
                          std::size_t i) {
    auto with = chosen;
    with.insert(std::upper_bound(with.begin(), with.end(), i), i);
    const Solution sol = solver.solve(with);
    return sol.valid
               ? "left out: with it the predicted step is " + format_seconds(sol.step_s, 4) + " against " +
                     format_seconds(best.step_s, 4) + " without it (its halo exchanges and fixed costs " +
                     "outweigh the units it would take)"
               : "left out: at a step of " + format_seconds(best.step_s, 4) +
                     " it would get less than the least slice beside neighbours (a granule, " +
                     "a halo's depth) once its halo exchanges and fixed costs are paid";
}

}  // namespace

DataStepPrediction predict_data_step(const DataJobSpec& s, const std::vector<Assignment>& assignments,
                                     const std::vector<DataDeviceRate>& rates, const DataLinks& links) {
    const DataLayout layout = data_layout(s, assignments);
    const HaloTraffic traffic = halo_traffic(s);
    const double ghost = mean_ghost_rows(s);
    DataStepPrediction p;
    for (const auto& sl : layout.slices) {
        if (sl.device < 0 || std::size_t(sl.device) >= rates.size() || !rates[std::size_t(sl.device)].known())
            throw InvalidArgument("data job '" + s.name + "': no rate for device " +
                                  std::to_string(sl.device) + ", which has a slice");
        const auto& r = rates[std::size_t(sl.device)];
        SliceStep st;
        st.device = sl.device;
        st.rank = sl.rank;
        st.units = sl.units;
        st.launched = double(sl.units);
        for (int n : {sl.left, sl.right}) {
            if (n < 0) continue;
            const bool same = layout.slices[std::size_t(n)].rank == sl.rank;
            st.halo_s += halo_cost(traffic, same ? links.same_rank : links.between_ranks);
            st.launched += ghost;
        }
        st.compute_s = st.launched * r.unit_s + r.step_s;
        st.step_s = st.compute_s + st.halo_s;
        if (st.step_s > p.step_s || p.slowest < 0) {
            p.step_s = st.step_s;
            p.slowest = st.device;
        }
        p.slices.push_back(st);
    }
    return p;
}

DataSplit plan_data_split(const DataJobSpec& s, const std::vector<int>& ranks,
                          const std::vector<DataDeviceRate>& rates, const DataLinks& links,
                          std::uint64_t granule) {
    const std::size_t n = rates.size();
    if (ranks.size() != n)
        throw InvalidArgument("data split: " + std::to_string(ranks.size()) + " ranks for " +
                              std::to_string(n) + " devices");
    if (granule == 0) granule = 1;
    std::vector<std::size_t> known;
    for (std::size_t i = 0; i < n; ++i)
        if (rates[i].known() && std::isfinite(rates[i].unit_s) && rates[i].step_s >= 0) known.push_back(i);
    if (known.empty()) throw InvalidArgument("data job '" + s.name + "': no device has a measured rate");
    const Solver solver(s, ranks, rates, links, granule);

    const Solution best = best_data_solution(solver, known);

    DataSplit out;
    out.weights.assign(n, 0.0);
    out.left_out.assign(n, "");
    double sum = 0;
    for (const auto& m : best.members) sum += std::max(m.units, 0.0);
    for (const auto& m : best.members) out.weights[m.device] = sum > 0 ? std::max(m.units, 0.0) / sum : 1.0;
    std::vector<std::size_t> chosen;
    for (const auto& m : best.members) chosen.push_back(m.device);
    for (std::size_t i = 0; i < n; ++i) {
        if (out.weights[i] > 0) continue;
        if (!std::binary_search(known.begin(), known.end(), i)) {
            out.left_out[i] = "left out: no measured rate";
            continue;
        }
        out.left_out[i] = left_out_note(solver, chosen, best, i);
    }
    out.units = round_to_units(out.weights, s.units, granule);
    std::vector<Assignment> slices;
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < n; ++i) {
        Assignment a;
        a.device = int(i);
        a.rank = ranks[i];
        a.offset = offset;
        a.units = out.units[i];
        offset += a.units;
        slices.push_back(a);
    }
    out.step_s = predict_data_step(s, slices, rates, links).step_s;
    return out;
}

}  // namespace worksize
