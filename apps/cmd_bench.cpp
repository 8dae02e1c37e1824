// `worksize bench`: run a kernel under several split strategies and compare them with the oracle.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>
#include <tuple>

#include "job_setup.hpp"
#include "kernel_help.hpp"
#include "output_meta.hpp"
#include "plan_output.hpp"
#include "worksize/runtime/host_memory.hpp"
#include "worksize/scheduler/log.hpp"
#include "worksize/scheduler/parse.hpp"
#include "worksize/scheduler/stats.hpp"
#include "worksize/scheduler/strategy.hpp"
#include "worksize/scheduler/store.hpp"

namespace worksize::cli {

namespace {

struct Row {
    std::string strategy;
    Plan plan;
    double makespan_s = 0;       ///< median of the repeats
    double predicted_s = -1;     ///< model's prediction of this split (<0: no models)
    double efficiency = 0;       ///< mean busy (done_s) over working devices / max
    double small_share = 0;
    bool verified = true;
    double ratio = -1;
    int same_as = -1;            ///< index of the first row with an identical plan (samples pooled), -1: none
    int samples = 0;             ///< timed runs behind the median (pooled over identical plans)
    double q1_s = 0, q3_s = 0;   ///< quartiles of those runs (the spread behind the median)
    std::vector<double> rounds;  ///< this strategy's own makespan in each interleaved repeat
    JobResult median_run;        ///< the run whose makespan is the median (the upper one of two)
    SplitResult prediction;      ///< the model's timeline of this split (when models_ok)
};

/// Two plans are the same experiment when every device gets the same slice and the same local size.
bool same_plan(const Plan& a, const Plan& b) {
    auto key = [](const Plan& p) {
        std::vector<std::tuple<int, std::uint64_t, std::uint64_t, std::string>> v;
        for (const auto& x : p.assignments)
            if (x.units > 0) {
                std::ostringstream l;
                l << x.local.x << 'x' << x.local.y << '/' << x.global.x << 'x' << x.global.y;
                v.emplace_back(x.device, x.offset, x.units, l.str());
            }
        std::sort(v.begin(), v.end());
        return v;
    };
    return key(a) == key(b);
}

std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

std::string sweep_path(const std::string& csv) {
    const auto slash = csv.find_last_of('/');
    const auto dot = csv.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return csv + "-sweep";
    return csv.substr(0, dot) + "-sweep" + csv.substr(dot);
}

bool starts_empty(const std::string& path) {
    std::ifstream f(path);
    return !f || f.peek() == std::ifstream::traits_type::eof();
}

int small_device_of(const std::vector<DeviceInfo>& devs) {
    int s = 0;
    for (std::size_t i = 1; i < devs.size(); ++i)
        if (devs[i].total_pes() < devs[std::size_t(s)].total_pes()) s = int(i);
    return s;
}

}  // namespace

int cmd_bench(mpi::Environment& env, const std::vector<std::string>& args) {
    KernelArgs k;
    DeviceSelection sel;
    bool help = false, sweep = false, append = false, no_calibrate = false;
    std::string strategies_arg = "even,pe-ratio,paper,model,oracle", csv, calib_sizes, phases_csv;
    int repeats = 5;
    po::options_description desc("worksize bench --kernel K --size S [options]");
    desc.add_options()
        ("help,h", po::bool_switch(&help), "show this help")
        ("kernel", po::value(&k.kernel), ("kernel: " + kernel_list()).c_str())
        ("strategies", po::value(&strategies_arg)->default_value(strategies_arg),
         "comma-separated split strategies to compare")
        ("repeats", count_value("repeats", &repeats, 1),
         "timed runs per strategy (median), after one warm-up; interleaved over the strategies")
        ("csv", po::value(&csv), "write one row per strategy to this CSV file")
        ("append", po::bool_switch(&append), "append to the CSV files (header only when they are new)")
        ("phases-csv", po::value(&phases_csv),
         "write each strategy's median run phase by phase and device by device, measured and predicted")
        ("sweep", po::bool_switch(&sweep),
         "also write the oracle's scan (makespan against the shares) to the CSV name with -sweep")
        ("calibration-sizes", po::value(&calib_sizes),
         "sizes for the automatic calibration when the database has no model (comma-separated)")
        ("no-calibrate", po::bool_switch(&no_calibrate),
         "fail instead of calibrating when the model strategy has no calibration");
    desc.add(kernel_options(k));
    desc.add(selection_options(sel));
    const auto vm = parse(args, desc, true);
    if (show_help(env, desc, help)) return kOk;
    if (k.kernel.empty()) throw InvalidArgument("bench needs --kernel (" + kernel_list(" or ") + ")");
    if (!vm["strategy"].defaulted()) throw InvalidArgument("bench takes --strategies (a list), not --strategy");
    if (vm.count("ops")) throw InvalidArgument("bench does not take --ops");
    const auto strategies = split_commas(strategies_arg);
    if (strategies.empty()) throw InvalidArgument("--strategies is empty");
    bool has_model = false, has_oracle = false;
    for (const auto& s : strategies) {
        const StrategyNeeds needs = find_strategy(s).needs();
        has_model |= needs == StrategyNeeds::models;
        has_oracle |= needs == StrategyNeeds::measurements;
    }
    if (append && csv.empty() && phases_csv.empty())
        throw InvalidArgument("--append appends to the CSV files: it needs --csv or --phases-csv");
    if (sweep && (!has_oracle || csv.empty())) throw InvalidArgument("--sweep needs --csv and oracle among --strategies");
    // No --calibration-sizes: the adaptive ladder (docs/models.md), which starts at the first default size.
    const auto calib = calib_sizes.empty() ? std::vector<std::string>{} : split_commas(calib_sizes);
    {
        auto probe = make_job(k);
        (void)plan_request(k, *probe);
        KernelArgs ck = k;
        for (const auto& s : calib.empty() ? default_calibration_sizes(k.kernel) : calib) {
            ck.size = s;
            (void)make_job(ck);
        }
    }
    const std::string path = db_path(k);
    // Output files (rank 0 writes them): checked before the work, on rank 0 (see with_cluster).
    auto check_outputs = [&] {
        check_writable(csv, "csv");
        if (sweep) check_writable(sweep_path(csv), "csv (its -sweep file)");
        check_writable(phases_csv, "phases-csv");
        if (has_model && !no_calibrate) check_db_writable(path);
    };

    return with_cluster(env, sel, [&](Cluster& c) {
        check_outputs();
        const auto& devs = c.devices();
        Database db(k.db);  // opened once for the command: models, calibration, tuned local sizes
        k = with_tuned_params(k, devs, &db);  // --local tuned: the tuned kernel parameters
        if (host_memory_limit()) {  // under ulimit -v: one line before the calibration and the inputs
            KernelArgs even = k;
            even.strategy = "even";
            const auto probe = make_job(even);
            check_job_memory(*probe, build_plan(devs, even, *probe, &c, nullptr, &db).assignments, devs);
        }
        // Models: from the database, else calibrate now (unless --no-calibrate).
        std::vector<CostModel> models;
        bool models_ok = false;
        double calib_s = 0;
        std::string calib_source = "none";
        {
            std::vector<std::string> missing;
            models = load_models(db.store(), devs, k.kernel, model_key(k), missing);
            models_ok = missing.empty();
            if (models_ok) {
                calib_source = "reused";
                std::cout << "calibration: reused from the database " << path << '\n';
            } else if (has_model) {
                if (no_calibrate)
                    throw Error(missing.front() + " (database " + path + "): run `worksize calibrate --kernel " +
                                k.kernel + "`");
                log::info() << "calibration: " << missing.front() << "; calibrating now";
                const auto res = calibrate_and_store(c, k, calib, 3, 15, "", &db);
                calib_s = res.seconds;
                calib_source = "measured";
                std::cout << "calibration: measured in " << fmt(calib_s, 2) << " s (" << res.runs
                          << " runs), stored in " << path << '\n';
                for (const auto& dc : res.devices)
                    std::cout << "calibration: device " << dc.device << " " << ladder_text(dc) << '\n';
                missing.clear();
                models = load_models(db.store(), devs, k.kernel, model_key(k), missing);
                models_ok = missing.empty();
            }
        }

        const int small = small_device_of(devs);
        Progress progress("bench " + k.kernel, strategies.size() * std::size_t(repeats + 1));
        std::vector<Row> rows;
        std::optional<OracleResult> oracle;
        bool all_ok = true;
        // 1. Every strategy's plan (the oracle's search runs here) and one warm-up at iterations 1.
        for (const auto& sname : strategies) {
            KernelArgs ks = k;
            ks.strategy = sname;
            auto probe = make_job(ks);
            PlanExtras extras;
            Row row;
            row.strategy = sname;
            row.plan = build_plan(devs, ks, *probe, &c, &extras, &db);
            if (extras.oracle) oracle = extras.oracle;
            {
                KernelArgs wk = ks;
                wk.iterations = 1;
                auto warm = make_job(wk);
                warm->generate();
                c.run(*warm, row.plan.assignments, k.kernel);
                progress.step(sname + " warm-up");
            }
            rows.push_back(std::move(row));
        }
        // 2. Strategies with identical plans (units and local sizes of every device) are one experiment.
        for (std::size_t i = 0; i < rows.size(); ++i)
            for (std::size_t j = 0; j < i && rows[i].same_as < 0; ++j)
                if (rows[j].same_as < 0 && same_plan(rows[i].plan, rows[j].plan)) rows[i].same_as = int(j);
        // 3. Interleaved repeats: repeat r runs every strategy once, starting at strategy r (rotated), so
        // that drift of the machine hits all strategies alike. Samples of identical plans are pooled.
        std::vector<std::vector<std::pair<double, JobResult>>> samples(rows.size());
        for (int r = 0; r < repeats; ++r) {
            for (std::size_t j = 0; j < rows.size(); ++j) {
                const std::size_t i = (j + std::size_t(r)) % rows.size();
                auto& row = rows[i];
                KernelArgs ks = k;
                ks.strategy = row.strategy;
                auto job = make_job(ks);
                job->generate();
                auto res = c.run(*job, row.plan.assignments, k.kernel);
                row.verified = row.verified && res.verdict.ok;
                const double m = res.makespan_s;
                row.rounds.push_back(m);
                samples[row.same_as < 0 ? i : std::size_t(row.same_as)].emplace_back(m, std::move(res));
                progress.step(row.strategy + " run " + std::to_string(r + 1));
            }
        }
        for (std::size_t i = 0; i < rows.size(); ++i) {
            auto& row = rows[i];
            auto& runs = samples[row.same_as < 0 ? i : std::size_t(row.same_as)];
            std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
            row.samples = int(runs.size());
            {
                std::vector<double> v;
                for (const auto& x : runs) v.push_back(x.first);
                row.q1_s = quantile(v, 0.25);
                row.makespan_s = quantile(v, 0.5);
                row.q3_s = quantile(v, 0.75);
            }
            const auto& mid = runs[runs.size() / 2];
            if (!phases_csv.empty()) row.median_run = mid.second;  // only the phases CSV reads it
            double sum = 0, mx = 0;
            int n = 0;
            for (const auto& d : mid.second.devices) {
                if (d.assignment.units == 0) continue;
                sum += d.done_s;
                mx = std::max(mx, d.done_s);
                ++n;
            }
            row.efficiency = n > 0 && mx > 0 ? sum / double(n) / mx : 0;
            if (models_ok) {
                KernelArgs ks = k;
                ks.strategy = row.strategy;
                auto probe = make_job(ks);
                std::vector<std::uint64_t> units(devs.size(), 0);
                for (const auto& a : row.plan.assignments) units.at(std::size_t(a.device)) = a.units;
                row.prediction = evaluate_split(models, split_job_for(*probe, k.iterations), units);
                row.predicted_s = row.prediction.makespan_s;
            }
            for (const auto& a : row.plan.assignments)
                if (a.device == small) row.small_share = a.share;
        }
        // A pooled group is verified only if all its runs were.
        for (auto& row : rows)
            if (row.same_as >= 0) {
                auto& first = rows[std::size_t(row.same_as)];
                first.verified = first.verified && row.verified;
            }
        for (auto& row : rows) {
            if (row.same_as >= 0) row.verified = rows[std::size_t(row.same_as)].verified;
            all_ok = all_ok && row.verified;
        }
        progress.done();
        double oracle_s = -1;
        for (const auto& r : rows)
            if (find_strategy(r.plan.strategy).needs() == StrategyNeeds::measurements) oracle_s = r.makespan_s;
        for (auto& r : rows)
            if (oracle_s > 0) r.ratio = r.makespan_s / oracle_s;

        // Table.
        std::cout << "kernel " << k.kernel << ", size " << k.size << ", " << k.iterations
                  << " iteration(s), local " << k.local << ", " << repeats
                  << " timed run(s) per strategy, interleaved (median; identical plans pooled)\n";
        std::vector<std::string> head = {"strategy"};
        for (const auto& d : devs) head.push_back("d" + std::to_string(d.index) + "@r" + std::to_string(d.rank) + " %");
        for (const char* h : {"makespan ms", "q1-q3 ms", "/ oracle", "predicted ms", "pred err %", "balance %", "verified",
                              "same plan as"})
            head.push_back(h);
        Table t(head);
        for (const auto& r : rows) {
            std::vector<std::string> line = {r.strategy};
            for (std::size_t i = 0; i < devs.size(); ++i) {
                double share = 0;
                for (const auto& a : r.plan.assignments)
                    if (a.device == int(i)) share = a.share;
                line.push_back(fmt(share * 100, 1));
            }
            line.push_back(fmt_ms(r.makespan_s));
            line.push_back(fmt_ms(r.q1_s) + "-" + fmt_ms(r.q3_s));
            line.push_back(r.ratio > 0 ? fmt(r.ratio, 3) : "-");
            line.push_back(r.predicted_s >= 0 ? fmt_ms(r.predicted_s) : "-");
            line.push_back(r.predicted_s >= 0 && r.makespan_s > 0 ? fmt((r.predicted_s / r.makespan_s - 1) * 100, 1)
                                                                 : "-");
            line.push_back(fmt(r.efficiency * 100, 1));
            line.push_back(r.verified ? "yes" : "NO");
            line.push_back(r.same_as >= 0 ? rows[std::size_t(r.same_as)].strategy + " (" + std::to_string(r.samples) +
                                                " runs pooled)"
                                          : "-");
            t.add(line);
        }
        std::cout << t.str();
        if (oracle) std::cout << "oracle: " << oracle->points.size() << " splits measured in " << oracle->runs << " runs\n";
        // Paired comparison of model with each baseline, round by round: the same repeat ran both
        // within seconds, so the machine's drift cancels. Differences inside run-to-run noise show
        // up as a split of wins and losses and a large sign-test p.
        if (const auto m = std::find_if(rows.begin(), rows.end(), [](const Row& r) { return r.plan.strategy == "model"; });
            m != rows.end() && repeats >= 2) {
            for (const auto& b : rows) {
                const auto s = b.plan.strategy;
                if (find_strategy(s).needs() != StrategyNeeds::nothing) continue;
                if (same_plan(m->plan, b.plan)) {
                    std::cout << "model vs " << b.strategy << ": the same plan\n";
                    continue;
                }
                std::vector<double> ratio;
                int wins = 0, losses = 0;
                for (std::size_t r = 0; r < std::min(m->rounds.size(), b.rounds.size()); ++r) {
                    ratio.push_back(m->rounds[r] / b.rounds[r]);
                    if (m->rounds[r] < b.rounds[r]) ++wins;
                    else if (m->rounds[r] > b.rounds[r]) ++losses;
                }
                std::sort(ratio.begin(), ratio.end());
                std::cout << "model vs " << b.strategy << ", paired by repeat: median ratio " << fmt(quantile(ratio, 0.5), 3)
                          << ", model faster in " << wins << " of " << ratio.size() << " (sign test p = "
                          << fmt(sign_test_p(wins, losses), 2) << ")\n";
            }
        }
        double model_job = -1;
        for (const auto& r : rows)
            if (r.plan.strategy == "model") model_job = r.makespan_s;
        if (calib_source == "measured" && model_job > 0)
            std::cout << "calibration time " << fmt(calib_s, 2) << " s = " << fmt(calib_s / model_job * 100, 1)
                      << " % of the model-planned job (" << fmt_ms(model_job) << " ms)\n";
        else if (calib_source == "reused")
            std::cout << "calibration time 0 s: reused from the database\n";

        // Each row ends with its schema, the tool's version, the host and the date (--append keeps
        // the rows of several runs apart).
        if (!csv.empty()) {
            const OutputMeta meta(schema::bench);
            const bool header = !append || starts_empty(csv);
            std::ostringstream f;
            if (header) {
                f << "kernel,size,iterations,strategy,makespan_s,ratio_to_oracle,predicted_s,efficiency,small_share,"
                     "verified,calibration,calibration_s,same_plan_as,samples,makespan_q1_s,makespan_q3_s";
                for (std::size_t i = 0; i < devs.size(); ++i) f << ",share_d" << i;
                f << meta.csv_header() << '\n';
            }
            for (const auto& r : rows) {
                f << k.kernel << ',' << k.size << ',' << k.iterations << ',' << r.strategy << ',' << num(r.makespan_s)
                  << ',' << (r.ratio > 0 ? num(r.ratio) : "") << ',' << (r.predicted_s >= 0 ? num(r.predicted_s) : "")
                  << ',' << num(r.efficiency) << ',' << num(r.small_share) << ',' << (r.verified ? 1 : 0) << ','
                  << calib_source << ',' << num(calib_s) << ','
                  << (r.same_as >= 0 ? rows[std::size_t(r.same_as)].strategy : std::string()) << ',' << r.samples
                  << ',' << num(r.q1_s) << ',' << num(r.q3_s);
                for (std::size_t i = 0; i < devs.size(); ++i) {
                    double share = 0;
                    for (const auto& a : r.plan.assignments)
                        if (a.device == int(i)) share = a.share;
                    f << ',' << num(share);
                }
                f << meta.csv_cells() << '\n';
            }
            write_file_checked(csv, "csv", f.str(), append);
            if (sweep && oracle) {
                const OutputMeta smeta(schema::bench_sweep);
                const std::string sp = sweep_path(csv);
                const bool sheader = !append || starts_empty(sp);
                std::ostringstream g;
                if (sheader) {
                    g << "kernel,size,iterations,small_share,makespan_s";
                    for (std::size_t i = 0; i < devs.size(); ++i) g << ",share_d" << i;
                    g << smeta.csv_header() << '\n';
                }
                auto pts = oracle->points;
                std::sort(pts.begin(), pts.end(), [&](const auto& a, const auto& b) {
                    return a.shares.at(std::size_t(small)) < b.shares.at(std::size_t(small));
                });
                for (const auto& p : pts) {
                    g << k.kernel << ',' << k.size << ',' << k.iterations << ',' << num(p.shares.at(std::size_t(small)))
                      << ',' << num(p.makespan_s);
                    for (double s : p.shares) g << ',' << num(s);
                    g << smeta.csv_cells() << '\n';
                }
                write_file_checked(sp, "csv (its -sweep file)", g.str(), append);
            }
        }
        if (!phases_csv.empty()) {
            const OutputMeta meta(schema::bench_phases);
            const bool header = !append || starts_empty(phases_csv);
            std::ostringstream f;
            if (header)
                f << "kernel,size,iterations,strategy,device,units,pack_s,send_s,h2d_s,kernel_s,d2h_s,recv_s,exec_s,"
                     "host_s,done_s,prepare_s,combine_s,makespan_s,pred_send_s,pred_h2d_s,pred_kernel_s,pred_d2h_s,"
                     "pred_recv_s,pred_host_s,pred_finish_s,pred_makespan_s"
                  << meta.csv_header() << '\n';
            for (const auto& r : rows) {
                const auto& jr = r.median_run;
                for (const auto& d : jr.devices) {
                    if (d.assignment.units == 0) continue;
                    const std::size_t i = std::size_t(d.assignment.device);
                    const double phases = d.send_s + d.times.h2d + d.times.kernel + d.times.d2h + d.recv_s;
                    f << k.kernel << ',' << k.size << ',' << k.iterations << ',' << r.strategy << ',' << i << ','
                      << d.assignment.units << ',' << num(d.pack_s) << ',' << num(d.send_s) << ','
                      << num(d.times.h2d) << ',' << num(d.times.kernel) << ',' << num(d.times.d2h) << ','
                      << num(d.recv_s) << ',' << num(d.exec_s) << ',' << num(std::max(0.0, d.done_s - phases)) << ','
                      << num(d.done_s) << ',' << num(jr.prepare_s) << ',' << num(jr.combine_s) << ','
                      << num(jr.makespan_s);
                    if (models_ok && i < r.prediction.predicted.size()) {
                        const auto& p = r.prediction.predicted[i];
                        f << ',' << num(p.send_s) << ',' << num(p.h2d_s) << ',' << num(p.kernel_s) << ','
                          << num(p.d2h_s) << ',' << num(p.recv_s) << ',' << num(p.host_s) << ','
                          << num(r.prediction.finish_s[i]) << ',' << num(r.prediction.makespan_s);
                    } else {
                        f << ",,,,,,,,";
                    }
                    f << meta.csv_cells() << '\n';
                }
            }
            write_file_checked(phases_csv, "phases-csv", f.str(), append);
        }
        return all_ok ? kOk : kWrong;
    });
}

}  // namespace worksize::cli
