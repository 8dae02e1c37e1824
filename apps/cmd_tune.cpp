// `worksize tune`: tune the local work size of kernels on every device of every rank and keep
// the results in the tuning database; `--report` compares the tuned choice with the exhaustive
// best, the paper's rule and NULL and prints the (x, y) -> time heat maps (docs/tuning.md).
// This file holds the options, the jobs and the command; the tuning itself is TuneRun
// (tune_run.hpp).
#include <algorithm>
#include <filesystem>
#include <map>

#include "job_setup.hpp"
#include "kernel_help.hpp"
#include "tune_run.hpp"
#include "worksize/runtime/autotune.hpp"

namespace worksize::cli {

namespace {

/// The database text of this rank for collect("tuning-db"): "" when it has no file.
std::string local_db_text(const std::string& db) {
    const std::string path = resolve_db_path(db);
    if (!std::filesystem::exists(path)) return {};
    return Store::open(path, CorruptPolicy::report_and_ignore).dump();
}

/// The options' values that go into TuneArgs' TuneOptions and MeasureOptions once parsed.
struct TuneOptionValues {
    bool help = false;
    std::size_t min_budget = 1;
    // Counts (count_value refuses a negative or out-of-range value rather than wrapping it).
    int confirm_top = int(TuneOptions{}.confirm_top), confirm_runs = int(TuneOptions{}.confirm_runs),
        head_to_head = int(TuneReportOptions{}.head_to_head_runs),
        baseline_runs = int(TuneOptions{}.baseline_runs);
    double topts_margin = TuneOptions{}.baseline_margin;
    double min_run_ms = MeasureOptions{}.min_run_s * 1e3;
};

po::options_description tune_options(TuneArgs& o, TuneOptionValues& v) {
    po::options_description desc(
        "worksize tune --kernel K|all [--size S] [--search guided|exhaustive] [--budget F] [--db F]\n"
        "worksize tune --report [--json] [--heatmap-csv F] ...");
    desc.add_options()
        ("help,h", po::bool_switch(&v.help), "show this help")
        ("kernel", po::value(&o.base.kernel)->default_value("all"), ("kernel: " + kernel_list() + " or all").c_str())
        ("size", po::value(&o.sizes)->composing(),
         ("tuning size: N (NxN for 2-D, N items for 1-D), WxH, or KERNEL=SIZE; repeatable "
          "(default with --kernel all: " + tune_sizes_help() + ")").c_str())
        ("search", po::value(&o.search)->default_value("guided"), "search: guided (model-ranked seeds + pattern search) or exhaustive")
        ("budget", real_value("budget", &o.budget, 0, 1, Open::low), "guided search: at most this fraction of the candidates")
        ("min-budget", count_value("min-budget", &v.min_budget, 1),
         "guided search: measure at least this many candidates (or all, if fewer)")
        ("param-search", po::value(&o.param_search)->default_value("auto"),
         "kernel parameters (a kernel's tunables not given with --param): guided (the model's best half of "
         "--param-budget, then a random sample), exhaustive, off, or auto (guided on GPUs and accelerators, "
         "off on CPU devices)")
        ("param-budget", count_value("param-budget", &o.param_budget, 1),
         "parameter search: measure at most this many parameter sets (guided; a space this small is searched whole)")
        ("confirm-top", count_value("confirm-top", &v.confirm_top),
         "after either search, re-time its this many fastest candidates ... (0 or 1: off)")
        ("confirm-runs", count_value("confirm-runs", &v.confirm_runs),
         "... this many more times each (fresh measurements, interleaved); the lowest median of all "
         "their timings wins (0: off)")
        ("baseline-runs", count_value("baseline-runs", &v.baseline_runs),
         "after the confirmation, time the choice against the paper rule's local size and NULL this many "
         "more times each, fresh and interleaved (0: no check) ...")
        ("baseline-margin", real_value("baseline-margin", &v.topts_margin, 0, 10),
         "... and store the faster baseline instead when the choice's median is slower than it by more "
         "than this fraction (0.05: 5 %)")
        ("head-to-head", count_value("head-to-head", &v.head_to_head),
         "report: when the tuned choice and the exhaustive best differ, measure both afresh this many "
         "times each, interleaved, and compare those medians (0: compare the searches' own times)")
        ("iterations", count_value("iterations", &o.base.iterations, 1, kMaxIterations), "kernel iterations per timed run")
        ("repeats", count_value("repeats", &o.mo.repeats, 1), "timed runs per configuration (the median counts)")
        ("warmup", count_value("warmup", &o.mo.warmup), "untimed runs per configuration first")
        ("min-run-ms", real_value("min-run-ms", &v.min_run_ms, 0, 60e3),
         "where one run of --iterations has less kernel time than this on a device (a GPU's tens of "
         "microseconds), time runs of more iterations there and scale the times back (0: off)")
        ("seed", count_value("seed", &o.base.seed), "seed of the generated inputs")
        ("param", param_value(&o.base.params), "kernel parameter KEY=VALUE, repeatable")
        ("db", po::value(&o.base.db), "tuning database (default: $WORKSIZE_DB, else ~/.cache/worksize/db.json)")
        ("report", po::bool_switch(&o.report),
         "measure every candidate, the paper's rule and NULL too, and compare them with the guided choice")
        ("json", po::bool_switch(&o.json), "report: print one JSON document")
        ("heatmap-csv", po::value(&o.heatmap_csv), "report: write the (x, y) -> time heat maps to this CSV (docs/plot_heatmap.sh)");
    desc.add(selection_options(o.sel));
    return desc;
}

/// The two searches' TuneOptions from the parsed options.
void set_search_options(TuneArgs& o, const TuneOptionValues& v) {
    TuneOptions& topts = o.topts;
    topts.strategy = o.search == "exhaustive" ? SearchStrategy::exhaustive : SearchStrategy::guided;
    topts.budget_fraction = o.budget;
    topts.min_budget = v.min_budget;
    topts.confirm_top = std::size_t(v.confirm_top);
    topts.confirm_runs = std::size_t(v.confirm_runs);
    topts.baseline_runs = std::size_t(v.baseline_runs);
    topts.baseline_margin = v.topts_margin;
    // The parameter search: its own budget (a count of sets, each a program build), confirmation as above.
    TuneOptions& ptopts = o.ptopts;
    ptopts = topts;
    ptopts.strategy = o.param_search == "exhaustive" ? SearchStrategy::exhaustive : SearchStrategy::guided;
    ptopts.budget_fraction = 0;
    ptopts.min_budget = o.param_budget;
}

}  // namespace

bool TuneArgs::searches_params(const DeviceInfo& d) const {
    // auto: on GPUs and accelerators; on CPU devices each set costs a compilation and the
    // default kernel is competitive, so only when asked for.
    return param_search == "auto" ? d.type != DeviceType::cpu : param_search != "off";
}

std::optional<TuneArgs> parse_tune_args(mpi::Environment& env, const std::vector<std::string>& args) {
    TuneArgs o;
    TuneOptionValues v;
    const po::options_description desc = tune_options(o, v);
    parse(args, desc, true);
    if (show_help(env, desc, v.help)) return std::nullopt;
    // Validate everything on every rank before any collective.
    if (o.search != "guided" && o.search != "exhaustive")
        throw InvalidArgument("--search must be guided or exhaustive, not '" + o.search + "'");
    if (o.param_search != "guided" && o.param_search != "exhaustive" && o.param_search != "off" &&
        o.param_search != "auto")
        throw InvalidArgument("--param-search must be auto, guided, exhaustive or off, not '" + o.param_search + "'");
    // (The numeric options' types and ranges are checked as they are parsed: count_value, real_value.)
    o.mo.min_run_s = v.min_run_ms * 1e-3;
    o.ropts.head_to_head_runs = std::size_t(v.head_to_head);
    if ((o.json || !o.heatmap_csv.empty()) && !o.report)
        throw InvalidArgument("--json and --heatmap-csv go with --report");
    set_search_options(o, v);
    return o;
}

std::vector<KernelArgs> tune_jobs(const TuneArgs& o) {
    std::vector<std::string> kernels;
    if (o.base.kernel == "all")
        kernels = kernel_job_names();
    else
        kernels = {o.base.kernel};
    std::map<std::string, std::string> size_of;
    std::string common_size;
    for (const auto& s : o.sizes) {
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
        KernelArgs a = o.base;
        a.kernel = k;
        a.local = "paper";
        a.strategy = "paper";
        if (size_of.count(k))
            a.size = size_of[k];
        else if (!common_size.empty())
            a.size = common_size;
        else if (kernels.size() > 1 && !kernel_job(k).tune_size.empty())
            a.size = kernel_job(k).tune_size;  // small enough for a CPU device
        else
            throw InvalidArgument("tune needs --size for kernel '" + k + "'");
        (void)make_job(a);  // throws InvalidArgument for a bad kernel, size or parameter
        jobs.push_back(a);
    }
    return jobs;
}

int cmd_tune(mpi::Environment& env, const std::vector<std::string>& args) {
    const std::optional<TuneArgs> o = parse_tune_args(env, args);
    if (!o) return kOk;
    const std::vector<KernelArgs> jobs = tune_jobs(*o);

    Cluster cluster(env, o->sel);
    cluster.set_collect_handler([db = o->base.db](const std::string& what) -> std::string {
        if (what == "tuning-db") return local_db_text(db);
        return {};
    });
    if (!cluster.is_master()) return cluster.serve();

    TunePosition at;
    int code = kFailure;
    try {
        code = run_tune(cluster, *o, jobs, at);
    } catch (const Error& e) {
        cluster.finish(e.reason() == ErrorReason::bad_input ? kUsage : kFailure);
        // A lost rank or a kernel past --kernel-timeout ends the tuning where it was: what was
        // stored before stays (each (kernel, device) is saved when it is done).
        if (!ends_command(e.reason()) || at.tuning.empty()) throw;
        throw Error(e.reason(), std::string(e.what()) + "; tune stopped at " + at.tuning + ", " +
                                    std::to_string(at.stored_units) + " result(s) stored before");
    } catch (const std::exception& e) {
        // As with_cluster: the workers exit with rank 0's code (mpiexec ORs the ranks' codes).
        cluster.finish(reason_of(e) == ErrorReason::bad_input ? kUsage : kFailure);
        throw;
    } catch (...) {
        cluster.finish(kFailure);
        throw;
    }
    cluster.finish(code);
    return code;
}

}  // namespace worksize::cli
