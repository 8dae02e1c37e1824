// Integer expressions for kernel arguments that depend on the step or on the slice (ArgKind::expr):
// an application's host computes such values per launch (Rodinia's pathfinder passes
// `min(pyramid_height, rows - 1 - t)` and a border that moves with the block's first column), and
// a declaration that travels to every rank as JSON cannot carry a function, so it carries the
// expression. Grammar: integers, names, + - * / % (C's truncating division), unary minus,
// parentheses, min(a, b), max(a, b). Names: step (the step's number, 0 first), steps, begin and end
// (the launch's first unit and one past its last), units (the job's), and the declaration's own
// constants. Evaluated in 64-bit integers; overflow and division by zero are refused.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace worksize {

/// The declaration's named constants of an expression, e.g. {{"h", 20}, {"rows", 100}}.
using ExprConstants = std::vector<std::pair<std::string, std::int64_t>>;

/// The values of the built-in names for one launch.
struct ExprScope {
    std::int64_t step = 0, steps = 1, begin = 0, end = 0, units = 0;
    const ExprConstants* constants = nullptr;
};

/// The value of `text` in `scope`. @throws InvalidArgument naming the expression and the
/// problem: a syntax error (with its position), an unknown name, a division by zero, an overflow.
std::int64_t eval_expr(const std::string& text, const ExprScope& scope);

/// Checks `text` parses and names only built-ins and `constants` (evaluating it in a scope of
/// ones). @throws InvalidArgument as eval_expr().
void check_expr(const std::string& text, const ExprConstants& constants);

}  // namespace worksize
