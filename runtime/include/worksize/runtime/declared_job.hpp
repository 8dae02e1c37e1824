// A KernelJob whose data movement is declared, not written: the job gives a data-job declaration
// (scheduler/data_spec.hpp: buffers, kernels, each argument's access) and rank 0's memory of each
// buffer; the slices' inputs, outputs and reductions follow from the declaration, and one
// executor (execute_declared: the slice's instruction list, scheduler/slice_program.hpp, on the
// engine) runs every such slice on its device. Job files (job_file_job.cpp)
// and the sample kernels matmul, quad and interp are declared jobs. Sort is not (its
// splitter-based partition moves data by value), but its slices run through execute_declared
// too: a bucket in, the sort as a library routine, the sorted bucket out.
//
// What travels for a slice [offset, offset + units): each split input's rows of the slice and
// its halo rows (in buffer order; a buffer of its own units: the rows its map gives the slice,
// input_rows()), then each shared input whole; back come each split output's rows of the slice,
// then each reduction's combined record as doubles (a per-group reduction's records are first
// tree-combined on the device, down to at most kMaxGroupRecords).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <span>
#include <vector>

#include "worksize/runtime/kernel_job.hpp"
#include "worksize/runtime/opencl.hpp"
#include "worksize/scheduler/data_spec.hpp"
#include "worksize/scheduler/slice_program.hpp"

namespace worksize {

class DeclaredJob : public KernelJob {
public:
    std::uint64_t granule() const override { return data_granule(declaration()); }
    bool guards_index() const override { return true; }  // declared kernels guard with `end`
    LocalSize required_local() const override { return common_required_local(declaration()); }
    /// Slices start on the granule; a halo deeper than a slice is refused here, before any send.
    void partition(std::vector<Assignment>& assignments) override;

    std::vector<std::span<const std::byte>> input_parts(const Assignment& a) const override;
    Bytes slice_input(const Assignment& a) const override;
    /// With one split output and no reduction, the output lands in place.
    std::span<std::byte> output_target(const Assignment& a) override;
    void accept_output(const Assignment& a, std::span<const std::byte> out) override;
    /// Combines each reduction's slices in slice order (reduced()) and stores the result, in the
    /// buffer's type, into host_output(). A job that overrides finish() calls this first.
    void finish() override;
    /// Rank-local inputs: a job whose inputs are a function of their position (fill_input())
    /// makes any slice's input on the rank that runs it, in input_parts()'s layout.
    bool makes_slice_inputs() const override { return fills_inputs(); }
    void make_slice_input(const Assignment& a, Bytes& in) const override;

protected:
    /// The declaration of the whole problem, as rank 0 sees it (buffers and accesses; build
    /// options and launch details may differ per slice on the workers).
    virtual const DataJobSpec& declaration() const = 0;
    /// Rank 0's initial contents of input buffer `b`: units × row bytes (split) or count × element
    /// size (shared). Kept valid and unchanged until the run ends.
    virtual std::span<const std::byte> host_input(int b) const = 0;
    /// Where output buffer `b` (split) or the result of a reduction into `b` (shared) goes.
    virtual std::span<std::byte> host_output(int b) = 0;
    /// Whether fill_input() makes the inputs (default false: they exist only on rank 0).
    virtual bool fills_inputs() const { return false; }
    /// Input buffer `b`'s bytes from byte `first` on, exactly as generate() makes them, into
    /// `out` (any rank, without generate()). Default: throws InvalidArgument.
    virtual void fill_input(int b, std::uint64_t first, std::span<std::byte> out) const;
    /// The combined result of the r-th reduction argument of the declaration (kernel order,
    /// argument order), in double, after finish().
    const std::vector<double>& reduced(std::size_t r) const { return reduced_.at(r); }
    /// The number of slices accepted since the last finish() (coverage checks do their own).
    std::size_t slices_accepted() const { return partials_.size(); }

private:
    std::map<std::uint64_t, std::vector<std::vector<double>>> partials_;  ///< by slice offset
    std::vector<std::vector<double>> reduced_;
};


/// Worker side: run slice `s` of `spec` on `ctx`, its input as DeclaredJob::input_parts sends
/// it, its kernels `s.iterations` times in order, the output as DeclaredJob::accept_output takes
/// it. Buffers larger than the device's largest allocation are refused by name.
/// Each shared buffer has kSharedTail bytes after its elements, every byte `tail`: a kernel that
/// reads past a shared buffer's end (a count one short) reads them. The distributed runs use
/// kRunTail and job files' single-device reference kReferenceTail, so that such a read makes
/// the two differ (float 3.4e38 against NaN, int 2139062143 against -1), every time, instead of
/// reading whatever memory followed the buffer (it verified in 1 run of 6).
/// @throws Error (ClError, BuildError, InvalidArgument) naming the job, kernel and device.
inline constexpr std::uint64_t kSharedTail = 256;
inline constexpr std::byte kRunTail{0x7f}, kReferenceTail{0xff};
SliceTimes execute_declared(const DataJobSpec& spec, DeviceContext& ctx, const SliceSpec& s,
                            std::span<const std::byte> in, Bytes& out, std::byte tail = kRunTail);

/// What one call of a library routine enqueued: its last command, and (when it says so) its
/// kernels, whose device times are then its time.
struct LibraryRun {
    cl::Event last;
    std::vector<cl::Event> kernels;
};

/// A library routine that a declared slice calls in place of an OpenCL kernel
/// (KernelDecl::library), on the slice's device, queue and buffers: what the slice's launch
/// instruction does for such a "kernel" (matmul's CLBlast SGEMM, sort's radix and bitonic
/// sorts). Its arguments are the declaration's: each buffer argument's buffer (`buffers`, in
/// argument order) and each value argument (`values`, in argument order).
struct LibraryCall {
    /// Once per slice, before its first call and outside the timing (a library that compiles its
    /// programs on first use, scratch buffers): the state its calls get. `where` names the slice.
    std::function<std::shared_ptr<void>(DeviceContext& ctx, const std::vector<double>& values, const std::string& where)>
        prepare;
    /// Enqueues one call on ctx.queue() (in order after the slice's uploads). The slice's kernel
    /// time is the sum of the returned kernels' device times, or without them the span from a
    /// marker enqueued just before the call to the end of `last` (where the device's profiling
    /// times allow; else `last`'s own). @throws Error naming the failure and `where`.
    std::function<LibraryRun(DeviceContext& ctx, const std::vector<cl::Buffer>& buffers, const std::vector<double>& values,
                             void* state, const std::string& where)>
        call;
};
/// Registers (or replaces) library routine `name`. @throws InvalidArgument without a name or call.
void register_library_call(const std::string& name, LibraryCall call);
/// The routine registered as `name`. @throws InvalidArgument for an unknown one.
const LibraryCall& library_call(const std::string& name);

}  // namespace worksize
