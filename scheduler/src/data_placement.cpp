// Where a device holds each buffer of a data job (data_spec.hpp): slice rows with their halos, or
// the whole extent for the kernels that index whole arrays (KernelDecl::whole_arrays); and the
// steps each kernel runs in (KernelDecl::runs).
#include "worksize/scheduler/data_spec.hpp"

namespace worksize {

const char* to_string(KernelRuns r) {
    switch (r) {
    case KernelRuns::every: return "every";
    case KernelRuns::first_step: return "first";
    case KernelRuns::last_step: return "last";
    }
    return "?";
}

bool runs_in(const KernelDecl& k, std::uint64_t step, std::uint64_t steps) {
    switch (k.runs) {
    case KernelRuns::first_step: return step == 0;
    case KernelRuns::last_step: return step + 1 == steps;
    case KernelRuns::every: return k.every <= 1 || (step + 1) % k.every == 0;
    }
    return true;
}

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
