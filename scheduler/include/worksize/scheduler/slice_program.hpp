// A declared kernel job's slices (runtime's declared_job.hpp: matmul, interp, quad, job files) as
// instruction lists. A slice's list is what its device does, in order on its queue: allocate
// each buffer, upload the slice's input (each split input's rows with their halos, then each
// shared input whole; in pieces when it arrives in pieces), launch the kernels `iterations`
// times, download each split output's own rows and combine each reduction into the slice's
// output. The runtime's engine (engine/executor.hpp) runs exactly this list for every declared
// slice. kernel_job_lists() adds the messages of the task protocol (runtime/src/cluster/): rank
// 0 sends each other rank's slices their input in pieces and receives their outputs in pieces.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "worksize/scheduler/instructions.hpp"

namespace worksize {

/// One part of a slice's input: buffer `buffer`'s bytes [first, first + bytes) of rank 0's
/// memory. The parts travel in this order.
struct SliceInputPart {
    int buffer = 0;
    std::uint64_t first = 0, bytes = 0;
};
/// The parts of slice [offset, offset + units)'s input: each split input's rows with their
/// halos (input_rows()), in buffer order, then each shared input whole.
std::vector<SliceInputPart> slice_input_parts(const DataJobSpec& spec, std::uint64_t offset, std::uint64_t units);

/// The rows [first, first + count) of split output `b` that the slice [offset, offset + units)
/// computes: its own, or a buffer of its own units' rows of the slice (input_rows(), no halo).
std::pair<std::uint64_t, std::uint64_t> own_rows(const DataJobSpec& spec, int b, std::uint64_t offset,
                                                 std::uint64_t units);

/// The reduce arguments of `spec`, as (kernel, argument) pairs, in order.
std::vector<std::pair<std::size_t, std::size_t>> reductions(const DataJobSpec& spec);

/// Bytes of a slice's output: each split output's own rows, then each reduction's combined
/// record as doubles (the buffer's count of them).
std::uint64_t slice_output_bytes(const DataJobSpec& spec, std::uint64_t offset, std::uint64_t units);

/// Bytes of device memory buffer `b` takes for slice [offset, offset + units) (shared: its
/// elements; a buffer of its own units: its input_rows(); else held_elements()).
std::uint64_t slice_buffer_bytes(const DataJobSpec& spec, int b, std::uint64_t offset, std::uint64_t units);

struct SliceProgramOptions {
    int slice = 0;                 ///< Instruction::slice of every instruction
    std::uint64_t iterations = 1;  ///< the kernels' launches, in order, this many times (0 as 1)
    /// Uploads of at most this many bytes (a split input's whole rows, at least one), so that
    /// each goes onto the device as soon as its bytes have arrived; 0: one upload per part.
    std::uint64_t piece_bytes = 0;
};

/// The instructions of slice [offset, offset + units) of `spec` on its device.
std::vector<Instruction> compile_slice(const DataJobSpec& spec, std::uint64_t offset, std::uint64_t units,
                                       const SliceProgramOptions& options = {});

/// A slice of a kernel job for the dry run: its declaration (build options and kernels may
/// differ per slice), rank and units.
struct KernelSliceDecl {
    DataJobSpec spec;
    int rank = 0;
    std::uint64_t offset = 0, units = 0;
};

struct KernelProgramOptions {
    std::uint64_t iterations = 1;
    std::uint64_t piece_bytes = 16ull << 20;  ///< the transport's pieces (transport/pieces.hpp)
    /// `run --inputs local`: every rank makes its slices' inputs and checks their outputs, so no
    /// input or output travels.
    bool local_inputs = false;
};

/// Each rank's list (ranks in order, those with slices and rank 0): rank 0 first sends every
/// other rank's slices their input pieces, then runs its own slices, then receives the others'
/// outputs; another rank receives its slices' input pieces, runs them, sends their outputs. A
/// slice on rank 0 uploads its input whole (it is in rank 0's memory).
std::vector<std::pair<int, std::vector<Instruction>>> kernel_job_lists(const std::vector<KernelSliceDecl>& slices,
                                                                       const KernelProgramOptions& options = {});
/// The lists as text (one line per instruction, with its dependencies) and as JSON
/// ({"schema":"worksize.instructions/1","job","ranks":[{"rank","list":[...]}]}).
std::string format_kernel_instructions(const std::vector<KernelSliceDecl>& slices,
                                       const KernelProgramOptions& options = {});
nlohmann::json kernel_instructions_to_json(const std::vector<KernelSliceDecl>& slices,
                                           const KernelProgramOptions& options = {});

}  // namespace worksize
