// Test-only fault injection (see fault.hpp and docs/testing.md).
#include "fault.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "worksize/runtime/opencl.hpp"

namespace worksize::fault {

namespace {

struct InjectedFault {
    bool execute = false, crash = false, pack_throw = false, inventory_version = false, inventory_garbage = false;
    std::optional<std::uint64_t> wrong_local;
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
        if (v.rfind(prefix, 0) == 0) {
            const std::string n = v.substr(prefix.size());
            if (!n.empty() && n.find_first_not_of("0123456789") == std::string::npos) f.wrong_local = std::stoull(n);
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

void after_execute(const SliceSpec& spec, Bytes& out) {
    const InjectedFault& f = injected_fault();
    if (!f.wrong_local || spec.local.x != *f.wrong_local || out.size() < sizeof(float)) return;
    const float wrong = 1e30f;
    std::memcpy(out.data(), &wrong, sizeof wrong);
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

}  // namespace worksize::fault
