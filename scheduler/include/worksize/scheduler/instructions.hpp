// A data job's steps as instruction lists, one per rank: what each device launches, which rows
// it reads back and writes, what goes to which rank, in what order and after what. The runtime's
// executor (runtime/src/engine/) runs these lists; `--instructions` prints them without a device.
//
// Overlap: where a kernel writes a buffer whose halo a later launch reads, and the kernel may be
// launched over parts of its slice (one unit per item, no reduction, no required work-group, no
// ghost zones), its launch is split: the boundary rows the neighbours need first, then their
// exchange (read back, sent, received, written into the neighbours' halo rows) on a second
// queue and over MPI while the interior rows compute. The exchange then happens right after
// that kernel (eagerly) instead of before the launch that reads the halo, and an exchange
// whose rows no later launch reads (after the last step) does not happen at all.
//
// Gathers (compile_gather): the job's outputs to rank 0 after step N (every gather_every steps,
// and at the end), in the same lists. A worker sends a status word, then reads each of its
// slices' output rows in pieces (ProgramOptions::piece_bytes) into a ring of pinned staging slots
// on the device's own queue, one read ahead, and sends each piece as its read ends; a slot is
// reused once its send has left. Rank 0 downloads its own slices' rows into the job's host
// memory, and takes each worker's status, then its pieces straight into the job's host memory,
// a window of receives posted ahead (a worker that said "failed" sends no pieces).
//
// The scatter (compile_scatter), before the first step: rank 0 posts every worker's input
// pieces at once, straight from the job's memory, and uploads its own slices' inputs while they
// move; a worker receives each piece into one of two pinned slots, one receive ahead, and writes
// it onto its device (a shared input onto each of its devices) while the next one arrives.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "worksize/scheduler/data_spec.hpp"

