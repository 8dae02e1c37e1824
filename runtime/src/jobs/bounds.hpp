// Out-of-bounds writes found where it is cheap (--check-bounds, WORKSIZE_CHECK_BOUNDS=1): each
// device buffer of a data or declared job is a view (a sub-buffer) inside a larger allocation
// whose bytes before and after the view hold a pattern. A split buffer's zone after the view is as
// large as the rest of the whole array, so a kernel that indexes whole arrays but was declared
// for slices (the usual mistake when porting an application's kernel) writes into it instead of
// into memory it does not own. After each launch the zones of the buffers the kernel writes are
// read back and compared: a change names the kernel, the buffer and the device.
#pragma once

#include <cstdint>
#include <string>

#include <vector>

#include "worksize/runtime/opencl.hpp"
#include "worksize/scheduler/data_spec.hpp"

namespace worksize::bounds {

/// Whether this process checks bounds: WORKSIZE_CHECK_BOUNDS=1 in its environment (mpiexec
/// passes it to every rank), or set_enabled(true) (cluster_main's --check-bounds on rank 0; data
/// jobs send it to their workers in the job's command).
bool enabled();
void set_enabled(bool on);

/// A device buffer inside a guarded allocation.
struct Guarded {
    cl::Buffer parent, view;
    std::uint64_t before = 0, bytes = 0, after = 0;
    /// A shared buffer's tail (declared_job.hpp, kSharedTail): the first `tail` bytes of the zone
    /// after the view hold `tail_byte` instead of the pattern (a read past the end finds them).
    std::uint64_t tail = 0;
    std::byte tail_byte{0};
};

/// `bytes` bytes for the kernels (`view`), `after` guard bytes after them and a device-aligned
/// zone before them, the zones filled with the pattern (enqueued on `ctx`'s queue).
Guarded make(DeviceContext& ctx, std::uint64_t bytes, std::uint64_t after);

/// "" if `g`'s zones hold the pattern; else where they changed, e.g. "at 4096 bytes past its end
/// (row 17 of 64-byte rows)". Blocks on `q`. `row_bytes`: 0 for a buffer without rows.
std::string check(cl::CommandQueue& q, const Guarded& g, std::uint64_t row_bytes);

/// make() for buffer `b` of `spec` taking `bytes` on the device: after the view, as much as the
/// rest of the whole array (a kernel indexing whole arrays writes there) and a page; a shared
/// buffer's zone after it starts with its tail of kSharedTail bytes `tail_byte`.
Guarded make_for(DeviceContext& ctx, const DataJobSpec& spec, int b, std::uint64_t bytes, std::byte tail_byte);

/// After kernel `kd`'s launch on `q`: the guard zones of the buffers it writes (`guards` per
/// buffer). @throws Error "kernel 'k'<on> wrote outside buffer 'b', <where> (--check-bounds)",
/// plus `hint` for a split buffer not held whole.
void check_writes(cl::CommandQueue& q, const DataJobSpec& spec, const KernelDecl& kd,
                  const std::vector<Guarded>& guards, const std::string& on, const std::string& hint);

}  // namespace worksize::bounds
