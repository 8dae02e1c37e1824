// `worksize run`: run a sample kernel split across the devices of every rank, verified.
#include <cmath>
#include <iostream>

#include "job_setup.hpp"
#include "kernel_help.hpp"
#include "output_meta.hpp"
#include "plan_output.hpp"
#include "worksize/runtime/host_memory.hpp"
#include "worksize/scheduler/log.hpp"

namespace worksize::cli {

namespace {

struct Outcome {
    Plan plan;
    JobResult result;
    std::string variant;  ///< the kernel variant that ran (KernelJob::variant; "": the kernel has one)
};

/// Generate, plan, warm up (builds the programs outside the timing) and run one job. With
/// --inputs local (KernelArgs::local_inputs) each rank makes its slices' inputs and checks their
/// outputs: rank 0 makes nothing whole.
Outcome run_one(Cluster& c, const KernelArgs& args, int warmup) {
    const KernelArgs k = with_tuned_params(args, c.devices());  // --local tuned: the tuned kernel parameters
    const bool local_inputs = k.local_inputs;
    auto job = make_job(k);
    Outcome o;
    o.plan = plan_job(c.devices(), *job, plan_options(k, c.devices(), &c));
    if (!local_inputs) check_job_memory(*job, o.plan.assignments, c.devices());  // under ulimit -v: one line, not a crash
    for (int w = 0; w < warmup; ++w) {
        KernelArgs wk = k;
        wk.iterations = 1;
        auto warm = make_job(wk);
        const JobOptions wo = job_options(wk);
        if (!local_inputs) c.generate(*warm);
        c.run(*warm, o.plan.assignments, k.kernel, local_inputs ? &wo : nullptr);
    }
    const JobOptions jo = job_options(k);
    if (!local_inputs) c.generate(*job);
    o.result = c.run(*job, o.plan.assignments, k.kernel, local_inputs ? &jo : nullptr);
    o.variant = job->variant();
    return o;
}

int paper_experiment(Cluster& c, const KernelArgs& base, double repeat_scale, bool json) {
    // Paper sizes and repeat counts of every registered kernel that has a paper case; the
    // compute amounts are the paper's own figures (METHOD.md 1.1, paper section 4.1) so that the
    // compute classes match its experiment.
    std::vector<std::pair<std::string, PaperCase>> cases;
    for (const auto& name : kernel_job_names())
        if (const auto& pc = kernel_job(name).paper_case) cases.emplace_back(name, *pc);
    nlohmann::json out = {{"experiment", "paper-2015"}, {"repeat_scale", repeat_scale}, {"kernels", nlohmann::json::array()}};
    Table t({"kernel", "size", "iterations", "pe-ratio+NULL ms", "verified", "paper ms", "verified", "change %"});
    Progress progress("paper experiment", 2 * cases.size());
    bool all_ok = true;
    for (const auto& [kernel, pc] : cases) {
        KernelArgs k = base;
        k.kernel = kernel;
        k.size = pc.size;
        k.device_params = false;  // the paper's kernels, whatever the devices
        k.iterations = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(double(pc.iterations) * repeat_scale)));
        if (pc.ops > 0) k.ops = pc.ops * double(k.iterations) / double(pc.iterations);
        KernelArgs a = k, b = k;
        a.strategy = "pe-ratio";
        a.local = "null";
        b.strategy = "paper";
        b.local = "paper";
        progress.step(kernel + " pe-ratio+NULL");
        const auto ra = run_one(c, a, 1);
        progress.step(kernel + " paper");
        const auto rb = run_one(c, b, 1);
        const double change = (rb.result.makespan_s / ra.result.makespan_s - 1.0) * 100.0;
        all_ok = all_ok && ra.result.verdict.ok && rb.result.verdict.ok;
        t.add({kernel, pc.size, std::to_string(k.iterations), fmt_ms(ra.result.makespan_s),
               ra.result.verdict.ok ? "yes" : "NO", fmt_ms(rb.result.makespan_s), rb.result.verdict.ok ? "yes" : "NO",
               fmt(change, 1)});
        out["kernels"].push_back({{"kernel", kernel},
                                  {"pe_ratio_null", result_to_json(kernel, job_size(a), ra.plan, ra.result)},
                                  {"paper", result_to_json(kernel, job_size(b), rb.plan, rb.result)},
                                  {"change_percent", change}});
        if (!json) {
            std::cout << "== " << kernel << " " << pc.size << " x" << k.iterations << ": pe-ratio + NULL\n"
                      << result_table(ra.plan, ra.result) << "== " << kernel << ": paper split + paper local\n"
                      << result_table(rb.plan, rb.result) << '\n';
        }
    }
    progress.done();
    if (json)
        std::cout << OutputMeta(schema::paper_experiment).stamp(out).dump(2) << '\n';
    else
        std::cout << "Time change of the paper's rules against PE-ratio split with NULL local size "
                     "(negative = faster; the paper's Figure 7):\n"
                  << t.str();
    return all_ok ? kOk : kWrong;
}

