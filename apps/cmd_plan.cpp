// `worksize plan`: each device's share, local size and shape for a kernel.
#include <iostream>

#include "job_setup.hpp"
#include "kernel_help.hpp"
#include "output_meta.hpp"
#include "plan_output.hpp"
#include "worksize/scheduler/profile.hpp"

namespace worksize::cli {

int cmd_plan(mpi::Environment& env, const std::vector<std::string>& args) {
    KernelArgs k;
    DeviceSelection sel;
    bool json = false, help = false;
    std::string profile, inputs = "rank0";
    po::options_description desc("worksize plan --kernel K [options]");
    desc.add_options()
        ("help,h", po::bool_switch(&help), "show this help")
        ("kernel", po::value(&k.kernel), ("kernel: " + kernel_list()).c_str())
        ("devices", po::value(&profile), "plan for the devices of a profile file (offline) instead of the live ones")
        ("json", po::bool_switch(&json), "print one JSON document");
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

    auto show = [&](const std::vector<DeviceInfo>& devices) {
        const KernelArgs kt = with_tuned_params(k, devices);  // --local tuned: the tuned kernel parameters
        const auto tuned_job = make_job(kt);
        const Plan plan = build_plan(devices, kt, *tuned_job, nullptr);  // offline or live: no measuring
        const std::string variant = tuned_job->variant();
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
