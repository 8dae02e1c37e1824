// The kernel-job registry and SliceSpec's wire format.
#include <algorithm>
#include <mutex>

#include "jobs.hpp"
#include "worksize/runtime/kernel_job.hpp"

namespace worksize {

nlohmann::json to_json(const SliceSpec& s) {
    return {{"kernel", s.kernel},
            {"problem", {s.problem.x, s.problem.y}},
            {"offset", s.offset},
            {"units", s.units},
            {"global", {s.global.x, s.global.y}},
            {"local", {s.local.x, s.local.y}},
            {"iterations", s.iterations},
            {"params", s.params}};
}

SliceSpec slice_spec_from_json(const nlohmann::json& j) {
    try {
        SliceSpec s;
        s.kernel = j.at("kernel").get<std::string>();
        s.problem = {j.at("problem").at(0).get<std::uint64_t>(), j.at("problem").at(1).get<std::uint64_t>()};
        s.offset = j.at("offset").get<std::uint64_t>();
        s.units = j.at("units").get<std::uint64_t>();
        s.global = {j.at("global").at(0).get<std::uint64_t>(), j.at("global").at(1).get<std::uint64_t>()};
        s.local = {j.at("local").at(0).get<std::uint64_t>(), j.at("local").at(1).get<std::uint64_t>()};
        s.iterations = j.at("iterations").get<std::uint64_t>();
        s.params = j.value("params", nlohmann::json::object());
        return s;
    } catch (const nlohmann::json::exception& e) {
        throw Error(std::string("malformed slice specification: ") + e.what());
    }
}

namespace {
struct Registry {
    std::mutex mutex;
    std::vector<KernelJobFactory> jobs;
    bool builtins = false;
};
Registry& registry() {
    static Registry r;
    return r;
}
void ensure_builtins(Registry& r) {
    if (r.builtins) return;
    r.builtins = true;
    r.jobs.push_back(detail::matmul_job_factory());
    r.jobs.push_back(detail::interp_job_factory());
    r.jobs.push_back(detail::sort_job_factory());
    r.jobs.push_back(detail::quad_job_factory());
}
}  // namespace

void register_kernel_job(KernelJobFactory factory) {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    ensure_builtins(r);
    if (factory.name.empty() || !factory.make || !factory.execute)
        throw InvalidArgument("register_kernel_job: a job needs a name, a factory and an executor");
    auto it = std::find_if(r.jobs.begin(), r.jobs.end(),
                           [&](const auto& f) { return f.name == factory.name; });
    if (it != r.jobs.end())
        *it = std::move(factory);
    else
        r.jobs.push_back(std::move(factory));
}

const KernelJobFactory& kernel_job(const std::string& name) {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    ensure_builtins(r);
    for (const auto& f : r.jobs)
        if (f.name == name) return f;
    std::string known;
    for (const auto& f : r.jobs) known += (known.empty() ? "" : ", ") + f.name;
    throw InvalidArgument("unknown kernel '" + name + "' (known: " + known + ")");
}

std::vector<std::string> kernel_job_names() {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    ensure_builtins(r);
    std::vector<std::string> names;
    for (const auto& f : r.jobs) names.push_back(f.name);
    return names;
}

}  // namespace worksize