/// The paper experiment picks its kernels, sizes, repeat counts, splits and local sizes itself:
/// an option it would ignore is refused, and so is --repeat-scale without it.
void check_paper_options(const po::variables_map& vm, bool paper) {
    if (!paper) {
        if (!vm["repeat-scale"].defaulted())
            throw InvalidArgument("--repeat-scale scales the paper's repeat counts: it needs --paper-experiment");
        return;
    }
    for (const char* o : {"kernel", "size", "iterations", "ops", "strategy", "local", "param", "backend", "priority"}) {
        if (!vm.count(o) || vm[o].defaulted()) continue;
        const std::string what = std::string(o) == "kernel" ? "kernel ('" + vm[o].as<std::string>() + "')"
                                                             : "--" + std::string(o);
        throw InvalidArgument("--paper-experiment runs the paper's kernels (" + paper_kernel_list() +
                              ") at its own sizes, repeat counts, splits and local sizes: it takes no " + what);
    }
}

}  // namespace

int cmd_run(mpi::Environment& env, const std::vector<std::string>& args) {
    KernelArgs k;
    DeviceSelection sel;
    bool json = false, help = false, paper = false;
    int warmup = 1;
    double repeat_scale = 1.0;
    std::string on_failure = "abort", inputs = "rank0";
    po::options_description desc("worksize run KERNEL [options]  |  worksize run --paper-experiment");
    desc.add_options()
        ("help,h", po::bool_switch(&help), "show this help")
        ("kernel", po::value(&k.kernel), ("kernel: " + kernel_list()).c_str())
        ("json", po::bool_switch(&json), "print one JSON document")
        ("warmup", count_value("warmup", &warmup), "untimed runs first (build programs, touch memory)")
        ("paper-experiment", po::bool_switch(&paper),
         ("run the paper's kernels (" + paper_kernel_list() + ") at its sizes, PE-ratio+NULL against the paper's rules")
             .c_str())
        ("repeat-scale", real_value("repeat-scale", &repeat_scale, 0, 1e6, Open::low),
         "paper experiment: multiply the paper's repeat counts by this (e.g. 0.01 on CPUs)")
        ("on-failure", po::value(&on_failure)->default_value("abort"),
         "when a worker rank is lost: abort (exit 1) or replan (run again on the devices left)");
    desc.add(inputs_option(inputs));
    desc.add(kernel_options(k));
    desc.add(selection_options(sel));
    const auto vm = parse(args, desc, true);
    if (show_help(env, desc, help)) return kOk;
    if (on_failure != "abort" && on_failure != "replan")
        throw InvalidArgument("--on-failure must be abort or replan, not '" + on_failure + "'");
    check_paper_options(vm, paper);
    if (paper && inputs != "rank0") throw InvalidArgument("--paper-experiment offloads from rank 0: it takes no --inputs");
    if (paper) {
        return with_cluster(env, sel, [&](Cluster& c) { return paper_experiment(c, k, repeat_scale, json); });
    }
    if (k.kernel.empty()) throw InvalidArgument("run needs a kernel: " + kernel_list(" or "));
    // Validate the options on every rank before any collective.
    {
        auto probe = make_job(k);
        (void)plan_request(k, *probe);
        apply_inputs(k, inputs, *probe);  // --strategy model then charges no transfer from rank 0
    }
    return with_cluster(env, sel, [&](Cluster& c) {
        // --on-failure replan: a lost rank's devices are dropped and the job is planned again
        // (same strategy) and run from the start on the devices left, verified.
        std::vector<std::string> replans;
        Outcome o;
        for (;;) {
            try {
                o = run_one(c, k, warmup);
                break;
            } catch (const Error& e) {
                if (e.reason() != ErrorReason::lost_rank || on_failure != "replan") throw;
                c.drop_lost_devices();
                if (c.devices().empty()) throw;
                log::warn() << e.what() << "; re-planning the job on the " << c.devices().size()
                            << " device(s) left (--on-failure replan)";
                replans.emplace_back(e.what());
            }
        }
        if (json) {
            auto j = result_to_json(k.kernel, job_size(k), o.plan, o.result);
            j["replanned"] = replans;
            if (!o.variant.empty()) j["variant"] = o.variant;
            std::cout << OutputMeta(schema::run).stamp(j).dump(2) << '\n';
        } else {
            std::cout << "kernel " << k.kernel << ", size " << k.size << ", global "
                      << global_text(o.plan.global, o.plan.dims) << ", "
                      << k.iterations << " iteration(s), strategy " << o.plan.strategy << ", local "
                      << to_string(o.plan.local_policy) << (o.variant.empty() ? "" : ", " + o.variant) << '\n'
                      << result_table(o.plan, o.result);
            for (const auto& why : replans) std::cout << "re-planned after: " << why << '\n';
        }
        // --local tuned: say where a device ran without a tuned entry (the table shows sizes only).
        if (o.plan.local_policy == LocalPolicy::tuned)
            for (const auto& a : o.plan.assignments)
                if (a.units > 0 && a.local_rule.rfind("tuned", 0) != 0 && a.local_rule != kRequiredLocalRule &&
                    a.backend == "kernel")  // a library backend's local size is its own
                    log::warn() << "device " << a.device << " (" << a.device_name
                                << ") ran without a tuned local size: " << a.local_rule;
        return o.result.verdict.ok ? kOk : kWrong;
    });
}

}  // namespace worksize::cli
