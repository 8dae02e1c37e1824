// Host steps of a data job (DataJob::host_step, DataJobSpec::host_every): between two steps rank 0
// has the step's shared outputs (reduction results) in its memory, runs the application's
// callback, and sends the shared inputs it rewrote (BufferDecl::host_written) to every rank with
// slices, which upload them to their devices before the next step. Messages (tag kData, in this
// order): the shared outputs from the first rank with slices when rank 0 has none, then each
// rewritten buffer to every worker as [status word, contents] (status failed: rank 0's callback
// threw; the workers then fail their steps and the job ends with rank 0's error).
#pragma once

#include <cstdint>
#include <vector>

#include "jobs/data_execution.hpp"
#include "jobs/data_watch.hpp"

namespace worksize::data_exec {

/// The shared buffers rank 0 gets back (reduction results), in declaration order.
inline std::vector<int> shared_outputs(const DataJobSpec& spec) {
    std::vector<int> v;
    for (std::size_t b = 0; b < spec.buffers.size(); ++b)
        if (spec.buffers[b].output && spec.buffers[b].layout == BufferLayout::shared) v.push_back(int(b));
    return v;
}

/// Rank 0's side after `done` steps. `workers`: the other ranks with slices; `sender`: the rank
/// that sends the shared outputs when rank 0 has no slice (else -1).
void host_step_master(DataJob& job, Execution& x, Comm& comm, Watch& watch, const std::vector<int>& workers,
                      int sender, std::uint64_t done);

/// A worker's side after `done` steps; `sends_shared`: it is the sender of the shared outputs.
void host_step_worker(Execution& x, const DataJobSpec& spec, Comm& comm, bool sends_shared, Bytes& staging,
                      std::uint64_t done);

}  // namespace worksize::data_exec
