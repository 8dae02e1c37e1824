// Sample kernel "sort": the LSD radix sort of a slice (`algo` radix, the default; radix.cl) as a
// library routine of the slice's instruction list: its geometry on the device and its build
// options; each call sorts the slice's input buffer, which it leaves as it is, into its output.
#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "sort_impl.hpp"

namespace worksize::detail::sort_kernel {
namespace {

/// The radix sort's geometry on one device: the work-group size (the slice's local size where
/// it is a power of two from 16 (GPUs: 128) to 1024, else the device type's default) and the
/// build options.
struct RadixGeometry {
    std::uint64_t wg = 0, bits = 0, items = 0, split = 0;
    std::uint64_t tile() const { return wg * items; }
    /// radix_scatter's local memory: two tiles with a padding word per 32, the packed scan's
    /// ulongs (at most 2 per work-item with their padding and run sums) and the digit row.
    std::uint64_t scatter_local_bytes() const {
        return (2 * (tile() + tile() / 32 + 1) + (std::uint64_t{1} << bits)) * 4 + 2 * wg * 8;
    }
    std::string options() const {
        return "-DRADIX_WG=" + std::to_string(wg) + " -DRADIX_BITS=" + std::to_string(bits) +
               " -DRADIX_ITEMS=" + std::to_string(items) + " -DRADIX_SPLIT=" + std::to_string(split);
    }
};

RadixGeometry radix_geometry(const DeviceInfo& info, const SliceSpec& s, const SortParams& p) {
    const bool cpu = info.type == DeviceType::cpu;
    RadixGeometry g;
    const std::uint64_t L = s.local.x;
    // Below 128 on a GPU the tiles get small and the digit counts to scan many: its default then.
    const std::uint64_t least = cpu ? 16 : 128;
    g.wg = (L >= least && L <= 1024 && std::has_single_bit(L)) ? L : (cpu ? 64 : 256);
    if (info.max_work_group_size) g.wg = std::min(g.wg, std::bit_floor(info.max_work_group_size));
    // GPUs: 6 bits (H200, 2^26 keys: 8.7 Gkeys/s against 8.4 with 4 and 8.1 with 8 bits).
    g.bits = p.bits ? p.bits : (cpu ? 8 : 6);
    g.items = p.items ? p.items : (cpu ? 16 : 8);
    // Two bits per local split: one packed scan where one bit took one scan each.
    g.split = p.split ? p.split : 2;
    // The scatter's local tile must fit the device (4 bytes a key, plus the scan and digit rows).
    while (info.local_mem_bytes && g.items > 1 && g.scatter_local_bytes() > info.local_mem_bytes)
        g.items /= 2;
    return g;
}

}  // namespace

std::vector<double> radix_values(const DeviceInfo& info, const SliceSpec& s, const SortParams& p) {
    check_buffer(info, s.units, s.units);
    const RadixGeometry g = radix_geometry(info, s, p);
    return {double(s.units), double(g.wg), double(g.bits), double(g.items), double(g.split)};
}

namespace {

/// A slice's radix sort on its device: the program's kernels, a key buffer beside the slice's
/// output (the passes ping-pong between them) and the digit counts, made once.
struct RadixState {
    RadixGeometry geo;
    std::uint64_t n = 0, tiles = 0, m = 0, blocks = 0, passes = 0, map_groups = 0;
    cl::Kernel to_keys, from_keys, hist, reduce, top, down, scatter;
    cl::Buffer keys, counts, sums;
};

std::shared_ptr<void> radix_prepare(DeviceContext& ctx, const std::vector<double>& v, const std::string&) {
    auto st = std::make_shared<RadixState>();
    st->n = std::uint64_t(v.at(0));
    st->geo = {std::uint64_t(v.at(1)), std::uint64_t(v.at(2)), std::uint64_t(v.at(3)), std::uint64_t(v.at(4))};
    st->tiles = (st->n + st->geo.tile() - 1) / st->geo.tile();
    st->m = (std::uint64_t{1} << st->geo.bits) * st->tiles;       // histogram entries
    st->blocks = (st->m + st->geo.tile() - 1) / st->geo.tile();   // scan blocks
    st->passes = (32 + st->geo.bits - 1) / st->geo.bits;
    // The conversions are grid-stride loops: enough groups to fill the device, no more.
    st->map_groups = std::min(st->tiles, std::max<std::uint64_t>(1, ctx.info().compute_units) * 8);
    cl::Program prog = ctx.program("radix", st->geo.options());
    st->to_keys = cl::Kernel(prog, "radix_to_keys");
    st->from_keys = cl::Kernel(prog, "radix_from_keys");
    st->hist = cl::Kernel(prog, "radix_histogram");
    st->reduce = cl::Kernel(prog, "radix_scan_reduce");
    st->top = cl::Kernel(prog, "radix_scan_top");
    st->down = cl::Kernel(prog, "radix_scan_down");
    st->scatter = cl::Kernel(prog, "radix_scatter");
    st->keys = cl::Buffer(ctx.context(), CL_MEM_READ_WRITE, std::max<std::uint64_t>(st->n * sizeof(float), 1));
    st->counts = cl::Buffer(ctx.context(), CL_MEM_READ_WRITE, st->m * sizeof(cl_uint));
    st->sums = cl::Buffer(ctx.context(), CL_MEM_READ_WRITE, st->blocks * sizeof(cl_uint));
    return st;
}

/// The slice's input (buffers[0]) sorted into its output (buffers[1]): to keys, the passes
/// between the output and the key buffer, ordered so that the last conversion back to floats
/// lands in the output.
LibraryRun radix_launches(DeviceContext& ctx, const std::vector<cl::Buffer>& buffers, RadixState& st) {
    auto& q = ctx.queue();
    const cl_uint n = cl_uint(st.n);
    const cl::NDRange L(st.geo.wg), tiles_range(st.tiles * st.geo.wg), blocks_range(st.blocks * st.geo.wg),
        map_range(st.map_groups * st.geo.wg);
    cl::Buffer keys[2] = {st.keys, buffers.at(1)};
    if (st.passes % 2 == 1) std::swap(keys[0], keys[1]);  // from_keys then writes keys[0], the output
    st.hist.setArg(2, n);
    set_args(st.reduce, st.counts, st.sums, cl_uint(st.m));
    set_args(st.top, st.sums, cl_uint(st.blocks));
    set_args(st.down, st.counts, st.sums, cl_uint(st.m));
    st.scatter.setArg(2, st.counts);
    st.scatter.setArg(3, n);
    LibraryRun run;
    auto launch = [&](cl::Kernel& k, const cl::NDRange& g) {
        run.kernels.emplace_back();
        q.enqueueNDRangeKernel(k, cl::NullRange, g, L, nullptr, &run.kernels.back());
    };
    set_args(st.to_keys, buffers.at(0), keys[0], n);
    launch(st.to_keys, map_range);
    std::size_t cur = 0;
    for (std::uint64_t pass = 0; pass < st.passes; ++pass) {
        const cl_uint shift = cl_uint(pass * st.geo.bits);
        st.hist.setArg(0, keys[cur]);
        st.hist.setArg(1, st.counts);
        st.hist.setArg(3, shift);
        launch(st.hist, tiles_range);
        launch(st.reduce, blocks_range);
        launch(st.top, L);
        launch(st.down, blocks_range);
        st.scatter.setArg(0, keys[cur]);
        st.scatter.setArg(1, keys[1 - cur]);
        st.scatter.setArg(4, shift);
        launch(st.scatter, tiles_range);
        cur = 1 - cur;
    }
    set_args(st.from_keys, keys[cur], keys[1 - cur], n);  // keys[1 - cur] is the output
    launch(st.from_keys, map_range);
    run.last = run.kernels.back();
    return run;
}

LibraryRun radix_call(DeviceContext& ctx, const std::vector<cl::Buffer>& buffers, const std::vector<double>&,
                      void* state, const std::string& where) {
    auto& st = *static_cast<RadixState*>(state);
    try {
        return radix_launches(ctx, buffers, st);
    } catch (const cl::Error& e) {  // named by radix.cl, its options and tiles
        rethrow_cl(e, where + " (radix.cl, " + st.geo.options() + ", " + std::to_string(st.tiles) + " tiles)");
    }
}

}  // namespace

LibraryCall radix_routine() {
    return {radix_prepare, radix_call};
}

}  // namespace worksize::detail::sort_kernel
