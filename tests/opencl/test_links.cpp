// calibrate --links over in-process ranks (local_comms): every pair and every device measured,
// stored and taken back as the data-job model's links; a failed check on rank 0 stops every rank
// before any measurement; a worker that hangs in the measurement is named lost by rank 0 before
// the hang ends (WORKSIZE_FAULT=hang-data:links).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "local_cluster.hpp"
#include "worksize/runtime/links.hpp"

namespace worksize {
namespace {

using test::run_local;

LinkOptions small() {
    LinkOptions o;
    o.max_bytes = 256 << 10;
    o.repeats = 2;
    return o;
}

/// What rank 0's calibrate_links gave or threw, with `check` run first.
struct Seen {
    LinkCalibration links;
    std::vector<DeviceInfo> devices;
    std::string error;
    ErrorReason reason = ErrorReason::generic;
    std::vector<int> lost;
};

Seen calibrate(int ranks, const DeviceSelection& sel, const std::function<void()>& check = {}) {
    Seen seen;
    run_local(
        ranks, sel,
        [&](Cluster& c) {
            seen.devices = c.devices();
            seen.lost = c.lost_ranks();
            return seen.error.empty() ? 0 : 1;
        },
        [&](Cluster& c) {
            try {
                LinkCalibration l = c.calibrate_links(small(), check);
                if (c.is_master()) seen.links = std::move(l);
            } catch (const Error& e) {
                if (!c.is_master()) throw;
                seen.error = e.what();
                seen.reason = e.reason();
            }
        });
    return seen;
}

}  // namespace

TEST(Links, EveryPairAndDeviceMeasuredStoredAndUsed) {
    DeviceSelection sel;
    sel.spec = "all";
    const Seen s = calibrate(3, sel);
    ASSERT_TRUE(s.error.empty()) << s.error;
    ASSERT_EQ(s.links.ranks.size(), 3u);  // 0-1, 0-2, 1-2
    EXPECT_EQ(s.links.ranks[2].a, 1);
    EXPECT_EQ(s.links.ranks[2].b, 2);
    ASSERT_EQ(s.links.devices.size(), s.devices.size());
    for (const auto& r : s.links.ranks) EXPECT_GT(r.fit.bandwidth(), 0) << r.a << "-" << r.b;
    for (const auto& d : s.links.devices) {
        EXPECT_GT(d.link.h2d.bandwidth(), 0);
        EXPECT_GT(d.link.d2h.bandwidth(), 0);
        EXPECT_EQ(d.link.h2d.sizes, 4u);  // 4 KiB to 256 KiB, x4 a step
    }
    Store store;
    store_links(store, s.links, s.devices);
    const StoredLinks used = stored_data_links(store, s.devices);
    EXPECT_TRUE(used.calibrated) << used.note;
    EXPECT_EQ(used.note, "links: calibrated");
    EXPECT_GE(used.links.between_ranks.byte_s, used.links.same_rank.byte_s);
    EXPECT_FALSE(stored_data_links(Store(), s.devices).calibrated);
}

TEST(Links, AFailedCheckStopsEveryRankBeforeAnyMeasurement) {
    const Seen s = calibrate(2, DeviceSelection{}, [] { throw InvalidArgument("no database here"); });
    EXPECT_EQ(s.error, "no database here");
    EXPECT_EQ(s.reason, ErrorReason::bad_input);
    EXPECT_TRUE(s.links.ranks.empty());
}

TEST(Links, AHungWorkerIsLost) {
    ::setenv("WORKSIZE_FAULT", "hang-data:links:2", 1);
    DeviceSelection sel;
    sel.rank_timeout_s = 1.0;
    const Seen s = calibrate(2, sel);
    ::unsetenv("WORKSIZE_FAULT");
    EXPECT_EQ(s.reason, ErrorReason::lost_rank) << s.error;
    EXPECT_NE(s.error.find("rank 1 on host "), std::string::npos) << s.error;
    EXPECT_EQ(s.error.find("hung on purpose"), std::string::npos) << s.error;
    EXPECT_EQ(s.lost, std::vector<int>{1});
}

}  // namespace worksize
