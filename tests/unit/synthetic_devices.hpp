// Synthetic devices for the tuner's unit tests (test_tuning.cpp, test_tuning_confirm.cpp).
#pragma once

#include "worksize/scheduler/types.hpp"

namespace worksize::unit {

/// A GPU of 8 CUs x 64 PEs, groups up to 256, warp 32, 48 KiB local memory.
inline DeviceInfo gpu() {
    DeviceInfo d;
    d.name = "SynthGPU";
    d.type = DeviceType::gpu;
    d.compute_units = 8;
    d.pes_per_cu = 64;
    d.max_work_group_size = 256;
    d.max_work_item_sizes = {256, 128, 64};
    d.local_mem_bytes = 48 * 1024;
    d.preferred_wg_multiple = 32;
    return d;
}

/// A CPU of 4 CUs x 8 PEs as PoCL reports one (groups up to 4096, preferred multiple 8).
inline DeviceInfo cpu() {
    DeviceInfo d;
    d.name = "SynthCPU";
    d.type = DeviceType::cpu;
    d.compute_units = 4;
    d.pes_per_cu = 8;
    d.max_work_group_size = 4096;
    d.max_work_item_sizes = {4096, 4096, 4096};
    d.local_mem_bytes = 512 * 1024;
    d.preferred_wg_multiple = 8;
    return d;
}

}  // namespace worksize::unit
