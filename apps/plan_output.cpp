// Tables and JSON for plans and job results.
#include "plan_output.hpp"

#include <sstream>

#include "common.hpp"

namespace worksize::cli {

std::string local_text(const LocalSize& l, int dims) {
    if (l.is_null()) return "NULL";
    return dims == 1 ? std::to_string(l.x) : std::to_string(l.x) + "x" + std::to_string(l.y);
}

std::string global_text(const GlobalSize& g, int dims) {
    return dims == 1 ? std::to_string(g.x) : std::to_string(g.x) + "x" + std::to_string(g.y);
}

namespace {
/// "3000017" or, padded, "3000017 -> 3000064" (the NDRange as launched).
std::string slice_global_text(const Assignment& a, int dims) {
    std::string t = global_text(a.global, dims);
    if (a.units > 0 && !(a.padded_global == a.global)) t.append(" -> ").append(global_text(a.padded_global, dims));
    return t;
}

/// Whether a device's slice runs in a library backend: the tables then get a "backend" column.
bool any_library(const std::vector<Assignment>& as) {
    for (const auto& a : as)
        if (a.backend != "kernel") return true;
    return false;
}

std::string shape_text(const LocalSize& l, int dims) {
    if (l.is_null()) return "driver";
    if (dims == 1) return "1-D";
    if (l.x > l.y) return "x-wide";
    if (l.y > l.x) return "y-tall";
    return "square";
}
}  // namespace

nlohmann::json plan_to_json(const Plan& p, const GlobalSize& size) {
    nlohmann::json j = {{"kernel", p.kernel},
                        {"size", {size.x, size.y}},
                        {"global", {p.global.x, p.global.y}},
                        {"dims", p.dims},
                        {"iterations", p.iterations},
                        {"ops", p.ops},
                        {"compute_class", to_string(p.compute_class)},
                        {"k", p.k},
                        {"strategy", p.strategy},
                        {"local_policy", to_string(p.local_policy)},
                        {"priority", to_string(p.priority)},
                        {"assignments", nlohmann::json::array()}};
    if (p.predicted_makespan_s >= 0) j["predicted_makespan_s"] = p.predicted_makespan_s;
    for (const auto& a : p.assignments) {
        nlohmann::json aj = {{"device", a.device},        {"rank", a.rank},
                             {"device_name", a.device_name}, {"share", a.share},
                             {"offset", a.offset},        {"units", a.units},
                             {"global", {a.global.x, a.global.y}},
                             {"padded_global", {a.padded_global.x, a.padded_global.y}},
                             {"local", {a.local.x, a.local.y}},
                             {"local_rule", a.local_rule},
                             {"backend", a.backend}};
        if (a.predicted_s >= 0) aj["predicted_s"] = a.predicted_s;
        if (!a.note.empty()) aj["note"] = a.note;
        j["assignments"].push_back(aj);
    }
    return j;
}

std::string plan_table(const Plan& p) {
    std::ostringstream os;
    os << "kernel " << p.kernel << ", global " << global_text(p.global, p.dims) << ", " << p.iterations
       << " iteration(s), " << fmt(p.ops, 0) << " operations -> " << to_string(p.compute_class)
       << " class, k = " << p.k << "; strategy " << p.strategy << ", local "
       << to_string(p.local_policy) << ", priority " << to_string(p.priority) << "\n\n";
    const bool predicted = p.predicted_makespan_s >= 0;
    std::vector<std::string> head = {"device", "rank", "share %", p.dims == 2 ? "rows" : "items", "offset",
                                     "global", "local", "shape", "class", "k"};
    const bool backends = any_library(p.assignments);
    if (backends) head.push_back("backend");
    if (predicted) head.push_back("predicted ms");
    head.push_back("rule / note");
    Table t(head);
    for (const auto& a : p.assignments) {
        std::vector<std::string> row = {std::to_string(a.device) + ": " + a.device_name,
                                        std::to_string(a.rank),
                                        fmt(a.share * 100, 2),
                                        std::to_string(a.units),
                                        std::to_string(a.offset),
                                        slice_global_text(a, p.dims),
                                        local_text(a.local, p.dims),
                                        a.backend != "kernel" ? "library" : shape_text(a.local, p.dims),
                                        to_string(p.compute_class),
                                        fmt(p.k, 2)};
        if (backends) row.push_back(a.backend);
        if (predicted) row.push_back(a.predicted_s >= 0 ? fmt_ms(a.predicted_s) : "-");
        // An idle device: why it has no work; else the local-size rule, and a note beside it.
        row.push_back(a.units == 0 || a.note.empty() ? (a.note.empty() ? a.local_rule : a.note)
                                                     : a.local_rule + "; " + a.note);
        t.add(row);
    }
    os << t.str();
    if (predicted) os << "predicted makespan " << fmt_ms(p.predicted_makespan_s) << " ms\n";
    return os.str();
}

nlohmann::json result_to_json(const std::string& kernel, const GlobalSize& size, const Plan& plan,
                              const JobResult& r) {
    nlohmann::json j = {{"kernel", kernel},
                        {"size", {size.x, size.y}},
                        {"global", {plan.global.x, plan.global.y}},
                        {"iterations", plan.iterations},
                        {"strategy", plan.strategy},
                        {"local_policy", to_string(plan.local_policy)},
                        {"verified", r.verdict.ok && r.verdict.checked},
                        {"verification", r.verdict.detail},
                        {"summary", r.summary},
                        {"makespan_s", r.makespan_s},
                        {"devices", nlohmann::json::array()}};
    for (const auto& d : r.devices) {
        const auto& a = d.assignment;
        j["devices"].push_back({{"rank", a.rank},
                                {"device", a.device},
                                {"device_name", a.device_name},
                                {"share", a.share},
                                {"offset", a.offset},
                                {"units", a.units},
                                {"global", {a.global.x, a.global.y}},
                                {"padded_global", {a.padded_global.x, a.padded_global.y}},
                                {"local", {a.local.x, a.local.y}},
                                {"backend", a.backend},
                                {"done_s", d.done_s},
                                {"inputs_made_s", d.gen_s},
                                {"transfer",
                                 {{"send_start_s", d.send_start_s},
                                  {"send_end_s", d.send_end_s},
                                  {"recv_start_s", d.recv_start_s},
                                  {"recv_end_s", d.recv_end_s}}},
                                {"times",
                                 {{"send", d.send_s},
                                  {"h2d", d.times.h2d},
                                  {"kernel", d.times.kernel},
                                  {"d2h", d.times.d2h},
                                  {"recv", d.recv_s}}}});
    }
    return j;
}

std::string result_table(const Plan& p, const JobResult& r) {
    // A "backend" column after "local" where some device's slice runs in a library.
    const bool backends = any_library(p.assignments);
    std::vector<std::string> head = {"device", "rank", "share %", "global", "local"};
    if (backends) head.push_back("backend");
    for (const char* h : {"send ms", "h2d ms", "kernel ms", "d2h ms", "recv ms", "done ms", "send at ms", "recv at ms"})
        head.push_back(h);
    Table t(head);
    // When rank 0 sent and received a worker's slice, from the job's start ("-" for rank 0's own).
    auto span = [](double from, double to) {
        if (from <= 0 && to <= 0) return std::string("-");
        std::string s = fmt_ms(from);
        s += "..";
        s += fmt_ms(to);
        return s;
    };
    for (const auto& d : r.devices) {
        const auto& a = d.assignment;
        std::vector<std::string> row = {std::to_string(a.device) + ": " + a.device_name, std::to_string(a.rank),
                                        fmt(a.share * 100, 2), global_text(a.global, p.dims),
                                        local_text(a.local, p.dims)};
        if (backends) row.push_back(a.backend);
        for (const double v : {d.send_s, d.times.h2d, d.times.kernel, d.times.d2h, d.recv_s, d.done_s})
            row.push_back(fmt_ms(v));
        row.push_back(span(d.send_start_s, d.send_end_s));
        row.push_back(span(d.recv_start_s, d.recv_end_s));
        t.add(row);
    }
    std::ostringstream os;
    os << t.str();
    double made = 0;
    for (const auto& d : r.devices) made = std::max(made, d.gen_s);
    if (made > 0)
        os << "inputs made on each rank (--inputs local) in up to " << fmt_ms(made)
           << " ms; neither that nor the ranks' checks of their outputs are in \"done\" or the makespan\n";
    os << "makespan " << fmt_ms(r.makespan_s) << " ms; ";
    os << (!r.verdict.checked ? "not verified: " : r.verdict.ok ? "verified: " : "VERIFICATION FAILED: ")
       << r.verdict.detail << '\n';
    if (!r.summary.empty()) os << r.summary << '\n';
    return os.str();
}

}  // namespace worksize::cli
