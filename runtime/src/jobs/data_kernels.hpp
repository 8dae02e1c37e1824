// The device side of a data-job declaration, shared by the multi-step runtime (data_job.cpp) and
// the one-step jobs of job files (job_file_job.cpp): a kernel's launch geometry over a slice, its
// arguments bound from the declaration, reduction records filled and combined.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "worksize/runtime/opencl.hpp"
#include "worksize/scheduler/data_spec.hpp"

namespace worksize::data {

/// How kernel `k` launches over the slice [offset, offset + units): its items along the split
/// dimension (global ids begin..end, with the global offset), padded to whole work-groups. The
/// local size is the kernel's required one, else `plan_local` for kernels of one unit per item
/// or with a per-group reduction (launch_local()), else, for a 1-D kernel of several units per
/// item, chunk_local() of its items under `plan_local`, else NULL.
struct Geometry {
    std::uint64_t begin = 0, end = 0;
    std::uint64_t padded = 0;  ///< launched items along the split, padded to whole groups
    std::uint64_t first_unit = 0, end_unit = 0;  ///< the units the launch covers (expr's begin and end)
    /// A slice_relative launch: the held units it covers, halos included (expr's begin and end;
    /// begin is negative for the first slice, whose buffers hold a halo before the problem).
    bool relative = false;
    std::int64_t held_begin = 0, held_end = 0;
    /// A slice_relative launch: its own units' items [own_first, own_first + own_items) (the
    /// records a reduce() combines).
    std::uint64_t own_first = 0, own_items = 0;
    cl::NDRange offset, global, local;
};
/// A kernel of whole arrays (KernelDecl::whole_arrays) guards only the problem's end, so a launch
/// that ends before it must not be padded past its rows: `local` with its split extent (y in 2-D,
/// x in 1-D) cut to the largest power of two dividing `items` where it does not divide them
/// already; unchanged for a launch `at_end`.
LocalSize exact_local(LocalSize local, int dims, std::uint64_t items, bool at_end);
/// `extend`: ghost-zone rows on each side (within the problem) the launch covers too.
Geometry geometry(const DataJobSpec& spec, const KernelDecl& k, std::uint64_t offset, std::uint64_t units,
                  LocalSize plan_local, std::uint64_t extend = 0);

/// The work-group of a kernel of several units per item that requires none: such a kernel is
/// never padded, so its group must divide its `items`. The largest power of two that divides
/// them, up to bit_floor(plan_local.x), when it is at least 16 (or that cap); else NULL (the
/// driver's choice). round_chunk_boundaries() gives the slices item counts that admit one.
LocalSize chunk_local(std::uint64_t items, LocalSize plan_local);

/// Whether kernel `k` has a reduce argument with one record per work-group.
bool reduces_per_group(const KernelDecl& k);
/// The plan's local size for geometry(): `plan_local`, except for a kernel reducing per
/// work-group that requires no shape and gets NULL: {w, 1}, w the largest power of two up to 256
/// within the compiled `kernel`'s and the `device`'s limits; and for a kernel of several units
/// per item: `plan_local` capped at w (chunk_local()'s cap).
LocalSize launch_local(const KernelDecl& k, LocalSize plan_local, const cl::Kernel& kernel,
                       const cl::Device& device);
/// Records a reduce argument `a` of a launch `g` writes: one per launched item, or per group.
std::uint64_t record_count(const ArgDecl& a, const Geometry& g);
/// Tree-combines `records` records of `d` (per-group records) on the device, fan-in a power of two
/// up to 256, until at most `most` remain; the same tree shape as a work-group's reduce
/// of its items. Updates `buf` and `records`; adds the launches' seconds to `seconds`. `first`: the
/// records start at record `first` of `buf` (a slice_relative launch's own rows: Geometry::own_first).
/// What combine_on_device() keeps from call to call of one reduction on one device: its kernel
/// and each pass's buffer (allocated once, not in every step); `timed`: wait for each pass's
/// event and add its time to `seconds` (else nothing waits: the caller's read does).
struct CombineCache {
    cl::Kernel kernel;
    std::uint64_t width = 0;
    std::vector<cl::Buffer> passes;
    std::vector<std::uint64_t> sizes;
    bool timed = true;
};
void combine_on_device(DeviceContext& ctx, cl::Buffer& buf, std::uint64_t& records, const BufferDecl& d,
                       ReduceOp op, double& seconds, std::uint64_t most = kMaxGroupRecords,
                       std::uint64_t first = 0, CombineCache* cache = nullptr);

/// The options a job's program is built with: the job's own and -cl-kernel-arg-info, without
/// which PoCL gives make_kernel no argument info to check.
std::string program_options(const std::string& build_options);

/// A kernel whose source requires a work-group size (reqd_work_group_size) must launch with
/// it; `g` is its launch over the slice. Checked when the kernel is made: the launch failed with
/// a bare CL_INVALID_WORK_GROUP_SIZE (exit 1). @throws InvalidArgument naming the size to declare.
void check_required_local(const KernelDecl& k, const Geometry& g, const cl::Kernel& kernel, const cl::Device& device);

/// The kernel `k` of `program`. @throws InvalidArgument naming it when the source lacks it (with
/// the kernels it has), when its parameter count differs from the declaration's, or when a
/// buffer is declared for a parameter that is no pointer or a value for one that is (where the
/// program has argument info: program_options()).
cl::Kernel make_kernel(const cl::Program& program, const KernelDecl& k);

/// A shared buffer's first element on this rank (value_of arguments): its type and bytes.
struct HostValue {
    ElemType type = ElemType::f32;
    std::vector<std::byte> bytes;
};
/// Per declared buffer (empty for those no value_of argument reads).
using Values = std::vector<HostValue>;

/// Set every argument of kernel `k` for a slice starting at `offset`: `bufs` per declared buffer,
/// `records(i)` the record buffer of reduce argument i, `halo` per buffer (halo_rows()).
/// With `bound` (one entry per argument, kept from launch to launch of this kernel object), an
/// argument whose buffer or value is what was set last time is not set again: a step of a
/// multi-step job then sets only what its swaps changed. `origins` (one per buffer): the unit
/// held in row 0 of each buffer where it is not offset - halo (buffers of their own units, buffers
/// held whole: first_held_unit()). `scope`: the step's number, the steps and the job's units, for
/// step and expression arguments (begin and end come from `g`). `values`: the value_of arguments'
/// values on this rank (the last contents of their shared buffers).
void bind_args(cl::Kernel& kernel, const KernelDecl& k, const std::vector<cl::Buffer>& bufs,
               const std::function<const cl::Buffer&(std::size_t)>& records, const Geometry& g,
               std::uint64_t offset, const std::vector<std::uint64_t>& halo,
               std::vector<std::int64_t>* bound = nullptr, const std::vector<std::int64_t>* origins = nullptr,
               ExprScope scope = {}, const Values* values = nullptr);

/// The start of a fresh device buffer of `d` (not an input), `bytes` long: zeros, or nothing where
/// the kernels write it whole (BufferDecl::no_init). With WORKSIZE_POISON_NO_INIT=1 in the
/// environment (the opencl tests) a no_init buffer is filled with 0xFF bytes instead (NaN floats,
/// -1 integers), so that an element the kernels leave unwritten fails the results' check.
void initial_fill(cl::CommandQueue& q, const cl::Buffer& buffer, const BufferDecl& d, std::uint64_t bytes);
/// A shared buffer's tail (declared_job.hpp, kSharedTail): `bytes` bytes of `pattern` at byte
/// `at`, written from static memory (a fill at an offset past 4 GiB failed on NVIDIA's driver
/// with CL_OUT_OF_RESOURCES, pathfinder's 7.2 GB wall).
/// The tail (kSharedTail bytes) a buffer of `d` holding `data_bytes` gets: a shared one's, where
/// the device's largest allocation (`max_alloc`, 0: unknown) takes it (a diagnosis, not data).
std::uint64_t tail_bytes(const BufferDecl& d, std::uint64_t data_bytes, std::uint64_t max_alloc);
void write_tail(cl::CommandQueue& q, const cl::Buffer& buffer, std::uint64_t at, std::uint64_t bytes, std::byte pattern);

/// Fill `records` launched items' records of `d` with the identity of `op`.
void fill_identity(cl::CommandQueue& q, const cl::Buffer& records, const BufferDecl& d, ReduceOp op,
                   std::uint64_t items);
/// total[j] = total[j] op record[r][j] for every record r in order, from memory `p` holding
/// `records` records of total.size() elements of type `t`.
void combine_records(ReduceOp op, ElemType t, const std::byte* p, std::uint64_t records, std::vector<double>& total);
double combine(ReduceOp op, double a, double b);
double identity(ReduceOp op);
/// Element i of memory `p` of type `t` set to `v` (converted), and read back as a double.
void store(std::byte* p, ElemType t, std::size_t i, double v);
double load(const std::byte* p, ElemType t, std::size_t i);

}  // namespace worksize::data
