// Where a device holds each buffer of a data job (data_spec.hpp): slice rows with their halos, or
// the whole extent for the kernels that index whole arrays (KernelDecl::whole_arrays).
#include "worksize/scheduler/data_spec.hpp"

namespace worksize {

bool held_whole(const DataJobSpec& spec, int b) {
    if (spec.buffers.at(std::size_t(b)).layout != BufferLayout::split) return false;
    for (const auto& k : spec.kernels) {
        if (!k.whole_arrays) continue;
        for (const auto& a : k.args)
            if (a.buffer == b && a.kind != ArgKind::origin) return true;
    }
    return false;
}

std::int64_t first_held_unit(const DataJobSpec& spec, int b, std::uint64_t offset) {
    if (held_whole(spec, b)) return 0;
    return std::int64_t(offset) - std::int64_t(halo_rows(spec, b));
}

std::uint64_t held_elements(const DataJobSpec& spec, int b, std::uint64_t units) {
    const BufferDecl& d = spec.buffers.at(std::size_t(b));
    if (d.layout == BufferLayout::shared) return d.count;
    if (held_whole(spec, b)) return spec.units * d.pitch;
    return (units + 2 * halo_rows(spec, b)) * d.pitch;
}

std::uint64_t held_bytes(const DataJobSpec& spec, std::uint64_t units) {
    std::uint64_t total = 0;
    for (std::size_t b = 0; b < spec.buffers.size(); ++b)
        total += held_elements(spec, int(b), units) * elem_size(spec.buffers[b].type);
    return total;
}

}  // namespace worksize
