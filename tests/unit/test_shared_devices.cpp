// Issue 15: two ranks driving one device. shared_devices() is pure over the devices rank 0
// gathered, so fake GPU records stand in for a node with two GPUs.
#include <gtest/gtest.h>

#include "worksize/scheduler/profile.hpp"
#include "worksize/scheduler/types.hpp"

#include "synthetic_devices.hpp"

namespace worksize {
namespace {

/// Device `index` of rank `rank` on `host`: PoCL's CPU or (any other type) an H200.
DeviceInfo dev(int rank, int index, std::string host, DeviceType type, std::string pci = "") {
    DeviceInfo d = unit::discovered(index, type, type == DeviceType::cpu ? "cpu-x86-64" : "NVIDIA H200");
    d.rank = rank;
    d.host = std::move(host);
    d.pci_bus_id = std::move(pci);
    return d;
}

TEST(SharedDevices, TwoRanksOnOneGpuByPciBusId) {
    // Node n1: ranks 1 and 2 both drive the GPU at 0000:3b:00.0 (under different indices, as
    // with per-rank CUDA_VISIBLE_DEVICES); rank 3 drives the other GPU.
    const std::vector<DeviceInfo> devs = {dev(1, 0, "n1", DeviceType::gpu, "0000:3b:00.0"),
                                          dev(2, 1, "n1", DeviceType::gpu, "0000:3b:00.0"),
                                          dev(3, 0, "n1", DeviceType::gpu, "0000:5d:00.0")};
    const auto s = shared_devices(devs);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].instances, (std::vector<std::size_t>{0, 1}));
    EXPECT_EQ(s[0].text, "ranks 1 and 2 on host n1 would drive one device, 0 'NVIDIA H200' (gpu, PCI 0000:3b:00.0)");
}

TEST(SharedDevices, DifferentPciOrHostIsNotShared) {
    // One index on two ranks, but two PCI addresses: two GPUs (per-rank device visibility).
    EXPECT_TRUE(shared_devices({dev(1, 0, "n1", DeviceType::gpu, "0000:3b:00.0"),
                                dev(2, 0, "n1", DeviceType::gpu, "0000:5d:00.0")})
                    .empty());
    // The same PCI address on two hosts: two nodes.
    EXPECT_TRUE(shared_devices({dev(1, 0, "n1", DeviceType::gpu, "0000:3b:00.0"),
                                dev(2, 0, "n2", DeviceType::gpu, "0000:3b:00.0")})
                    .empty());
}

TEST(SharedDevices, WithoutPciTheIndexDecides) {
    const auto s = shared_devices({dev(1, 0, "n1", DeviceType::accelerator), dev(2, 1, "n1", DeviceType::accelerator),
                                   dev(3, 0, "n1", DeviceType::accelerator), dev(4, 0, "n1", DeviceType::accelerator)});
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].instances, (std::vector<std::size_t>{0, 2, 3}));
    EXPECT_EQ(s[0].text,
              "ranks 1, 3 and 4 on host n1 would drive one device, 0 'NVIDIA H200' (accelerator, no PCI bus id "
              "from the driver: the same device index)");
    // One side with a PCI id and the other without: not known to be one device.
    EXPECT_TRUE(shared_devices({dev(1, 0, "n1", DeviceType::gpu, "0000:3b:00.0"), dev(2, 0, "n1", DeviceType::gpu)})
                    .empty());
}

TEST(SharedDevices, CpuDevicesAndOneRankAreLeftAlone) {
    // Ranks of one host sharing its CPU (the emulated nodes): oversubscribed_nodes() warns instead.
    EXPECT_TRUE(shared_devices({dev(1, 0, "n1", DeviceType::cpu), dev(2, 0, "n1", DeviceType::cpu)}).empty());
    // Two devices of one rank are never one device shared.
    EXPECT_TRUE(shared_devices({dev(1, 0, "n1", DeviceType::gpu), dev(1, 0, "n1", DeviceType::gpu)}).empty());
    // A node with two GPUs, each rank driving both (--select all): two shared devices.
    const auto s = shared_devices({dev(1, 0, "n1", DeviceType::gpu, "0000:3b:00.0"),
                                   dev(1, 1, "n1", DeviceType::gpu, "0000:5d:00.0"),
                                   dev(2, 0, "n1", DeviceType::gpu, "0000:3b:00.0"),
                                   dev(2, 1, "n1", DeviceType::gpu, "0000:5d:00.0")});
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].instances, (std::vector<std::size_t>{0, 2}));
    EXPECT_EQ(s[1].instances, (std::vector<std::size_t>{1, 3}));
}

TEST(SharedDevices, PciBusIdCrossesTheWire) {
    // The inventory message and `devices --json` carry it (profile.hpp's to_json / device_from_json).
    auto d = dev(2, 1, "n1", DeviceType::gpu, "0000:3b:00.0");
    d.compute_units = 132;
    d.pes_per_cu = 128;
    d.max_clock_mhz = 1980;
    d.max_work_group_size = 1024;
    d.max_work_item_sizes = {1024, 1024, 64};
    d.local_mem_bytes = 49152;
    d.global_mem_bytes = 1ull << 37;
    d.vendor = "NVIDIA Corporation";
    const auto back = device_from_json(to_json(d));
    EXPECT_EQ(back.pci_bus_id, "0000:3b:00.0");
    EXPECT_TRUE(same_device(back, d));
}

}  // namespace
}  // namespace worksize
