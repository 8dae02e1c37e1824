// The one place worksize includes OpenCL: Khronos' C++ bindings with exceptions, pinned
// versions, the error types with symbolic names, and a per-device context with a program cache.
#pragma once

#define CL_HPP_ENABLE_EXCEPTIONS
#ifndef CL_HPP_TARGET_OPENCL_VERSION
#define CL_HPP_TARGET_OPENCL_VERSION 300
#endif
// 110, not 120: Debian 12's opencl.hpp defines getContextPlatformVersion() only below 120 but
// uses it below 200. Run-time checks then pick the 2.0 calls where the platform has them.
#define CL_HPP_MINIMUM_OPENCL_VERSION 110
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
#include <CL/opencl.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "worksize/runtime/bytes.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize {

/// Symbolic name of an OpenCL error code ("CL_OUT_OF_RESOURCES"), or "CL_ERROR(<n>)".
const char* cl_error_name(cl_int code);

/// The reason of an OpenCL error code: build_failure (the program did not build), device_limit
/// (CL_INVALID_WORK_GROUP_SIZE, CL_INVALID_WORK_ITEM_SIZE, CL_OUT_OF_RESOURCES, allocation
/// failures), launch_failure (anything else).
ErrorReason cl_error_reason(cl_int code);

/// An OpenCL call failed: what() reads "clEnqueueNDRangeKernel failed (CL_INVALID_WORK_GROUP_SIZE)
/// for <context>"; reason() is cl_error_reason(code).
class ClError : public Error {
public:
    ClError(const std::string& call, cl_int code, const std::string& context);
    cl_int code() const { return code_; }

private:
    cl_int code_;
};

/// A kernel failed to compile; what() has the first lines of the log, log() all of it; reason()
/// is build_failure.
class BuildError : public Error {
public:
    BuildError(const std::string& what, std::string log);
    const std::string& log() const { return log_; }

private:
    std::string log_;
};

/// Convert a cl::Error (thrown by the C++ bindings) into a ClError naming the call and context.
[[noreturn]] void rethrow_cl(const cl::Error& e, const std::string& context);

/// Waits for everything enqueued on `q`, ignoring its errors: an executor that fails calls it
/// before it returns, so that no copy it enqueued still reads or writes host memory that its
/// caller then frees (ASan caught PoCL copying a freed slice input after a launch failed).
void finish_quietly(cl::CommandQueue& q) noexcept;

/// Seconds between an event's CL_PROFILING_COMMAND_START and _END.
double event_seconds(const cl::Event& ev);

/// Set `kernel`'s arguments 0, 1, 2, ... to `args` in order (cl::Kernel::setArg for each; a
/// cl::Local is a __local buffer of that size).
template <class... Args>
void set_args(cl::Kernel& kernel, const Args&... args) {
    cl_uint index = 0;
    (static_cast<void>(kernel.setArg(index++, args)), ...);
}

/// Pinned (page-locked) host memory of one device's context, for the runtime's payload buffers:
/// an allocation of at least threshold() bytes is a cl::Buffer made with CL_MEM_ALLOC_HOST_PTR
/// and mapped once (for reading and writing) on the resource's own queue; its mapped pointer is
/// what the Bytes holds. OpenCL copies between that memory and the device's buffers
/// (enqueueWriteBuffer / enqueueReadBuffer with the pointer as host memory) then run as DMA at
/// the link's full speed, where pageable memory is staged by the driver (NVIDIA: 6-10 instead
/// of ~50 GB/s on an H200). Smaller allocations, and any allocation the device refuses (size
/// above CL_DEVICE_MAX_MEM_ALLOC_SIZE, out of pinned memory, a failed map), get ordinary memory;
/// deallocate() tells them apart. Disabled (ordinary memory only) when constructed so, which
/// DeviceContext does when the environment has WORKSIZE_PINNED=0. Thread-safe.
///
/// The resource holds its cl::Context and queue, so buffers that outlive the DeviceContext stay
/// valid; whatever is still allocated when the resource goes is unmapped and released then.
class PinnedHostMemory final : public HostMemoryResource {
public:
    static constexpr std::size_t kDefaultThreshold = std::size_t(256) << 10;  // 256 KiB

    /// Never throws for OpenCL reasons: without a queue for its maps it is disabled.
    PinnedHostMemory(const cl::Context& context, const cl::Device& device, bool enabled = true,
                     std::size_t threshold = kDefaultThreshold);
    ~PinnedHostMemory() override;
    PinnedHostMemory(const PinnedHostMemory&) = delete;
    PinnedHostMemory& operator=(const PinnedHostMemory&) = delete;

    void* allocate(std::size_t bytes, std::size_t alignment) override;
    void deallocate(void* p, std::size_t bytes, std::size_t alignment) noexcept override;

