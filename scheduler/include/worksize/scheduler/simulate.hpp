// The data-job model that runs the engine's own instruction lists (instructions.hpp) through a
// simulator, with the devices' rates and the links' costs of data_model.hpp: overlap included,
// as the executor runs them (runtime/src/engine/). Pure.
//
// Per rank, the host issues its list in order. A launch starts when its device's compute queue
// is free, the halo writes into that device since its previous launch are done and the host has
// issued it. A device's rate covers every kernel of a step, so a launch of one of K kernels takes
// (units · unit_s + step_s) / K (a step split into boundary and interior launches pays the fixed
// part per part).
// A row read waits for the device's last launch and its copy queue; a send waits (on the host)
// for its read and arrives after the MPI link's cost; a write waits (on the host) for its
// message or, between two devices of one rank, for the other device's read. One way over a device
// copy costs half of DataLinks::same_rank; MPI costs between_ranks minus same_rank. A reduction
// ends when every rank's launches before it have, plus a chain of messages along the ranks.
#pragma once

#include <cstdint>
#include <vector>

#include "worksize/scheduler/data_model.hpp"
#include "worksize/scheduler/instructions.hpp"

namespace worksize {

struct SimulatedSteps {
    double step_s = 0.0;           ///< the steady step: the slowest rank's, after the first step
    double first_step_s = 0.0;     ///< the first step (no halo has moved before it)
    std::vector<double> rank_end;  ///< per rank in the layout (ascending), when its last simulated step ended
    std::vector<double> slice_busy_s;  ///< per layout slice: its launches' time per step (mean), at most step_s
};

/// Simulates `steps` steps (at most the job's; at least 1) of every rank's instruction list for
/// `layout` with `rates[slice.device]`. @throws InvalidArgument for a slice whose device has no
/// known rate.
SimulatedSteps simulate_data_steps(const DataJobSpec& spec, const DataLayout& layout,
                                   const std::vector<DataDeviceRate>& rates, const DataLinks& links = {},
                                   ProgramOptions options = {}, std::uint64_t steps = 4);

/// A data job's scatter and final gather (StepCompiler::compile_scatter, compile_gather) as the
/// executor runs them: every message to or from rank 0 one after the other over one MPI link
/// (between_ranks minus same_rank), the workers in rank order; a worker's reads and writes on its
/// device's queue (half of same_rank each), overlapped with the messages as the slots allow (a
/// piece read while the ones before it move; a piece written while the next one arrives); rank
/// 0's own uploads and downloads a thread per device, beside the messages. Not in the model's
/// choice of a split (the steps are, simulate_data_steps): a run's one-time cost, for reports.
struct SimulatedTransfers {
    double scatter_s = 0.0;  ///< until every slice holds its inputs
    double gather_s = 0.0;   ///< from the last step's end until rank 0 holds every output
};
SimulatedTransfers simulate_data_transfers(const DataJobSpec& spec, const DataLayout& layout,
                                           const DataLinks& links = {}, ProgramOptions options = {});

}  // namespace worksize
