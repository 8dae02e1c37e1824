// Unit tests of the command-line parsers (sizes, strategies, local policies, priorities),
// including every error message's form. The sample kernels' descriptors are tested with their
// jobs (kernels/<name>/test_<name>.cpp).
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "worksize/scheduler/parse.hpp"
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

// Numbers of --param and the real options: the whole text, by std::from_chars. std::stod threw
// out_of_range on subnormals, so `--param a=1e-308` was "must be a number, got \"1e-308\"".
TEST(Parsers, NumbersWholeTextSubnormalsIncluded) {
    EXPECT_EQ(parse_number("2.5"), 2.5);
    EXPECT_EQ(parse_number("-4"), -4.0);
    EXPECT_EQ(parse_number("+4"), 4.0);
    EXPECT_EQ(parse_number(".5"), 0.5);
    EXPECT_EQ(parse_number("1e3"), 1000.0);
    EXPECT_EQ(parse_number("1e-308"), 1e-308);
    EXPECT_EQ(parse_number("4.9406564584124654e-324"), 4.9406564584124654e-324);
    for (const char* bad : {"", " 5", "5 ", "5x", "0x10", "inf", "nan", "1e400", "1e-400", "+-1", "++1", "+"})
        EXPECT_FALSE(parse_number(bad).has_value()) << "'" << bad << "'";
}