namespace worksize {

enum class InstrKind {
    launch,      ///< a kernel over units [first, first + rows) of the slice (compute queue)
    read_rows,   ///< buffer rows [first, first + rows) of the slice into a staging slot (copy queue)
    write_rows,  ///< a staging slot into buffer rows [first, first + rows) of the slice (copy queue)
    send,        ///< a staging slot to rank `peer` (MPI, after the read that fills it)
    recv,        ///< rows from rank `peer` into a staging slot (MPI, posted early)
    reduce,      ///< kernel `kernel`'s reduction argument `arg`: records read, combined along the ranks
                 ///< (a kernel job's slice: into its output at `at`, slice_program.hpp)
    alloc,       ///< buffer `buffer` on slice's device, `bytes` (a kernel job's slice)
    upload,      ///< the slice's input bytes [at, at + bytes) into buffer rows (compute queue)
    download,    ///< buffer rows into the slice's output bytes [at, at + bytes) (compute queue)
    host,        ///< rank 0's host step (DataJob::host_step) after step `first` (Flow::host)
};
const char* to_string(InstrKind k);

/// What an instruction belongs to: a step's launches, halos and reductions, the scatter of the
/// inputs from rank 0 (compile_scatter), a gather of the outputs to rank 0 (compile_gather), a
/// host step between two steps (compile_host_step), or the ranks' start (compile_start).
enum class Flow { step, scatter, gather, host, start };

/// Which part of a slice a launch covers.
enum class LaunchPart { whole, top, bottom, interior };
const char* to_string(LaunchPart p);

struct Instruction {
    InstrKind kind = InstrKind::launch;
    int slice = -1;   ///< index into DataLayout::slices: the device it runs on (not send/recv)
    int kernel = -1;  ///< launch, reduce
    int arg = -1;     ///< reduce: the kernel's argument
    int buffer = -1;  ///< read_rows, write_rows, send, recv
    /// launch: the units launched (global); read_rows, write_rows: the buffer's rows (global
    /// units; a halo row before the slice is offset - 1).
    std::uint64_t first = 0, rows = 0;
    LaunchPart part = LaunchPart::whole;
    int peer = -1;     ///< send, recv: the other rank
    int staging = -1;  ///< read_rows, write_rows, send, recv: the host staging slot (per rank)
    std::uint64_t bytes = 0;  ///< read_rows, write_rows, send, recv: bytes moved
    /// Halo traffic: the step whose launches read these rows (an exchange after step s's kernel
    /// feeds step s + 1; one before a launch feeds its own step).
    std::uint64_t feeds_step = 0;
    /// upload, download, a kernel slice's reduce and its input's or output's messages (buffer
    /// -1): the byte offset in the slice's input (upload) or output stream (slice_program.hpp).
    /// upload and download of a shared buffer: `first` and `rows` are bytes of the buffer.
    std::uint64_t at = 0;
    /// A kernel slice's send or recv (buffer -1): of its output (else of its input).
    bool result = false;
    /// A scatter's or a gather's instruction (compile_scatter, compile_gather): `first` and
    /// `rows` are units of the buffer (a shared buffer's elements); its read_rows and write_rows
    /// go on the device's own queue, its messages carry no status word (a gather's send or recv
    /// of buffer -1 is the status word alone).
    Flow flow = Flow::step;
    /// send, recv, upload, download: the endpoint is the job's host memory on rank 0 (bytes
    /// [at, at + bytes) of buffer `buffer`'s), not a staging slot.
    bool host = false;
    /// Indexes into the same list that must be complete first. Across steps, the executor keeps
    /// each device's queue order: a read waits for the launches enqueued before it on its
    /// device, a launch for the writes into its device's halo rows since the previous launch.
    std::vector<int> deps;
};

struct ProgramOptions {
    bool overlap = true;  ///< split launches and exchange eagerly where the kernel allows it
    /// A gather's piece: as many whole rows as fit (at least one). The runtime passes
    /// pieces::piece_bytes() (16 MiB, or WORKSIZE_PIECE_BYTES).
    std::uint64_t piece_bytes = std::uint64_t(16) << 20;
    /// A worker's ring of staging slots per slice for a gather's pieces: up to send_depth - 1
    /// sends in flight while the next piece is read (one at a time left the link idle between
    /// messages: the 512 MiB gather of heat 16384² over two H200 ranks ran at 86 % of mpi-bw).
    int send_depth = 3;
    /// Rank 0's receives of a worker's pieces posted ahead of the one it completes.
    int recv_window = 8;
};

/// A rank's walk through the steps: compile_step() once per step, in order (the dirty flags of
/// the buffers' halos carry from one step to the next).
class StepCompiler {
public:
    StepCompiler(const DataJobSpec& spec, const DataLayout& layout, int rank, ProgramOptions options = {});
    /// The instructions of `step` (steps come in order from 0).
    std::vector<Instruction> compile_step(std::uint64_t step);
    /// The scatter of the inputs before the steps: this rank's part (header comment). Any rank.
    std::vector<Instruction> compile_scatter() const;
    /// The gather after `steps` steps (DataJobSpec::gather_every; `final`: the run's end, with
    /// the shared outputs): this rank's part (header comment). Any rank, with slices or not.
    std::vector<Instruction> compile_gather(std::uint64_t steps, bool final) const;
    /// The host step after `done` steps (DataJobSpec::host_every): this rank's part. Rank 0 takes
    /// the shared outputs (a download of its first slice's, or a recv from the first rank with
    /// slices when it has none: raw bytes), runs the application's step (`host`), then, unless
    /// `done` is the last step, sends each rewritten shared input (BufferDecl::host_written) to
    /// every other rank with slices as [status word, contents] and uploads it onto its own slices;
    /// a worker sends the shared outputs when it is that first rank, receives each rewritten
    /// input and uploads it onto its slices. Any rank.
    std::vector<Instruction> compile_host_step(std::uint64_t done) const;
    /// The start of the steps, after the scatter (buffer -1: a status word alone): each other
    /// rank with slices sends rank 0 its status once its inputs are on its devices and waits for
    /// rank 0's go; rank 0 takes every status, then sends every go. Without it a rank that set up
    /// faster waited on its neighbours in its first step, under load past --rank-timeout.
    std::vector<Instruction> compile_start() const;
    /// Whether kernel `k` is ever launched in parts (overlap) on this rank's slices.
    bool splits(std::size_t k) const;

    struct Emit;  ///< the list under construction (instructions.cpp)

private:
    /// The buffers kernel `k` writes in `step` whose halos move right after it, with the step
    /// whose launch reads them.
    std::vector<std::pair<int, std::uint64_t>> eager_exchanges(std::size_t k, std::uint64_t step) const;
    bool splittable(std::size_t k) const;

    DataJobSpec spec_;    ///< copies: a compiler outlives the temporaries it may be made from
    DataLayout layout_;
    int rank_;
    ProgramOptions options_;
    std::vector<int> mine_;  ///< this rank's slices (indexes into layout_.slices), in order
    std::vector<bool> dirty_;
    std::vector<std::uint64_t> halo_;  ///< per buffer
};

/// The lists of every rank: the scatter, the start, steps [0, steps) (all of them when steps is 0), the
/// gathers and host steps due after them, and the final gather, as text (one line per
/// instruction, with its dependencies) and as JSON ({"ranks":[{"rank","scatter":[...],
/// "steps":[[...]],"gathers":[{"after","final","list":[...]}]}]}, with "hosts":[{"after","list"}]
/// for a job with host steps, and "start":[...] where ranks other than 0 have slices).
std::string format_instructions(const DataJobSpec& spec, const DataLayout& layout, std::uint64_t steps,
                                ProgramOptions options = {});
nlohmann::json instructions_to_json(const DataJobSpec& spec, const DataLayout& layout, std::uint64_t steps,
                                    ProgramOptions options = {});
std::string describe(const Instruction& in, const DataJobSpec& spec);
nlohmann::json instruction_to_json(const Instruction& in, const DataJobSpec& spec);

}  // namespace worksize
