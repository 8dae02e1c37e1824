// `worksize plan`: each device's share, local size and shape for a kernel.
#include <iostream>

#include "job_setup.hpp"
#include "kernel_help.hpp"
#include "output_meta.hpp"
#include "plan_output.hpp"
#include "worksize/scheduler/profile.hpp"
#include "worksize/scheduler/slice_program.hpp"

namespace worksize::cli {

namespace {

/// Each slice of `plan` as it would run: its declaration on its device (KernelJobFactory::declare).
std::vector<KernelSliceDecl> declared_slices(const KernelArgs& k, const KernelJob& job, const Plan& plan,
                                             const std::vector<DeviceInfo>& devices) {
    const auto& factory = kernel_job(k.kernel);
    if (!factory.declare)
        throw InvalidArgument("plan --instructions: kernel '" + k.kernel +
                              "' is not a declared job (its slices' sizes come from rank 0's partition by value at "
                              "run time); declared: matmul, interp, quad and job files");
    std::vector<KernelSliceDecl> out;
    for (const auto& a : plan.assignments) {
        if (a.units == 0) continue;
        out.push_back({factory.declare(job.slice_spec(a), devices.at(std::size_t(a.device))), a.rank, a.offset, a.units});
    }
    return out;
}

}  // namespace

int cmd_plan(mpi::Environment& env, const std::vector<std::string>& args) {
    KernelArgs k;
    DeviceSelection sel;
    bool json = false, help = false;
    std::string profile, inputs = "rank0", instructions;
    po::options_description desc("worksize plan --kernel K [options]");
    desc.add_options()
        ("help,h", po::bool_switch(&help), "show this help")
        ("kernel", po::value(&k.kernel), ("kernel: " + kernel_list()).c_str())
        ("devices", po::value(&profile), "plan for the devices of a profile file (offline) instead of the live ones")
        ("json", po::bool_switch(&json), "print one JSON document")
        ("instructions", po::value(&instructions)->implicit_value("text"),
         "print each rank's instruction list for the plan (text or json) instead of the plan: what "
         "each device allocates, uploads, launches and downloads, and the pieces rank 0 sends and "
         "receives (declared jobs: matmul, interp, quad, job files)");
    desc.add(inputs_option(inputs));
    desc.add(kernel_options(k));
    desc.add(selection_options(sel));
    parse(args, desc, true);  // --ops (a number > 0) is in k.ops when given
    if (show_help(env, desc, help)) return kOk;
    if (k.kernel.empty()) throw InvalidArgument("plan needs --kernel (" + kernel_list(" or ") + ")");
    // Validate everything before any collective, identically on every rank.
    auto job = make_job(k);
    (void)plan_request(k, *job);
    apply_inputs(k, inputs, *job);  // what run --inputs would plan
    if (!instructions.empty() && instructions != "text" && instructions != "json")
        throw InvalidArgument("--instructions takes text or json, not '" + instructions + "'");

    auto show = [&](const std::vector<DeviceInfo>& devices) {
        const KernelArgs kt = with_tuned_params(k, devices);  // --local tuned: the tuned kernel parameters
        const auto tuned_job = make_job(kt);
        const Plan plan = plan_job(devices, *tuned_job, plan_options(kt, devices));  // offline or live: no measuring
        const std::string variant = tuned_job->variant();
        if (!instructions.empty()) {
            const auto slices = declared_slices(kt, *tuned_job, plan, devices);
            KernelProgramOptions o;
            o.iterations = kt.iterations;
            o.local_inputs = kt.local_inputs;
            if (instructions == "json") std::cout << kernel_instructions_to_json(slices, o).dump(2) << '\n';
            else std::cout << format_kernel_instructions(slices, o);
            return kOk;
        }
        if (json) {
            nlohmann::json doc = plan_to_json(plan, job_size(kt));
            if (!variant.empty()) doc["variant"] = variant;
            std::cout << OutputMeta(schema::plan).stamp(doc).dump(2) << '\n';
        } else {
            if (!variant.empty()) std::cout << kt.kernel << ": " << variant << '\n';
            std::cout << plan_table(plan);
        }
        return kOk;
    };
    if (!profile.empty()) {
        if (env.rank() == 0) return show(load_profile(profile));
        return kOk;
    }
    return with_cluster(env, sel, [&](Cluster& c) { return show(c.devices()); });
}

}  // namespace worksize::cli
