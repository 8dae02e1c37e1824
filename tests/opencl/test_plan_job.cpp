// plan_job (plan_job.hpp), the runtime's planning entry point, gives a C++ program the plans the
// `worksize plan` command prints: every row of tests/golden/plans.expected (what the command
// prints for the sample kernels over two profiles, pinned by golden.plans) planned here through
// the library from the same inputs. No device is needed: the devices are the profiles'.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "worksize/runtime/plan_job.hpp"
#include "worksize/scheduler/parse.hpp"
#include "worksize/scheduler/profile.hpp"

#include "source_dir.hpp"

namespace worksize {
namespace {

/// One row of plans.expected: "PROFILE KERNEL SIZE STRATEGY LOCAL OPS JSON-or-error".
struct GoldenRow {
    std::string profile, kernel, size, strategy, local, ops, expected;
};

std::vector<GoldenRow> golden_rows() {
    std::ifstream in(test::source_dir() / "tests/golden/plans.expected");
    std::vector<GoldenRow> rows;
    for (std::string line; std::getline(in, line);) {
        std::istringstream is(line);
        GoldenRow r;
        is >> r.profile >> r.kernel >> r.size >> r.strategy >> r.local >> r.ops >> std::ws;
        std::getline(is, r.expected);
        rows.push_back(r);
    }
    return rows;
}

std::vector<DeviceInfo> profile_devices(const std::string& name) {
    const auto dir = name == "paper-2015.json" ? test::source_dir() / "docs/profiles" : test::source_dir() / "tests/golden";
    return load_profile((dir / name).string());
}

/// The job `plan --kernel K --size S --local L` makes over `devices`: the command adds the
/// kernel's GPU parameters (KernelJobFactory::gpu_params) where every device is a GPU and the
/// local policy is not null, and no --param was given.
JobOptions job_options_of(const GoldenRow& r, const std::vector<DeviceInfo>& devices) {
    const auto& f = kernel_job(r.kernel);
    JobOptions o;
    o.size = parse_size(r.size, f.dims);
    const bool gpus = std::all_of(devices.begin(), devices.end(), [](const DeviceInfo& d) {
        return d.type == DeviceType::gpu;
    });
    if (!f.tunables.empty() && gpus && r.local != "null") o.params = f.gpu_params;
    return o;
}

/// The fields of the plan's JSON (as `plan --json` writes them) that plans.expected keeps.
nlohmann::json golden_fields(const Plan& p) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& x : p.assignments)
        a.push_back({x.device, x.offset, x.units, {x.global.x, x.global.y}, {x.padded_global.x, x.padded_global.y},
                     {x.local.x, x.local.y}, x.local_rule});
    return {{"kernel", p.kernel},  {"global", {p.global.x, p.global.y}},
            {"ops", p.ops},        {"compute_class", to_string(p.compute_class)},
            {"k", p.k},            {"strategy", p.strategy},
            {"priority", to_string(p.priority)}, {"a", a}};
}

TEST(PlanJob, KernelJobsAsTheCommandPrintsThem) {
    const auto rows = golden_rows();
    ASSERT_EQ(rows.size(), 336u) << "plans.expected";
    for (const auto& r : rows) {
        SCOPED_TRACE(r.profile + " " + r.kernel + " " + r.size + " " + r.strategy + " " + r.local + " " + r.ops);
        const auto devices = profile_devices(r.profile);
        KernelPlanOptions o;
        o.kernel = r.kernel;
        o.strategy = r.strategy;
        o.local_policy = parse_local_policy(r.local);
        if (r.ops != "default") o.ops = std::stod(r.ops);
        auto plan = [&] {
            o.job = job_options_of(r, devices);
            const auto job = kernel_job(r.kernel).make(o.job);
            return plan_job(devices, *job, o);
        };
        if (r.expected == "error") {
            EXPECT_ANY_THROW(plan());
            continue;
        }
        EXPECT_EQ(golden_fields(plan()), nlohmann::json::parse(r.expected));
    }
}

TEST(PlanJob, MeasuringStrategyNeedsACluster) {
    const auto devices = profile_devices("hetero.json");
    KernelPlanOptions o;
    o.kernel = "matmul";
    o.strategy = "oracle";
    o.job.size = {256, 256};
    const auto job = kernel_job("matmul").make(o.job);
    EXPECT_THROW(plan_job(devices, *job, o), InvalidArgument);
}

}  // namespace
}  // namespace worksize
