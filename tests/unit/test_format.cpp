// Unit tests of the seconds in message text (format.hpp), against hand-written strings.
#include <gtest/gtest.h>

#include "worksize/scheduler/format.hpp"

using namespace worksize;

TEST(Format, SecondsKeepTheGivenSignificantDigits) {
    EXPECT_EQ(format_seconds(0.0123456, 3), "0.0123 s");
    EXPECT_EQ(format_seconds(0.0123456, 4), "0.01235 s");
    EXPECT_EQ(format_seconds(12.5, 3), "12.5 s");
    EXPECT_EQ(format_seconds(1234.5, 3), "1.23e+03 s");
    EXPECT_EQ(format_seconds(1234.5, 4), "1234 s");
    EXPECT_EQ(format_seconds(2, 3), "2 s");
}
