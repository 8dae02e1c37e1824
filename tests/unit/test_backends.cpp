// The planner's library backends (PlanRequest::backends, matmul's `--backend clblast`): a device
// whose slice runs in a library gets a NULL local size with the library's rule and no padding,
// whatever the local policy; the other devices keep the rule's local size and padding.
#include <gtest/gtest.h>

#include "source_dir.hpp"
#include "worksize/scheduler/planner.hpp"
#include "worksize/scheduler/profile.hpp"

using namespace worksize;

namespace {

std::vector<DeviceInfo> h200_cpu() {
    return load_profile((test::source_dir() / "docs" / "profiles" / "h200-cpu16.json").string());
}

PlanRequest matmul_1531() {
    PlanRequest r;
    r.kernel = {.name = "matmul", .dims = 2, .default_priority = Priority::x, .ops_per_item = 3.0 * 1531 * 4};
    r.global = {1531, 383};
    r.strategy = "pe-ratio";
    r.pad_ndrange = true;
    return r;
}

}  // namespace

TEST(LibraryBackend, ItsDeviceGetsNullLocalAndNoPadding) {
    const auto devices = h200_cpu();
    ASSERT_EQ(devices.size(), 2u);
    PlanRequest r = matmul_1531();
    const Plan kernel_only = make_plan(devices, r);
    r.backends = {"clblast", ""};
    const Plan p = make_plan(devices, r);
    ASSERT_EQ(p.assignments.size(), 2u);
    const Assignment& gpu = p.assignments[0];
    EXPECT_EQ(gpu.backend, "clblast");
    EXPECT_TRUE(gpu.local.is_null());
    EXPECT_EQ(gpu.local_rule, "chosen by clblast (library backend)");
    EXPECT_EQ(gpu.padded_global, gpu.global);
    // The kernel's device is planned as without the library beside it.
    const Assignment& cpu = p.assignments[1];
    EXPECT_EQ(cpu.backend, "kernel");
    EXPECT_EQ(cpu.local, kernel_only.assignments[1].local);
    EXPECT_EQ(cpu.local_rule, kernel_only.assignments[1].local_rule);
    EXPECT_EQ(cpu.padded_global, kernel_only.assignments[1].padded_global);
    // The same split: the backend changes local sizes, not shares.
    EXPECT_EQ(gpu.units, kernel_only.assignments[0].units);
    // Without backends every device runs the kernel, with a local size of the rule.
    EXPECT_EQ(kernel_only.assignments[0].backend, "kernel");
    EXPECT_FALSE(kernel_only.assignments[0].local.is_null());
}

TEST(LibraryBackend, EveryLocalPolicyLeavesItToTheLibrary) {
    const auto devices = h200_cpu();
    for (const LocalPolicy policy : {LocalPolicy::paper, LocalPolicy::null}) {
        PlanRequest r = matmul_1531();
        r.local_policy = policy;
        r.backends = {"", "clblast"};
        const Plan p = make_plan(devices, r);
        EXPECT_EQ(p.assignments[1].local_rule, library_local_rule("clblast")) << to_string(policy);
        EXPECT_EQ(p.assignments[0].backend, "kernel");
    }
}

TEST(LibraryBackend, OneBackendPerDevice) {
    PlanRequest r = matmul_1531();
    r.backends = {"clblast"};
    EXPECT_THROW(make_plan(h200_cpu(), r), InvalidArgument);
}
