// The kernel-job registry and SliceSpec's wire format.
#include <algorithm>
#include <deque>
#include <mutex>

#include "sample_kernels.hpp"
#include "worksize/runtime/device_selection.hpp"
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
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SliceSpec, kernel, problem, offset, units, global, local, iterations, params,
                                   local_inputs, job_options)

// The rank-local inputs' two fields travel only when set: a slice of rank 0's inputs keeps the
// layout it always had.
nlohmann::json to_json(const SliceSpec& s) {
    nlohmann::json j = s;
    if (!s.local_inputs) {
        j.erase("local_inputs");
        j.erase("job_options");
    }
    return j;
}

SliceSpec slice_spec_from_json(const nlohmann::json& j) {
    try {
        if (j.is_object() && !j.contains("local_inputs")) {
            nlohmann::json full = j;
            full["local_inputs"] = false;
            full["job_options"] = nullptr;
            return full.get<SliceSpec>();
        }
        return j.get<SliceSpec>();
    } catch (const nlohmann::json::exception& e) {
        throw Error(std::string("malformed slice specification: ") + e.what());
    }
}

nlohmann::json to_json(const JobOptions& o) {
    return {{"size", {o.size.x, o.size.y}}, {"iterations", o.iterations}, {"seed", o.seed}, {"params", o.params}};
}

JobOptions job_options_from_json(const nlohmann::json& j) {
    try {
        JobOptions o;
        from_json(j.at("size"), o.size);
        o.iterations = j.at("iterations").get<std::uint64_t>();
        o.seed = j.at("seed").get<std::uint64_t>();
        o.params = j.at("params");
        return o;
    } catch (const nlohmann::json::exception& e) {
        throw InvalidArgument(std::string("malformed job options: ") + e.what());
    }
}

void KernelJob::make_slice_input(const Assignment& a, Bytes& in) const {
    (void)a;
    (void)in;
    throw InvalidArgument("kernel '" + descriptor().name + "' cannot make its inputs on each rank");
}

Verdict KernelJob::verify_slice(const Assignment& a, std::span<const std::byte> in,
                                std::span<const std::byte> out) const {
    (void)a;
    (void)in;
    (void)out;
    throw InvalidArgument("kernel '" + descriptor().name + "' cannot check a slice on its rank");
}

const std::string& BackendChoice::of(int device) const {
    const auto it = per_device.find(device);
    return it == per_device.end() ? all : it->second;
}

bool BackendChoice::uses(const std::string& backend) const {
    if (all == backend) return true;
    return std::any_of(per_device.begin(), per_device.end(), [&](const auto& p) { return p.second == backend; });
}

std::string BackendChoice::text() const {
    std::string t;
    for (const auto& [device, name] : per_device) {
        if (name == all) continue;
        if (!t.empty()) t += ',';
        t.append(std::to_string(device)).append("=").append(name);
    }
    if (all != "kernel") return t.empty() ? all : all + "," + t;  // not from the parser; kept exact
    return t;
}

int BackendChoice::max_device() const { return per_device.empty() ? -1 : per_device.rbegin()->first; }

BackendChoice parse_backends(const std::string& spec) {
    BackendChoice c;
    auto fail = [&](const std::string& why) {
        throw InvalidArgument("invalid --backend '" + spec + "': " + why +
                              " (expected NAME for every device, or DEVICE=NAME[,DEVICE=NAME...] with "
                              "device indices as plans show them)");
    };
    if (spec.find('=') == std::string::npos) {
        if (spec.find_first_of(",+ ") != std::string::npos) fail("a backend name has no ',', '+' or spaces");
        if (!spec.empty()) c.all = spec;
        return c;
    }
    std::map<int, std::vector<std::string>> parts;
    try {
        parts = parse_select(spec);  // --select's RANK=DEVICE list, the same spelling
    } catch (const InvalidArgument&) {
        fail("malformed list");
    }
    for (const auto& [device, names] : parts) {
        if (names.size() != 1) fail("device " + std::to_string(device) + " has more than one backend");
        c.per_device[device] = names.front();
    }
    return c;
}

std::vector<std::string> job_backends(const KernelJob& job, std::size_t devices) {
    std::vector<std::string> b(devices);
    bool any = false;
    for (std::size_t i = 0; i < devices; ++i) {
        b[i] = job.backend(static_cast<int>(i));
        any = any || b[i] != "kernel";
    }
    return any ? b : std::vector<std::string>{};
}

PlanRequest job_request(const KernelJob& job, std::size_t devices) {
    PlanRequest r;
    r.kernel = job.descriptor();
    r.global = job.problem();
    r.granule = job.granule();
    r.required_local = job.required_local();
    r.pad_ndrange = job.guards_index();
    r.backends = job_backends(job, devices);
    return r;
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
