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

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

#include "worksize/scheduler/types.hpp"

namespace worksize {

/// Symbolic name of an OpenCL error code ("CL_OUT_OF_RESOURCES"), or "CL_ERROR(<n>)".
const char* cl_error_name(cl_int code);

/// An OpenCL call failed: what() reads "clEnqueueNDRangeKernel failed (CL_INVALID_WORK_GROUP_SIZE)
/// for <context>".
class ClError : public Error {
public:
    ClError(const std::string& call, cl_int code, const std::string& context);
    cl_int code() const { return code_; }

private:
    cl_int code_;
};

/// A kernel failed to compile; what() has the first lines of the log, log() all of it.
class BuildError : public Error {
public:
    BuildError(const std::string& what, std::string log);
    const std::string& log() const { return log_; }

private:
    std::string log_;
};

/// Convert a cl::Error (thrown by the C++ bindings) into a ClError naming the call and context.
[[noreturn]] void rethrow_cl(const cl::Error& e, const std::string& context);

/// Seconds between an event's CL_PROFILING_COMMAND_START and _END.
double event_seconds(const cl::Event& ev);

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
    const DeviceInfo& info() const { return info_; }

    /// Build (or fetch from the cache) the embedded kernel file `file` ("matmul" for
    /// kernels/matmul.cl) with `options` (e.g. "-DTILE=16"). Also accepts a full source via
    /// program_from_source for user kernels.
    /// @throws BuildError with the build log, InvalidArgument for an unknown file.
    cl::Program program(std::string_view file, const std::string& options = "");
    cl::Program program_from_source(const std::string& source, const std::string& options = "");

private:
    cl::Device device_;
    cl::Context context_;
    cl::CommandQueue queue_;
    DeviceInfo info_;
    std::mutex mutex_;
    std::map<std::pair<std::size_t, std::string>, cl::Program> cache_;
};

}  // namespace worksize
