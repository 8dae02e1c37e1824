// Discovery of the OpenCL devices a process can use, and their description as DeviceInfo.
#pragma once

#include <string>
#include <vector>

#include "worksize/runtime/opencl.hpp"

namespace worksize {

/// A live device: its OpenCL handle and its description.
struct LocalDevice {
    cl::Device device;
    DeviceInfo info;
};

/// Describe one device. PEs per CU are derived (NVIDIA compute capability, AMD attributes, the
/// CPU's native float vector width, else the preferred work-group multiple) and the rule that gave
/// them is recorded in `pe_source`.
DeviceInfo describe_device(const cl::Device& device, const std::string& platform_name);

/// This process's host name: $WORKSIZE_HOSTNAME when set (emulated nodes, or a batch system's
/// node name; the database keeps it as provenance, docs/tuning.md), else gethostname.
std::string host_name();

/// Cores per SM for an NVIDIA compute capability (e.g. 9.0 -> 128, 3.5 -> 192, 2.1 -> 48, 1.x -> 8);
/// 0 if unknown.
unsigned nvidia_cores_per_sm(unsigned major, unsigned minor);

/// Every device of every platform, in (platform, device) order.
/// @throws Error "no OpenCL platform found" when there is none.
std::vector<LocalDevice> all_local_devices();

}  // namespace worksize
