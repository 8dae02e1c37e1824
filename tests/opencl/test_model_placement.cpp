// load_models picks, of a device's stored models, the one calibrated where the device runs: a
// GPU on rank 0 takes its slices' inputs in-process, one like it on rank 1 over MPI, and the two
// share a fingerprint (on two H200s the rank-1 GPU's model, MPI sends included, predicted 225 ms
// for the rank-0 GPU alone, which took 70: docs/results/engine-model-h200-x2/).
#include <gtest/gtest.h>

#include "synthetic_devices.hpp"
#include "worksize/runtime/calibration.hpp"
#include "worksize/scheduler/links.hpp"
#include "worksize/scheduler/store.hpp"

namespace worksize {
namespace {

/// One GPU of a kind on `rank` of host "node" (the fingerprint is the same on every rank).
DeviceInfo gpu(int rank) {
    DeviceInfo d = unit::gpu();
    d.host = "node";
    d.rank = rank;
    return d;
}

/// A model whose kernel costs `kernel_s` per item and whose inputs came over MPI at `send_s`
/// per byte (0: calibrated on rank 0).
CostModel model(double kernel_s, double send_s) {
    CostModel m;
    m.kernel.per_x_s = kernel_s;
    m.send.per_x_s = send_s;
    m.recv.per_x_s = send_s;
    return m;
}

std::vector<CostModel> load(const Store& store, const std::vector<DeviceInfo>& devices) {
    std::vector<std::string> missing;
    auto models = load_models(store, devices, "k", nlohmann::json::object(), missing);
    EXPECT_TRUE(missing.empty());
    return models;
}

}  // namespace

TEST(ModelPlacement, EachDeviceTakesTheModelCalibratedWhereItRuns) {
    Store store;
    // Calibrated on both ranks in one run: the rank-1 model is the newer, the other an alternate.
    store.put_model(fingerprint_of(gpu(0)), "k", nlohmann::json::object(), model(1e-12, 0.0), 100.0, "node");
    store.put_model(fingerprint_of(gpu(1)), "k", nlohmann::json::object(), model(2e-12, 2e-10), 101.0, "node");
    ASSERT_EQ(store.find_models(fingerprint_of(gpu(0)), "k", nlohmann::json::object()).size(), 2u);
    const auto m = load(store, {gpu(0), gpu(1)});
    EXPECT_DOUBLE_EQ(m[0].kernel.per_x_s, 1e-12);  // the rank-0 calibration, not the newest
    EXPECT_DOUBLE_EQ(m[0].send.per_x_s, 0.0);
    EXPECT_DOUBLE_EQ(m[1].kernel.per_x_s, 2e-12);
    EXPECT_DOUBLE_EQ(m[1].send.per_x_s, 2e-10);
    // In one rank both devices are on rank 0: neither pays for MPI.
    const auto one = load(store, {gpu(0), gpu(0)});
    EXPECT_DOUBLE_EQ(one[1].kernel.per_x_s, 1e-12);
    EXPECT_DOUBLE_EQ(one[1].send.per_x_s, 0.0);
}

TEST(ModelPlacement, WithoutOneFromThereTheTransfersAreMadeToFit) {
    Store remote_only;
    remote_only.put_model(fingerprint_of(gpu(1)), "k", nlohmann::json::object(), model(2e-12, 2e-10), 101.0, "node");
    const auto m = load(remote_only, {gpu(0)});
    EXPECT_DOUBLE_EQ(m[0].kernel.per_x_s, 2e-12);
    EXPECT_DOUBLE_EQ(m[0].send.per_x_s, 0.0);  // rank 0 sends itself nothing
    EXPECT_DOUBLE_EQ(m[0].recv.per_x_s, 0.0);

    Store rank0_only;
    rank0_only.put_model(fingerprint_of(gpu(0)), "k", nlohmann::json::object(), model(1e-12, 0.0), 100.0, "node");
    // No MPI link stored: the model as it is (nothing better is known).
    EXPECT_DOUBLE_EQ(load(rank0_only, {gpu(0), gpu(1)})[1].send.per_x_s, 0.0);
    LinkFit mpi;
    mpi.latency_s = 1e-5;
    mpi.byte_s = 2.5e-10;
    mpi.sizes = 5;
    put_rank_link(rank0_only, "node", "node", mpi, 102.0);
    const auto with_link = load(rank0_only, {gpu(0), gpu(1)});
    EXPECT_DOUBLE_EQ(with_link[1].send.per_x_s, 2.5e-10);  // the calibrated MPI link from rank 0
    EXPECT_DOUBLE_EQ(with_link[1].send.fixed_s, 1e-5);
    EXPECT_DOUBLE_EQ(with_link[1].recv.per_x_s, 2.5e-10);
    EXPECT_DOUBLE_EQ(with_link[0].send.per_x_s, 0.0);
}

}  // namespace worksize
