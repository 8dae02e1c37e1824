// Guard zones around device buffers: bounds.hpp.
#include "jobs/bounds.hpp"

#include "jobs/data_kernels.hpp"
#include "worksize/runtime/declared_job.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <vector>

namespace worksize::bounds {

namespace {
constexpr cl_uchar kPattern = 0xA5;
std::atomic<int>& flag() {
    static std::atomic<int> f{[] {
        const char* v = std::getenv("WORKSIZE_CHECK_BOUNDS");
        return v && std::string(v) == "1" ? 1 : 0;
    }()};
    return f;
}
}  // namespace

bool enabled() { return flag().load() != 0; }
void set_enabled(bool on) { flag().store(on ? 1 : 0); }

Guarded make(DeviceContext& ctx, std::uint64_t bytes, std::uint64_t after) {
    Guarded g;
    const std::uint64_t align = std::max<std::uint64_t>(ctx.device().getInfo<CL_DEVICE_MEM_BASE_ADDR_ALIGN>() / 8, 1);
    g.before = (4096 + align - 1) / align * align;
    g.bytes = std::max<std::uint64_t>(bytes, 1);
    g.after = std::max<std::uint64_t>(after, 4096);
    g.parent = cl::Buffer(ctx.context(), CL_MEM_READ_WRITE, g.before + g.bytes + g.after);
    ctx.queue().enqueueFillBuffer(g.parent, kPattern, 0, g.before + g.bytes + g.after);
    cl_buffer_region region{g.before, g.bytes};
    g.view = g.parent.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region);
    return g;
}

namespace {
/// The first byte of `zone` that is not the pattern (its first `tail` bytes: `tail_byte`), or -1.
std::int64_t first_changed(const std::vector<cl_uchar>& zone, std::uint64_t tail = 0, std::byte tail_byte = {}) {
    for (std::size_t i = 0; i < zone.size(); ++i)
        if (zone[i] != (i < tail ? cl_uchar(tail_byte) : kPattern)) return std::int64_t(i);
    return -1;
}
}  // namespace

std::string check(cl::CommandQueue& q, const Guarded& g, std::uint64_t row_bytes) {
    std::vector<cl_uchar> before(g.before), after(g.after);
    q.enqueueReadBuffer(g.parent, CL_FALSE, 0, before.size(), before.data());
    q.enqueueReadBuffer(g.parent, CL_TRUE, g.before + g.bytes, after.size(), after.data());
    if (const auto b = first_changed(before); b >= 0) {
        std::int64_t last = std::int64_t(before.size()) - 1;
        while (last > b && before[std::size_t(last)] == kPattern) --last;
        return "at " + std::to_string(std::int64_t(g.before) - last) + " bytes before its start";
    }
    if (const auto a = first_changed(after, g.tail, g.tail_byte); a >= 0) {
        std::string where = "at " + std::to_string(a) + " bytes past its end";
        if (row_bytes > 0)
            where += ", in row " + std::to_string(g.bytes / row_bytes + std::uint64_t(a) / row_bytes + 1) +
                     " of a buffer of " + std::to_string(g.bytes / row_bytes) + " rows";
        return where;
    }
    return "";
}

Guarded make_for(DeviceContext& ctx, const DataJobSpec& spec, int b, std::uint64_t bytes, std::byte tail_byte) {
    const BufferDecl& d = spec.buffers[std::size_t(b)];
    // A 2-D job's split buffer is sized as if its rows were `width` elements wide at least: a
    // buffer declared without its "pitch" (1 element a row) written a row at a time overran a
    // zone of the rest of its own rows, into the heap (PoCL: free(): invalid size).
    const bool split = d.layout == BufferLayout::split && !scaled(d);
    const std::uint64_t row = split ? std::max(row_bytes(d), spec.dims == 2 ? spec.width * elem_size(d.type) : 0) : 0;
    const std::uint64_t whole = spec.units * row;
    Guarded g = make(ctx, bytes, (whole > bytes ? whole - bytes : 0) + 4096);
    if (d.layout == BufferLayout::shared) {
        g.tail = kSharedTail, g.tail_byte = tail_byte;
        data::write_tail(ctx.queue(), g.parent, g.before + g.bytes, g.tail, tail_byte);
    }
    return g;
}

void check_writes(cl::CommandQueue& q, const DataJobSpec& spec, const KernelDecl& kd,
                  const std::vector<Guarded>& guards, const std::string& on, const std::string& hint) {
    q.finish();
    for (const auto& a : kd.args) {
        if (a.buffer < 0 || !(a.kind == ArgKind::write || a.kind == ArgKind::read_write || a.kind == ArgKind::scratch))
            continue;
        const BufferDecl& d = spec.buffers[std::size_t(a.buffer)];
        const std::string where =
            check(q, guards[std::size_t(a.buffer)], d.layout == BufferLayout::split ? row_bytes(d) : 0);
        if (where.empty()) continue;
        std::string m = "kernel '" + kd.name + "'" + on + " wrote outside buffer '" + d.name + "', " + where +
                        " (--check-bounds)";
        if (d.layout == BufferLayout::split && spec.dims == 2 && d.pitch < spec.width)
            m += "; its rows hold " + std::to_string(d.pitch) + " element(s) in a job " + std::to_string(spec.width) +
                 " wide: is its \"pitch\" (C++: the split's row length) missing?";
        else if (d.layout == BufferLayout::split && !held_whole(spec, a.buffer))
            m += hint;
        throw Error(m);
    }
}

}  // namespace worksize::bounds
