// The devices and the environment the database's tests share (test_store.cpp,
// test_store_keys.cpp): an H200's fingerprint, PoCL's CPU device on a host, ScopedEnv.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

#include "worksize/scheduler/store.hpp"

namespace worksize::test {

inline DeviceFingerprint h200(const std::string& driver = "565.57") {
    return {"node1", "NVIDIA CUDA", "NVIDIA H200", "NVIDIA Corporation", driver, 132, 1024};
}

/// Sets an environment variable for a scope, restoring it after.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* v = std::getenv(name)) old_ = v;
        if (value) ::setenv(name, value, 1); else ::unsetenv(name);
    }
    ~ScopedEnv() {
        if (old_) ::setenv(name_, old_->c_str(), 1); else ::unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

inline DeviceInfo pocl_on(const std::string& host) {
    DeviceInfo d;
    d.host = host;
    d.platform = "Portable Computing Language";
    d.name = "cpu-haswell";
    d.vendor = "GenuineIntel";
    d.driver_version = "5.0";
    d.compute_units = 2;
    d.max_work_group_size = 4096;
    d.max_clock_mhz = 2000;
    return d;
}

}  // namespace worksize::test
