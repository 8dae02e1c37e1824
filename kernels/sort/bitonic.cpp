// Sample kernel "sort": the bitonic sort of a slice (`algo` bitonic, sort.cl), padded to a power of
// two with +INFINITY and sorted R times from a pristine device-side copy.
#include <algorithm>
#include <bit>
#include <limits>
#include <string>
#include <vector>

#include "sort_impl.hpp"

namespace worksize::detail::sort_kernel {
namespace {

/// Uploads the slice's `in` into `pristine` and fills it up to P floats with +INFINITY; returns the
/// seconds of both.
double upload_padded(cl::CommandQueue& q, const cl::Buffer& pristine, std::span<const std::byte> in,
                     std::uint64_t P) {
    const std::uint64_t units = in.size() / sizeof(float);
    cl::Event w, fill;
    q.enqueueWriteBuffer(pristine, CL_FALSE, 0, units * sizeof(float), in.data(), nullptr, &w);
    if (P > units)
        q.enqueueFillBuffer(pristine, std::numeric_limits<float>::infinity(), units * sizeof(float),
                            (P - units) * sizeof(float), nullptr, &fill);
    q.finish();
    return event_seconds(w) + (P > units ? event_seconds(fill) : 0.0);
}

}  // namespace

SliceTimes execute_bitonic(DeviceContext& ctx, const SliceSpec& s, std::span<const std::byte> in,
                           Bytes& out) {
    SliceTimes t;
    const std::uint64_t units = s.units;
    const std::uint64_t P = std::bit_ceil(units);
    check_buffer(ctx.info(), units, P);
    const std::uint64_t bytes = P * sizeof(float);
    const auto& info = ctx.info();
    const std::uint64_t L = s.local.x;
    std::uint64_t G = std::max(s.global.x, units);
    if (L && G % L) G = (G / L + 1) * L;
    const std::string where = "sort.cl on " + info.name + " (global " + std::to_string(G) + ", local " +
                              (L ? std::to_string(L) : std::string("NULL")) + ")";
    auto& q = ctx.queue();
    try {
        cl::Program prog = ctx.program("sort");
        cl::Kernel step(prog, "bitonic_step");
        cl::Kernel local(prog, "bitonic_local");
        cl::Buffer pristine(ctx.context(), CL_MEM_READ_WRITE, bytes);
        cl::Buffer work(ctx.context(), CL_MEM_READ_WRITE, bytes);
        t.h2d = upload_padded(q, pristine, in, P);

        // The local-memory stages need a power-of-two group with 2L <= P that fits the kernel.
        const bool use_local =
            L >= 2 && std::has_single_bit(L) && 2 * L <= P &&
            L <= local.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(ctx.device()) &&
            2 * L * sizeof(float) <= info.local_mem_bytes;
        const cl::NDRange global(G), lsz = L ? cl::NDRange(L) : cl::NullRange;
        step.setArg(0, work);
        step.setArg(1, cl_uint(P / 2));
        if (use_local) {
            local.setArg(0, work);
            local.setArg(1, cl_uint(P));
            local.setArg(4, cl::Local(2 * L * sizeof(float)));
        }
        std::vector<cl::Event> events;
        for (std::uint64_t r = 0; r < s.iterations; ++r) {
            q.enqueueCopyBuffer(pristine, work, 0, 0, bytes);
            auto launch = [&](cl::Kernel& kern) {
                events.emplace_back();
                q.enqueueNDRangeKernel(kern, cl::NullRange, global, lsz, nullptr, &events.back());
            };
            std::uint64_t k = 2;
            if (use_local) {
                const std::uint64_t k_last = std::min(2 * L, P);
                local.setArg(2, cl_uint(2));
                local.setArg(3, cl_uint(k_last));
                launch(local);
                k = k_last * 2;
            }
            for (; k <= P; k *= 2) {
                const std::uint64_t j_stop = use_local ? L : 0;  // local kernel does j <= L
                for (std::uint64_t j = k / 2; j > j_stop; j /= 2) {
                    step.setArg(2, cl_uint(j));
                    step.setArg(3, cl_uint(k));
                    launch(step);
                }
                if (use_local) {
                    local.setArg(2, cl_uint(k));
                    local.setArg(3, cl_uint(k));
                    launch(local);
                }
            }
            // Bounded event lists: collect each iteration's times (R may be in the thousands).
            add_kernel_seconds(q, events, t.kernel);
        }
        t.d2h = read_back(q, work, units * sizeof(float), out);
    } catch (const cl::Error& e) {
        finish_quietly(q);  // the upload enqueued from `in` may still be running
        rethrow_cl(e, where);
    }
    return t;
}

}  // namespace worksize::detail::sort_kernel
