// Sample kernel "sort": the bitonic sort of a slice (`algo` bitonic, sort.cl) as a library routine
// of the slice's instruction list: each call copies the slice's input into a work buffer padded
// to a power of two with +INFINITY, sorts it there and copies the slice's items into its output.
#include <algorithm>
#include <bit>
#include <limits>
#include <string>
#include <vector>

#include "sort_impl.hpp"

namespace worksize::detail::sort_kernel {

std::vector<double> bitonic_values(const DeviceInfo& info, const SliceSpec& s) {
    const std::uint64_t units = s.units, P = std::bit_ceil(units);
    check_buffer(info, units, P);
    const std::uint64_t L = s.local.x;
    std::uint64_t G = std::max(s.global.x, units);
    if (L && G % L) G = (G / L + 1) * L;
    return {double(units), double(G), double(L)};
}

namespace {

/// A slice's bitonic sort on its device: the kernels, a work buffer of P (a power of two) floats,
/// and whether the local-memory stages fit.
struct BitonicState {
    std::uint64_t units = 0, P = 0, G = 0, L = 0;
    bool use_local = false;
    cl::Kernel step, local;
    cl::Buffer work;
};

std::shared_ptr<void> bitonic_prepare(DeviceContext& ctx, const std::vector<double>& v, const std::string&) {
    auto st = std::make_shared<BitonicState>();
    st->units = std::uint64_t(v.at(0));
    st->G = std::uint64_t(v.at(1));
    st->L = std::uint64_t(v.at(2));
    st->P = std::bit_ceil(st->units);
    cl::Program prog = ctx.program("sort");
    st->step = cl::Kernel(prog, "bitonic_step");
    st->local = cl::Kernel(prog, "bitonic_local");
    st->work = cl::Buffer(ctx.context(), CL_MEM_READ_WRITE, st->P * sizeof(float));
    // The local-memory stages need a power-of-two group with 2L <= P that fits the kernel.
    const std::uint64_t L = st->L;
    st->use_local = L >= 2 && std::has_single_bit(L) && 2 * L <= st->P &&
                    L <= st->local.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(ctx.device()) &&
                    2 * L * sizeof(float) <= ctx.info().local_mem_bytes;
    st->step.setArg(0, st->work);
    st->step.setArg(1, cl_uint(st->P / 2));
    if (st->use_local) {
        st->local.setArg(0, st->work);
        st->local.setArg(1, cl_uint(st->P));
        st->local.setArg(4, cl::Local(2 * L * sizeof(float)));
    }
    return st;
}

/// The slice's input (buffers[0]) copied into the work buffer, padded with +INFINITY to P,
/// sorted there, and its first `units` copied into the output (buffers[1]).
LibraryRun bitonic_launches(DeviceContext& ctx, const std::vector<cl::Buffer>& buffers, BitonicState& st) {
    auto& q = ctx.queue();
    const std::uint64_t bytes = st.units * sizeof(float);
    q.enqueueCopyBuffer(buffers.at(0), st.work, 0, 0, bytes);
    if (st.P > st.units)
        q.enqueueFillBuffer(st.work, std::numeric_limits<float>::infinity(), bytes, (st.P - st.units) * sizeof(float));
    LibraryRun run;
    const cl::NDRange global(st.G), lsz = st.L ? cl::NDRange(st.L) : cl::NullRange;
    auto launch = [&](cl::Kernel& kern) {
        run.kernels.emplace_back();
        q.enqueueNDRangeKernel(kern, cl::NullRange, global, lsz, nullptr, &run.kernels.back());
    };
    std::uint64_t k = 2;
    if (st.use_local) {
        const std::uint64_t k_last = std::min(2 * st.L, st.P);
        st.local.setArg(2, cl_uint(2));
        st.local.setArg(3, cl_uint(k_last));
        launch(st.local);
        k = k_last * 2;
    }
    for (; k <= st.P; k *= 2) {
        const std::uint64_t j_stop = st.use_local ? st.L : 0;  // the local kernel does j <= L
        for (std::uint64_t j = k / 2; j > j_stop; j /= 2) {
            st.step.setArg(2, cl_uint(j));
            st.step.setArg(3, cl_uint(k));
            launch(st.step);
        }
        if (st.use_local) {
            st.local.setArg(2, cl_uint(k));
            st.local.setArg(3, cl_uint(k));
            launch(st.local);
        }
    }
    q.enqueueCopyBuffer(st.work, buffers.at(1), 0, 0, bytes, nullptr, &run.last);
    return run;
}

LibraryRun bitonic_call(DeviceContext& ctx, const std::vector<cl::Buffer>& buffers, const std::vector<double>&,
                        void* state, const std::string& where) {
    auto& st = *static_cast<BitonicState*>(state);
    try {
        return bitonic_launches(ctx, buffers, st);
    } catch (const cl::Error& e) {  // named by sort.cl and the launch's geometry
        rethrow_cl(e, where + " (sort.cl, global " + std::to_string(st.G) + ", local " +
                          (st.L ? std::to_string(st.L) : std::string("NULL")) + ")");
    }
}

}  // namespace

LibraryCall bitonic_routine() {
    return {bitonic_prepare, bitonic_call};
}

}  // namespace worksize::detail::sort_kernel
