// The kernel-job counterpart of simulate.hpp: a kernel job's instruction lists (slice_program.hpp,
// kernel_job_lists) run through a discrete-event simulation with the cost models' per-phase costs
// (model.hpp), overlap included as the task protocol runs them (runtime/src/cluster/). The
// `model` strategy scores its candidate splits with it (docs/models.md, "The simulated kernel
// job"). Pure.
//
// What each instruction costs. A slice's phases are those predict() gives (with the job's
// padding, rank-local inputs and contention, as evaluate_split charges them), spread over the
// slice's instructions of that kind: a transfer phase (rank 0's send of the input, the uploads,
// the downloads and reduces, the output's way back) charges its fixed part to its first
// instruction and the rest in proportion to each one's bytes; the kernel phase is divided evenly
// among the launches; the host rest is charged once, after the slice's last download, on its
// thread (it is what the calibration runs' done time leaves of the phases, so it overlaps
// nothing). A phase with no instruction in the lists is charged where it would be: the send
// before the slice starts, the uploads before its first launch, the downloads after its last,
// the way back after its host rest.
//
// When. Rank 0 posts every piece of every worker's input at once, after its prepare phase
// (KernelRun::post_to_workers): over one link that the pieces take in turns, one piece per
// destination rank in turn (measured on the GPU nodes: rank 0's sends to two workers at once
// take as long as the same bytes to one, and end together; docs/results/issue15-overlap-h200),
// or with `shared_link` false each worker over a link of its own. Each slice runs in a thread
// of its own (rank 0's in threads beside the sends, a worker's in a lane per device): an upload
// waits on that thread for the pieces holding its bytes (InputFeed), then for its device's queue;
// launches and downloads follow in queue order. A worker answers once all of its slices are done
// (WorkerRun::answer), slice after slice, each output in pieces over its own link to rank 0;
// rank 0 takes the workers' outputs side by side. The job ends with rank 0's combine after the
// last result.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "worksize/scheduler/model.hpp"
#include "worksize/scheduler/slice_program.hpp"

namespace worksize {

/// One phase of one slice: `total_s` in all, of which `fixed_s` goes to its first instruction.
struct PhaseCost {
    double total_s = 0.0;
    double fixed_s = 0.0;
};

/// What slice `k` of the lists (Instruction::slice) costs.
struct KernelSliceCost {
    PhaseCost send;         ///< rank 0 -> its rank: the input's pieces on the link
    PhaseCost h2d;          ///< its uploads
    double kernel_s = 0.0;  ///< all its launches
    PhaseCost d2h;          ///< its downloads and reduces
    PhaseCost recv;         ///< its output's pieces on the way back to rank 0
    double host_s = 0.0;    ///< the host rest, once
};

struct KernelSimOptions {
    /// Rank 0's input pieces take turns on one link (true), or each worker has its own.
    bool shared_link = true;
    /// A worker uploads each piece as it arrives (KernelJobFactory::streams_input); false: once
    /// its slice's whole input is there.
    bool streams_input = true;
    double prepare_s = 0.0;  ///< rank 0's job-level phase before anything is sent
    double combine_s = 0.0;  ///< rank 0's job-level phase after the last result
};

struct SimulatedKernelJob {
    double makespan_s = 0.0;       ///< the last result on rank 0, plus combine (0: no slice)
    std::vector<double> start_s;   ///< per slice: when its input starts to move (rank 0's: prepare)
    std::vector<double> finish_s;  ///< per slice: when its result is on rank 0
    /// Per slice: the time of each kind of its instructions (send: its input's pieces on the
    /// link; recv: its output's; host: the rest), total_s their sum. Equal to the phases they
    /// were given: the simulation moves them in time, it does not change them.
    std::vector<Prediction> busy;
};

/// Each rank's list, as kernel_job_lists() gives them.
using KernelLists = std::vector<std::pair<int, std::vector<Instruction>>>;

/// Runs `lists` with slice k costing `costs[k]`.
/// @throws InvalidArgument when an instruction names a slice without a cost, a worker's input
/// piece has no send on rank 0's list, or a slice runs on two ranks.
SimulatedKernelJob simulate_kernel_job(const KernelLists& lists, const std::vector<KernelSliceCost>& costs,
                                       const KernelSimOptions& options = {});

/// The slices a split of `units` (per device, in the devices' order) runs as: one per device with
/// units, in that order (KernelSliceDecl::rank its device's rank). A declared job's come from its
/// declaration (the runtime's KernelJobFactory::declare); see layout_slices for the others.
using DeclareSlices = std::function<std::vector<KernelSliceDecl>(const std::vector<std::uint64_t>& units)>;

/// The slices of `units` for a job of `job`'s layout as the cost models see it: a split input of
/// bytes_in_per_unit per unit, a shared input of bytes_in_fixed and a split output of
/// bytes_out_per_unit per unit (whole 4-byte elements), one kernel. The same lists as a declared
/// job of that layout (matmul's: A's rows, B whole, C's rows), without the halos or reductions
/// of a real declaration. `ranks[i]`: device i's rank.
std::vector<KernelSliceDecl> layout_slices(const SplitJob& job, const std::vector<std::uint64_t>& units,
                                           const std::vector<int>& ranks);

/// evaluate_split's timeline of `units` (device i on rank ranks[i]) with the starts, finishes and
/// makespan of the simulated lists (`declare`'s slices, else layout_slices) and each device's
/// phases from the simulation; the job's prepare and combine phases are evaluate_split's. Rank
/// 0's link is as `options` say (job.serial_sends is the analytic model's, not read here); their
/// prepare_s and combine_s are replaced.
/// @throws InvalidArgument on size mismatches, and as evaluate_split and simulate_kernel_job.
SplitResult simulate_split(const std::vector<CostModel>& models, const SplitJob& job,
                           const std::vector<std::uint64_t>& units, const std::vector<int>& ranks,
                           const DeclareSlices& declare = {}, KernelSimOptions options = {});

/// The split with the least simulated makespan among: optimise_split's (with the job's sends,
/// and with serial sends), each device alone, then improved by moving blocks of granules
/// between devices while the simulation says it helps. The join margin applies as in
/// optimise_split (a larger set of devices must beat a smaller one by more than it). Devices left
/// out get a reason from the simulation.
/// @throws InvalidArgument as optimise_split; Error when no device can take the job.
SplitResult optimise_simulated_split(const std::vector<CostModel>& models, const SplitJob& job,
                                     const std::vector<int>& ranks, const DeclareSlices& declare = {});

}  // namespace worksize
