// The devices and kernels the planner's tests share (test_planner.cpp, test_planner_plans.cpp):
// the founding paper's GPUs.
#pragma once

#include <cstdint>
#include <string>

#include "worksize/scheduler/planner.hpp"

namespace worksize::test {

inline DeviceInfo gpu(const std::string& name, std::uint32_t cus, std::uint32_t pes, std::uint64_t wg,
                      std::uint64_t item_x, std::uint64_t item_y, std::uint64_t mem = 0) {
    DeviceInfo d;
    d.name = name;
    d.type = DeviceType::gpu;
    d.compute_units = cus;
    d.pes_per_cu = pes;
    d.max_work_group_size = wg;
    d.max_work_item_sizes = {item_x, item_y, 64};
    d.global_mem_bytes = mem;
    return d;
}

inline DeviceInfo k20() { return gpu("Tesla K20", 13, 192, 1024, 1024, 1024, 5ull << 30); }
inline DeviceInfo quadro() { return gpu("Quadro 2000D", 4, 48, 1024, 1024, 1024, 1ull << 30); }
inline DeviceInfo gts() { return gpu("GeForce 8800GTS", 16, 8, 512, 512, 512, 512ull << 20); }

inline KernelDescriptor kernel2d(Priority p = Priority::x) {
    KernelDescriptor k;
    k.name = "test2d";
    k.dims = 2;
    k.default_priority = p;
    k.ops_per_item = 1.0;
    return k;
}

}  // namespace worksize::test
