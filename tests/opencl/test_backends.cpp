// --backend: its parser (BackendChoice), and matmul's CLBlast backend on the test device through
// the master/worker round trip (every slice, or one slice of several, by CLBlast), verified
// against the CPU reference at awkward sizes; the backend in the slice spec and the tuning key.
// In a build without CLBlast the backend is refused when the job is made.
#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <string>

#include "pocl_device.hpp"
#include "slice_harness_2d.hpp"
#include "worksize/runtime/kernel_job.hpp"

namespace worksize {
namespace {

using namespace test;

TEST(BackendChoice, ParsesOneNameOrAListPerDevice) {
    EXPECT_EQ(parse_backends("").of(3), "kernel");
    EXPECT_EQ(parse_backends("").text(), "");
    const BackendChoice all = parse_backends("clblast");
    EXPECT_EQ(all.of(0), "clblast");
    EXPECT_EQ(all.of(7), "clblast");
    EXPECT_EQ(all.text(), "clblast");
    EXPECT_EQ(all.max_device(), -1);
    const BackendChoice some = parse_backends("2=clblast,0=kernel");
    EXPECT_EQ(some.of(0), "kernel");
    EXPECT_EQ(some.of(1), "kernel");
    EXPECT_EQ(some.of(2), "clblast");
    EXPECT_TRUE(some.uses("clblast"));
    EXPECT_EQ(some.text(), "2=clblast");  // the kernel entries dropped: one key for one meaning
    EXPECT_EQ(some.max_device(), 2);
    EXPECT_EQ(parse_backends("0=kernel").text(), "");
    EXPECT_FALSE(parse_backends("kernel").uses("clblast"));
}

TEST(BackendChoice, RefusesMalformedLists) {
    for (const char* bad : {"0=clblast+kernel", "0=clblast,0=kernel", "x=clblast", "-1=clblast", "0=", "=clblast",
                            "clblast,kernel", "a b"}) {
        try {
            (void)parse_backends(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find("invalid --backend"), std::string::npos) << e.what();
        }
    }
}

JobOptions options(std::uint64_t n, std::uint64_t m, std::uint64_t k, const std::string& backend) {
    JobOptions o;
    o.size = {n, m};
    o.seed = 7;
    o.iterations = 2;
    o.params = {{"k", k}, {"backend", backend}};
    return o;
}

/// The matmul job with `backend`, or nullptr (and the test skipped) in a build without CLBlast,
/// which must refuse it in one line.
std::unique_ptr<KernelJob> clblast_job(std::uint64_t n, std::uint64_t m, std::uint64_t k, const std::string& backend) {
    try {
        return kernel_job("matmul").make(options(n, m, k, backend));
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("built without CLBlast"), std::string::npos) << e.what();
        return nullptr;
    }
}

struct Case {
    std::uint64_t n, m, k;
    const char* backend;
    int slices;
};

void PrintTo(const Case& c, std::ostream* os) {
    *os << c.n << "x" << c.m << " K " << c.k << " --backend " << c.backend << ", " << c.slices << " slice(s)";
}

class MatmulClblast : public ::testing::TestWithParam<Case> {};

TEST_P(MatmulClblast, RoundTripVerifies) {
    const Case c = GetParam();
    auto job = clblast_job(c.n, c.m, c.k, c.backend);
    if (!job) GTEST_SKIP() << "built without CLBlast";
    const Verdict v = round_trip(*job, kernel_job("matmul"), c.slices, LocalKind::square);
    EXPECT_TRUE(v.ok) << v.detail;
}

INSTANTIATE_TEST_SUITE_P(Awkward, MatmulClblast,
                         ::testing::Values(Case{1, 1, 1, "clblast", 1}, Case{17, 17, 17, "clblast", 2},
                                           Case{509, 17, 23, "clblast", 3}, Case{7, 509, 509, "1=clblast", 3},
                                           Case{48, 30, 1, "0=clblast,2=clblast", 3}),
                         [](const auto& info) {
                             std::string name = "N";
                             name += std::to_string(info.param.n);
                             name += "_M";
                             name += std::to_string(info.param.m);
                             name += "_";
                             name += std::to_string(info.index);
                             return name;
                         });

TEST(MatmulClblast, AWrongSliceFailsVerification) {
    auto job = clblast_job(33, 21, 19, "clblast");
    if (!job) GTEST_SKIP() << "built without CLBlast";
    const Verdict v = round_trip(*job, kernel_job("matmul"), 2, LocalKind::null, [](Bytes& out) {
        float f = 0;
        std::memcpy(&f, out.data(), sizeof f);
        f += 1.0f;
        std::memcpy(out.data(), &f, sizeof f);
    });
    EXPECT_FALSE(v.ok);
}

TEST(MatmulClblast, SpecAndTuningKeyCarryTheBackend) {
    auto job = clblast_job(64, 64, 64, "1=clblast");
    if (!job) GTEST_SKIP() << "built without CLBlast";
    EXPECT_EQ(job->backend(0), "kernel");
    EXPECT_EQ(job->backend(1), "clblast");
    EXPECT_EQ(job_backends(*job, 2), (std::vector<std::string>{"kernel", "clblast"}));
    Assignment a;
    a.units = 8;
    a.global = {64, 8};
    a.device = 0;
    EXPECT_FALSE(job->slice_spec(a).params.contains("backend"));
    a.device = 1;
    EXPECT_EQ(job->slice_spec(a).params.at("backend"), "clblast");
    EXPECT_EQ(job->tuning_key().at("backend"), "1=clblast");
    // The kernel everywhere: no backend in the key (existing entries keep theirs).
    JobOptions o;
    o.size = {64, 64};
    EXPECT_FALSE(kernel_job("matmul").make(o)->tuning_key().contains("backend"));
    EXPECT_TRUE(job_backends(*kernel_job("matmul").make(o), 2).empty());
}

TEST(MatmulClblast, UnknownBackendRefused) {
    EXPECT_THROW(kernel_job("matmul").make(options(8, 8, 8, "cublas")), InvalidArgument);
    EXPECT_THROW(kernel_job("matmul").make(options(8, 8, 8, "0=cublas")), InvalidArgument);
}

}  // namespace
}  // namespace worksize
