// matmul's CLBlast backend (`--backend clblast`): a slice's rows of C computed by CLBlast's
// SGEMM on the device's own queue and buffers. Built with CLBlast when WORKSIZE_CLBLAST found it
// (WORKSIZE_HAVE_CLBLAST); otherwise the backend is refused with "built without CLBlast".
#pragma once

#include <cstdint>
#include <span>

#include "worksize/runtime/kernel_job.hpp"
#include "worksize/runtime/opencl.hpp"

namespace worksize::detail {

/// Whether this build links CLBlast.
bool clblast_available();

/// The one-line refusal of a build without CLBlast (InvalidArgument's text).
const char* clblast_missing_text();

/// One matmul slice with CLBlast: `in` is the slice's rows of A (rows x k) then B (k x n), `out`
/// gets its rows of C (rows x n), all row-major FP32, computed `iterations` times by
/// clblast::Gemm<float> on ctx's queue. Outside the timing, CLBlast's program is built (its first
/// call on a device compiles it: a 1x1x1 SGEMM does that once per device, after applying the
/// parameters of WORKSIZE_CLBLAST_PARAMS for the device, docs/user-guide.md) and its temporary
/// buffer allocated. SliceTimes::kernel is the device time of all iterations: per iteration from
/// a marker enqueued just before CLBlast's commands to the end of the event CLBlast returns (its
/// last kernel), so that its padding or transposing kernels count too; where the platform gives
/// markers no profiling times, or times that do not fit (the span shorter than CLBlast's event
/// or longer than the host's wall time of the calls), CLBlast's events alone. The caller has
/// checked the sizes.
/// @throws ClError (a status OpenCL shares), Error naming CLBlast's own status, InvalidArgument
/// without CLBlast.
SliceTimes execute_matmul_clblast(DeviceContext& ctx, std::uint64_t rows, std::uint64_t n, std::uint64_t k,
                                  std::uint64_t iterations, std::span<const std::byte> in, Bytes& out);

}  // namespace worksize::detail
