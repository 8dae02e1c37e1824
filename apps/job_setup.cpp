// From command-line options to a KernelJob and a PlanRequest.
#include "job_setup.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <limits>

#include "kernel_help.hpp"
#include "worksize/runtime/autotune.hpp"
#include "worksize/scheduler/log.hpp"
#include "worksize/scheduler/parse.hpp"
#include "worksize/scheduler/store.hpp"
#include "worksize/scheduler/strategy.hpp"

namespace worksize::cli {

po::options_description kernel_options(KernelArgs& k) {
    po::options_description d("Kernel and plan");
    // From the registries: "split: even, pe-ratio, paper, model, oracle" (boost copies the text).
    const std::string strategy_help = "split: " + strategy_names_text();
    std::string local_help = "local size: ";
    for (const auto& name : local_policy_names()) {
        if (name != local_policy_names().front()) local_help.append(", ");
        local_help.append(find_local_policy(name).help());
    }
    d.add_options()
        ("size", po::value(&k.size)->default_value(kDefaultSize),
         "problem size: N (NxN for 2-D kernels, N items for 1-D) or WxH")
        ("iterations", count_value("iterations", &k.iterations, 1, kMaxIterations), "kernel repetitions on each device")
        ("ops", real_value("ops", &k.ops, 0, std::numeric_limits<double>::infinity(), Open::low),
         "compute amount (operations) overriding the kernel's estimate")
        ("strategy", po::value(&k.strategy)->default_value("paper"), strategy_help.c_str())
        ("local", po::value(&k.local)->default_value("paper"), local_help.c_str())
        ("priority", priority_value(&k.priority), "work-group shape priority: x or y (default: the kernel's)")
        ("pad", pad_value(&k.pad),
         "on: slices of kernels that guard their index are padded to the device's quantum before the "
         "local-size rule and launched as whole work-groups; off: the paper's rule on each slice "
         "itself (local sizes that divide it; a kernel's required work-group is still launched whole)")
        ("seed", count_value("seed", &k.seed), "seed of the generated inputs")
        ("param", param_value(&k.params), param_help().c_str())
        ("backend", po::value(&k.backend),
         "what runs the slices: kernel (the job's own, the default) or a library the kernel offers "
         "(matmul: clblast), for every device, or per device as DEVICE=NAME[,DEVICE=NAME..] with "
         "device indices as plans show them (the others: kernel)")
        ("db", po::value(&k.db), "calibration and tuning database (default: $WORKSIZE_DB, else ~/.cache/worksize/db.json)")
        ("join-margin", real_value("join-margin", &k.join_margin, 0, 1, Open::high),
         "model strategy: a device gets work only if that cuts the predicted makespan by more than "
         "this fraction (the models' error; 0: the plain optimum)");
    d.add(fit_limit_options(k.fit_limits));
    return d;
}

po::options_description fit_limit_options(FitLimits& limits) {
    po::options_description d("Model fit limits");
    const double inf = std::numeric_limits<double>::infinity();
    d.add_options()
        ("fit-rms-limit", real_value("fit-rms-limit", &limits.rms_rel, 0, inf, Open::low),
         "a cost model whose predicted done times miss its calibration runs by more than this RMS "
         "relative error is not trusted: calibrate warns, and --strategy model gives the device the "
         "paper rule's share")
        ("fit-max-limit", real_value("fit-max-limit", &limits.max_rel, 0, inf, Open::low),
         "... or by more than this at any calibrated size");
    return d;
}

int kernel_dims(const std::string& kernel) { return kernel_job(kernel).dims; }

namespace {

/// "512" and "-3" are integers; "1e3", "2.5" and "512.0" reals.
bool integer_text(const std::string& v) {
    const std::size_t start = !v.empty() && v[0] == '-' ? 1 : 0;
    return v.size() > start && std::all_of(v.begin() + std::ptrdiff_t(start), v.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

nlohmann::json kernel_params(const KernelArgs& k) {
    nlohmann::json params = nlohmann::json::object();
    for (const auto& p : k.params) {
        const auto eq = p.find('=');
        if (eq == std::string::npos || eq == 0)
            throw InvalidArgument("invalid --param '" + p + "': expected KEY=VALUE");
        const std::string key = p.substr(0, eq), value = p.substr(eq + 1);
        // An integer stays an integer (matmul's k=512 is not 512.0); what overflows 64 bits
        // falls through to a real.
        if (integer_text(value)) {
            std::int64_t i = 0;
            std::uint64_t u = 0;
            const char* end = value.data() + value.size();
            if (value[0] == '-') {
                if (auto [ptr, ec] = std::from_chars(value.data(), end, i); ec == std::errc() && ptr == end) {
                    params[key] = i;
                    continue;
                }
            } else if (auto [ptr, ec] = std::from_chars(value.data(), end, u); ec == std::errc() && ptr == end) {
                params[key] = u;
                continue;
            }
        }
        if (const auto v = parse_number(value)) {  // subnormals too (std::stod threw on 1e-308)
            params[key] = *v;
            continue;
        }
        params[key] = value;
    }
    return params;
}

void check_param_keys(const std::string& kernel, const nlohmann::json& params) {
    const auto& f = kernel_job(kernel);
    if (f.params.empty()) return;  // a job that declares none (a user's) takes any key
    for (const auto& [key, value] : params.items()) {
        const bool known =
            std::any_of(f.params.begin(), f.params.end(), [&](const KernelParam& p) { return p.key == key; });
        if (known) continue;
        std::string valid;
        for (const auto& p : f.params) valid += (valid.empty() ? "" : ", ") + p.key;
        throw InvalidArgument("unknown --param '" + key + "' for kernel " + kernel + " (valid: " + valid + ")");
    }
}

std::string backend_text(const KernelArgs& k) {
    const auto& f = kernel_job(k.kernel);
    const BackendChoice c = parse_backends(k.backend);
    std::vector<std::string> names = {c.all};
    for (const auto& [device, name] : c.per_device) names.push_back(name);
    for (const auto& name : names) {
        if (name == "kernel" || std::find(f.backends.begin(), f.backends.end(), name) != f.backends.end()) continue;
        std::string valid = "kernel";
        for (const auto& b : f.backends) valid.append(", ").append(b);
        throw InvalidArgument("kernel " + k.kernel + " has no backend '" + name + "' (--backend: " + valid + ")");
    }
    return c.text();
}

void check_backend_devices(const KernelArgs& k, std::size_t devices) {
    const int top = parse_backends(k.backend).max_device();
    if (top >= 0 && std::size_t(top) >= devices)
        throw InvalidArgument("--backend names device " + std::to_string(top) + " but the plan has " +
                              std::to_string(devices) + " device(s), 0.." + std::to_string(devices - 1));
}

std::unique_ptr<KernelJob> make_job(const KernelArgs& k) { return kernel_job(k.kernel).make(job_options(k)); }

JobOptions job_options(const KernelArgs& k) {
    (void)kernel_job(k.kernel);  // throws InvalidArgument for an unknown kernel
    JobOptions o;
    o.size = parse_size(k.size, kernel_dims(k.kernel));
    if (k.iterations == 0) throw InvalidArgument("--iterations must be at least 1");
    o.iterations = k.iterations;
    o.seed = k.seed;
    o.params = kernel_params(k);
    check_param_keys(k.kernel, o.params);
    // The backend travels as the job's parameter "backend" (absent for the kernel everywhere).
    if (const std::string b = backend_text(k); !b.empty()) o.params["backend"] = b;
    return o;
}

po::options_description inputs_option(std::string& text) {
    po::options_description d("Inputs");
    d.add_options()("inputs", po::value(&text)->default_value("rank0"),
                    "rank0: rank 0 makes the inputs, sends each slice its part and gathers the outputs (the paper's "
                    "offload); local: each rank makes its own slices' inputs and checks their outputs, which stay "
                    "there (matmul, interp; --strategy model then charges no transfer from rank 0)");
    return d;
}

void apply_inputs(KernelArgs& k, const std::string& text, const KernelJob& probe) {
    if (text != "rank0" && text != "local") throw InvalidArgument("--inputs must be rank0 or local, not '" + text + "'");
    k.local_inputs = text == "local";
    if (k.local_inputs && !probe.makes_slice_inputs())
        throw InvalidArgument("--inputs local: kernel '" + k.kernel +
                              "' cannot make its inputs and check its output on each rank; use --inputs rank0");
}

std::string db_path(const KernelArgs& k) { return k.db.empty() ? default_db_path() : k.db; }

GlobalSize job_size(const KernelArgs& k) { return parse_size(k.size, kernel_dims(k.kernel)); }

JobMaker job_maker(const KernelArgs& k) {
    return [k](GlobalSize size, std::uint64_t iterations) {
        KernelArgs kk = k;
        kk.size = kernel_dims(k.kernel) == 2 ? std::to_string(size.x) + "x" + std::to_string(size.y)
                                             : std::to_string(size.x);
        kk.iterations = iterations;
        return make_job(kk);
    };
}

nlohmann::json model_key(const KernelArgs& k) {
    // A model of one backend does not predict another ("backend" only where it is not the kernel).
    nlohmann::json params = kernel_params(k);
    if (const std::string b = backend_text(k); !b.empty()) params["backend"] = b;
    return kernel_model_key(params, parse_local_policy(k.local));
}

KernelPlanOptions kernel_plan_options(const KernelArgs& k) {
    KernelPlanOptions o;
    o.strategy = parse_strategy(k.strategy);
    o.local_policy = parse_local_policy(k.local);
    if (!k.priority.empty()) o.priority = parse_priority(k.priority);
    o.kernel = k.kernel;
    o.job = job_options(k);
    o.ops = k.ops;
    o.pad = k.pad;
    o.local_inputs = k.local_inputs;
    o.join_margin = k.join_margin;
    o.fit_limits = k.fit_limits;
    o.db = k.db;
    return o;
}

KernelPlanOptions plan_options(const KernelArgs& k, const std::vector<DeviceInfo>& devices, Cluster* cluster,
                               Database* db) {
    check_backend_devices(k, devices.size());
    KernelPlanOptions o = kernel_plan_options(k);
    o.cluster = cluster;
    o.database = db;
    // A measuring strategy's search (oracle) as a progress bar on stderr.
    auto progress = std::make_shared<std::optional<Progress>>();
    o.on_search_start = [progress](const std::string& label, std::size_t steps) { progress->emplace(label, steps); };
    o.on_search_step = [progress](const std::string& what) {
        if (*progress) (*progress)->step(what);
    };
    o.on_search_done = [progress] {
        if (*progress) (*progress)->done();
    };
    return o;
}

PlanRequest plan_request(const KernelArgs& k, const KernelJob& job, std::size_t devices) {
    return kernel_plan_request(job, kernel_plan_options(k), devices);
}

std::string param_arg(const std::string& key, const nlohmann::json& value) {
    return key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
}

KernelArgs with_tuned_params(const KernelArgs& k, const std::vector<DeviceInfo>& devices, Database* database) {
    const auto& f = kernel_job(k.kernel);
    if (f.tunables.empty() || !k.device_params) return k;
    // The runtime decides on JobOptions; a calibration without one size (its ladder) is {0, 0}.
    JobOptions given;
    if (k.size.empty()) {
        given.params = kernel_params(k);
        given.size = {0, 0};
    } else {
        given = job_options(k);
    }
    const JobOptions tuned = tuned_job_options(k.kernel, given, devices, parse_local_policy(k.local), database, k.db);
    // Back to --param strings: the parameters it added, after the user's.
    KernelArgs out = k;
    for (const auto& [key, value] : tuned.params.items())
        if (!given.params.contains(key) || given.params[key] != value) out.params.push_back(param_arg(key, value));
    return out;
}

std::string ladder_text(const DeviceCalibration& dc) {
    std::string t = "sizes";
    bool open = false;
    for (const auto& ls : dc.ladder) {
        t += ' ';
        if (ls.fitted && !open) {
            t += '[';
            open = true;
        }
        t += std::to_string(ls.size.x);
        if (ls.size.y > 1) t.append("x").append(std::to_string(ls.size.y));
        if (!ls.fitted && open) {
            t.insert(t.rfind(' '), 1, ']');
            open = false;
        }
    }
    if (open) t += ']';
    if (dc.saturated) {
        t += " (fitted sizes saturated)";
    } else {
        int fitted = 0, sat = 0;
        for (const auto& ls : dc.ladder) {
            fitted += ls.fitted;
            sat += ls.fitted && ls.saturated;
        }
        // The rule asks for enough work-items and a kernel time >= max(2 ms, 5x the smallest
        // run's overhead); transfer-bound kernels on a fast GPU rarely meet the second part.
        t += " (" + std::to_string(sat) + " of " + std::to_string(fitted) +
             " fitted sizes met the saturation rule; the run-time, memory, step or --max-size cap came first)";
    }
    return t;
}

CalibrationResult calibrate_and_store(Cluster& c, const KernelArgs& k, const std::vector<std::string>& sizes,
                                      int min_repeats, int max_repeats, const std::string& max_size,
                                      Database* database) {
    CalibrationOptions o;
    const int dims = kernel_dims(k.kernel);
    for (const auto& s : sizes) o.sizes.push_back(parse_size(s, dims));
    if (!max_size.empty()) o.adaptive.max_size = parse_size(max_size, dims);
    // No explicit sizes: the adaptive ladder, from the kernel's smallest default size.
    if (o.sizes.empty()) o.adaptive.start = parse_size(default_calibration_sizes(k.kernel).front(), dims);
    o.iterations = k.iterations;
    o.local = parse_local_policy(k.local);
    if (!k.priority.empty()) {
        o.priority = parse_priority(k.priority);
        o.priority_given = true;
    }
    o.min_repeats = min_repeats;
    o.max_repeats = max_repeats;
    check_backend_devices(k, c.devices().size());
    Database own(k.db);
    Database& db = database ? *database : own;
    Store& store = db.store();
    for (const auto& w : db.take_warnings()) log::warn(w);
    if (o.local == LocalPolicy::tuned) o.tuning = &db.tuning();
    Progress progress("calibrate " + k.kernel, calibration_steps(c.devices().size(), o));
    auto res = calibrate(c, k.kernel, job_maker(k), o, [&](const std::string& what) { progress.step(what); });
    progress.done();
    // A weak fit: said now, and stored with the model (its "fit"), so that plans say it too.
    for (const auto& dc : res.devices) {
        const std::string why = untrusted_fit(dc.model.fit, k.fit_limits);
        if (why.empty()) continue;
        const auto& d = c.devices().at(std::size_t(dc.device));
        log::warn() << "weak calibration of " << k.kernel << " on device " << dc.device << " ("
                  << d.name << ", rank " << d.rank << "): " << why
                  << "; --strategy model will not trust this model and gives the device the paper rule's share "
                     "(calibrate larger sizes, --sizes or a higher --max-size, or with more --min-repeats)";
    }
    store_calibration(store, c.devices(), res, model_key(k));
    store.save();
    return res;
}

}  // namespace worksize::cli
