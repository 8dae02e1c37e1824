// Help texts about the registered kernels, from the kernel-job registry.
#include "kernel_help.hpp"

#include <utility>

#include "worksize/runtime/kernel_job.hpp"

namespace worksize::cli {

namespace {

std::string join(const std::vector<std::string>& v, const std::string& sep, const std::string& last_sep) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) out += (i == 0 ? "" : i + 1 == v.size() ? last_sep : sep) + v[i];
    return out;
}

}  // namespace

std::string kernel_list(const std::string& last_sep) { return join(kernel_job_names(), ", ", last_sep); }

std::string paper_kernel_list() {
    std::vector<std::string> names;
    for (const auto& name : kernel_job_names())
        if (kernel_job(name).paper_case) names.push_back(name);
    return join(names, ", ", ", ");
}

std::string calibration_example() {
    for (const auto& name : kernel_job_names())
        if (const auto& sizes = kernel_job(name).calibration_sizes; !sizes.empty()) return name + " " + sizes.front();
    return "256";
}

std::string param_help() {
    std::vector<std::string> parts;
    for (const auto& name : kernel_job_names()) {
        const auto& f = kernel_job(name);
        if (f.params.empty()) continue;
        std::vector<std::string> keys;
        for (const auto& p : f.params) keys.push_back(p.key);
        parts.push_back(name + ": " + join(keys, ", ", ", "));
    }
    std::string help = "kernel parameter KEY=VALUE, repeatable";
    if (!parts.empty()) help += " (" + join(parts, "; ", "; ") + ")";
    return help;
}

std::string kernels_usage() {
    std::string out;
    for (const auto& name : kernel_job_names()) {
        const auto& f = kernel_job(name);
        out += "  " + name + std::string(name.size() < 9 ? 9 - name.size() : 1, ' ') + f.description + '\n';
        for (const auto& p : f.params) out += "           --param " + p.key + "=...: " + p.help + '\n';
        if (!f.backends.empty()) out += "           --backend: kernel (default), " + join(f.backends, ", ", ", ") + '\n';
    }
    return out;
}

std::string tune_sizes_help() {
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // size -> kernels
    for (const auto& name : kernel_job_names()) {
        const auto& size = kernel_job(name).tune_size;
        if (size.empty()) continue;
        auto it = groups.begin();
        while (it != groups.end() && it->first != size) ++it;
        if (it == groups.end()) it = groups.insert(groups.end(), {size, {}});
        it->second.push_back(name);
    }
    std::vector<std::string> parts;
    for (const auto& [size, names] : groups) parts.push_back(join(names, "/", "/") + " " + size);
    return join(parts, ", ", ", ");
}

}  // namespace worksize::cli
