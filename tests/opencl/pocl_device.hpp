// Test helper: the first OpenCL device (PoCL's CPU device on CI) as a DeviceContext.
#pragma once

#include <memory>

#include "worksize/runtime/devices.hpp"
#include "worksize/runtime/opencl.hpp"

namespace worksize::test {

inline DeviceContext& first_device() {
    static std::unique_ptr<DeviceContext> ctx = [] {
        auto devs = all_local_devices();
        return std::make_unique<DeviceContext>(devs.front().device, devs.front().info);
    }();
    return *ctx;
}

}  // namespace worksize::test
