// tuned_job_options: the kernel parameters that depend on the devices (a tuning entry's, or the
// kernel's GPU defaults), added to a job's options before the job is made and planned.
#include <algorithm>
#include <utility>

#include "worksize/runtime/plan_job.hpp"
#include "worksize/scheduler/log.hpp"
#include "worksize/scheduler/store.hpp"

namespace worksize {

namespace {

/// `given` with the kernel's GPU defaults (KernelJobFactory::gpu_params, none of which it gives)
/// where every device is a GPU and the local policy is not null. With `check` (tunables given):
/// only where the job they make is valid on every device (interp's vw 16 with its staged tile
/// may not fit a device's local memory), else `given`.
JobOptions with_gpu_defaults(const JobOptions& given, const KernelJobFactory& f, const std::vector<DeviceInfo>& devices,
                             LocalPolicy policy, bool check) {
    const bool gpus = !devices.empty() && std::all_of(devices.begin(), devices.end(), [](const DeviceInfo& d) {
        return d.type == DeviceType::gpu;
    });
    if (!gpus || policy == LocalPolicy::null) return given;
    JobOptions out = given;
    for (const auto& [key, value] : f.gpu_params.items()) out.params[key] = value;
    if (!check || given.size.items() == 0) return out;
    try {
        const auto job = f.make(out);
        for (const auto& d : devices)
            if (!job->param_candidate(d).invalid.empty()) return given;
    } catch (const InvalidArgument&) {
        return given;
    }
    return out;
}

using Votes = std::vector<std::pair<nlohmann::json, std::vector<std::size_t>>>;  // params -> devices

/// The devices' tuning entries' parameters for the job of `given`, the most chosen set first.
Votes tuning_votes(const std::string& kernel, const JobOptions& given, const KernelJobFactory& f,
                   const std::vector<DeviceInfo>& devices, const Store& store) {
    const auto job = f.make(given);
    Votes votes;
    for (std::size_t i = 0; i < devices.size(); ++i) {
        const auto rec = store.find_tuning(fingerprint_of(devices[i]), kernel, job->tuning_key(), job->problem());
        if (!rec) continue;
        auto it = std::find_if(votes.begin(), votes.end(), [&](const auto& v) { return v.first == rec->params; });
        if (it == votes.end())
            votes.push_back({rec->params, {i}});
        else
            it->second.push_back(i);
    }
    std::stable_sort(votes.begin(), votes.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
    return votes;
}

}  // namespace

JobOptions tuned_job_options(const std::string& kernel, const JobOptions& given, const std::vector<DeviceInfo>& devices,
                             LocalPolicy local, Database* database, const std::string& db) {
    const auto& f = kernel_job(kernel);
    if (f.tunables.empty()) return given;
    // A key of the GPU defaults given (interp's stage or ry, matmul's variant): the variant is
    // the user's (the paper-era ones: matmul variant=tiled, interp stage=0 ry=1).
    for (const auto& [key, value] : f.gpu_params.items())
        if (given.params.contains(key)) return given;
    // Other tunables given (interp's vw alone): the GPU defaults for the rest, as without them
    // (the paper rule's (1,512) groups on stage 0 ran at 0.128 of the copy), no tuned entry.
    const bool tunable_given = std::any_of(f.tunables.begin(), f.tunables.end(),
                                           [&](const TunableParam& t) { return given.params.contains(t.key); });
    auto gpu_default = [&] { return with_gpu_defaults(given, f, devices, local, tunable_given); };
    if (local != LocalPolicy::tuned || tunable_given) return gpu_default();
    // Entries are per size class: without one size (calibrate's ladder) no entry decides.
    if (given.size.items() == 0) return gpu_default();
    Database own(db);
    Database& base = database ? *database : own;
    const Store* store = nullptr;
    try {
        store = &base.store();
    } catch (const Error&) {
        return gpu_default();  // the plan's tuned policy reports the database's problem
    }
    const Votes votes = tuning_votes(kernel, given, f, devices, *store);
    if (votes.empty()) return gpu_default();
    const auto top = votes.begin();
    if (votes.size() > 1) {
        std::string text = top->first.empty() ? "none (the tiled kernel)" : "";
        for (const auto& [key, value] : top->first.items()) text += (text.empty() ? "" : " ") + key + "=" + value.dump();
        log::warn() << kernel << ": the devices' tuning entries hold different kernel parameters; all devices run one "
                    << "kernel, so the set " << std::to_string(top->second.size()) << " of them chose is used: " << text;
    }
    JobOptions out = given;
    for (const auto& [key, value] : top->first.items()) out.params[key] = value;
    return out;
}

JobOptions tuned_job_options(const std::vector<DeviceInfo>& devices, const KernelPlanOptions& options) {
    return tuned_job_options(options.kernel, options.job, devices, options.local_policy, options.database, options.db);
}

}  // namespace worksize
