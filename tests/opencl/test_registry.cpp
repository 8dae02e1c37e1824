// The kernel-job registry: the sample kernels in the order of kernels/CMakeLists.txt with what
// the command line reads from them, the checks of register_kernel_job, and references that
// stay valid across later registrations. Needs no device.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "worksize/runtime/calibration.hpp"
#include "worksize/runtime/kernel_job.hpp"

namespace worksize {
namespace {

KernelJobFactory dummy(const std::string& name, int dims = 1) {
    KernelJobFactory f;
    f.name = name;
    f.make = [](const JobOptions&) -> std::unique_ptr<KernelJob> { return nullptr; };
    f.execute = [](DeviceContext&, const SliceSpec&, std::span<const std::byte>, Bytes&) { return SliceTimes{}; };
    f.dims = dims;
    return f;
}

TEST(Registry, SampleKernelsInListOrder) {
    const auto names = kernel_job_names();
    ASSERT_GE(names.size(), 4u);
    EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 4),
              (std::vector<std::string>{"matmul", "interp", "sort", "quad"}));
    for (const auto& n : names) {
        const auto& f = kernel_job(n);
        EXPECT_EQ(f.name, n);
        EXPECT_TRUE(f.dims == 1 || f.dims == 2) << n;
    }
}

TEST(Registry, WhatTheCommandLineReads) {
    EXPECT_EQ(kernel_job("matmul").dims, 2);
    EXPECT_EQ(kernel_job("interp").dims, 2);
    EXPECT_EQ(kernel_job("sort").dims, 1);
    EXPECT_EQ(kernel_job("quad").dims, 1);
    using V = std::vector<std::string>;
    EXPECT_EQ(default_calibration_sizes("matmul"), (V{"64", "128", "256"}));
    EXPECT_EQ(default_calibration_sizes("interp"), (V{"128", "256", "512"}));
    EXPECT_EQ(default_calibration_sizes("sort"), (V{"4096", "16384", "65536"}));
    EXPECT_EQ(default_calibration_sizes("quad"), (V{"16384", "65536", "262144"}));
    EXPECT_EQ(default_calibration_sizes("no-such-kernel"), (V{"256", "1024", "4096"}));
    EXPECT_EQ(kernel_job("matmul").tune_size, "256");
    EXPECT_EQ(kernel_job("interp").tune_size, "256");
    EXPECT_EQ(kernel_job("sort").tune_size, "65536");
    EXPECT_EQ(kernel_job("quad").tune_size, "65536");
    const auto paper = [](const std::string& n) { return kernel_job(n).paper_case.value(); };
    EXPECT_EQ(paper("matmul").size, "1024");
    EXPECT_EQ(paper("matmul").iterations, 10u);
    EXPECT_DOUBLE_EQ(paper("matmul").ops, 8e11);
    EXPECT_EQ(paper("interp").size, "1024");
    EXPECT_EQ(paper("interp").iterations, 10000u);
    EXPECT_DOUBLE_EQ(paper("interp").ops, 5e11);
    EXPECT_EQ(paper("sort").size, "262144");
    EXPECT_EQ(paper("sort").iterations, 1u);
    EXPECT_DOUBLE_EQ(paper("sort").ops, 0.0);
    EXPECT_EQ(paper("quad").size, "262144");
    EXPECT_EQ(paper("quad").iterations, 10000u);
    EXPECT_DOUBLE_EQ(paper("quad").ops, 4e8);
    const auto keys = [](const std::string& n) {
        std::vector<std::string> k;
        for (const auto& p : kernel_job(n).params) k.push_back(p.key);
        return k;
    };
    EXPECT_EQ(keys("matmul"), (V{"k", "variant", "bm", "bn", "bk", "tm", "tn", "vw"}));
    // Every tunable is a parameter --param takes (the tuner makes its jobs through it).
    for (const auto& n : kernel_job_names())
        for (const auto& t : kernel_job(n).tunables) {
            const auto k = keys(n);
            EXPECT_NE(std::find(k.begin(), k.end(), t.key), k.end()) << n << ": " << t.key;
            EXPECT_FALSE(t.values.empty()) << n << ": " << t.key;
        }
    EXPECT_EQ(kernel_job("matmul").tunables.size(), 6u);
    EXPECT_EQ(keys("interp"), (V{"scale", "in_w", "in_h", "vw", "ry", "stage", "stage_x"}));
    // interp's tuner searches pixels per work-item along x, rows per work-item and whether the
    // input is staged in local memory.
    const auto& it = kernel_job("interp").tunables;
    ASSERT_EQ(it.size(), 3u);
    EXPECT_EQ(it[0].key, "vw");
    EXPECT_EQ(it[0].values, (std::vector<std::uint64_t>{1, 2, 4, 8, 16}));
    EXPECT_EQ(it[1].key, "ry");
    EXPECT_EQ(it[1].values, (std::vector<std::uint64_t>{1, 2, 4, 8}));
    EXPECT_EQ(it[2].key, "stage");
    EXPECT_EQ(it[2].values, (std::vector<std::uint64_t>{0, 1}));
    EXPECT_EQ(keys("sort"), (V{"distribution", "algo", "radix_bits", "radix_items", "radix_split", "partition_threads"}));
    EXPECT_EQ(keys("quad"), (V{"integrand", "a", "b"}));
    for (const auto& n : kernel_job_names()) EXPECT_FALSE(kernel_job(n).description.empty()) << n;
}

TEST(Registry, RegistrationChecks) {
    EXPECT_THROW(register_kernel_job(dummy("registry_test_no_dims", 0)), InvalidArgument);
    EXPECT_THROW(register_kernel_job(dummy("registry_test_3d", 3)), InvalidArgument);
    EXPECT_THROW(register_kernel_job(dummy("")), InvalidArgument);
    EXPECT_FALSE(has_kernel_job("registry_test_no_dims"));
    EXPECT_THROW(kernel_job("registry_test_no_dims"), InvalidArgument);
}

TEST(Registry, ReferencesSurviveLaterRegistrations) {
    const KernelJobFactory& matmul = kernel_job("matmul");
    register_kernel_job(dummy("registry_test_first"));
    const KernelJobFactory& first = kernel_job("registry_test_first");
    // Enough registrations to reallocate any vector-like storage several times.
    for (int i = 0; i < 200; ++i) register_kernel_job(dummy("registry_test_" + std::to_string(i)));
    EXPECT_EQ(&matmul, &kernel_job("matmul"));
    EXPECT_EQ(matmul.name, "matmul");
    EXPECT_EQ(matmul.dims, 2);
    EXPECT_EQ(&first, &kernel_job("registry_test_first"));
    EXPECT_EQ(first.name, "registry_test_first");
    EXPECT_TRUE(has_kernel_job("registry_test_199"));
    EXPECT_EQ(kernel_job_names().back(), "registry_test_199");
}

}  // namespace
}  // namespace worksize
