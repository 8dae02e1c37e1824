// From command-line options to a KernelJob and a PlanRequest.
#include "job_setup.hpp"

#include "worksize/runtime/autotune.hpp"
#include "worksize/scheduler/kernels.hpp"

namespace worksize::cli {

po::options_description kernel_options(KernelArgs& k, const char* default_size) {
    po::options_description d("Kernel and plan");
    d.add_options()
        ("size", po::value(&k.size)->default_value(default_size),
         "problem size: N (NxN for 2-D kernels, N items for 1-D) or WxH")
        ("iterations", po::value(&k.iterations)->default_value(1), "kernel repetitions on each device")
        ("ops", po::value<double>(), "compute amount (operations) overriding the kernel's estimate")
        ("strategy", po::value(&k.strategy)->default_value("paper"), "split: even, pe-ratio, paper, model, oracle")
        ("local", po::value(&k.local)->default_value("paper"), "local size: null (driver), paper, tuned")
        ("priority", po::value(&k.priority), "work-group shape priority: x or y (default: the kernel's)")
        ("seed", po::value(&k.seed)->default_value(1), "seed of the generated inputs")
        ("param", po::value(&k.params)->composing(),
         "kernel parameter KEY=VALUE, repeatable (matmul: k; interp: scale, in_w, in_h; quad: integrand, a, b)")
        ("db", po::value(&k.db), "calibration and tuning database (default: $WORKSIZE_DB, else ~/.cache/worksize/db.json)");
    return d;
}

int kernel_dims(const std::string& kernel) {
    const auto& f = kernel_job(kernel);
    if (f.dims > 0) return f.dims;
    return describe_kernel(parse_kernel(kernel), GlobalSize{1, 1}).dims;
}

std::unique_ptr<KernelJob> make_job(const KernelArgs& k) {
    const auto& f = kernel_job(k.kernel);  // throws InvalidArgument for an unknown kernel
    JobOptions o;
    o.size = parse_size(k.size, kernel_dims(k.kernel));
    if (k.iterations == 0) throw InvalidArgument("--iterations must be at least 1");
    o.iterations = k.iterations;
    o.seed = k.seed;
    for (const auto& p : k.params) {
        const auto eq = p.find('=');
        if (eq == std::string::npos || eq == 0)
            throw InvalidArgument("invalid --param '" + p + "': expected KEY=VALUE");
        const std::string key = p.substr(0, eq), value = p.substr(eq + 1);
        try {
            std::size_t pos = 0;
            const double v = std::stod(value, &pos);
            if (pos == value.size()) {
                o.params[key] = v;
                continue;
            }
        } catch (const std::logic_error&) {
        }
        o.params[key] = value;
    }
    return f.make(o);
}

PlanRequest plan_request(const KernelArgs& k, const KernelJob& job) {
    PlanRequest r;
    r.kernel = job.descriptor();
    r.global = job.problem();
    r.iterations = k.iterations;
    r.ops = k.ops;
    r.strategy = parse_strategy(k.strategy);
    r.local_policy = parse_local_policy(k.local);
    if (!k.priority.empty()) r.priority = parse_priority(k.priority);
    r.granule = job.granule();
    if (r.strategy == Strategy::model || r.strategy == Strategy::oracle)
        throw InvalidArgument("strategy '" + k.strategy + "' is not available in this build yet");
    return r;
}

Plan build_plan(const std::vector<DeviceInfo>& devices, const KernelArgs& k, const KernelJob& job, Cluster* cluster) {
    (void)cluster;
    const auto request = plan_request(k, job);
    Plan plan = make_plan(devices, request);
    if (plan.local_policy == LocalPolicy::tuned) apply_tuned_locals(plan, devices, job, k.db);
    return plan;
}

}  // namespace worksize::cli
