// `worksize bench`: run a kernel under several split strategies and compare them with the oracle.
// This file holds the options, the command, the runs (BenchRun, bench_run.hpp) and the printed
// results: the table and the comparisons; the CSVs are bench_csv.cpp.
#include <algorithm>
#include <iostream>
#include <sstream>
#include <tuple>

#include "bench_run.hpp"
#include "kernel_help.hpp"
#include "plan_output.hpp"
#include "worksize/runtime/host_memory.hpp"
#include "worksize/scheduler/log.hpp"
#include "worksize/scheduler/stats.hpp"
#include "worksize/scheduler/strategy.hpp"

namespace worksize::cli {

namespace {

std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

int small_device_of(const std::vector<DeviceInfo>& devs) {
    int s = 0;
    for (std::size_t i = 1; i < devs.size(); ++i)
        if (devs[i].total_pes() < devs[std::size_t(s)].total_pes()) s = int(i);
    return s;
}

/// The options' values that go into BenchArgs once parsed and checked.
struct BenchOptionValues {
    bool help = false;
    std::string strategies = "even,pe-ratio,paper,model,oracle", calib_sizes;
};

po::options_description bench_options(BenchArgs& o, BenchOptionValues& v) {
    po::options_description desc("worksize bench --kernel K --size S [options]");
    desc.add_options()
        ("help,h", po::bool_switch(&v.help), "show this help")
        ("kernel", po::value(&o.k.kernel), ("kernel: " + kernel_list()).c_str())
        ("strategies", po::value(&v.strategies)->default_value(v.strategies),
         "comma-separated split strategies to compare")
        ("repeats", count_value("repeats", &o.repeats, 1),
         "timed runs per strategy (median), after one warm-up; interleaved over the strategies")
        ("csv", po::value(&o.csv), "write one row per strategy to this CSV file")
        ("append", po::bool_switch(&o.append), "append to the CSV files (header only when they are new)")
        ("phases-csv", po::value(&o.phases_csv),
         "write each strategy's median run phase by phase and device by device, measured and predicted")
        ("sweep", po::bool_switch(&o.sweep),
         "also write the oracle's scan (makespan against the shares) to the CSV name with -sweep")
        ("calibration-sizes", po::value(&v.calib_sizes),
         "sizes for the automatic calibration when the database has no model (comma-separated)")
        ("no-calibrate", po::bool_switch(&o.no_calibrate),
         "fail instead of calibrating when the model strategy has no calibration");
    desc.add(kernel_options(o.k));
    desc.add(selection_options(o.sel));
    return desc;
}

}  // namespace

std::optional<BenchArgs> parse_bench_args(mpi::Environment& env, const std::vector<std::string>& args) {
    BenchArgs o;
    BenchOptionValues v;
    const po::options_description desc = bench_options(o, v);
    const auto vm = parse(args, desc, true);
    if (show_help(env, desc, v.help)) return std::nullopt;
    const KernelArgs& k = o.k;
    if (k.kernel.empty()) throw InvalidArgument("bench needs --kernel (" + kernel_list(" or ") + ")");
    if (!vm["strategy"].defaulted()) throw InvalidArgument("bench takes --strategies (a list), not --strategy");
    if (vm.count("ops")) throw InvalidArgument("bench does not take --ops");
    o.strategies = split_commas(v.strategies);
    if (o.strategies.empty()) throw InvalidArgument("--strategies is empty");
    bool has_oracle = false;
    for (const auto& s : o.strategies) {
        const StrategyNeeds needs = find_strategy(s).needs();
        o.has_model |= needs == StrategyNeeds::models;
        has_oracle |= needs == StrategyNeeds::measurements;
    }
    if (o.append && o.csv.empty() && o.phases_csv.empty())
        throw InvalidArgument("--append appends to the CSV files: it needs --csv or --phases-csv");
    if (o.sweep && (!has_oracle || o.csv.empty()))
        throw InvalidArgument("--sweep needs --csv and oracle among --strategies");
    // No --calibration-sizes: the adaptive ladder (docs/models.md), which starts at the first default size.
    o.calib = v.calib_sizes.empty() ? std::vector<std::string>{} : split_commas(v.calib_sizes);
    {  // the job, its plan request and the calibration's jobs: a bad size or parameter, refused here
        auto probe = make_job(k);
        (void)plan_request(k, *probe);
        KernelArgs ck = k;
        for (const auto& s : o.calib.empty() ? default_calibration_sizes(k.kernel) : o.calib) {
            ck.size = s;
            (void)make_job(ck);
        }
    }
    return o;
}

void check_bench_outputs(const BenchArgs& o, const std::string& db_path) {
    check_writable(o.csv, "csv");
    if (o.sweep) check_writable(sweep_path(o.csv), "csv (its -sweep file)");
    check_writable(o.phases_csv, "phases-csv");
    if (o.has_model && !o.no_calibrate) check_db_writable(db_path);
}

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

BenchRun::BenchRun(Cluster& c, const BenchArgs& o, const std::string& db_path)
    : c_(c), o_(o), path_(db_path), devs_(c.devices()), db_(o.k.db),
      k_(with_tuned_params(o.k, devs_, &db_)) {}  // --local tuned: the tuned kernel parameters

int BenchRun::run() {
    if (host_memory_limit()) {  // under ulimit -v: one line before the calibration and the inputs
        KernelArgs even = k_;
        even.strategy = "even";
        const auto probe = make_job(even);
        check_job_memory(*probe, plan_job(devs_, *probe, plan_options(even, devs_, &c_, &db_)).assignments, devs_);
    }
    get_models();
    small_ = small_device_of(devs_);
    Progress progress("bench " + k_.kernel, o_.strategies.size() * std::size_t(o_.repeats + 1));
    plan_strategies(progress);
    // Strategies with identical plans (units and local sizes of every device) are one experiment.
    for (std::size_t i = 0; i < rows_.size(); ++i)
        for (std::size_t j = 0; j < i && rows_[i].same_as < 0; ++j)
            if (rows_[j].same_as < 0 && same_plan(rows_[i].plan, rows_[j].plan)) rows_[i].same_as = int(j);
    run_repeats(progress);
    for (std::size_t i = 0; i < rows_.size(); ++i) summarise(i);
    const bool all_ok = pool_verdicts();
    progress.done();
    double oracle_s = -1;
    for (const auto& r : rows_)
        if (find_strategy(r.plan.strategy).needs() == StrategyNeeds::measurements) oracle_s = r.makespan_s;
    for (auto& r : rows_)
        if (oracle_s > 0) r.ratio = r.makespan_s / oracle_s;

    print_table();
    print_comparisons();
    if (!o_.csv.empty()) {
        write_csv();
        if (o_.sweep && oracle_) write_sweep_csv();
    }
    if (!o_.phases_csv.empty()) write_phases_csv();
    return all_ok ? kOk : kWrong;
}

void BenchRun::get_models() {
    std::vector<std::string> missing;
    models_ = load_models(db_.store(), devs_, k_.kernel, model_key(k_), missing);
    models_ok_ = missing.empty();
    if (models_ok_) {
        calib_source_ = "reused";
        std::cout << "calibration: reused from the database " << path_ << '\n';
    } else if (o_.has_model) {
        if (o_.no_calibrate)
            throw Error(missing.front() + " (database " + path_ + "): run `worksize calibrate --kernel " +
                        k_.kernel + "`");
        log::info() << "calibration: " << missing.front() << "; calibrating now";
        const auto res = calibrate_and_store(c_, k_, o_.calib, 3, 15, "", &db_);
        calib_s_ = res.seconds;
        calib_source_ = "measured";
        std::cout << "calibration: measured in " << fmt(calib_s_, 2) << " s (" << res.runs
                  << " runs), stored in " << path_ << '\n';
        for (const auto& dc : res.devices)
            std::cout << "calibration: device " << dc.device << " " << ladder_text(dc) << '\n';
        missing.clear();
        models_ = load_models(db_.store(), devs_, k_.kernel, model_key(k_), missing);
        models_ok_ = missing.empty();
    }
}

void BenchRun::plan_strategies(Progress& progress) {
    for (const auto& sname : o_.strategies) {
        KernelArgs ks = k_;
        ks.strategy = sname;
        auto probe = make_job(ks);
        KernelPlanExtras extras;
        BenchRow row;
        row.strategy = sname;
        row.plan = plan_job(devs_, *probe, plan_options(ks, devs_, &c_, &db_), &extras);
        if (extras.oracle) oracle_ = extras.oracle;
        {
            KernelArgs wk = ks;
            wk.iterations = 1;
            auto warm = make_job(wk);
            c_.generate(*warm);
            c_.run(*warm, row.plan.assignments, k_.kernel);
            progress.step(sname + " warm-up");
        }
        rows_.push_back(std::move(row));
    }
}

// Repeat r starts at strategy r so that drift of the machine hits all strategies alike. Samples
// of identical plans are pooled.
void BenchRun::run_repeats(Progress& progress) {
    samples_.resize(rows_.size());
    for (int r = 0; r < o_.repeats; ++r) {
        for (std::size_t j = 0; j < rows_.size(); ++j) {
            const std::size_t i = (j + std::size_t(r)) % rows_.size();
            auto& row = rows_[i];
            KernelArgs ks = k_;
            ks.strategy = row.strategy;
            auto job = make_job(ks);
            c_.generate(*job);
            auto res = c_.run(*job, row.plan.assignments, k_.kernel);
            row.verified = row.verified && res.verdict.ok;
            const double m = res.makespan_s;
            row.rounds.push_back(m);
            samples_[row.same_as < 0 ? i : std::size_t(row.same_as)].emplace_back(m, std::move(res));
            progress.step(row.strategy + " run " + std::to_string(r + 1));
        }
    }
}

void BenchRun::summarise(std::size_t i) {
    auto& row = rows_[i];
    auto& runs = samples_[row.same_as < 0 ? i : std::size_t(row.same_as)];
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
    if (!o_.phases_csv.empty()) row.median_run = mid.second;  // only the phases CSV reads it
    double sum = 0, mx = 0;
    int n = 0;
    for (const auto& d : mid.second.devices) {
        if (d.assignment.units == 0) continue;
        sum += d.done_s;
        mx = std::max(mx, d.done_s);
        ++n;
    }
    row.efficiency = n > 0 && mx > 0 ? sum / double(n) / mx : 0;
    if (models_ok_) {
        KernelArgs ks = k_;
        ks.strategy = row.strategy;
        auto probe = make_job(ks);
        std::vector<std::uint64_t> units(devs_.size(), 0);
        for (const auto& a : row.plan.assignments) units.at(std::size_t(a.device)) = a.units;
        // The model strategy's own figures: the simulated lists (simulate_kernel.hpp).
        const SplitJob sj = model_split_job(*probe, kernel_plan_options(ks), devs_);
        std::vector<int> ranks;
        for (const auto& d : devs_) ranks.push_back(d.rank);
        row.prediction =
            simulate_split(models_, sj, units, ranks, declared_slices_of(k_.kernel, *probe, devs_, sj));
        row.predicted_s = row.prediction.makespan_s;
    }
    for (const auto& a : row.plan.assignments)
        if (a.device == small_) row.small_share = a.share;
}

bool BenchRun::pool_verdicts() {
    bool all_ok = true;
    for (auto& row : rows_)
        if (row.same_as >= 0) {
            auto& first = rows_[std::size_t(row.same_as)];
            first.verified = first.verified && row.verified;
        }
    for (auto& row : rows_) {
        if (row.same_as >= 0) row.verified = rows_[std::size_t(row.same_as)].verified;
        all_ok = all_ok && row.verified;
    }
    return all_ok;
}

void BenchRun::print_table() const {
    std::cout << "kernel " << k_.kernel << ", size " << k_.size << ", " << k_.iterations
              << " iteration(s), local " << k_.local << ", " << o_.repeats
              << " timed run(s) per strategy, interleaved (median; identical plans pooled)\n";
    std::vector<std::string> head = {"strategy"};
    for (const auto& d : devs_) head.push_back("d" + std::to_string(d.index) + "@r" + std::to_string(d.rank) + " %");
    for (const char* h : {"makespan ms", "q1-q3 ms", "/ oracle", "predicted ms", "pred err %", "balance %", "verified",
                          "same plan as"})
        head.push_back(h);
    Table t(head);
    for (const auto& r : rows_) {
        std::vector<std::string> line = {r.strategy};
        for (std::size_t i = 0; i < devs_.size(); ++i) {
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
        line.push_back(r.same_as >= 0 ? rows_[std::size_t(r.same_as)].strategy + " (" + std::to_string(r.samples) +
                                            " runs pooled)"
                                      : "-");
        t.add(line);
    }
    std::cout << t.str();
    if (oracle_) std::cout << "oracle: " << oracle_->points.size() << " splits measured in " << oracle_->runs << " runs\n";
}

// Paired comparison of model with each baseline, round by round: the same repeat ran both
// within seconds, so the machine's drift cancels. Differences inside run-to-run noise show
// up as a split of wins and losses and a large sign-test p.
void BenchRun::print_comparisons() const {
    if (const auto m = std::find_if(rows_.begin(), rows_.end(),
                                    [](const BenchRow& r) { return r.plan.strategy == "model"; });
        m != rows_.end() && o_.repeats >= 2) {
        for (const auto& b : rows_) {
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
    for (const auto& r : rows_)
        if (r.plan.strategy == "model") model_job = r.makespan_s;
    if (calib_source_ == "measured" && model_job > 0)
        std::cout << "calibration time " << fmt(calib_s_, 2) << " s = " << fmt(calib_s_ / model_job * 100, 1)
                  << " % of the model-planned job (" << fmt_ms(model_job) << " ms)\n";
    else if (calib_source_ == "reused")
        std::cout << "calibration time 0 s: reused from the database\n";
}

int cmd_bench(mpi::Environment& env, const std::vector<std::string>& args) {
    const std::optional<BenchArgs> o = parse_bench_args(env, args);
    if (!o) return kOk;
    const std::string path = db_path(o->k);
    return with_cluster(env, o->sel, [&](Cluster& c) {
        // Output files (rank 0 writes them): checked before the work, on rank 0 (see with_cluster).
        check_bench_outputs(*o, path);
        BenchRun bench(c, *o, path);
        return bench.run();
    });
}

}  // namespace worksize::cli
