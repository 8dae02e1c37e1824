// The data jobs' --kernel-timeout (device_watchdog.hpp).
#include "jobs/device_watchdog.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "support/clock.hpp"
#include "worksize/runtime/mpi.hpp"
#include "worksize/scheduler/format.hpp"

namespace worksize::data_exec {

DeviceWatchdog::DeviceWatchdog(double limit_s, std::string job, int rank)
    : limit_s_(limit_s), job_(std::move(job)), rank_(rank) {
    if (limit_s_ > 0) thread_ = std::thread([this] { watch(); });
}

DeviceWatchdog::~DeviceWatchdog() {
    if (!thread_.joinable()) return;
    {
        const std::lock_guard lock(m_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

void DeviceWatchdog::begin(const std::string& kernel, const std::string& device, std::uint64_t steps) {
    if (limit_s_ <= 0) return;
    const std::lock_guard lock(m_);
    if (depth_++ > 0) return;
    since_ = now_s();
    limit_now_ = limit_s_ * double(std::max<std::uint64_t>(steps, 1));
    kernel_ = kernel;
    device_ = device;
}

void DeviceWatchdog::end() {
    if (limit_s_ <= 0) return;
    const std::lock_guard lock(m_);
    if (depth_ > 0) --depth_;
}

void DeviceWatchdog::watch() {
    std::unique_lock lock(m_);
    while (!stop_) {
        cv_.wait_for(lock, std::chrono::milliseconds(100));
        if (stop_ || depth_ == 0 || now_s() - since_ <= limit_now_) continue;
        std::fprintf(stderr,
                     "worksize: error: data job '%s', rank %d: kernel '%s' on device '%s' has not finished after "
                     "%s (--kernel-timeout %s per step); a kernel cannot be stopped, so the job ends\n",
                     job_.c_str(), rank_, kernel_.empty() ? "?" : kernel_.c_str(), device_.c_str(),
                     format_seconds(limit_now_, 3).c_str(), format_seconds(limit_s_, 3).c_str());
        mpi::end_job_now(1);
    }
}

}  // namespace worksize::data_exec
