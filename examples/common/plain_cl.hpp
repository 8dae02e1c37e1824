// Minimal helpers for the plain single-device OpenCL programs (the baselines of the examples):
// device choice, kernel source loading and building, a timer, argument parsing, the CSV line,
// and a main() wrapper mapping errors to exit codes. Header-only.
#pragma once

#define CL_HPP_ENABLE_EXCEPTIONS
#ifndef CL_HPP_TARGET_OPENCL_VERSION
#define CL_HPP_TARGET_OPENCL_VERSION 300
#endif
#define CL_HPP_MINIMUM_OPENCL_VERSION 110
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
#include <CL/opencl.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace plain {

/// A bad command line: reported on one line, exit status 2.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline bool env_is(const char* name, const std::string& value) {
    const char* v = std::getenv(name);
    return v && value == v;
}

/// PLAIN_DEVICE=gpu|cpu|any (default any: the first GPU, else the first device of any platform).
inline cl::Device pick_device() {
    const char* e = std::getenv("PLAIN_DEVICE");
    const std::string want = e && *e ? e : "any";
    if (want != "gpu" && want != "cpu" && want != "any")
        throw UsageError("PLAIN_DEVICE must be gpu, cpu or any, not '" + want + "'");
    std::vector<cl::Platform> platforms;
    cl::Platform::get(&platforms);
    std::vector<cl::Device> all;
    for (auto& p : platforms) {
        std::vector<cl::Device> ds;
        try {
            p.getDevices(CL_DEVICE_TYPE_ALL, &ds);
        } catch (const cl::Error&) {  // CL_DEVICE_NOT_FOUND
        }
        all.insert(all.end(), ds.begin(), ds.end());
    }
    const cl_device_type type = want == "cpu" ? CL_DEVICE_TYPE_CPU : CL_DEVICE_TYPE_GPU;
    for (auto& d : all)
        if (d.getInfo<CL_DEVICE_TYPE>() & type) return d;
    if (want == "any" && !all.empty()) return all.front();
    throw std::runtime_error("no OpenCL device (PLAIN_DEVICE=" + want + ")");
}

/// The device's name without commas or surrounding blanks (a CSV field).
inline std::string device_name(const cl::Device& d) {
    std::string n = d.getInfo<CL_DEVICE_NAME>();
    n.erase(std::find(n.begin(), n.end(), '\0'), n.end());
    std::replace(n.begin(), n.end(), ',', ' ');
    n.erase(0, n.find_first_not_of(' '));
    n.erase(n.find_last_not_of(' ') + 1);
    return n;
}

/// The folder of the kernel files: $EXAMPLE_KERNEL_DIR or else the compiled-in EXAMPLE_KERNEL_DIR.
inline std::string kernel_dir() {
    const char* dir = std::getenv("EXAMPLE_KERNEL_DIR");
#ifdef EXAMPLE_KERNEL_DIR
    return dir && *dir ? dir : EXAMPLE_KERNEL_DIR;
#else
    return dir && *dir ? dir : ".";
#endif
}

/// The text of kernel file `file` in kernel_dir().
inline std::string kernel_source(const std::string& file) {
    const std::string path = kernel_dir() + "/" + file;
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read kernel file " + path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Build `source` for `device`; a failure throws with the build log (first line folded in).
/// Division is correctly rounded where the device supports it, so results match the CPU reference.
/// `extra`: more build options (e.g. an include path).
inline cl::Program build(const cl::Context& ctx, const cl::Device& device, const std::string& source,
                         const std::string& extra = "") {
    cl::Program program(ctx, source);
    std::string options = extra;
    if (device.getInfo<CL_DEVICE_SINGLE_FP_CONFIG>() & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT)
        options += " -cl-fp32-correctly-rounded-divide-sqrt";
    try {
        program.build(std::vector<cl::Device>{device}, options.c_str());
    } catch (const cl::Error&) {
        std::string log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device);
        std::replace(log.begin(), log.end(), '\n', ' ');
        throw std::runtime_error("kernel build failed: " + log.substr(0, 400));
    }
    return program;
}

/// argv[i] as an integer in [min, max]; anything else is a UsageError.
inline int arg_int(int argc, char** argv, int i, const char* what, int fallback = -1, int min = 1,
                   int max = 1 << 30) {
    if (i >= argc) {
        if (fallback >= 0) return fallback;
        throw UsageError(std::string("missing argument ") + what);
    }
    const std::string s = argv[i];
    int v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max)
        throw UsageError("bad " + std::string(what) + " '" + s + "' (want an integer in [" + std::to_string(min) +
                         ", " + std::to_string(max) + "])");
    return v;
}

/// The CSV result line on stdout.
/// PLAIN_TIMELINE's CSV, as worksize's WORKSIZE_TIMELINE: each launch's host enqueue time (µs
/// from t0) and its device times (µs from the first launch queued), appended to `path`. Entries
/// from `first_read` on are the final reads.
inline void write_timeline(const char* path, const std::vector<std::pair<double, cl::Event>>& launches, double t0,
                           std::size_t first_read = std::size_t(-1)) {
    std::FILE* f = std::fopen(path, "a");
    if (!f || launches.empty()) {
        if (f) std::fclose(f);
        return;
    }
    std::fprintf(f, "rank,slice,device,step,kernel,host_us,queued_us,submit_us,start_us,end_us\n");
    const double base = double(launches.front().second.getProfilingInfo<CL_PROFILING_COMMAND_QUEUED>());
    for (std::size_t i = 0; i < launches.size(); ++i) {
        const cl::Event& ev = launches[i].second;
        const auto at = [&](cl_profiling_info what) {
            cl_ulong v = 0;
            ev.getProfilingInfo(what, &v);
            return (double(v) - base) * 1e-3;
        };
        std::fprintf(f, "0,0,plain,%zu,%s,%.3f,%.3f,%.3f,%.3f,%.3f\n", i, i < first_read ? "plain" : "read",
                     (launches[i].first - t0) * 1e6,
                     at(CL_PROFILING_COMMAND_QUEUED), at(CL_PROFILING_COMMAND_SUBMIT), at(CL_PROFILING_COMMAND_START),
                     at(CL_PROFILING_COMMAND_END));
    }
    std::fclose(f);
}

inline void report(const std::string& name, const std::string& size, const std::string& device, double seconds,
                   const std::string& status) {
    std::printf("plain,%s,%s,%s,%.6f,%s\n", name.c_str(), size.c_str(), device.c_str(), seconds, status.c_str());
    std::fflush(stdout);
}

/// Run body() and map its outcome to the exit status: its return value, 2 on a UsageError (with
/// `usage` appended), 1 on any other error, each error as one "plain_<name>: error: ..." line.
inline int main_guard(const char* name, const char* usage, const std::function<int()>& body) {
    try {
        return body();
    } catch (const UsageError& e) {
        std::fprintf(stderr, "plain_%s: error: %s; usage: plain_%s %s\n", name, e.what(), name, usage);
        return 2;
    } catch (const cl::Error& e) {
        std::fprintf(stderr, "plain_%s: error: %s failed (OpenCL error %d)\n", name, e.what(), e.err());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "plain_%s: error: %s\n", name, e.what());
    }
    return 1;
}

}  // namespace plain
