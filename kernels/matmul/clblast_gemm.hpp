// matmul's CLBlast backend (`--backend clblast`): a slice's rows of C computed by CLBlast's
// SGEMM on the device's own queue and buffers, a library routine in the slice's instruction
// list. Built with CLBlast when WORKSIZE_CLBLAST found it (WORKSIZE_HAVE_CLBLAST); otherwise the
// backend is refused with "built without CLBlast".
#pragma once

#include <cstdint>
#include <span>

#include "worksize/runtime/declared_job.hpp"
#include "worksize/runtime/opencl.hpp"

namespace worksize::detail {

/// Whether this build links CLBlast.
bool clblast_available();

/// The one-line refusal of a build without CLBlast (InvalidArgument's text).
const char* clblast_missing_text();

/// matmul's CLBlast backend as a library routine for a declared slice (register_library_call,
/// KernelDecl::library): values m, n, k and buffers A (m x k), B (k x n), C (m x n), row-major
/// FP32, C = A·B by clblast::Gemm<float> on the slice's queue. Its prepare(), outside the timing,
/// builds CLBlast's program (its first call on a device compiles it: a 1x1x1 SGEMM does that once
/// per device, after applying the parameters of WORKSIZE_CLBLAST_PARAMS for the device,
/// docs/user-guide.md) and allocates its temporary buffer. Each call returns the event of
/// CLBlast's last kernel; the slice times it from a marker enqueued just before, so that its
/// padding or transposing kernels count too. Failures: ClError (a status OpenCL shares), Error
/// naming CLBlast's own status, InvalidArgument without CLBlast.
LibraryCall clblast_sgemm_call();
inline constexpr const char* kClblastSgemm = "clblast_sgemm";

}  // namespace worksize::detail
