// OpenCL device discovery and description.
#include "worksize/runtime/devices.hpp"

#include "worksize/runtime/host_memory.hpp"

#include <CL/cl_ext.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace worksize {

#ifndef CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV
#define CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#define CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#endif
#ifndef CL_DEVICE_PCI_BUS_ID_NV
#define CL_DEVICE_PCI_BUS_ID_NV 0x4008
#define CL_DEVICE_PCI_SLOT_ID_NV 0x4009
#endif
#ifndef CL_DEVICE_PCI_DOMAIN_ID_NV
#define CL_DEVICE_PCI_DOMAIN_ID_NV 0x400A
#endif
#ifndef CL_DEVICE_SIMD_PER_COMPUTE_UNIT_AMD
#define CL_DEVICE_SIMD_PER_COMPUTE_UNIT_AMD 0x4040
#define CL_DEVICE_SIMD_WIDTH_AMD 0x4041
#endif

unsigned nvidia_cores_per_sm(unsigned major, unsigned minor) {
    switch (major) {
        case 1: return 8;
        case 2: return minor == 0 ? 32 : 48;
        case 3: return 192;
        case 5: return 128;
        case 6: return minor == 0 ? 64 : 128;
        case 7: return 64;
        case 8: return minor == 0 ? 64 : 128;
        case 9: return 128;
        case 10: return 128;
        case 12: return 128;
        default: return 0;
    }
}

namespace {

bool has_extension(const cl::Device& d, const char* ext) {
    return d.getInfo<CL_DEVICE_EXTENSIONS>().find(ext) != std::string::npos;
}

template <typename T>
bool raw_info(const cl::Device& d, cl_device_info what, T& out) {
    return clGetDeviceInfo(d(), what, sizeof(T), &out, nullptr) == CL_SUCCESS;
}

DeviceType device_type(cl_device_type t) {
    if (t & CL_DEVICE_TYPE_GPU) return DeviceType::gpu;
    if (t & CL_DEVICE_TYPE_CPU) return DeviceType::cpu;
    if (t & CL_DEVICE_TYPE_ACCELERATOR) return DeviceType::accelerator;
    return DeviceType::other;
}

std::string pci_text(unsigned domain, unsigned bus, unsigned device, unsigned function) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain & 0xffffu, bus & 0xffu, device & 0x1fu, function & 0x7u);
    return buf;
}

/// The device's PCI address where the driver tells it, else "" (shared_devices() then compares
/// device indices).
std::string pci_bus_id(const cl::Device& d) {
    cl_device_pci_bus_info_khr khr{};
    if (has_extension(d, "cl_khr_pci_bus_info") && raw_info(d, CL_DEVICE_PCI_BUS_INFO_KHR, khr))
        return pci_text(khr.pci_domain, khr.pci_bus, khr.pci_device, khr.pci_function);
    cl_uint bus = 0, slot = 0, domain = 0;
    if (has_extension(d, "cl_nv_device_attribute_query") && raw_info(d, CL_DEVICE_PCI_BUS_ID_NV, bus) &&
        raw_info(d, CL_DEVICE_PCI_SLOT_ID_NV, slot)) {
        if (!raw_info(d, CL_DEVICE_PCI_DOMAIN_ID_NV, domain)) domain = 0;  // older drivers: no domain
        return pci_text(domain, bus, slot >> 3, slot & 7u);
    }
    cl_device_topology_amd topo{};
    if (has_extension(d, "cl_amd_device_attribute_query") && raw_info(d, CL_DEVICE_TOPOLOGY_AMD, topo) &&
        topo.raw.type == CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD)
        return pci_text(0, static_cast<unsigned char>(topo.pcie.bus), static_cast<unsigned char>(topo.pcie.device),
                        static_cast<unsigned char>(topo.pcie.function));
    return {};
}

}  // namespace

std::string host_name() {
    if (const char* h = std::getenv("WORKSIZE_HOSTNAME"); h && *h) return h;
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "unknown";
    return buf;
}

