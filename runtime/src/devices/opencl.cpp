// OpenCL error naming, the error types, and DeviceContext with its program cache.
#include "worksize/runtime/opencl.hpp"

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>

#include "worksize/embedded_kernels.hpp"
#include "worksize/scheduler/log.hpp"

namespace worksize {

const char* cl_error_name(cl_int code) {
    switch (code) {
#define WS_CASE(x) \
    case x:        \
        return #x;
        WS_CASE(CL_SUCCESS)
        WS_CASE(CL_DEVICE_NOT_FOUND)
        WS_CASE(CL_DEVICE_NOT_AVAILABLE)
        WS_CASE(CL_COMPILER_NOT_AVAILABLE)
        WS_CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE)
        WS_CASE(CL_OUT_OF_RESOURCES)
        WS_CASE(CL_OUT_OF_HOST_MEMORY)
        WS_CASE(CL_PROFILING_INFO_NOT_AVAILABLE)
        WS_CASE(CL_MEM_COPY_OVERLAP)
        WS_CASE(CL_IMAGE_FORMAT_MISMATCH)
        WS_CASE(CL_IMAGE_FORMAT_NOT_SUPPORTED)
        WS_CASE(CL_BUILD_PROGRAM_FAILURE)
        WS_CASE(CL_MAP_FAILURE)
        WS_CASE(CL_MISALIGNED_SUB_BUFFER_OFFSET)
        WS_CASE(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        WS_CASE(CL_COMPILE_PROGRAM_FAILURE)
        WS_CASE(CL_LINKER_NOT_AVAILABLE)
        WS_CASE(CL_LINK_PROGRAM_FAILURE)
        WS_CASE(CL_DEVICE_PARTITION_FAILED)
        WS_CASE(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
        WS_CASE(CL_INVALID_VALUE)
        WS_CASE(CL_INVALID_DEVICE_TYPE)
        WS_CASE(CL_INVALID_PLATFORM)
        WS_CASE(CL_INVALID_DEVICE)
        WS_CASE(CL_INVALID_CONTEXT)
        WS_CASE(CL_INVALID_QUEUE_PROPERTIES)
        WS_CASE(CL_INVALID_COMMAND_QUEUE)
        WS_CASE(CL_INVALID_HOST_PTR)
        WS_CASE(CL_INVALID_MEM_OBJECT)
        WS_CASE(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
        WS_CASE(CL_INVALID_IMAGE_SIZE)
        WS_CASE(CL_INVALID_SAMPLER)
        WS_CASE(CL_INVALID_BINARY)
        WS_CASE(CL_INVALID_BUILD_OPTIONS)
        WS_CASE(CL_INVALID_PROGRAM)
        WS_CASE(CL_INVALID_PROGRAM_EXECUTABLE)
        WS_CASE(CL_INVALID_KERNEL_NAME)
        WS_CASE(CL_INVALID_KERNEL_DEFINITION)
        WS_CASE(CL_INVALID_KERNEL)
        WS_CASE(CL_INVALID_ARG_INDEX)
        WS_CASE(CL_INVALID_ARG_VALUE)
        WS_CASE(CL_INVALID_ARG_SIZE)
        WS_CASE(CL_INVALID_KERNEL_ARGS)
        WS_CASE(CL_INVALID_WORK_DIMENSION)
        WS_CASE(CL_INVALID_WORK_GROUP_SIZE)
        WS_CASE(CL_INVALID_WORK_ITEM_SIZE)
        WS_CASE(CL_INVALID_GLOBAL_OFFSET)
        WS_CASE(CL_INVALID_EVENT_WAIT_LIST)
        WS_CASE(CL_INVALID_EVENT)
        WS_CASE(CL_INVALID_OPERATION)
        WS_CASE(CL_INVALID_GL_OBJECT)
        WS_CASE(CL_INVALID_BUFFER_SIZE)
        WS_CASE(CL_INVALID_MIP_LEVEL)
        WS_CASE(CL_INVALID_GLOBAL_WORK_SIZE)
        WS_CASE(CL_INVALID_PROPERTY)
        WS_CASE(CL_INVALID_IMAGE_DESCRIPTOR)
        WS_CASE(CL_INVALID_COMPILER_OPTIONS)
        WS_CASE(CL_INVALID_LINKER_OPTIONS)
        WS_CASE(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef WS_CASE
        case -1001:
            return "CL_PLATFORM_NOT_FOUND_KHR";
        default:
            return nullptr;
    }
}

namespace {
std::string code_text(cl_int code) {
    const char* n = cl_error_name(code);
    return n ? std::string(n) : "CL_ERROR(" + std::to_string(code) + ")";
}
}  // namespace

ErrorReason cl_error_reason(cl_int code) {
    switch (code) {
        case CL_BUILD_PROGRAM_FAILURE:
        case CL_COMPILE_PROGRAM_FAILURE:
        case CL_LINK_PROGRAM_FAILURE:
        case CL_INVALID_PROGRAM_EXECUTABLE:
        case CL_INVALID_BUILD_OPTIONS:
            return ErrorReason::build_failure;
        case CL_INVALID_WORK_GROUP_SIZE:
        case CL_INVALID_WORK_ITEM_SIZE:
        case CL_OUT_OF_RESOURCES:
        case CL_MEM_OBJECT_ALLOCATION_FAILURE:
        case CL_INVALID_BUFFER_SIZE:
        case CL_OUT_OF_HOST_MEMORY:
            return ErrorReason::device_limit;
        default:
            return ErrorReason::launch_failure;
    }
}

ClError::ClError(const std::string& call, cl_int code, const std::string& context)
    : Error(cl_error_reason(code), call + " failed (" + code_text(code) + ")" + (context.empty() ? "" : " for " + context)),
      code_(code) {}

BuildError::BuildError(const std::string& what, std::string log)
    : Error(ErrorReason::build_failure, what), log_(std::move(log)) {}

void rethrow_cl(const cl::Error& e, const std::string& context) {
    throw ClError(e.what() ? e.what() : "OpenCL call", e.err(), context);
}

void finish_quietly(cl::CommandQueue& q) noexcept {
    try {
        q.finish();
    } catch (...) {
        // the failure being reported is the caller's; this one only waited
    }
}

double event_seconds(const cl::Event& ev) {
    const auto start = ev.getProfilingInfo<CL_PROFILING_COMMAND_START>();
    const auto end = ev.getProfilingInfo<CL_PROFILING_COMMAND_END>();
    return end > start ? double(end - start) * 1e-9 : 0.0;
}

PinnedHostMemory::PinnedHostMemory(const cl::Context& context, const cl::Device& device,
                                   bool enabled, std::size_t threshold)
    : context_(context), enabled_(enabled), threshold_(threshold) {
    if (const char* v = std::getenv("WORKSIZE_PINNED_SPARE_BYTES"); v && *v) {
        char* end = nullptr;
        const unsigned long long n = std::strtoull(v, &end, 10);
        if (end && *end == '\0') spare_limit_ = std::size_t(n);
        else log::warn() << "WORKSIZE_PINNED_SPARE_BYTES='" << v << "' is not a number of bytes; " << spare_limit_ << " kept";
    }
    if (!enabled_) return;
    try {
        queue_ = cl::CommandQueue(context_, device, 0);
    } catch (const cl::Error&) {
        enabled_ = false;  // ordinary memory then, as with WORKSIZE_PINNED=0
    }
}

PinnedHostMemory::~PinnedHostMemory() {
    // Buffers still allocated now belong to containers that outlive every allocator, which
    // cannot happen (each allocator shares this resource); this is for completeness.
    for (auto& [p, b] : blocks_) release(p, b);
    for (auto& [p, b] : spare_) release(p, b);
}

bool PinnedHostMemory::enabled_by_environment() {
    const char* v = std::getenv("WORKSIZE_PINNED");
    if (!v) return true;
    std::string s(v);
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (s == "0" || s == "off" || s == "no" || s == "false") return false;
    if (!(s == "1" || s == "on" || s == "yes" || s == "true")) {
        static std::once_flag warned;
        std::call_once(warned, [&] {
            log::warn() << "WORKSIZE_PINNED='" << v
                        << "' is none of 0, off, no, false, 1, on, yes, true; pinned memory stays on";
        });
    }
    return true;
}

void* PinnedHostMemory::reuse_spare(std::size_t bytes, std::size_t alignment) {
    std::lock_guard lock(mutex_);
    for (auto it = spare_.begin(); it != spare_.end(); ++it) {
        if (it->second.bytes != bytes || reinterpret_cast<std::uintptr_t>(it->first) % alignment != 0) continue;
        void* p = it->first;
        blocks_.emplace(p, std::move(it->second));
        spare_.erase(it);
        spare_bytes_ -= bytes;
        pinned_bytes_ += bytes;
        return p;
    }
    return nullptr;
}

/// Under mutex_: keeps `b` mapped for the next allocation of its size if the limit allows.
bool PinnedHostMemory::keep_spare(void* p, Block& b) {
    if (b.bytes > kMaxSpareBlock || spare_bytes_ + b.bytes > spare_limit_) return false;
    spare_.emplace_back(p, std::move(b));
    spare_bytes_ += spare_.back().second.bytes;
    return true;
}

void* PinnedHostMemory::allocate(std::size_t bytes, std::size_t alignment) {
    if (enabled_ && bytes > 0 && bytes >= threshold_) {
        if (void* p = reuse_spare(bytes, alignment)) return p;
        std::optional<cl::Buffer> buffer;
        void* p = nullptr;
        try {
            buffer.emplace(context_, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes);
            p = queue_.enqueueMapBuffer(*buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes);
        } catch (const cl::Error&) {
            p = nullptr;  // too large, out of pinned memory, or no map: ordinary memory below
        }
        if (p && reinterpret_cast<std::uintptr_t>(p) % alignment == 0) {
            std::lock_guard lock(mutex_);
            try {
                blocks_.emplace(p, Block{*buffer, bytes});
            } catch (...) {
                Block b{*buffer, bytes};
                release(p, b);
                throw;
            }
            pinned_bytes_ += bytes;
            return p;
        }
        if (p) {
            Block b{*buffer, bytes};
            release(p, b);
        }
        std::lock_guard lock(mutex_);
        ++fallbacks_;
    }
    return ::operator new(bytes, std::align_val_t(alignment));
}

void PinnedHostMemory::deallocate(void* p, std::size_t bytes, std::size_t alignment) noexcept {
    (void)bytes;
    if (!p) return;
    std::optional<Block> block;
    {
        std::lock_guard lock(mutex_);
        if (auto it = blocks_.find(p); it != blocks_.end()) {
            pinned_bytes_ -= it->second.bytes;
            try {
                if (keep_spare(p, it->second)) {
                    blocks_.erase(it);
                    return;
                }
            } catch (...) {
                // no room to keep it: released below
            }
            block.emplace(std::move(it->second));
            blocks_.erase(it);
        }
    }
    if (block)
        release(p, *block);
    else
        ::operator delete(p, std::align_val_t(alignment));
}

void PinnedHostMemory::release(void* p, Block& b) noexcept {
    try {
        cl::Event done;
        queue_.enqueueUnmapMemObject(b.buffer, p, nullptr, &done);
        done.wait();
    } catch (...) {
        // Nothing to do: the buffer is released below all the same.
    }
    b.buffer = cl::Buffer();
}

bool PinnedHostMemory::is_pinned(const void* p) const {
    std::lock_guard lock(mutex_);
    return blocks_.count(const_cast<void*>(p)) != 0;
}

bool PinnedHostMemory::holds(const void* p, std::size_t n) const {
    const auto* b = static_cast<const std::byte*>(p);
    std::lock_guard lock(mutex_);
    for (const auto& [start, block] : blocks_) {
        const auto* s = static_cast<const std::byte*>(start);
        if (b >= s && n <= block.bytes && std::size_t(b - s) <= block.bytes - n) return true;
    }
    return false;
}

std::size_t PinnedHostMemory::pinned_count() const {
    std::lock_guard lock(mutex_);
    return blocks_.size();
}

std::size_t PinnedHostMemory::pinned_bytes() const {
    std::lock_guard lock(mutex_);
    return pinned_bytes_;
}

std::size_t PinnedHostMemory::fallbacks() const {
    std::lock_guard lock(mutex_);
    return fallbacks_;
}

std::size_t PinnedHostMemory::spare_bytes() const {
    std::lock_guard lock(mutex_);
    return spare_bytes_;
}

DeviceContext::DeviceContext(cl::Device device, DeviceInfo info)
    : device_(std::move(device)), info_(std::move(info)) {
    try {
        context_ = cl::Context(device_);
        queue_ = cl::CommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE);
    } catch (const cl::Error& e) {
        rethrow_cl(e, info_.name);
    }
    host_memory_ = std::make_shared<PinnedHostMemory>(context_, device_,
                                                      PinnedHostMemory::enabled_by_environment());
}

cl::CommandQueue& DeviceContext::copy_queue() {
    std::lock_guard lock(mutex_);
    if (!copy_queue_()) copy_queue_ = cl::CommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE);
    return copy_queue_;
}

const std::shared_ptr<PinnedHostMemory>& DeviceContext::staging_memory() {
    std::lock_guard lock(mutex_);
    if (!staging_memory_)
        staging_memory_ = std::make_shared<PinnedHostMemory>(context_, device_, PinnedHostMemory::enabled_by_environment(), 1);
    return staging_memory_;
}

cl::Program DeviceContext::program(std::string_view file, const std::string& options) {
    const auto src = embedded_kernel_source(file);
    if (src.empty())
        throw InvalidArgument("no embedded kernel file '" + std::string(file) + ".cl'");
    return program_from_source(std::string(src), options);
}

cl::Program DeviceContext::program_from_source(const std::string& source,
                                               const std::string& options) {
    const std::size_t h = std::hash<std::string>{}(source);
    std::lock_guard lock(mutex_);
    if (auto it = cache_.find({h, options}); it != cache_.end()) return it->second;
    cl::Program prog;
    try {
        prog = cl::Program(context_, source);
    } catch (const cl::Error& e) {
        rethrow_cl(e, info_.name);
    }
    try {
        prog.build(std::vector<cl::Device>{device_}, options.c_str());
    } catch (const cl::BuildError& e) {
        std::string log;
        for (const auto& [dev, l] : e.getBuildLog()) log += l;
        std::istringstream in(log);
        std::string first, line;
        for (int i = 0; i < 3 && std::getline(in, line); ++i) first += (i ? " | " : "") + line;
        throw BuildError("clBuildProgram failed (CL_BUILD_PROGRAM_FAILURE) on " + info_.name +
                             (options.empty() ? "" : " with '" + options + "'") + ": " + first,
                         log);
    } catch (const cl::Error& e) {
        rethrow_cl(e, info_.name);
    }
    cache_.emplace(std::pair{h, options}, prog);
    return prog;
}

}  // namespace worksize
