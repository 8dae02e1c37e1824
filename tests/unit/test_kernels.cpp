// Unit tests of the sample kernels' descriptors and of the command-line parsers (kernel names,
// sizes, strategies, local policies, priorities), including every error message's form.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "worksize/scheduler/kernels.hpp"
#include "worksize/scheduler/planner.hpp"
#include "worksize/scheduler/strategy.hpp"

using namespace worksize;

namespace {

std::string error_of(auto&& f) {
    try {
        f();
    } catch (const InvalidArgument& e) {
        return e.what();
    }
    return "<no error>";
}

}  // namespace

TEST(Kernels, NamesRoundTrip) {
    EXPECT_EQ(sample_kernel_names(),
              (std::vector<std::string>{"matmul", "interp", "sort", "quad"}));
    for (const auto& n : sample_kernel_names()) EXPECT_EQ(to_string(parse_kernel(n)), n);
    EXPECT_EQ(error_of([] { parse_kernel("foo"); }),
              "unknown kernel 'foo' (known: matmul, interp, sort, quad)");
    EXPECT_STREQ(to_string(KernelKind::custom), "custom");
    EXPECT_THROW(describe_kernel(KernelKind::custom, {1, 1}), InvalidArgument);
}

TEST(Kernels, MatmulHonestCount) {
    const auto d = describe_kernel(KernelKind::matmul, {1024, 1024});
    EXPECT_EQ(d.name, "matmul");
    EXPECT_EQ(d.dims, 2);
    EXPECT_EQ(d.default_priority, Priority::x);
    EXPECT_DOUBLE_EQ(d.ops_per_item, 3.0 * 1024);
    EXPECT_DOUBLE_EQ(d.bytes_in_per_item, 4.0);
    EXPECT_DOUBLE_EQ(d.bytes_in_fixed, 4.0 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(d.bytes_out_per_item, 4.0);
    // The paper's matmul (1024^2, 10 iterations) is medium by an honest count (3.2e10), not the
    // paper's 8e11; --ops reproduces the paper.
    EXPECT_EQ(classify(d.ops_per_item * 1024 * 1024 * 10), ComputeClass::medium);
}

TEST(Kernels, OtherDescriptors) {
    const auto interp = describe_kernel(KernelKind::interp, {1024, 1024});
    EXPECT_EQ(interp.dims, 2);
    EXPECT_EQ(interp.default_priority, Priority::y);
    EXPECT_DOUBLE_EQ(interp.ops_per_item, 20.0);
    EXPECT_DOUBLE_EQ(interp.bytes_in_per_item, 1.0);
    EXPECT_DOUBLE_EQ(interp.bytes_out_per_item, 4.0);

    const auto sort = describe_kernel(KernelKind::sort, {1u << 18, 1});
    EXPECT_EQ(sort.dims, 1);
    EXPECT_DOUBLE_EQ(sort.ops_per_item, 18.0 * 19.0 / 2.0);
    EXPECT_DOUBLE_EQ(sort.bytes_in_per_item, 4.0);
    // Not a power of two: rounded up (1000 -> 1024, log2 = 10).
    EXPECT_DOUBLE_EQ(describe_kernel(KernelKind::sort, {1000, 1}).ops_per_item, 55.0);

    const auto quad = describe_kernel(KernelKind::quad, {1u << 18, 1});
    EXPECT_EQ(quad.dims, 1);
    EXPECT_DOUBLE_EQ(quad.ops_per_item, 12.0);
    EXPECT_DOUBLE_EQ(quad.bytes_in_per_item + quad.bytes_out_per_item, 0.0);
}

class GoodSize : public ::testing::TestWithParam<std::tuple<std::string, int, GlobalSize>> {};
TEST_P(GoodSize, Parses) {
    const auto& [text, dims, want] = GetParam();
    EXPECT_EQ(parse_size(text, dims), want);
}
INSTANTIATE_TEST_SUITE_P(
    Sizes, GoodSize,
    ::testing::Values(std::tuple{std::string("1024"), 2, GlobalSize{1024, 1024}},
                      std::tuple{std::string("640x480"), 2, GlobalSize{640, 480}},
                      std::tuple{std::string("640X480"), 2, GlobalSize{640, 480}},
                      std::tuple{std::string("262144"), 1, GlobalSize{262144, 1}},
                      std::tuple{std::string("1"), 1, GlobalSize{1, 1}}));

class BadSize : public ::testing::TestWithParam<std::tuple<std::string, int>> {};
TEST_P(BadSize, OneClearLine) {
    const auto& [text, dims] = GetParam();
    const std::string msg = error_of([&] { parse_size(text, dims); });
    EXPECT_EQ(msg.rfind("invalid size '" + text + "': ", 0), 0u) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos);
}
INSTANTIATE_TEST_SUITE_P(
    Sizes, BadSize,
    ::testing::Values(std::tuple{std::string("0"), 2}, std::tuple{std::string("-5"), 2},
                      std::tuple{std::string("abc"), 1}, std::tuple{std::string("12abc"), 2},
                      std::tuple{std::string(""), 2}, std::tuple{std::string("x"), 2},
                      std::tuple{std::string("10x"), 2}, std::tuple{std::string("x10"), 2},
                      std::tuple{std::string("0x5"), 2}, std::tuple{std::string("5x0"), 2},
                      std::tuple{std::string("4x4x4"), 2}, std::tuple{std::string(" 5"), 1},
                      std::tuple{std::string("+5"), 1}, std::tuple{std::string("1.5"), 1},
                      std::tuple{std::string("4x4"), 1},
                      std::tuple{std::string("99999999999999999999"), 1},
                      std::tuple{std::string("4294967296"), 2},  // N x N overflows
                      std::tuple{std::string("4294967296x4294967296"), 2}));

TEST(ParseSize, MessageText) {
    EXPECT_EQ(error_of([] { parse_size("-5", 2); }),
              "invalid size '-5': expected N or WxH with positive integers");
}

TEST(Parsers, StrategyRoundTripsThroughToString) {
    for (std::string s : {"even", "pe-ratio", "paper", "model", "oracle"})
        EXPECT_EQ(parse_strategy(s), s);
    EXPECT_EQ(parse_strategy("pe_ratio"), "pe-ratio");
    EXPECT_EQ(error_of([] { parse_strategy("fast"); }),
              "unknown strategy 'fast' (valid: even, pe-ratio, paper, model, oracle)");
}

TEST(Parsers, LocalPolicyAndPriority) {
    for (auto p : {LocalPolicy::null, LocalPolicy::paper, LocalPolicy::tuned})
        EXPECT_EQ(parse_local_policy(to_string(p)), p);
    EXPECT_EQ(parse_priority("x"), Priority::x);
    EXPECT_EQ(parse_priority("y"), Priority::y);
    EXPECT_EQ(error_of([] { parse_local_policy("auto"); }),
              "unknown local policy 'auto' (valid: null, paper, tuned)");
    EXPECT_EQ(error_of([] { parse_priority("z"); }), "unknown priority 'z' (valid: x, y)");
}
