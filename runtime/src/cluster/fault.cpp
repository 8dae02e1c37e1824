// Test-only fault injection (see fault.hpp and docs/testing.md).
#include "cluster/fault.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <optional>
#include <thread>

#include "worksize/runtime/opencl.hpp"

namespace worksize::fault {

namespace {

struct InjectedFault {
    bool execute = false, crash = false, pack_throw = false, inventory_version = false, inventory_garbage = false,
         as_gpu = false;
    std::optional<std::uint64_t> wrong_local;
    std::optional<std::uint64_t> scale_local;
    double scale = 1.0;
};

const InjectedFault& injected_fault() {
    static const InjectedFault fault = [] {
        InjectedFault f;
        const char* env = std::getenv("WORKSIZE_FAULT");
        if (!env) return f;
        const std::string v = env, prefix = "wrong-local:";
        f.execute = v == "execute";
        f.crash = v == "crash";
        f.pack_throw = v == "pack-throw";
        f.inventory_version = v == "inventory-version";
        f.inventory_garbage = v == "inventory-garbage";
        f.as_gpu = v == "as-gpu";
        if (v.rfind(prefix, 0) == 0) {
            const std::string n = v.substr(prefix.size());
            if (!n.empty() && n.find_first_not_of("0123456789") == std::string::npos) f.wrong_local = std::stoull(n);
        }
        const std::string scale = "scale-local:";
        if (v.rfind(scale, 0) == 0) {
            const std::string rest = v.substr(scale.size());
            const auto colon = rest.find(':');
            const std::string n = rest.substr(0, colon);
            if (colon != std::string::npos && !n.empty() && n.find_first_not_of("0123456789") == std::string::npos) {
                char* end = nullptr;
                const std::string factor = rest.substr(colon + 1);
                const double x = std::strtod(factor.c_str(), &end);
                if (!factor.empty() && end && *end == '\0' && x > 0) {
                    f.scale_local = std::stoull(n);
                    f.scale = x;
                }
            }
        }
        return f;
    }();
    return fault;
}

}  // namespace

void before_execute(const DeviceInfo& dev) {
    const InjectedFault& f = injected_fault();
    if (f.execute)
        throw ClError("clEnqueueNDRangeKernel", CL_OUT_OF_RESOURCES,
                      dev.name + " (injected by WORKSIZE_FAULT=execute)");
    if (f.crash) std::_Exit(134);
}

void after_execute(const SliceSpec& spec, std::span<std::byte> out) {
    const InjectedFault& f = injected_fault();
    if (!f.wrong_local || spec.local.x != *f.wrong_local || out.size() < sizeof(float)) return;
    // The first two floats: wrong as floats, and as a double (a declared reduction's result).
    const float wrong = 1e30f;
    for (std::size_t o = 0; o < 2 * sizeof wrong && o + sizeof wrong <= out.size(); o += sizeof wrong)
        std::memcpy(out.data() + o, &wrong, sizeof wrong);
}

void scale_times(const SliceSpec& spec, SliceTimes& times) {
    const InjectedFault& f = injected_fault();
    if (f.scale_local && spec.local.x == *f.scale_local) times.kernel *= f.scale;
}

void before_pack() {
    if (injected_fault().pack_throw) throw Error("packing the slice input failed (injected by WORKSIZE_FAULT=pack-throw)");
}

std::string inventory_text(nlohmann::json msg) {
    const InjectedFault& f = injected_fault();
    if (f.inventory_version) msg["worksize_inventory"] = 999;
    if (f.inventory_garbage) return "{\"worksize_inventory\": 1, \"rank\": ";
    return msg.dump();
}

void device_identity(DeviceInfo& dev) {
    if (!injected_fault().as_gpu) return;
    dev.type = DeviceType::gpu;
    dev.pci_bus_id = "0000:01:00." + std::to_string(dev.index % 8);
}

namespace {

/// A positive number of seconds, or nothing.
std::optional<double> seconds_of(const std::string& text) {
    char* end = nullptr;
    const double x = std::strtod(text.c_str(), &end);
    if (text.empty() || !end || *end != '\0' || !(x > 0)) return std::nullopt;
    return x;
}

}  // namespace

DataFault data_fault() {
    DataFault f;
    const char* env = std::getenv("WORKSIZE_FAULT");
    if (!env) return f;
    const std::string v = env, hang = "hang-data:", slow = "slow-data:", link = "slow-link:";
    if (v.rfind(hang, 0) == 0) {
        std::string rest = v.substr(hang.size());
        if (const auto colon = rest.find(':'); colon != std::string::npos) {
            const auto s = seconds_of(rest.substr(colon + 1));
            if (!s) return f;
            f.hang_s = *s;
            rest.resize(colon);
        }
        if (rest == "scatter" || rest == "steps" || rest == "gather" || rest == "links") f.hang = rest;
    }
    if (v.rfind(slow, 0) == 0)
        if (const auto s = seconds_of(v.substr(slow.size()))) f.slow_s = *s;
    if (v.rfind(link, 0) == 0)
        if (const auto s = seconds_of(v.substr(link.size()))) f.link_s = *s;
    return f;
}

void hang_data(const DataFault& f, const std::string& phase) {
    if (f.hang != phase) return;
    std::this_thread::sleep_for(std::chrono::duration<double>(f.hang_s));
    throw Error("this rank hung on purpose (WORKSIZE_FAULT=hang-data:" + phase + ")");
}

}  // namespace worksize::fault
