// Synthetic devices for the tuner's unit tests (test_tuning.cpp, test_tuning_confirm.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "worksize/scheduler/types.hpp"

namespace worksize::unit {

/// A device with the limits the tuner reads (the rest left at DeviceInfo's defaults).
inline DeviceInfo synthetic_device(std::string name, DeviceType type, std::uint32_t cus, std::uint32_t pes,
                                   std::uint64_t max_wg, std::array<std::uint64_t, 3> max_items,
                                   std::uint64_t local_mem, std::uint64_t preferred_multiple) {
    DeviceInfo d;
    d.name = std::move(name);
    d.type = type;
    d.compute_units = cus;
    d.pes_per_cu = pes;
    d.max_work_group_size = max_wg;
    d.max_work_item_sizes = max_items;
    d.local_mem_bytes = local_mem;
    d.preferred_wg_multiple = preferred_multiple;
    return d;
}

/// A GPU of 8 CUs x 64 PEs, groups up to 256, warp 32, 48 KiB local memory.
inline DeviceInfo gpu() {
    return synthetic_device("SynthGPU", DeviceType::gpu, 8, 64, 256, {256, 128, 64}, 48 * 1024, 32);
}

/// A CPU of 4 CUs x 8 PEs as PoCL reports one (groups up to 4096, preferred multiple 8).
inline DeviceInfo cpu() {
    return synthetic_device("SynthCPU", DeviceType::cpu, 4, 8, 4096, {4096, 4096, 4096}, 512 * 1024, 8);
}

}  // namespace worksize::unit
