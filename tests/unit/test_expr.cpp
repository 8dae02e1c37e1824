// Integer expressions of kernel arguments (scheduler/expr.hpp): values, precedence, the names of a
// launch and of the declaration, and every refusal naming the expression and the place.
#include <gtest/gtest.h>

#include <string>

#include "worksize/scheduler/expr.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize {
namespace {

std::string refusal(const std::string& text, const ExprScope& scope = {}) {
    try {
        eval_expr(text, scope);
    } catch (const InvalidArgument& e) {
        return e.what();
    }
    return "";
}

TEST(Expr, ArithmeticAsInC) {
    const ExprScope s;
    EXPECT_EQ(eval_expr("1 + 2 * 3", s), 7);
    EXPECT_EQ(eval_expr("(1 + 2) * 3", s), 9);
    EXPECT_EQ(eval_expr("-7 / 2", s), -3) << "truncating division";
    EXPECT_EQ(eval_expr("-7 % 3", s), -1);
    EXPECT_EQ(eval_expr("10 - 4 - 3", s), 3) << "left to right";
    EXPECT_EQ(eval_expr("--5", s), 5);
    EXPECT_EQ(eval_expr("min(3, max(1, 2)) * 10", s), 20);
    EXPECT_EQ(eval_expr("9223372036854775807", s), INT64_MAX);
}

TEST(Expr, NamesOfTheLaunchAndTheDeclaration) {
    const ExprConstants c = {{"h", 20}, {"rows", 1000}};
    ExprScope s{3, 50, 432, 864, 5000, &c};
    EXPECT_EQ(eval_expr("min(h, rows - 1 - step * h)", s), 20);
    s.step = 49;
    EXPECT_EQ(eval_expr("min(h, rows - 1 - step * h)", s), 19) << "the last pyramid is lower";
    EXPECT_EQ(eval_expr("h - begin", s), -412);
    EXPECT_EQ(eval_expr("end - begin + units + steps", s), 432 + 5000 + 50);
}

TEST(Expr, RefusalsNameTheExpressionAndThePlace) {
    EXPECT_EQ(refusal("1 +"), "expression '1 +', at 4: the expression ends early");
    EXPECT_EQ(refusal("2 * (3 + 4"), "expression '2 * (3 + 4', at 11: expected ')'");
    EXPECT_EQ(refusal("3 $ 4"), "expression '3 $ 4', at 3: unexpected '$'");
    EXPECT_EQ(refusal("rows - 1"),
              "expression 'rows - 1', at 1: unknown name 'rows' (step, steps, begin, end, units, min, max, or a "
              "constant of the declaration)");
    EXPECT_EQ(refusal("5 / (step - step)"), "expression '5 / (step - step)', at 3: division by zero");
    EXPECT_EQ(refusal("9223372036854775807 + 1"), "expression '9223372036854775807 + 1', at 24: the value leaves a 64-bit integer");
    EXPECT_EQ(refusal("99999999999999999999"), "expression '99999999999999999999', at 20: the value leaves a 64-bit integer");
    EXPECT_EQ(refusal("min(1 2)"), "expression 'min(1 2)', at 7: expected ','");
}

TEST(Expr, CheckParsesWithTheDeclarationsConstants) {
    EXPECT_NO_THROW(check_expr("h - begin", {{"h", 3}}));
    EXPECT_NO_THROW(check_expr("units / (step - 1)", {})) << "a division by zero shows only when evaluated";
    EXPECT_THROW(check_expr("h - begin", {}), InvalidArgument);
    EXPECT_THROW(check_expr("1", {{"step", 3}}), InvalidArgument) << "a constant may not hide a built-in";
    EXPECT_THROW(check_expr("1", {{"2x", 3}}), InvalidArgument) << "not a name";
}

}  // namespace
}  // namespace worksize
