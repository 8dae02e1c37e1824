// A data job's bulk transfers between rank 0 and the workers (jobs/data_job.cpp describes the
// protocol): the scatter of the inputs before the steps and the gathers of the outputs are
// instruction lists (StepCompiler::compile_scatter, compile_gather) that the engine runs
// (Execution::run_scatter, run_gather, defined here). The inputs that each rank's generators
// make go through two pinned staging halves of a piece each (Stager): piece k + 1 is made
// while piece k is uploaded.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "jobs/data_execution.hpp"
#include "jobs/data_watch.hpp"

namespace worksize::data_exec {

/// Rows (or a shared buffer's elements) per message of rows of `row` bytes: as many whole rows as
/// a piece holds (transport/pieces.hpp: 16 MiB, or WORKSIZE_PIECE_BYTES), at least one.
std::uint64_t piece_rows(std::uint64_t row);
/// A generated input's pieces are kGeneratedPieces times as large: fewer calls, for a generator
/// that spreads its rows over threads starts them per call.
constexpr std::uint64_t kGeneratedPieces = 4;

/// Waits until the uploads `evs` are done, calling `progress` (heartbeats, rank 0's sends)
/// meanwhile; a failed one is the Execution's failure.
void await_uploads(Execution& x, std::vector<cl::Event>& evs, const std::function<void()>& progress);

/// Two pinned staging halves of a piece each, through which inputs go onto the devices: piece
/// k + 1 is made (received, generated) in one half while piece k is uploaded from the other.
class Stager {
public:
    Stager(Execution& x, std::shared_ptr<HostMemoryResource> pinned, std::function<void()> progress);
    ~Stager() { finish(); }
    Stager(const Stager&) = delete;
    Stager& operator=(const Stager&) = delete;
    /// The half to fill next, `bytes` long, once the uploads from it are done.
    Bytes& next(std::uint64_t bytes);
    /// The half that next() gave last, onto slice `s` without blocking: rows of split buffer `b` from
    /// global unit `first`, or elements of shared `b` from `first`.
    void upload(SliceState& s, int b, std::uint64_t first);
    /// Until every upload is done.
    void finish();

private:
    struct Half {
        Bytes bytes;
        std::vector<cl::Event> uploads;
    };
    Execution& x_;
    std::function<void()> progress_;
    std::array<Half, 2> half_;
    int next_ = 0;
    Half* current_ = nullptr;  ///< the half next() gave last
};

/// A final gather's bytes from the workers and the host times of its first status word and its
/// last piece (the link's share of the gather).
struct GatherTally {
    std::uint64_t bytes = 0;
    double first_s = 0.0, last_s = 0.0;
};

/// What rank 0's phases of one run share.
struct MasterRun {
    DataJob& job;
    const DataJobSpec& spec;
    Comm& comm;
    Watch& watch;
    Execution& x;
    const std::vector<SliceDesc>& slices;
    const std::vector<int>& workers;
    bool own_outputs_read = false;  ///< alone, rank 0 ran the final gather behind its last launches
    GatherTally final_gather{};     ///< the workers' outputs at the end
    bool counting = false;          ///< the final gather runs: its pieces count in final_gather
};

/// Rank 0: the scatter's list (Execution::run_scatter: every worker's input pieces posted at
/// once, its own slices' inputs uploaded while they move); then every rank starts its steps on
/// rank 0's word.
void scatter(MasterRun& m);

}  // namespace worksize::data_exec
