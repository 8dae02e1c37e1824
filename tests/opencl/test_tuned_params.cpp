// tuned_job_options: the kernel parameters the commands add for the devices (the GPU defaults
// where every device is a GPU, a tuning entry's with --local tuned), called as a C++ user would.
// No device is needed: the devices are described, the tuning entries written into a temporary
// database.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "worksize/runtime/autotune.hpp"
#include "worksize/runtime/kernel_job.hpp"
#include "worksize/runtime/plan_job.hpp"

#include "synthetic_devices.hpp"

namespace worksize {
namespace {

class TunedParams : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("ws-tuned-params-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
        db_ = (dir_ / "db.json").string();
        given_.size = {256, 256};
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    /// A tuning entry of `kernel`'s job of given_ on `device`, chosen with kernel parameters `params`.
    void store_entry(const std::string& kernel, const DeviceInfo& device, const nlohmann::json& params) {
        const auto job = kernel_job(kernel).make(given_);
        Store s = Store::open(db_);
        TuningRecord r{{16, 16}, 1e-3, 10, 50, "guided", 1};
        r.params = params;
        s.put_tuning(fingerprint_of(device), kernel, job->tuning_key(), job->problem(), r);
        s.save();
    }

    JobOptions tuned(const std::string& kernel, const std::vector<DeviceInfo>& devices, LocalPolicy local) {
        return tuned_job_options(kernel, given_, devices, local, nullptr, db_);
    }

    std::filesystem::path dir_;
    std::string db_;
    JobOptions given_;
};

TEST_F(TunedParams, AllGpusGetTheKernelsGpuParameters) {
    const std::vector<DeviceInfo> gpus = {unit::gpu(), unit::gpu()};
    EXPECT_EQ(tuned("matmul", gpus, LocalPolicy::paper).params, nlohmann::json({{"variant", "reg"}}));
    EXPECT_EQ(tuned("interp", gpus, LocalPolicy::paper).params,
              nlohmann::json({{"ry", 8}, {"stage", 1}, {"stage_x", 64}}));
    // No entry in the database: --local tuned adds the GPU defaults too.
    EXPECT_EQ(tuned("matmul", gpus, LocalPolicy::tuned).params, nlohmann::json({{"variant", "reg"}}));
    // The null policy, a kernel without tunables and a variant given keep the job as given.
    EXPECT_EQ(tuned("matmul", gpus, LocalPolicy::null).params, nlohmann::json::object());
    EXPECT_EQ(tuned("quad", gpus, LocalPolicy::paper).params, nlohmann::json::object());
    given_.params = {{"variant", "tiled"}};
    EXPECT_EQ(tuned("matmul", gpus, LocalPolicy::paper).params, given_.params);
}

TEST_F(TunedParams, MixedDevicesKeepTheJobsOwnParameters) {
    const std::vector<DeviceInfo> mixed = {unit::gpu(), unit::cpu()};
    EXPECT_EQ(tuned("matmul", mixed, LocalPolicy::paper).params, nlohmann::json::object());
    EXPECT_EQ(tuned("interp", mixed, LocalPolicy::paper).params, nlohmann::json::object());
    given_.params = {{"vw", 4}};
    EXPECT_EQ(tuned("interp", mixed, LocalPolicy::paper).params, given_.params);
}

TEST_F(TunedParams, TunedPolicyTakesTheEntriesParameters) {
    const std::vector<DeviceInfo> mixed = {unit::gpu(), unit::cpu()};
    const nlohmann::json reg = {{"variant", "reg"}, {"bm", 64}, {"bn", 64}};
    store_entry("matmul", mixed[0], reg);
    EXPECT_EQ(tuned("matmul", mixed, LocalPolicy::tuned).params, reg);
    // Through the plan options, with the caller's open database.
    Database db(db_);
    KernelPlanOptions o;
    o.kernel = "matmul";
    o.job = given_;
    o.local_policy = LocalPolicy::tuned;
    o.database = &db;
    EXPECT_EQ(tuned_job_options(mixed, o).params, reg);
    // Not for another local policy: the mixed devices keep the job's own.
    EXPECT_EQ(tuned("matmul", mixed, LocalPolicy::paper).params, nlohmann::json::object());
}

TEST_F(TunedParams, DisagreeingEntriesTakeTheMostChosenSet) {
    const std::vector<DeviceInfo> devices = {unit::cpu(), unit::node1_cpu("a", 4), unit::node1_cpu("b", 8)};
    store_entry("interp", devices[0], {{"vw", 2}});
    store_entry("interp", devices[1], {{"vw", 8}, {"ry", 2}});
    store_entry("interp", devices[2], {{"vw", 8}, {"ry", 2}});
    EXPECT_EQ(tuned("interp", devices, LocalPolicy::tuned).params, nlohmann::json({{"vw", 8}, {"ry", 2}}));
    // A tunable given: no entry decides (and these CPUs get no GPU defaults).
    given_.params = {{"vw", 1}};
    EXPECT_EQ(tuned("interp", devices, LocalPolicy::tuned).params, given_.params);
}

}  // namespace
}  // namespace worksize
