// Rank-local inputs (`run --inputs local`, issue 26's "data from where it lives"), for every
// registered kernel that offers them: a job that never ran generate() makes any slice's input
// byte for byte as rank 0's slice_input() after generate(); the slice's own check passes on the
// slice's true output and fails on a corrupted element; the kernels that cannot refuse by name.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "pocl_device.hpp"
#include "worksize/runtime/kernel_job.hpp"

namespace worksize {
namespace {

struct Case {
    std::string kernel;
    GlobalSize size;
    nlohmann::json params;
};

// Awkward sizes: a prime height, a partial last row unit, interp at a scale that is not 2.
const Case kCases[] = {
    {"matmul", {37, 29}, {{"k", 23}}},
    {"matmul", {37, 29}, {{"k", 23}, {"variant", "reg"}}},
    {"interp", {61, 47}, nlohmann::json::object()},
    {"interp", {64, 33}, {{"scale", 3.0}}},
};

JobOptions options(const Case& c) {
    JobOptions o;
    o.size = c.size;
    o.seed = 7;
    o.params = c.params;
    return o;
}

class LocalInputs : public ::testing::TestWithParam<int> {};

TEST_P(LocalInputs, EverySliceAsRankZerosAndCheckedWhereItRan) {
    const Case& c = kCases[std::size_t(GetParam())];
    const auto& f = kernel_job(c.kernel);
    auto whole = f.make(options(c));
    whole->generate();
    const auto local = f.make(options(c));
    ASSERT_TRUE(local->makes_slice_inputs()) << c.kernel;
    const GlobalSize p = whole->problem();
    const std::uint64_t units = f.dims == 2 ? p.y : p.x;
    ASSERT_GE(units, 3u);
    for (const auto& [offset, n] : {std::pair<std::uint64_t, std::uint64_t>{0, units}, {1, units - 2}, {units - 1, 1}}) {
        Assignment a;
        a.offset = offset;
        a.units = n;
        a.global = f.dims == 2 ? GlobalSize{p.x, n} : GlobalSize{n, 1};
        Bytes mine;
        local->make_slice_input(a, mine);
        const std::string what = c.kernel + " " + c.params.dump() + ", slice " + std::to_string(offset) + "+" + std::to_string(n);
        EXPECT_EQ(mine, whole->slice_input(a)) << what;
        Bytes out;
        f.execute(test::first_device(), local->slice_spec(a), mine, out);
        const Verdict v = local->verify_slice(a, mine, out);
        EXPECT_TRUE(v.ok) << what << ": " << v.detail;
        ASSERT_GE(out.size(), sizeof(float)) << what;
        float x;
        std::memcpy(&x, out.data(), sizeof x);  // the slice's first element (its last may be padding)
        x += 1e-2f;
        std::memcpy(out.data(), &x, sizeof x);
        EXPECT_FALSE(local->verify_slice(a, mine, out).ok) << what << ": a corrupted first element passed";
    }
}

INSTANTIATE_TEST_SUITE_P(Kernels, LocalInputs, ::testing::Range(0, int(std::size(kCases))));

TEST(LocalInputs, KernelsThatNeedTheWholeInputRefuse) {
    JobOptions o;
    o.size = {1000, 1};
    const auto sort = kernel_job("sort").make(o);
    EXPECT_FALSE(sort->makes_slice_inputs());
    Bytes in;
    Assignment a;
    a.units = 10;
    try {
        sort->make_slice_input(a, in);
        FAIL() << "sort made a slice's input on its own";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("'sort' cannot make its inputs on each rank"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace worksize
