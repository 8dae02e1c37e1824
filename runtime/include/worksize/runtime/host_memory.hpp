// The host's memory limits (issue 28 item 3): what a job needs of this process's memory is checked
// against `ulimit -v` (RLIMIT_AS) and `ulimit -d` (RLIMIT_DATA) before it is allocated, so that a
// limit gives one line naming it and what needed the memory, not a PoCL assertion, a hang in a
// kernel build or a bare std::bad_alloc. PoCL's CPU device keeps its device buffers in host
// memory: they count too (docs/cluster.md, "Host memory limits").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "worksize/scheduler/types.hpp"

namespace worksize {

class KernelJob;

/// One of this process's memory limits that is set, and what the process maps now as that limit
/// counts it (RLIMIT_AS: the whole address space, VmSize; RLIMIT_DATA: private writable memory,
/// VmData).
struct HostMemoryLimit {
    std::string name;         ///< "the address-space limit (ulimit -v 3000000)"
    std::uint64_t limit = 0;  ///< bytes
    std::uint64_t used = 0;   ///< bytes counted against it now
    std::uint64_t left() const { return limit > used ? limit - used : 0; }
};

/// The set limit with the least room left; nullopt when neither is set (the usual case).
std::optional<HostMemoryLimit> host_memory_limit();

/// Address space OpenCL needs to start (PoCL 3 on the 2-core test machine: its threads and the
/// first kernel build; below it PoCL asserts, reports no platform or CL_OUT_OF_HOST_MEMORY).
inline constexpr std::uint64_t kOpenClStartBytes = std::uint64_t(320) << 20;
/// Address space OpenCL needs beside a job's buffers once started: building the job's kernels on
/// a cold PoCL cache (matmul took 140-160 MiB; with less PoCL asserted in
/// pocl_create_migration_commands or hung in the build).
inline constexpr std::uint64_t kOpenClReserveBytes = std::uint64_t(192) << 20;

/// @throws Error (device_limit) when a set limit leaves less than `bytes` + `reserve`: one line
/// naming `what` (e.g. "matmul of size 20000x20000 on rank 0"), the bytes and the limit.
void check_host_memory(std::uint64_t bytes, const std::string& what, std::uint64_t reserve = kOpenClReserveBytes);

/// "" without a limit; else " (the address-space limit (ulimit -v N) leaves this process M: it
/// may be the reason)", for failures that a limit may cause (no OpenCL platform, bad_alloc).
std::string host_limit_hint();

/// Throws, before OpenCL starts, when a set limit leaves less than kOpenClStartBytes.
void check_host_memory_for_opencl();

/// What running `job` as `plan` allocates on this rank (rank `rank` of the devices' ranks): the
/// job's own inputs and outputs on rank 0, and for each of this rank's slices the input and
/// output staging and, on a CPU device (its device buffers are host memory), the device buffers.
/// Checked with check_host_memory(): call it before the job generates its inputs.
void check_job_memory(const KernelJob& job, const std::vector<Assignment>& plan,
                      const std::vector<DeviceInfo>& devices, int rank = 0);

/// What one slice of `units` of `desc` needs on its rank beside the received input: its output
/// staging and, on a CPU device, its device buffers.
std::uint64_t slice_host_bytes(const KernelDescriptor& desc, const GlobalSize& problem, std::uint64_t units,
                               bool cpu);

}  // namespace worksize
