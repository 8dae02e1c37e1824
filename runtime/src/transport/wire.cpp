// The wire format between ranks (see wire.hpp): inventory messages and failures. Devices are
// written and read by the profile reader's to_json/device_from_json, the one device-JSON format.
#include "worksize/runtime/wire.hpp"

#include <new>

#include "worksize/runtime/host_memory.hpp"
#include "worksize/scheduler/profile.hpp"

namespace worksize::wire {

void Failure::raise(const std::string& prefix) const { throw_error(reason, prefix + message); }

Failure failure_of(const std::exception& e) {
    // Out of memory: say so, and name the process's memory limit where one is set.
    if (dynamic_cast<const std::bad_alloc*>(&e))
        return {std::string("out of host memory (") + e.what() + ")" + host_limit_hint(), ErrorReason::device_limit};
    return {e.what(), reason_of(e)};
}

void put_failure(nlohmann::json& into, const Failure& f) {
    into["error"] = f.message;
    into["reason"] = to_string(f.reason);
}

Failure failure_from_json(const nlohmann::json& j) {
    Failure f;
    f.message = j.at("error").get<std::string>();
    if (f.message.empty()) f.message = "unknown error";
    f.reason = error_reason_from_string(j.value("reason", std::string("generic")));
    return f;
}

nlohmann::json verdict_to_json(const Verdict& v) {
    return {{"ok", v.ok}, {"detail", v.detail}, {"checked", v.checked}};
}

Verdict verdict_from_json(const nlohmann::json& j) {
    return {j.at("ok").get<bool>(), j.at("detail").get<std::string>(), j.at("checked").get<bool>()};
}

nlohmann::json inventory_message(int rank, const std::string& host, const std::vector<DeviceInfo>& devices,
                                 unsigned cores) {
    nlohmann::json msg = {{"worksize_inventory", kInventoryVersion}, {"rank", rank}, {"host", host}};
    if (cores > 0) msg["cores"] = cores;
    msg["devices"] = nlohmann::json::array();
    for (const auto& d : devices) msg["devices"].push_back(to_json(d));
    return msg;
}

nlohmann::json inventory_failure(int rank, const std::string& host, const Failure& failure) {
    nlohmann::json msg = {{"worksize_inventory", kInventoryVersion}, {"rank", rank}, {"host", host}};
    put_failure(msg, failure);
    return msg;
}

Inventory parse_inventory(const std::string& text, int rank) {
    nlohmann::json j;
    Failure failure;
    Inventory inv;
    try {
        j = nlohmann::json::parse(text);
        const int v = j.at("worksize_inventory").get<int>();
        if (v != kInventoryVersion)
            throw Error("inventory message version " + std::to_string(v) + ", expected " +
                        std::to_string(kInventoryVersion) + " (mixed worksize versions?)");
        if (j.at("rank").get<int>() != rank) throw Error("inventory message claims another rank");
        if (j.contains("error")) {
            failure = failure_from_json(j);
        } else {
            inv.host = j.at("host").get<std::string>();
            inv.cores = j.value("cores", 0u);
            for (const auto& d : j.at("devices")) inv.devices.push_back(device_from_json(d));
        }
    } catch (const nlohmann::json::exception& e) {
        throw Error(std::string("malformed inventory message: ") + e.what());
    } catch (const InvalidArgument& e) {
        throw Error(std::string("malformed inventory message: ") + e.what());
    }
    if (!failure.empty()) failure.raise();
    return inv;
}

}  // namespace worksize::wire
