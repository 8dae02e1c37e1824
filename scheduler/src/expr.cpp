// Integer expressions of kernel arguments (expr.hpp): a recursive-descent evaluator.
#include "worksize/scheduler/expr.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#include "worksize/scheduler/types.hpp"

namespace worksize {

namespace {

class Evaluator {
public:
    Evaluator(const std::string& text, const ExprScope& scope, bool check) : s_(text), scope_(scope), check_(check) {}

    std::int64_t run() {
        const std::int64_t v = sum();
        skip();
        if (at_ < s_.size()) fail("unexpected '" + std::string(1, s_[at_]) + "'");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& why) const { fail_at(at_, why); }
    [[noreturn]] void fail_at(std::size_t at, const std::string& why) const {
        throw InvalidArgument("expression '" + s_ + "', at " + std::to_string(at + 1) + ": " + why);
    }
    void skip() {
        while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) ++at_;
    }
    bool eat(char c) {
        skip();
        if (at_ < s_.size() && s_[at_] == c) {
            ++at_;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!eat(c)) fail(std::string("expected '") + c + "'");
    }
    std::int64_t checked(__int128 v) const {
        if (v > std::numeric_limits<std::int64_t>::max() || v < std::numeric_limits<std::int64_t>::min())
            fail_overflow();
        return std::int64_t(v);
    }
    [[noreturn]] void fail_overflow() const { fail("the value leaves a 64-bit integer"); }

    std::int64_t sum() {
        std::int64_t v = product();
        for (;;) {
            if (eat('+')) v = checked(__int128(v) + product());
            else if (eat('-')) v = checked(__int128(v) - product());
            else return v;
        }
    }
    std::int64_t product() {
        std::int64_t v = unary();
        for (;;) {
            char op = 0;
            if (eat('*')) op = '*';
            else if (eat('/')) op = '/';
            else if (eat('%')) op = '%';
            else return v;
            const std::size_t op_at = at_ - 1;
            const std::int64_t r = unary();
            if (op == '*') {
                v = checked(__int128(v) * r);
                continue;
            }
            if (r == 0) {
                if (check_) continue;  // a scope of ones cannot tell; evaluation will
                fail_at(op_at, "division by zero");
            }
            if (v == std::numeric_limits<std::int64_t>::min() && r == -1) fail_overflow();
            v = op == '/' ? v / r : v % r;
        }
    }
    std::int64_t unary() {
        if (eat('-')) return checked(-__int128(unary()));
        if (eat('+')) return unary();
        return primary();
    }
    std::int64_t primary() {
        skip();
        if (eat('(')) {
            const std::int64_t v = sum();
            expect(')');
            return v;
        }
        if (at_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_]))) return number();
        if (at_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[at_])) || s_[at_] == '_')) return name();
        fail(at_ < s_.size() ? "unexpected '" + std::string(1, s_[at_]) + "'" : "the expression ends early");
    }
    std::int64_t number() {
        __int128 v = 0;
        while (at_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_]))) {
            v = v * 10 + (s_[at_++] - '0');
            if (v > std::numeric_limits<std::int64_t>::max()) fail_overflow();
        }
        return std::int64_t(v);
    }
    std::int64_t name() {
        const std::size_t from = at_;
        while (at_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[at_])) || s_[at_] == '_')) ++at_;
        const std::string n = s_.substr(from, at_ - from);
        if (n == "min" || n == "max") {
            expect('(');
            const std::int64_t a = sum();
            expect(',');
            const std::int64_t b = sum();
            expect(')');
            return n == "min" ? std::min(a, b) : std::max(a, b);
        }
        if (n == "step") return scope_.step;
        if (n == "steps") return scope_.steps;
        if (n == "begin") return scope_.begin;
        if (n == "end") return scope_.end;
        if (n == "units") return scope_.units;
        if (scope_.constants)
            for (const auto& [k, v] : *scope_.constants)
                if (k == n) return v;
        at_ = from;
        fail("unknown name '" + n + "' (step, steps, begin, end, units, min, max, or a constant of the declaration)");
    }

    const std::string& s_;
    const ExprScope& scope_;
    bool check_;
    std::size_t at_ = 0;
};

}  // namespace

std::int64_t eval_expr(const std::string& text, const ExprScope& scope) { return Evaluator(text, scope, false).run(); }

void check_expr(const std::string& text, const ExprConstants& constants) {
    for (const auto& [k, v] : constants) {
        const bool ident = !k.empty() && (std::isalpha(static_cast<unsigned char>(k[0])) || k[0] == '_') &&
                           std::all_of(k.begin(), k.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
        if (!ident) throw InvalidArgument("expression '" + text + "': constant '" + k + "' is not a name");
        for (const char* builtin : {"step", "steps", "begin", "end", "units", "min", "max"})
            if (k == builtin) throw InvalidArgument("expression '" + text + "': constant '" + k + "' hides a built-in name");
    }
    ExprScope ones{1, 1, 1, 1, 1, &constants};
    Evaluator(text, ones, true).run();
}

}  // namespace worksize
