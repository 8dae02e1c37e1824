// Sample kernel "sort": the LSD radix sort of a slice (`algo` radix, the default; radix.cl), its
// geometry on the device and its build options; it sorts R times from a pristine device-side copy.
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

SliceTimes execute_radix(DeviceContext& ctx, const SliceSpec& s, std::span<const std::byte> in,
                         Bytes& out, const SortParams& p) {
    SliceTimes t;
    const std::uint64_t n = s.units;
    const auto& info = ctx.info();
    check_buffer(info, n, n);
    const RadixGeometry geo = radix_geometry(info, s, p);
    const std::uint64_t tiles = (n + geo.tile() - 1) / geo.tile();
    const std::uint64_t m = (std::uint64_t{1} << geo.bits) * tiles;  // histogram entries
    const std::uint64_t blocks = (m + geo.tile() - 1) / geo.tile();  // scan blocks
    const std::uint64_t bytes = n * sizeof(float);
    const std::string where = "radix.cl on " + info.name + " (" + geo.options() + ", " +
                              std::to_string(tiles) + " tiles)";
    auto& q = ctx.queue();
    try {
        cl::Program prog = ctx.program("radix", geo.options());
        cl::Kernel to_keys(prog, "radix_to_keys"), from_keys(prog, "radix_from_keys");
        cl::Kernel hist(prog, "radix_histogram"), reduce(prog, "radix_scan_reduce");
        cl::Kernel top(prog, "radix_scan_top"), down(prog, "radix_scan_down");
        cl::Kernel scatter(prog, "radix_scatter");
        cl::Buffer pristine(ctx.context(), CL_MEM_READ_WRITE, bytes);
        cl::Buffer keys[2] = {cl::Buffer(ctx.context(), CL_MEM_READ_WRITE, bytes),
                              cl::Buffer(ctx.context(), CL_MEM_READ_WRITE, bytes)};
        cl::Buffer counts(ctx.context(), CL_MEM_READ_WRITE, m * sizeof(cl_uint));
        cl::Buffer sums(ctx.context(), CL_MEM_READ_WRITE, blocks * sizeof(cl_uint));
        cl::Event w;
        q.enqueueWriteBuffer(pristine, CL_FALSE, 0, bytes, in.data(), nullptr, &w);
        q.finish();
        t.h2d = event_seconds(w);

        const std::uint64_t passes = (32 + geo.bits - 1) / geo.bits;
        const cl::NDRange L(geo.wg), tiles_range(tiles * geo.wg), blocks_range(blocks * geo.wg);
        // The conversions are grid-stride loops: enough groups to fill the device, no more.
        const std::uint64_t cu = std::max<std::uint64_t>(1, info.compute_units);
        const cl::NDRange map_range(std::min(tiles, cu * 8) * geo.wg);
        hist.setArg(2, cl_uint(n));
        set_args(reduce, counts, sums, cl_uint(m));
        set_args(top, sums, cl_uint(blocks));
        set_args(down, counts, sums, cl_uint(m));
        scatter.setArg(2, counts);
        scatter.setArg(3, cl_uint(n));
        std::vector<cl::Event> events;
        auto launch = [&](cl::Kernel& k, const cl::NDRange& g) {
            events.emplace_back();
            q.enqueueNDRangeKernel(k, cl::NullRange, g, L, nullptr, &events.back());
        };
        std::size_t cur = 0;
        for (std::uint64_t r = 0; r < s.iterations; ++r) {
            set_args(to_keys, pristine, keys[0], cl_uint(n));
            launch(to_keys, map_range);
            cur = 0;
            for (std::uint64_t pass = 0; pass < passes; ++pass) {
                const cl_uint shift = cl_uint(pass * geo.bits);
                hist.setArg(0, keys[cur]);
                hist.setArg(1, counts);
                hist.setArg(3, shift);
                launch(hist, tiles_range);
                launch(reduce, blocks_range);
                launch(top, L);
                launch(down, blocks_range);
                scatter.setArg(0, keys[cur]);
                scatter.setArg(1, keys[1 - cur]);
                scatter.setArg(4, shift);
                launch(scatter, tiles_range);
                cur = 1 - cur;
            }
            // Back to floats, into the other key buffer.
            set_args(from_keys, keys[cur], keys[1 - cur], cl_uint(n));
            launch(from_keys, map_range);
            add_kernel_seconds(q, events, t.kernel);
        }
        t.d2h = read_back(q, keys[1 - cur], bytes, out);
    } catch (const cl::Error& e) {
        finish_quietly(q);  // the upload enqueued from `in` may still be running
        rethrow_cl(e, where);
    }
    return t;
}

}  // namespace worksize::detail::sort_kernel