DeviceInfo describe_device(const cl::Device& d, const std::string& platform_name) {
    DeviceInfo info;
    try {
        info.host = host_name();
        info.platform = platform_name;
        info.name = d.getInfo<CL_DEVICE_NAME>();
        info.vendor = d.getInfo<CL_DEVICE_VENDOR>();
        info.driver_version = d.getInfo<CL_DRIVER_VERSION>();
        info.type = device_type(d.getInfo<CL_DEVICE_TYPE>());
        info.compute_units = d.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
        info.max_clock_mhz = d.getInfo<CL_DEVICE_MAX_CLOCK_FREQUENCY>();
        info.max_work_group_size = d.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
        const auto sizes = d.getInfo<CL_DEVICE_MAX_WORK_ITEM_SIZES>();
        for (std::size_t i = 0; i < 3; ++i) info.max_work_item_sizes[i] = i < sizes.size() ? sizes[i] : 1;
        info.local_mem_bytes = d.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
        info.global_mem_bytes = d.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
        info.max_alloc_bytes = d.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
        info.pci_bus_id = pci_bus_id(d);

        // The preferred work-group multiple is a kernel property: ask it of a trivial kernel.
        info.preferred_wg_multiple = 1;
        try {
            cl::Context ctx(d);
            cl::Program p(ctx, "__kernel void ws_probe(__global float* x) { x[get_global_id(0)] = 1.0f; }");
            p.build(std::vector<cl::Device>{d});
            cl::Kernel k(p, "ws_probe");
            info.preferred_wg_multiple =
                k.getWorkGroupInfo<CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE>(d);
        } catch (const cl::Error&) {
            // Leave 1: a device that cannot build the probe still gets described.
        }

        cl_uint major = 0, minor = 0;
        cl_uint simd = 0, simd_width = 0;
        if (has_extension(d, "cl_nv_device_attribute_query") &&
            raw_info(d, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, major) &&
            raw_info(d, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, minor) &&
            nvidia_cores_per_sm(major, minor) > 0) {
            info.pes_per_cu = nvidia_cores_per_sm(major, minor);
            info.pe_source = PeSource::nv_compute_capability;
        } else if (has_extension(d, "cl_amd_device_attribute_query") &&
                   raw_info(d, CL_DEVICE_SIMD_PER_COMPUTE_UNIT_AMD, simd) &&
                   raw_info(d, CL_DEVICE_SIMD_WIDTH_AMD, simd_width) && simd * simd_width > 0) {
            info.pes_per_cu = simd * simd_width;
            info.pe_source = PeSource::amd_attribute;
        } else if (info.type == DeviceType::cpu && d.getInfo<CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT>() > 0) {
            info.pes_per_cu = d.getInfo<CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT>();
            info.pe_source = PeSource::cpu_vector_width;
        } else {
            info.pes_per_cu = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, info.preferred_wg_multiple));
            info.pe_source = PeSource::preferred_multiple;
        }
    } catch (const cl::Error& e) {
        rethrow_cl(e, "querying device '" + info.name + "'");
    }
    return info;
}

namespace {

/// "no OpenCL platform found", with the likely reason: a memory limit where one is set (PoCL
/// then fails to start), else a missing ICD.
[[noreturn]] void no_platform() {
    const std::string limit = host_limit_hint();
    throw Error("no OpenCL platform found" +
                (limit.empty() ? std::string(" (is an ICD such as pocl-opencl-icd installed?)") : limit));
}

}  // namespace

std::vector<LocalDevice> all_local_devices() {
    check_host_memory_for_opencl();  // under a tight `ulimit -v`, PoCL asserts or hangs
    std::vector<cl::Platform> platforms;
    try {
        cl::Platform::get(&platforms);
    } catch (const cl::Error& e) {
        if (e.err() == -1001 || e.err() == CL_DEVICE_NOT_FOUND) no_platform();
        rethrow_cl(e, "listing OpenCL platforms" + host_limit_hint());
    }
    if (platforms.empty()) no_platform();
    std::vector<LocalDevice> out;
    for (const auto& p : platforms) {
        std::vector<cl::Device> devs;
        try {
            p.getDevices(CL_DEVICE_TYPE_ALL, &devs);
        } catch (const cl::Error& e) {
            if (e.err() == CL_DEVICE_NOT_FOUND) continue;
            rethrow_cl(e, "listing devices of platform " + p.getInfo<CL_PLATFORM_NAME>() + host_limit_hint());
        }
        const auto pname = p.getInfo<CL_PLATFORM_NAME>();
        for (auto& d : devs) {
            LocalDevice ld{d, describe_device(d, pname)};
            ld.info.index = static_cast<int>(out.size());
            out.push_back(std::move(ld));
        }
    }
    if (out.empty()) throw Error("no OpenCL device found on any platform");
    return out;
}

}  // namespace worksize
