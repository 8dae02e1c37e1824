// Internal helpers shared by the sample kernel jobs (runtime/src/job_*.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "worksize/runtime/kernel_job.hpp"

namespace worksize::detail {

/// "1.5 MiB" for error messages about buffer sizes.
inline std::string size_text(std::uint64_t bytes) {
    char buf[32];
    const double b = double(bytes);
    if (b >= 1024.0 * 1024 * 1024)
        std::snprintf(buf, sizeof buf, "%.1f GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024)
        std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1024.0 * 1024));
    else
        std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
    return buf;
}

/// memcpy in up to 8 threads for large copies (one core copies 5–10 GB/s; packing a 512 MiB
/// matmul slice took 100 ms on the GPU machine's Xeon, more than the GPU's whole share).
inline void parallel_copy(void* dest, const void* src, std::size_t n, std::size_t per_thread = std::size_t(16) << 20) {
    const std::size_t kPerThread = std::max<std::size_t>(per_thread, 4096);
    const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t threads = std::min({hw, std::size_t(8), n / kPerThread});
    auto* d = static_cast<std::byte*>(dest);
    const auto* s = static_cast<const std::byte*>(src);
    if (threads < 2) {
        if (n) std::memcpy(d, s, n);
        return;
    }
    const std::size_t chunk = (n / threads + 4095) / 4096 * 4096;
    std::vector<std::jthread> pool;
    for (std::size_t off = chunk; off < n; off += chunk)
        pool.emplace_back([=] { std::memcpy(d + off, s + off, std::min(chunk, n - off)); });
    std::memcpy(d, s, std::min(chunk, n));
}

/// Put a slice's output at `dest` in the job's result, unless rank 0 received it there already
/// (KernelJob::output_target): then it is that very memory and there is nothing to copy.
inline void store_output(void* dest, std::span<const std::byte> out) {
    if (!out.empty() && out.data() != static_cast<const std::byte*>(dest)) parallel_copy(dest, out.data(), out.size());
}

/// Throws InvalidArgument "<kernel>: slice [offset, +units) outside the <n> <what>" unless the
/// slice lies within [0, n).
inline void check_slice(const char* kernel, std::uint64_t offset, std::uint64_t units, std::uint64_t n,
                        const char* what) {
    if (offset <= n && units <= n - offset) return;
    std::string m(kernel);
    m.append(": slice [").append(std::to_string(offset)).append(", +").append(std::to_string(units));
    m.append(") outside the ").append(std::to_string(n)).append(" ").append(what);
    throw InvalidArgument(m);
}

/// Why the slices `runs` ((offset, units) in any order) do not cover [0, n) exactly once, for a
/// verify(): "<what> [a, b) missing" or "<what> [a, b) <twice>" for the first gap or overlap;
/// empty when they do.
inline std::string coverage_error(std::vector<std::pair<std::uint64_t, std::uint64_t>> runs, std::uint64_t n,
                                  const char* what, const char* twice) {
    std::sort(runs.begin(), runs.end());
    std::uint64_t next = 0;
    for (const auto& [off, len] : runs) {
        if (off != next)
            return std::string(what) + " [" + std::to_string(std::min(off, next)) + ", " +
                   std::to_string(std::max(off, next)) + ") " + (off > next ? "missing" : twice);
        next = off + len;
    }
    if (next != n)
        return std::string(what) + " [" + std::to_string(next) + ", " + std::to_string(n) + ") missing";
    return {};
}

/// "(16,16)" or "NULL", for error contexts.
inline std::string local_text(const LocalSize& l) {
    return l.is_null() ? "NULL" : "(" + std::to_string(l.x) + "," + std::to_string(l.y) + ")";
}

/// The part of a SliceSpec every job fills the same way; the job adds its own params.
inline SliceSpec base_slice_spec(const char* kernel, GlobalSize problem, const Assignment& a,
                                 std::uint64_t iterations) {
    SliceSpec s;
    s.kernel = kernel;
    s.problem = problem;
    s.offset = a.offset;
    s.units = a.units;
    // The sample kernels guard their index: launch the plan's padded NDRange (where it covers
    // the slice), rounded up to whole groups of the local size (a caller such as the tuner may
    // have set another local size on the assignment).
    const bool covers = a.padded_global.x >= a.global.x && a.padded_global.y >= a.global.y;
    s.global = covers ? a.padded_global : a.global;
    if (!a.local.is_null() && a.units > 0) {
        const std::uint64_t ly = a.local.y ? a.local.y : 1;
        s.global.x = (s.global.x + a.local.x - 1) / a.local.x * a.local.x;
        s.global.y = (s.global.y + ly - 1) / ly * ly;
    }
    s.local = a.local;
    s.iterations = iterations;
    return s;
}

/// Element i of input stream `stream` for a seed, uniform in [0, 1): a function of its position
/// (SplitMix64), so that any rank makes any part of a job's inputs (`run --inputs local`) and
/// rank 0 the same values whole. 24 random bits: exact in a float.
inline float position_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) {
    auto mix = [](std::uint64_t z) {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    };
    const std::uint64_t z = mix(mix(seed * 2 + stream) + (i + 1) * 0x9e3779b97f4a7c15ULL);
    return float(z >> 40) * 0x1p-24f;
}

/// f(i) for i in [0, n), in up to 8 threads when n is large (making 512 MiB of inputs on one
/// core takes about a second).
template <class F>
void parallel_for_index(std::uint64_t n, F f) {
    constexpr std::uint64_t kPerThread = std::uint64_t(1) << 22;
    const std::uint64_t threads =
        std::min<std::uint64_t>({std::max(1u, std::thread::hardware_concurrency()), 8, n / kPerThread});
    if (threads < 2) {
        for (std::uint64_t i = 0; i < n; ++i) f(i);
        return;
    }
    std::vector<std::jthread> pool;
    const std::uint64_t chunk = (n + threads - 1) / threads;
    for (std::uint64_t from = 0; from < n; from += chunk)
        pool.emplace_back([&f, from, to = std::min(n, from + chunk)] {
            for (std::uint64_t i = from; i < to; ++i) f(i);
        });
}

}  // namespace worksize::detail
