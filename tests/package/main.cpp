// A program built against the installed worksize package (tests/package/check.sh): plans a
// matrix product over two profile devices with the scheduler, lists the runtime's sample kernels
// (no device needed) and writes through the log (spdlog inside, not in its header).
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "worksize/runtime/kernel_job.hpp"
#include "worksize/scheduler/log.hpp"
#include "worksize/scheduler/planner.hpp"
#include "worksize/scheduler/profile.hpp"

namespace {

// Two devices in the profile format (docs/profiles/paper-2015.json).
constexpr const char* kProfile = R"({
  "devices": [
    {"name": "consumer-gpu", "vendor": "Example", "type": "gpu", "node": "n0",
     "compute_units": 16, "pes_per_cu": 64, "max_clock_mhz": 1500, "max_work_group_size": 1024,
     "max_work_item_sizes": [1024, 1024, 64], "local_mem_bytes": 65536, "global_mem_bytes": 8589934592},
    {"name": "consumer-cpu", "vendor": "Example", "type": "cpu", "node": "n0",
     "compute_units": 8, "pes_per_cu": 8, "max_clock_mhz": 3000, "max_work_group_size": 4096,
     "max_work_item_sizes": [4096, 4096, 4096], "local_mem_bytes": 32768, "global_mem_bytes": 17179869184}
  ]
})";

}  // namespace

int main() {
    try {
        const std::vector<worksize::DeviceInfo> devices = worksize::parse_profile(kProfile, "consumer");

        worksize::PlanRequest request;
        request.kernel.name = "matmul";
        request.kernel.dims = 2;
        request.kernel.default_priority = worksize::Priority::y;
        request.kernel.ops_per_item = 2.0 * 2048;  // a multiply and an add per k, K = 2048
        request.global = {2048, 2048};
        const worksize::Plan plan = worksize::make_plan(devices, request);

        std::printf("plan %s %llux%llu class %s strategy %s\n", plan.kernel.c_str(),
                    static_cast<unsigned long long>(plan.global.x),
                    static_cast<unsigned long long>(plan.global.y), worksize::to_string(plan.compute_class),
                    plan.strategy.c_str());
        for (const auto& a : plan.assignments)
            std::printf("device %s units %llu share %.4f local %llux%llu\n", a.device_name.c_str(),
                        static_cast<unsigned long long>(a.units), a.share,
                        static_cast<unsigned long long>(a.local.x), static_cast<unsigned long long>(a.local.y));

        std::printf("kernels");
        for (const std::string& name : worksize::kernel_job_names()) std::printf(" %s", name.c_str());
        std::printf("\n");

        worksize::log::info("consumer: shown at the default level");
        worksize::log::set_level(worksize::log::Level::warn);
        worksize::log::info("consumer: hidden at level warn");
        worksize::log::warn() << "consumer: " << plan.assignments.size() << " assignments";
    } catch (const std::exception& e) {
        std::fprintf(stderr, "worksize_consumer: %s\n", e.what());
        return 1;
    }
    return 0;
}
