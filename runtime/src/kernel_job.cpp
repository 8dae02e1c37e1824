// The kernel-job registry and SliceSpec's wire format.
#include <algorithm>
#include <deque>
#include <mutex>

#include "sample_kernels.hpp"
#include "worksize/runtime/kernel_job.hpp"

namespace worksize {

// SliceSpec's wire format: nlohmann's type macro, with the sizes as [x, y].
static void to_json(nlohmann::json& j, const GlobalSize& g) { j = {g.x, g.y}; }
static void from_json(const nlohmann::json& j, GlobalSize& g) {
    g = {j.at(0).get<std::uint64_t>(), j.at(1).get<std::uint64_t>()};
}
static void to_json(nlohmann::json& j, const LocalSize& l) { j = {l.x, l.y}; }
static void from_json(const nlohmann::json& j, LocalSize& l) {
    l = {j.at(0).get<std::uint64_t>(), j.at(1).get<std::uint64_t>()};
}
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SliceSpec, kernel, problem, offset, units, global, local, iterations,
                                   params)

nlohmann::json to_json(const SliceSpec& s) { return s; }

SliceSpec slice_spec_from_json(const nlohmann::json& j) {
    try {
        return j.get<SliceSpec>();
    } catch (const nlohmann::json::exception& e) {
        throw Error(std::string("malformed slice specification: ") + e.what());
    }
}

nlohmann::json KernelJob::tuning_key() const {
    const GlobalSize g = problem();
    Assignment a;
    a.units = descriptor().dims == 2 ? g.y : g.x;
    a.global = g;
    a.share = 1.0;
    nlohmann::json p = slice_spec(a).params;
    return p.is_object() ? p : nlohmann::json::object();
}

ParamCandidate KernelJob::param_candidate(const DeviceInfo& device) const {
    (void)device;
    ParamCandidate c;
    c.group = required_local();
    const GlobalSize g = problem();
    if (!c.group.is_null()) {
        const std::uint64_t gy = std::max<std::uint64_t>(1, c.group.y);
        c.groups = (g.x + c.group.x - 1) / c.group.x * ((std::max<std::uint64_t>(1, g.y) + gy - 1) / gy);
    }
    return c;
}

namespace {
struct Registry {
    std::mutex mutex;
    /// A deque: kernel_job() hands out references, which push_back must not invalidate.
    std::deque<KernelJobFactory> jobs;
    bool builtins = false;
};
Registry& registry() {
    static Registry r;
    return r;
}
void check(const KernelJobFactory& f) {
    if (f.name.empty() || !f.make || !f.execute)
        throw InvalidArgument("register_kernel_job: a job needs a name, a factory and an executor");
    if (f.dims != 1 && f.dims != 2)
        throw InvalidArgument("register_kernel_job: job '" + f.name + "' needs dims 1 or 2, not " +
                              std::to_string(f.dims));
}
void ensure_builtins(Registry& r) {
    if (r.builtins) return;
    r.builtins = true;
    for (auto& f : detail::sample_kernel_jobs()) {
        check(f);
        r.jobs.push_back(std::move(f));
    }
}
const KernelJobFactory* find(Registry& r, const std::string& name) {
    for (const auto& f : r.jobs)
        if (f.name == name) return &f;
    return nullptr;
}
}  // namespace

void register_kernel_job(KernelJobFactory factory) {
    check(factory);
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    ensure_builtins(r);
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
    if (const auto* f = find(r, name)) return *f;
    std::string known;
    for (const auto& f : r.jobs) known += (known.empty() ? "" : ", ") + f.name;
    throw InvalidArgument("unknown kernel '" + name + "' (known: " + known + ")");
}

bool has_kernel_job(const std::string& name) {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    ensure_builtins(r);
    return find(r, name) != nullptr;
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
