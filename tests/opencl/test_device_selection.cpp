// Device selection (issue 15): select_positions() is pure over a rank's discovered devices and
// its place in the job, so fake records stand in for a node with two GPUs and a CPU. No device
// is needed (the binary is the runtime's test binary).
#include <gtest/gtest.h>

#include "worksize/runtime/device_selection.hpp"

#include "synthetic_devices.hpp"

namespace worksize {
namespace {

using unit::discovered;

/// A node of two H200s and PoCL's CPU device, as `worksize devices --all` numbers them.
const std::vector<DeviceInfo> node = {discovered(0, DeviceType::gpu, "NVIDIA H200"),
                                      discovered(1, DeviceType::gpu, "NVIDIA H200"),
                                      discovered(2, DeviceType::cpu, "cpu-sapphirerapids-Intel(R) Xeon(R)")};

std::vector<std::size_t> pick(const std::string& spec, RankPlace place, int per_rank = 1, bool master_works = false) {
    DeviceSelection sel;
    sel.spec = spec;
    sel.per_rank = per_rank;
    sel.master_works = master_works;
    return select_positions(node, sel, place);
}

std::string error_of(const std::string& spec, RankPlace place, int per_rank = 1) {
    try {
        pick(spec, place, per_rank);
    } catch (const InvalidArgument& e) {
        return e.what();
    }
    return "(no error)";
}

using P = std::vector<std::size_t>;

TEST(DeviceSelection, AutoGivesTheKthRankOfANodeItsKthDevice) {
    // One process drives everything.
    EXPECT_EQ(pick("auto", {0, 1, 0, true}), (P{0, 1, 2}));
    // mpiexec -n 4 on the node: rank 0 is the master; ranks 1, 2, 3 take GPU 0, GPU 1, the CPU.
    EXPECT_EQ(pick("auto", {0, 4, 0, true}), P{});
    EXPECT_EQ(pick("auto", {1, 4, 1, true}), (P{0}));
    EXPECT_EQ(pick("auto", {2, 4, 2, true}), (P{1}));
    EXPECT_EQ(pick("auto", {3, 4, 3, true}), (P{2}));
    // --master-works: rank 0 takes the node's first device only (not all of them), the next
    // ranks the following ones.
    EXPECT_EQ(pick("auto", {0, 3, 0, true}, 1, true), (P{0}));
    EXPECT_EQ(pick("auto", {1, 3, 1, true}, 1, true), (P{1}));
    EXPECT_EQ(pick("auto", {2, 3, 2, true}, 1, true), (P{2}));
    // A node without rank 0: its node-local rank 0 takes the first device.
    EXPECT_EQ(pick("auto", {5, 8, 0, false}), (P{0}));
    EXPECT_EQ(pick("auto", {6, 8, 1, false}), (P{1}));
    // More ranks than devices: the turn wraps (a GPU taken twice is then refused by rank 0).
    EXPECT_EQ(pick("auto", {4, 5, 4, true}), (P{0}));
    // --devices-per-rank 2: ranks take two devices each, in turn.
    EXPECT_EQ(pick("auto", {1, 3, 1, true}, 2), (P{0, 1}));
    EXPECT_EQ(pick("auto", {2, 3, 2, true}, 2), (P{2, 0}));
}

TEST(DeviceSelection, AWordNamingOneInstance) {
    EXPECT_EQ(pick("1=gpu:1", {1, 3, 1, true}), (P{1}));
    EXPECT_EQ(pick("1=gpu:0,2=gpu:1", {2, 3, 2, true}), (P{1}));
    EXPECT_EQ(pick("1=h200:1+cpu", {1, 3, 1, true}), (P{1, 2}));
    EXPECT_EQ(pick("1=cpu:0", {1, 3, 1, true}), (P{2}));
    EXPECT_EQ(pick("1=2", {1, 3, 1, true}), (P{2}));
    EXPECT_EQ(pick("1=0+1", {1, 3, 1, true}), (P{0, 1}));
    // A rank the spec does not name drives nothing.
    EXPECT_EQ(pick("1=gpu:0", {2, 3, 2, true}), P{});
    EXPECT_EQ(error_of("1=gpu:2", {1, 3, 1, true}),
              "--select names device 'gpu:2' on rank 1, which has 3 device(s): 2 match 'gpu', gpu:0 to gpu:1 (it "
              "has: 0 NVIDIA H200 (gpu), 1 NVIDIA H200 (gpu), 2 cpu-sapphirerapids-Intel(R) Xeon(R) (cpu))");
}

TEST(DeviceSelection, AWordMatchingSeveralDevicesIsAnErrorUnlessAllowed) {
    EXPECT_EQ(error_of("1=gpu", {1, 3, 1, true}),
              "--select names device 'gpu' on rank 1, where it matches 2 devices (0 NVIDIA H200 (gpu), 1 NVIDIA "
              "H200 (gpu)): name one, gpu:0 to gpu:1, join several with '+', or allow 2 with --devices-per-rank 2");
    EXPECT_NE(error_of("1=nvidia", {1, 3, 1, true}).find("matches 2 devices"), std::string::npos);
    EXPECT_EQ(pick("1=gpu", {1, 3, 1, true}, 2), (P{0, 1}));
    // A word matching one device is as before.
    EXPECT_EQ(pick("1=cpu", {1, 3, 1, true}), (P{2}));
}

TEST(DeviceSelection, MissingDevicesListWhatTheRankHas) {
    EXPECT_EQ(error_of("1=7", {1, 3, 1, true}),
              "--select names device '7' on rank 1, which has 3 device(s): no such device (it has: 0 NVIDIA H200 "
              "(gpu), 1 NVIDIA H200 (gpu), 2 cpu-sapphirerapids-Intel(R) Xeon(R) (cpu))");
    EXPECT_NE(error_of("1=amd", {1, 3, 1, true}).find("'amd' on rank 1, which has 3 device(s): no such device"),
              std::string::npos);
    DeviceSelection sel;
    sel.spec = "1=gpu";
    sel.filter = "portable";  // PoCL's platform: the CPU only
    try {
        select_positions(node, sel, {1, 3, 1, true});
        ADD_FAILURE() << "no error";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("which has 1 device(s) matching the filter: no such device (it has: 2 "),
                  std::string::npos)
            << e.what();
    }
}

TEST(DeviceSelection, MalformedSpecs) {
    for (const char* bad : {"1=gpu:", "1=:1", "1=0:1", "1=gpu:x", "x=gpu", "1=", "=gpu", "1=gpu++cpu"}) {
        try {
            parse_select(bad);
            ADD_FAILURE() << bad << " was accepted";
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find("invalid --select '"), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(parse_select("1=gpu:1+cpu,2=0").at(1), (std::vector<std::string>{"gpu:1", "cpu"}));
}

}  // namespace
}  // namespace worksize
