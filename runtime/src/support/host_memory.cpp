// The host's memory limits against what a job needs (host_memory.hpp).
#include "worksize/runtime/host_memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "jobs/job_util.hpp"
#include "worksize/runtime/kernel_job.hpp"

namespace worksize {

namespace {

/// This process's VmSize and VmData, bytes (/proc/self/statm: pages of the whole mapping and of
/// data + stack); 0 where it cannot be read.
std::pair<std::uint64_t, std::uint64_t> mapped_now() {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t size = 0, resident = 0, shared = 0, text = 0, lib = 0, data = 0;
    if (!(statm >> size >> resident >> shared >> text >> lib >> data)) return {0, 0};
    const auto page = std::uint64_t(sysconf(_SC_PAGESIZE));
    return {size * page, data * page};
}

std::optional<HostMemoryLimit> limit_of(int resource, const char* name, const char* flag, std::uint64_t used) {
    rlimit rl{};
    if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return std::nullopt;
    HostMemoryLimit l;
    l.name = std::string(name) + " (ulimit " + flag + " " + std::to_string(rl.rlim_cur / 1024) + ")";
    l.limit = rl.rlim_cur;
    l.used = used;
    return l;
}

/// Bytes as "4.5 GiB" (detail::size_text) from a double estimate, saturated.
std::uint64_t whole_bytes(double b) {
    if (!(b > 0)) return 0;
    if (b >= 1.8e19) return std::numeric_limits<std::uint64_t>::max();
    return std::uint64_t(std::ceil(b));
}

std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) {
    return a > std::numeric_limits<std::uint64_t>::max() - b ? std::numeric_limits<std::uint64_t>::max() : a + b;
}

}  // namespace

std::optional<HostMemoryLimit> host_memory_limit() {
    const auto [size, data] = mapped_now();
    auto as = limit_of(RLIMIT_AS, "the address-space limit", "-v", size);
    auto ds = limit_of(RLIMIT_DATA, "the data-segment limit", "-d", data);
    if (as && ds) return as->left() <= ds->left() ? as : ds;
    return as ? as : ds;
}

void check_host_memory(std::uint64_t bytes, const std::string& what, std::uint64_t reserve) {
    const auto l = host_memory_limit();
    if (!l || add_sat(bytes, reserve) <= l->left()) return;
    using detail::size_text;
    throw Error(ErrorReason::device_limit,
                what + " needs " + size_text(bytes) + " of host memory" +
                    (reserve ? " (and OpenCL about " + size_text(reserve) + " beside it)" : std::string()) + ", but " +
                    l->name + " leaves this process " + size_text(l->left()) + ": raise the limit or use a smaller size");
}

std::string host_limit_hint() {
    const auto l = host_memory_limit();
    if (!l) return {};
    return " (" + l->name + " leaves this process " + detail::size_text(l->left()) + ": it may be the reason)";
}

void check_host_memory_for_opencl() {
    const auto l = host_memory_limit();
    if (!l || l->left() >= kOpenClStartBytes) return;
    using detail::size_text;
    throw Error(ErrorReason::device_limit, l->name + " leaves this process " + size_text(l->left()) +
                                               ": OpenCL needs about " + size_text(kOpenClStartBytes) +
                                               " to start its devices and build kernels; raise the limit");
}

std::uint64_t slice_host_bytes(const KernelDescriptor& desc, const GlobalSize& problem, std::uint64_t units, bool cpu) {
    const double items = double(units) * (desc.dims == 2 ? double(problem.x) : 1.0);
    const double in = desc.bytes_in_per_item * items + desc.bytes_in_fixed;
    const double out = desc.bytes_out_per_item * items;
    // The output's staging; the input's staging is what the rank received. A CPU device's
    // buffers (input and output) are host memory too.
    return whole_bytes(out + (cpu ? in + out : 0.0));
}

void check_job_memory(const KernelJob& job, const std::vector<Assignment>& plan, const std::vector<DeviceInfo>& devices,
                      int rank) {
    if (!host_memory_limit()) return;  // the usual case: nothing to compare with
    const KernelDescriptor desc = job.descriptor();
    const GlobalSize problem = job.problem();
    double need = 0;
    if (rank == 0)  // the job's inputs and outputs, made and kept on rank 0
        need += (desc.bytes_in_per_item + desc.bytes_out_per_item) * double(problem.items()) + desc.bytes_in_fixed;
    int slices = 0;
    for (const auto& a : plan) {
        if (a.units == 0 || a.device < 0 || std::size_t(a.device) >= devices.size()) continue;
        const DeviceInfo& d = devices[std::size_t(a.device)];
        if (d.rank != rank) continue;
        ++slices;
        const double items = double(a.units) * (desc.dims == 2 ? double(problem.x) : 1.0);
        need += desc.bytes_in_per_item * items + desc.bytes_in_fixed;  // the input's staging
        need += double(slice_host_bytes(desc, problem, a.units, d.type == DeviceType::cpu));
    }
    const std::string what = "'" + desc.name + "' on rank " + std::to_string(rank) + " (" +
                             (rank == 0 ? "its inputs and outputs, " : "") + "the staging of " +
                             std::to_string(slices) + " slice(s), device buffers of CPU devices)";
    check_host_memory(whole_bytes(need), what);
}

}  // namespace worksize