    bool enabled() const { return enabled_; }
    std::size_t threshold() const { return threshold_; }
    /// Whether `p` is the start of a live pinned allocation (false for the ordinary ones).
    bool is_pinned(const void* p) const;
    /// Whether bytes [p, p + n) lie in one live pinned allocation.
    bool holds(const void* p, std::size_t n) const;
    /// Live pinned allocations and their bytes; allocations that fell back to ordinary memory
    /// because the device refused them (since construction).
    std::size_t pinned_count() const;
    std::size_t pinned_bytes() const;
    std::size_t fallbacks() const;
    /// Bytes of freed allocations kept pinned for the next allocation of their size (the staging
    /// halves and slots every run makes): pinning and unpinning cost milliseconds each, and a
    /// driver may serialise them across its devices. At most spare_limit() bytes, in blocks of
    /// at most 32 MiB; WORKSIZE_PINNED_SPARE_BYTES=N sets the limit (0: every block released).
    std::size_t spare_bytes() const;
    std::size_t spare_limit() const { return spare_limit_; }
    static constexpr std::size_t kDefaultSpareLimit = std::size_t(64) << 20;
    static constexpr std::size_t kMaxSpareBlock = std::size_t(32) << 20;

    /// False when the environment has WORKSIZE_PINNED=0 (or "off", "no", "false").
    static bool enabled_by_environment();

private:
    struct Block {
        cl::Buffer buffer;
        std::size_t bytes;
    };
    void release(void* p, Block& b) noexcept;

    cl::Context context_;
    cl::CommandQueue queue_;  // maps and unmaps only; never the device queue
    bool enabled_;
    std::size_t threshold_;
    mutable std::mutex mutex_;
    void* reuse_spare(std::size_t bytes, std::size_t alignment);
    bool keep_spare(void* p, Block& b);

    std::unordered_map<void*, Block> blocks_;
    std::vector<std::pair<void*, Block>> spare_;  ///< freed, still mapped (reuse_spare, keep_spare)
    std::size_t pinned_bytes_ = 0;
    std::size_t fallbacks_ = 0;
    std::size_t spare_bytes_ = 0;
    std::size_t spare_limit_ = kDefaultSpareLimit;
};

/// A device with its own context, an in-order profiling queue and a program cache keyed by
/// (kernel file, build options), like CLBlast's ProgramCache. Not copyable; thread-compatible
/// (one thread per DeviceContext), except program() which is guarded.
class DeviceContext {
public:
    DeviceContext(cl::Device device, DeviceInfo info);
    DeviceContext(const DeviceContext&) = delete;
    DeviceContext& operator=(const DeviceContext&) = delete;

    const cl::Device& device() const { return device_; }
    const cl::Context& context() const { return context_; }
    cl::CommandQueue& queue() { return queue_; }
    /// A second in-order profiling queue (the engine's halo rows beside the launches), made at
    /// the first call and kept: making one took a run's first step a few milliseconds.
    cl::CommandQueue& copy_queue();
    const DeviceInfo& info() const { return info_; }
    /// The device's pinned host memory: a Bytes made with bytes_with(ctx.host_memory()) copies
    /// to and from this device at DMA speed (the runtime's payload buffers are such Bytes).
    const std::shared_ptr<PinnedHostMemory>& host_memory() const { return host_memory_; }
    /// Pinned host memory for small buffers reused many times (the engine's halo staging slots):
    /// host_memory() leaves allocations under its threshold (256 KiB) in ordinary memory, and
    /// a copy between ordinary memory and an NVIDIA device goes through the driver's own
    /// staging. Made at the first call and kept; ordinary memory with WORKSIZE_PINNED=0.
    const std::shared_ptr<PinnedHostMemory>& staging_memory();
    /// The rank's pinned memory for the job's own arrays (Cluster::host_vector): made in one
    /// context over the rank's devices of this device's platform, so that NVIDIA's driver pins
    /// it for each of them (memory pinned by one device's own context is pageable to another's:
    /// docs/results/pinned-h200-x2/); this device's host_memory() until set_rank_memory().
    const std::shared_ptr<PinnedHostMemory>& rank_memory() const { return rank_memory_ ? rank_memory_ : host_memory_; }
    void set_rank_memory(std::shared_ptr<PinnedHostMemory> memory) { rank_memory_ = std::move(memory); }

    /// Build (or fetch from the cache) the embedded kernel file `file` ("matmul" for
    /// kernels/matmul/matmul.cl) with `options` (e.g. "-DTILE=16"). Also accepts a full source via
    /// program_from_source for user kernels.
    /// @throws BuildError with the build log, InvalidArgument for an unknown file.
    cl::Program program(std::string_view file, const std::string& options = "");
    cl::Program program_from_source(const std::string& source, const std::string& options = "");

private:
    cl::Device device_;
    cl::Context context_;
    cl::CommandQueue queue_, copy_queue_;
    DeviceInfo info_;
    std::shared_ptr<PinnedHostMemory> host_memory_, staging_memory_, rank_memory_;
    std::mutex mutex_;
    std::map<std::pair<std::size_t, std::string>, cl::Program> cache_;
};

}  // namespace worksize
