// A data job's bulk transfers between rank 0 and the workers (jobs/data_job.cpp describes the
// protocol): the scatter of the inputs before the steps and the gathers of the outputs, both in
// pieces of whole rows, so that a piece moves over MPI while the one before it goes on or comes
// off a device, through two pinned staging halves of a piece each (Stager, also under the
// inputs that each rank's generators make).
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

/// A final gather's bytes from the workers and the host times of its first and last piece (the
/// link's share of the gather).
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
    bool own_outputs_read = false;  ///< rank 0's own slices' outputs read behind its last launches
    GatherTally final_gather{};     ///< the workers' outputs at the end
};

/// Rank 0: posts every worker's input pieces at once, uploads its own slices' inputs while they
/// move, waits for the sends; then every rank starts its steps on rank 0's word.
void scatter(MasterRun& m);
/// A worker: its slices' input pieces, each uploaded from a staging half while the next one
/// arrives; returns once every upload is done (or this rank has failed).
void receive_inputs(Execution& x, const DataJobSpec& spec, Comm& comm);

/// The output split buffers, in declaration order.
std::vector<int> split_outputs(const DataJobSpec& spec);

/// A worker's side of the gathers, kept for its whole run: kSendDepth pinned staging buffers of
/// a piece each; a piece is read from its device into the buffer whose send ended first while
/// the pieces before it move, so that up to kSendDepth - 1 messages are in flight at once (one
/// at a time left the link idle between a message's end and the next one's start: the 512 MiB
/// gather of heat 16384² over two H200 ranks ran at 86 % of `mpi-bw`).
class PieceSender {
public:
    static constexpr std::size_t kSendDepth = 3;
    /// The buffers hold `reserve` bytes from the start (a gather's largest piece): pinning them
    /// in the first gather cost k-means' 32 MiB one about 7 ms on an H100 node.
    PieceSender(Comm& comm, const std::shared_ptr<HostMemoryResource>& pinned, std::uint64_t reserve = 0);
    /// Sends still in flight on a failure are left to MPI (abandon_send).
    ~PieceSender();
    PieceSender(const PieceSender&) = delete;
    PieceSender& operator=(const PieceSender&) = delete;
    /// The buffer for the next piece, `bytes` long, once its last send is done.
    Bytes& next(std::uint64_t bytes);
    /// The buffer next() gave last, to rank 0 as one message (kData), without waiting.
    void send();
    /// One look at the sends in flight (while the next piece is read).
    void progress();
    /// Until every send is done.
    void finish();

private:
    struct Buffer {
        Bytes bytes;
        std::size_t id = 0;
        bool sending = false;
    };
    void complete(Buffer& b);
    Comm& comm_;
    std::array<Buffer, kSendDepth> buffers_;
    std::size_t next_ = 0;
    Buffer* current_ = nullptr;
};

/// The largest piece of this rank's gathers: its PieceSender's reserve.
std::uint64_t largest_gather_piece(const Execution& x, const DataJobSpec& spec);
/// A worker's side of a gather: a header, then each slice's output rows, slice by slice, in
/// pieces of piece_rows() rows, each its own message (Comm::isend_short).
void send_outputs(Execution& x, const DataJobSpec& spec, Comm& comm, PieceSender& pieces);
/// Rank 0's side: rank `r`'s slices' output rows, straight into the job's host memory, counted
/// in `tally`, the receives of pieces::Inbound::kWindow pieces posted ahead. False when the rank
/// had failed (its report says why).
bool recv_outputs(DataJob& job, const std::vector<SliceDesc>& slices, int r, Comm& comm, Watch& watch,
                  GatherTally* tally = nullptr);
/// Rank 0's own slices' outputs, read from its devices into the job's host memory; `final`: the
/// run's last reads, behind its last launches (Execution::download_all).
void read_own_outputs(DataJob& job, Execution& x, bool final = false);

}  // namespace worksize::data_exec
