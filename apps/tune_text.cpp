// The text of `worksize tune`'s tables (tune_text.hpp).
#include "tune_text.hpp"

#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "common.hpp"

namespace worksize::cli {

std::string local_str(const LocalSize& l) {
    if (l.is_null()) return "NULL";
    // Appended, not "(" + ...: GCC 12 at -O3 takes the prefix insert for an overflow here.
    std::string s = "(";
    s.append(std::to_string(l.x)).append(",").append(std::to_string(l.y)).append(")");
    return s;
}

std::string stored_text(bool stored, const BaselineCheck& check) {
    if (!stored) return "no";
    if (check.source == "null") return "yes: NULL";
    if (check.source == "paper") return std::string("yes: paper ").append(local_str(check.local));
    return "yes";
}

std::string ms_or_dash(double s) { return std::isfinite(s) ? fmt(s * 1e3, 4) : "failed"; }

std::string ratio_str(double a, double b) {
    return std::isfinite(a) && std::isfinite(b) && b > 0 ? fmt(a / b, 2) + "x" : "-";
}

std::string heatmap_table(const TuneReportRow& r) {
    std::set<std::uint64_t> xs, ys;
    std::map<std::pair<std::uint64_t, std::uint64_t>, double> t;
    for (const auto& [l, s] : r.heatmap) {
        xs.insert(l.x);
        ys.insert(l.y);
        t[{l.x, l.y}] = s;
    }
    std::vector<std::string> header{"y\\x"};
    for (auto x : xs) header.push_back(std::to_string(x));
    Table table(header);
    for (auto y : ys) {
        std::vector<std::string> row{std::to_string(y)};
        for (auto x : xs) {
            auto it = t.find({x, y});
            row.push_back(it == t.end() ? "-" : std::isfinite(it->second) ? fmt(it->second * 1e3, 3) : "fail");
        }
        table.add(row);
    }
    return table.str();
}

}  // namespace worksize::cli
