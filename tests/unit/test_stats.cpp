// Unit tests of the report statistics (quantiles, the sign test) against hand-computed values.
#include <gtest/gtest.h>

#include "worksize/scheduler/stats.hpp"
#include "worksize/scheduler/types.hpp"

using namespace worksize;

TEST(Stats, QuantileInterpolates) {
    const std::vector<double> v{1, 2, 3, 4, 5};
    EXPECT_DOUBLE_EQ(quantile(v, 0.0), 1.0);
    EXPECT_DOUBLE_EQ(quantile(v, 0.25), 2.0);
    EXPECT_DOUBLE_EQ(quantile(v, 0.5), 3.0);
    EXPECT_DOUBLE_EQ(quantile(v, 1.0), 5.0);
    EXPECT_DOUBLE_EQ(quantile({10, 20}, 0.5), 15.0);   // between two points
    EXPECT_DOUBLE_EQ(quantile({10, 20, 40, 80}, 0.75), 50.0);  // pos 2.25
    EXPECT_DOUBLE_EQ(quantile({7}, 0.9), 7.0);
    EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0.0);
    EXPECT_THROW(quantile(v, 1.5), InvalidArgument);
    EXPECT_THROW(quantile(v, -0.1), InvalidArgument);
}

TEST(Stats, SignTestMatchesTheBinomialTail) {
    // 5 of 5: 2 * (1/32).
    EXPECT_NEAR(sign_test_p(5, 0), 0.0625, 1e-12);
    EXPECT_NEAR(sign_test_p(0, 5), 0.0625, 1e-12);
    // 6 wins of 15 (the H200 interp check): 2 * sum_{i<=6} C(15,i) / 2^15 = 2 * 9949 / 32768.
    EXPECT_NEAR(sign_test_p(6, 9), 2.0 * 9949.0 / 32768.0, 1e-12);
    // 1 of 10: 2 * (1 + 10) / 1024.
    EXPECT_NEAR(sign_test_p(1, 9), 22.0 / 1024.0, 1e-12);
    // An even split, or no pairs at all: no evidence either way.
    EXPECT_DOUBLE_EQ(sign_test_p(4, 4), 1.0);
    EXPECT_DOUBLE_EQ(sign_test_p(0, 0), 1.0);
    // Large n stays finite and small: 0 of 200.
    EXPECT_GT(sign_test_p(0, 200), 0.0);
    EXPECT_LT(sign_test_p(0, 200), 1e-50);
    EXPECT_THROW(sign_test_p(-1, 3), InvalidArgument);
}
