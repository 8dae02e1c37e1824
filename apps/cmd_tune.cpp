// `worksize tune`: tune the local work size of kernels on every device of every rank and keep
// the results in the tuning database; `--report` compares the tuned choice with the exhaustive
// best, the paper's rule and NULL and prints the (x, y) -> time heat maps (docs/tuning.md).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "job_setup.hpp"
#include "worksize/runtime/autotune.hpp"
#include "worksize/scheduler/kernels.hpp"

namespace worksize::cli {

namespace {

/// Default tuning sizes for `--kernel all` without --size: small enough for a CPU device.
const std::map<std::string, std::string> kDefaultSizes = {
    {"matmul", "256"}, {"interp", "256"}, {"sort", "65536"}, {"quad", "65536"}};

std::string local_str(const LocalSize& l) {
    return l.is_null() ? "NULL" : "(" + std::to_string(l.x) + "," + std::to_string(l.y) + ")";
}

std::string ms_or_dash(double s) { return std::isfinite(s) ? fmt(s * 1e3, 4) : "failed"; }

std::string ratio_str(double a, double b) {
    return std::isfinite(a) && std::isfinite(b) && b > 0 ? fmt(a / b, 2) + "x" : "-";
}

/// Rows y, columns x: the exhaustive sweep's times in ms ("-": not a candidate, "fail": failed).
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

/// The database text of this rank for collect("tuning-db"): "" when it has no file.
std::string local_db_text(const std::string& db) {
    const std::string path = resolve_db_path(db);
    if (!std::filesystem::exists(path)) return {};
    return Store::open(path, CorruptPolicy::report_and_ignore).dump();
}

}  // namespace

int cmd_tune(mpi::Environment& env, const std::vector<std::string>& args) {
    KernelArgs base;
    DeviceSelection sel;
    bool json = false, help = false, report = false;
    std::string search = "guided", heatmap_csv;
    std::vector<std::string> sizes;
    double budget = 0.20;
    std::size_t min_budget = 1;
    MeasureOptions mo;
    po::options_description desc(
        "worksize tune --kernel K|all [--size S] [--search guided|exhaustive] [--budget F] [--db F]\n"
        "worksize tune --report [--json] [--heatmap-csv F] ...");
    desc.add_options()
        ("help,h", po::bool_switch(&help), "show this help")
        ("kernel", po::value(&base.kernel)->default_value("all"), "kernel: matmul, interp, sort, quad or all")
        ("size", po::value(&sizes)->composing(),
         "tuning size: N (NxN for 2-D, N items for 1-D), WxH, or KERNEL=SIZE; repeatable "
         "(default with --kernel all: matmul/interp 256, sort/quad 65536)")
        ("search", po::value(&search)->default_value("guided"), "search: guided (model-ranked seeds + pattern search) or exhaustive")
        ("budget", po::value(&budget)->default_value(0.20), "guided search: at most this fraction of the candidates")
        ("min-budget", po::value(&min_budget)->default_value(1),
         "guided search: measure at least this many candidates (or all, if fewer)")
        ("iterations", po::value(&base.iterations)->default_value(3), "kernel iterations per timed run")
        ("repeats", po::value(&mo.repeats)->default_value(3), "timed runs per configuration (the median counts)")
        ("warmup", po::value(&mo.warmup)->default_value(1), "untimed runs per configuration first")
        ("seed", po::value(&base.seed)->default_value(1), "seed of the generated inputs")
        ("param", po::value(&base.params)->composing(), "kernel parameter KEY=VALUE, repeatable")
        ("db", po::value(&base.db), "tuning database (default: $WORKSIZE_DB, else ~/.cache/worksize/db.json)")
        ("report", po::bool_switch(&report),
         "measure every candidate, the paper's rule and NULL too, and compare them with the guided choice")
        ("json", po::bool_switch(&json), "report: print one JSON document")
        ("heatmap-csv", po::value(&heatmap_csv), "report: write the (x, y) -> time heat maps to this CSV (docs/plot_heatmap.sh)");
    desc.add(selection_options(sel));
    parse(args, desc, true);
    if (show_help(env, desc, help)) return kOk;
    // Validate everything on every rank before any collective.
    if (search != "guided" && search != "exhaustive")
        throw InvalidArgument("--search must be guided or exhaustive, not '" + search + "'");
    if (!(budget > 0 && budget <= 1)) throw InvalidArgument("--budget must be in (0, 1]");
    if (mo.repeats < 1) throw InvalidArgument("--repeats must be at least 1");
    if (mo.warmup < 0) throw InvalidArgument("--warmup must be >= 0");
    if ((json || !heatmap_csv.empty()) && !report) throw InvalidArgument("--json and --heatmap-csv go with --report");
    std::vector<std::string> kernels;
    if (base.kernel == "all")
        kernels = {"matmul", "interp", "sort", "quad"};
    else
        kernels = {base.kernel};
    std::map<std::string, std::string> size_of;
    std::string common_size;
    for (const auto& s : sizes) {
        const auto eq = s.find('=');
        if (eq == std::string::npos) {
            common_size = s;
        } else {
            const std::string k = s.substr(0, eq);
            if (std::find(kernels.begin(), kernels.end(), k) == kernels.end())
                throw InvalidArgument("--size " + s + ": '" + k + "' is not a kernel being tuned");
            size_of[k] = s.substr(eq + 1);
        }
    }
    std::vector<KernelArgs> jobs;
    for (const auto& k : kernels) {
        KernelArgs a = base;
        a.kernel = k;
        a.local = "paper";
        a.strategy = "paper";
        if (size_of.count(k))
            a.size = size_of[k];
        else if (!common_size.empty())
            a.size = common_size;
        else if (kernels.size() > 1 && kDefaultSizes.count(k))
            a.size = kDefaultSizes.at(k);
        else
            throw InvalidArgument("tune needs --size for kernel '" + k + "'");
        (void)make_job(a);  // throws InvalidArgument for a bad kernel, size or parameter
        jobs.push_back(a);
    }

    TuneOptions topts;
    topts.strategy = search == "exhaustive" ? SearchStrategy::exhaustive : SearchStrategy::guided;
    topts.budget_fraction = budget;
    topts.min_budget = std::max<std::size_t>(1, min_budget);
    const std::string db = base.db;

    Cluster cluster(env, sel);
    cluster.set_collect_handler([db](const std::string& what) -> std::string {
        if (what == "tuning-db") return local_db_text(db);
        return {};
    });
    if (!cluster.is_master()) return cluster.serve();

    auto body = [&](Cluster& c) -> int {
        const std::string db_path = resolve_db_path(db);
        Store store = Store::open(db_path, CorruptPolicy::report_and_ignore);
        for (const auto& w : store.warnings()) std::cerr << "worksize: warning: " << w << '\n';
        const auto& devs = c.devices();
        if (devs.empty()) throw Error("no device to tune (see worksize devices)");

        std::vector<std::unique_ptr<LocalTuner>> tuners;
        std::size_t total = 0;
        for (const auto& a : jobs) {
            tuners.push_back(std::make_unique<LocalTuner>(c, a.kernel, [a] { return make_job(a); }, mo));
            for (std::size_t d = 0; d < devs.size(); ++d) {
                const std::size_t n = tuners.back()->ranked(int(d)).size();
                total += report ? n + 2 : topts.strategy == SearchStrategy::exhaustive ? n : guided_budget(n, topts);
            }
        }
        Progress progress("tune", total);
        for (auto& t : tuners)
            t->on_measured([&, kernel = t->kernel()](int d, LocalSize l, const ConfigTime& ct) {
                progress.step(kernel + " dev " + std::to_string(d) + " " + local_str(l) + (ct.ok ? "" : " failed"));
            });

        int code = kOk;
        Table summary({"kernel", "device", "rank", "size", "best local", "best ms", "measured", "candidates", "failed", "stored"});
        Table rep({"kernel", "device", "size", "tuned", "tuned ms", "exh. best", "best ms", "paper", "paper ms", "NULL ms",
                   "measured/cands", "vs NULL", "vs paper"});
        std::vector<TuneReportRow> rows;
        nlohmann::json results = nlohmann::json::array();
        for (auto& t : tuners) {
            for (std::size_t d = 0; d < devs.size(); ++d) {
                const DeviceInfo& dev = devs[d];
                const std::string size_txt = std::to_string(t->size().x) + (t->dims() == 2 ? "x" + std::to_string(t->size().y) : "");
                TuneResult chosen;
                if (report) {
                    TuneResult ex, gd;
                    rows.push_back(tune_report_row(*t, int(d), topts, &ex, &gd));
                    chosen = topts.strategy == SearchStrategy::exhaustive ? ex : gd;
                    const auto& r = rows.back();
                    results.push_back(to_json(r));
                    rep.add({r.kernel, std::to_string(d) + " " + r.device_name, size_txt, local_str(r.tuned_local),
                             ms_or_dash(r.tuned_s), local_str(r.best_local), ms_or_dash(r.exhaustive_best_s),
                             local_str(r.paper_local), ms_or_dash(r.paper_s), ms_or_dash(r.null_s),
                             std::to_string(r.measured) + "/" + std::to_string(r.candidates),
                             ratio_str(r.null_s, r.tuned_s), ratio_str(r.paper_s, r.tuned_s)});
                } else {
                    chosen = t->tune(int(d), topts);
                }
                bool stored = false;
                if (chosen.found) {
                    store_tuning(store, *t, dev, to_record(chosen));
                    store.save();
                    stored = true;
                } else {
                    std::cerr << "worksize: warning: every local size of '" << t->kernel() << "' failed on device " << d
                              << " (" << dev.name << "); nothing stored\n";
                    for (const auto& m : chosen.measurements)
                        if (!m.ok) {
                            std::cerr << "worksize: first failure: " << m.error << '\n';
                            break;
                        }
                    code = kFailure;
                }
                summary.add({t->kernel(), std::to_string(d) + " " + dev.name, std::to_string(dev.rank), size_txt,
                             chosen.found ? local_str(chosen.best) : "-", chosen.found ? fmt(chosen.best_s * 1e3, 4) : "-",
                             std::to_string(chosen.measured), std::to_string(chosen.candidates),
                             std::to_string(chosen.failed), stored ? "yes" : "no"});
            }
        }
        progress.done();

        // Entries that other ranks keep in their own databases (e.g. from single-node runs on
        // their nodes) join rank 0's: rank 0 is the merge point.
        std::size_t merged = 0;
        const auto texts = c.collect("tuning-db");
        for (std::size_t r = 1; r < texts.size(); ++r) {
            if (texts[r].empty()) continue;
            const Store other = Store::from_text(texts[r], "rank " + std::to_string(r) + "'s database");
            for (const auto& w : other.warnings()) std::cerr << "worksize: warning: " << w << '\n';
            merged += store.merge(other);
        }
        if (merged > 0) store.save();

        if (!heatmap_csv.empty()) {
            std::ofstream f(heatmap_csv);
            if (!f) throw Error("cannot write " + heatmap_csv);
            f << "kernel,device_index,device,x,y,ms\n";
            for (const auto& r : rows)
                for (const auto& [l, s] : r.heatmap) {
                    f << r.kernel << ',' << r.device << ",\"" << r.device_name << "\"," << l.x << ',' << l.y << ',';
                    if (std::isfinite(s))
                        f << s * 1e3;
                    else
                        f << "NaN";
                    f << '\n';
                }
            if (!f) throw Error("cannot write " + heatmap_csv);
        }
        if (json) {
            std::cout << nlohmann::json{{"db", store.path()},
                                        {"search", search},
                                        {"budget", budget},
                                        {"iterations", base.iterations},
                                        {"repeats", mo.repeats},
                                        {"merged_from_ranks", merged},
                                        {"results", results}}
                             .dump(2)
                      << '\n';
            return code;
        }
        std::cout << summary.str();
        if (report) {
            std::cout << "\nReport (times: median OpenCL kernel time of " << base.iterations
                      << " iteration(s); tuned = " << search << " search; vs = speed-up of the tuned choice):\n"
                      << rep.str();
            for (const auto& r : rows)
                std::cout << "\nHeat map, " << r.kernel << " on device " << r.device << " (" << r.device_name
                          << "), ms, rows y, columns x:\n"
                          << heatmap_table(r);
        }
        std::cout << "database: " << store.path() << " (" << store.size() << " entries";
        if (merged) std::cout << ", " << merged << " merged from other ranks";
        std::cout << ")\n";
        return code;
    };
    int code = kFailure;
    try {
        code = body(cluster);
    } catch (...) {
        cluster.finish(kFailure);
        throw;
    }
    cluster.finish(code);
    return code;
}

}  // namespace worksize::cli
