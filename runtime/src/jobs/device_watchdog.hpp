// --kernel-timeout for data jobs: a thread that watches this rank's waits on its devices. A wait
// (a queue's finish, a read, an event the engine polls) that lasts longer than the limit means a
// kernel that does not end; it cannot be stopped, so the watchdog prints one line naming the
// kernel and the device and ends the whole job (MPI_Abort: every rank and mpiexec end).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace worksize::data_exec {

class DeviceWatchdog {
public:
    /// `limit_s` 0: no limit (nothing is started). `job`: the job's name for the line.
    DeviceWatchdog(double limit_s, std::string job, int rank);
    DeviceWatchdog(const DeviceWatchdog&) = delete;
    DeviceWatchdog& operator=(const DeviceWatchdog&) = delete;
    ~DeviceWatchdog();

    /// A wait on `device` begins, behind `kernel` (the last kernel launched there) and the work
    /// of `steps` steps (the limit is per step: the host runs ahead of the devices); nested waits
    /// keep the first one's start.
    void begin(const std::string& kernel, const std::string& device, std::uint64_t steps = 1);
    void end();

    /// The scope of one wait.
    class Scope {
    public:
        Scope(DeviceWatchdog& w, const std::string& kernel, const std::string& device, std::uint64_t steps)
            : w_(w) {
            w_.begin(kernel, device, steps);
        }
        ~Scope() { w_.end(); }
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;

    private:
        DeviceWatchdog& w_;
    };

private:
    void watch();

    const double limit_s_;
    const std::string job_;
    const int rank_;
    std::mutex m_;
    std::condition_variable cv_;
    bool stop_ = false;
    int depth_ = 0;
    double since_ = 0.0, limit_now_ = 0.0;
    std::string kernel_, device_;
    std::thread thread_;
};

}  // namespace worksize::data_exec
