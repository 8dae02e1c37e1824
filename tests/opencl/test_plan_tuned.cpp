// plan_tuned (`--local tuned`): where a device's tuned local size does not divide its slice, the
// split is made again with its rows rounded to a multiple of the tuned y. No device is needed:
// the devices are described, the tuning entries written into a temporary database.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

#include "worksize/runtime/autotune.hpp"
#include "worksize/runtime/kernel_job.hpp"

#include "synthetic_devices.hpp"

namespace worksize {
namespace {

class PlanTuned : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("ws-plan-tuned-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
        db_ = (dir_ / "db.json").string();
        JobOptions o;
        o.size = {256, 1000};
        o.params = {{"vw", 1}};  // one pixel per work-item: the NDRange is the image
        job_ = kernel_job("interp").make(o);
        devices_ = {unit::node1_cpu("dev-a", 4), unit::node1_cpu("dev-b", 8)};
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    /// Entries of the whole problem's size class for both devices: (16,8) and (8,4).
    void store_entries() {
        Store s = Store::open(db_);
        s.put_tuning(fingerprint_of(devices_[0]), "interp", job_->tuning_key(), {256, 512},
                     {{16, 8}, 1e-3, 10, 50, "guided", 3});
        s.put_tuning(fingerprint_of(devices_[1]), "interp", job_->tuning_key(), {256, 512},
                     {{8, 4}, 1e-3, 10, 50, "guided", 3});
        s.save();
    }

    PlanRequest request(std::vector<double> weights) const {
        PlanRequest r;
        r.kernel = job_->descriptor();
        r.global = job_->problem();
        r.strategy = "paper";
        r.local_policy = LocalPolicy::tuned;
        r.weights = std::move(weights);
        r.pad_ndrange = job_->guards_index();  // as the commands plan it
        return r;
    }

    /// The database as a command opens it (once).
    const TuningSource& tuning() {
        database_.emplace(db_);
        return database_->tuning();
    }

    std::filesystem::path dir_;
    std::string db_;
    std::optional<Database> database_;
    std::unique_ptr<KernelJob> job_;
    std::vector<DeviceInfo> devices_;
};

TEST_F(PlanTuned, RowsRoundedSoThatTheTunedShapesFit) {
    store_entries();
    // 370 and 630 rows: neither (16,8) nor (8,4) divides them; 368 and 632 they do.
    std::vector<std::string> warnings;
    const Plan p = plan_tuned(devices_, request({0.37, 0.63}), tuning(), job_->tuning_key(), &warnings);
    EXPECT_TRUE(warnings.empty());
    ASSERT_EQ(p.assignments.size(), 2u);
    const auto& a = p.assignments[0];
    const auto& b = p.assignments[1];
    EXPECT_EQ(a.units, 368u);
    EXPECT_EQ(b.units, 632u);
    EXPECT_EQ(b.offset, 368u);
    EXPECT_EQ(a.local, (LocalSize{16, 8}));
    EXPECT_EQ(b.local, (LocalSize{8, 4}));
    EXPECT_EQ(a.local_rule.rfind("tuned (nearest db entry", 0), 0u) << a.local_rule;
    EXPECT_EQ(a.note, "rows rounded to a multiple of 8 for the tuned local size");
    EXPECT_EQ(b.note, "rows rounded to a multiple of 4 for the tuned local size");
}

TEST_F(PlanTuned, SmallShareKeptAndAlignedSharesUnchanged) {
    store_entries();
    // 20 rows on dev-a: rounding to 8 would move too much of its share, so it keeps 20 rows and
    // runs the tuned (16,8) on them padded to 24; dev-b's 980 rows already fit (8,4).
    const Plan p = plan_tuned(devices_, request({0.02, 0.98}), tuning(), job_->tuning_key());
    EXPECT_EQ(p.assignments[0].units, 20u);
    EXPECT_EQ(p.assignments[0].local, (LocalSize{16, 8}));
    EXPECT_EQ(p.assignments[0].padded_global.y, 24u);
    EXPECT_EQ(p.assignments[0].local_rule.rfind("tuned (nearest db entry x2^8.y2^9", 0), 0u) << p.assignments[0].local_rule;
    EXPECT_TRUE(p.assignments[0].note.empty());
    // A plan that does not pad keeps the paper rule there, and says why.
    PlanRequest unpadded = request({0.02, 0.98});
    unpadded.pad_ndrange = false;
    const Plan u = plan_tuned(devices_, unpadded, tuning(), job_->tuning_key());
    EXPECT_EQ(u.assignments[0].units, 20u);
    EXPECT_EQ(u.assignments[0].local_rule.rfind("paper (no tuned entry: ", 0), 0u) << u.assignments[0].local_rule;
    EXPECT_NE(u.assignments[0].local_rule.find("x2^8.y2^9, does not fit either"), std::string::npos)
        << u.assignments[0].local_rule;
    EXPECT_EQ(p.assignments[1].units, 980u);
    EXPECT_EQ(p.assignments[1].local, (LocalSize{8, 4}));
    EXPECT_TRUE(p.assignments[1].note.empty());
}

TEST_F(PlanTuned, NoDatabaseKeepsThePaperSplitAndRule) {
    std::vector<std::string> warnings;
    const Plan p = plan_tuned(devices_, request({0.37, 0.63}), tuning(), job_->tuning_key(), &warnings);
    EXPECT_EQ(p.assignments[0].units, 370u);
    for (const auto& a : p.assignments) EXPECT_EQ(a.local_rule.rfind("paper (no tuned entry", 0), 0u) << a.local_rule;
    PlanRequest paper = request({0.5, 0.5});
    paper.local_policy = LocalPolicy::paper;
    EXPECT_THROW(plan_tuned(devices_, paper, tuning(), job_->tuning_key()), InvalidArgument);
}

}  // namespace
}  // namespace worksize
