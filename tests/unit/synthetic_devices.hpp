// Synthetic devices for the tests that need no real one: the tuner's (test_tuning.cpp,
// test_tuning_confirm.cpp), the planner's strategies and the database's (test_strategy.cpp,
// test_fit_trust.cpp, test_tuning_baseline.cpp, opencl/test_plan_tuned.cpp), and a node's
// discovered devices (test_shared_devices.cpp, opencl/test_device_selection.cpp).
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

/// A CPU `name` of `cus` CUs x `pes` PEs on host "node1" (platform and vendor "test", driver
/// "1.0": a database key of its own), groups up to 4096, 8 GiB of global memory; no local
/// memory or preferred multiple given (DeviceInfo's 0 and 1).
inline DeviceInfo node1_cpu(std::string name, std::uint32_t cus, std::uint32_t pes = 16) {
    DeviceInfo d =
        synthetic_device(std::move(name), DeviceType::cpu, cus, pes, 4096, {4096, 4096, 4096}, 0, 1);
    d.host = "node1";
    d.platform = "test";
    d.vendor = "test";
    d.driver_version = "1.0";
    d.global_mem_bytes = 8ull << 30;
    return d;
}

/// Device `index` of a node as discovery records it, with only what selection and sharing read:
/// PoCL's CPU device or an NVIDIA GPU, the platform and vendor by `type`.
inline DeviceInfo discovered(int index, DeviceType type, std::string name) {
    DeviceInfo d;
    d.index = index;
    d.type = type;
    d.name = std::move(name);
    d.platform = type == DeviceType::cpu ? "Portable Computing Language" : "NVIDIA CUDA";
    d.vendor = type == DeviceType::cpu ? "GenuineIntel" : "NVIDIA Corporation";
    return d;
}

}  // namespace worksize::unit
