// Descriptors of the four sample kernels (matmul, interp, sort, quad): their NDRange
// dimensionality, shape priority, honest operation counts per work-item and bytes moved; and
// parsing of the names and sizes the command line accepts. The operation counts are explained
// in docs/method.md ("Compute amount of the sample kernels").
#include "worksize/scheduler/kernels.hpp"

#include <charconv>
#include <cmath>
#include <limits>

namespace worksize {

namespace {

[[noreturn]] void bad_size(const std::string& text, const std::string& why) {
    throw InvalidArgument("invalid size '" + text + "': " + why);
}

/// Parse a positive decimal integer that is the whole of `s`; nullopt-like false on failure.
bool parse_positive(std::string_view s, std::uint64_t& out, bool& overflow) {
    overflow = false;
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec == std::errc::result_out_of_range) {
        overflow = true;
        return false;
    }
    return ec == std::errc{} && p == s.data() + s.size() && out > 0;
}

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
    return out;
}

std::uint64_t next_pow2(std::uint64_t n) {
    std::uint64_t p = 1;
    while (p < n && p <= std::numeric_limits<std::uint64_t>::max() / 2) p <<= 1;
    return p;
}

}  // namespace

const std::vector<std::string>& sample_kernel_names() {
    static const std::vector<std::string> names{"matmul", "interp", "sort", "quad"};
    return names;
}

KernelKind parse_kernel(const std::string& name) {
    if (name == "matmul") return KernelKind::matmul;
    if (name == "interp") return KernelKind::interp;
    if (name == "sort") return KernelKind::sort;
    if (name == "quad") return KernelKind::quad;
    throw InvalidArgument("unknown kernel '" + name + "' (known: " + join(sample_kernel_names()) +
                          ")");
}

const char* to_string(KernelKind k) {
    switch (k) {
        case KernelKind::matmul: return "matmul";
        case KernelKind::interp: return "interp";
        case KernelKind::sort: return "sort";
        case KernelKind::quad: return "quad";
        case KernelKind::custom: return "custom";
    }
    return "custom";
}

KernelDescriptor describe_kernel(KernelKind kind, GlobalSize global) {
    KernelDescriptor d;
    d.kind = kind;
    d.name = to_string(kind);
    switch (kind) {
        case KernelKind::matmul: {
            // C = A * B, one work-item per element of C; inner dimension K = global.x (square
            // problem). Per inner step: one mul, one add, one loop compare.
            const double k = double(global.x);
            d.dims = 2;
            d.default_priority = Priority::x;
            d.ops_per_item = 3.0 * k;
            d.bytes_in_per_item = 4.0 * k / double(global.x);  // A's row, shared by the row
            d.bytes_in_fixed = 4.0 * k * double(global.x);      // all of B
            d.bytes_out_per_item = 4.0;
            return d;
        }
        case KernelKind::interp:
            // Bilinear up-scaling by 2, one work-item per output pixel: 2 mul (source coords),
            // 2 sub (fractions), 2 add + 2 compare (clamped neighbours), 2 sub (1-f),
            // 6 mul + 3 add (blend), 1 compare (bounds guard) = 20. Input (W/2)x(H/2) floats.
            d.dims = 2;
            d.default_priority = Priority::y;
            d.ops_per_item = 20.0;
            d.bytes_in_per_item = 1.0;
            d.bytes_out_per_item = 4.0;
            return d;
        case KernelKind::sort: {
            // Bitonic sort of n floats (n rounded up to a power of two): log2(n)(log2(n)+1)/2
            // stages, one compare per work-item per stage.
            const double l = std::log2(double(next_pow2(global.x)));
            d.dims = 1;
            d.ops_per_item = l * (l + 1.0) / 2.0;
            d.bytes_in_per_item = 4.0;
            d.bytes_out_per_item = 4.0;
            return d;
        }
        case KernelKind::quad:
            // Trapezoid rule, one interval per work-item, integrand 4/(1+x^2): 1 mul + 2 add
            // (interval ends), 2 x (mul, add, div) (integrand), add + 2 mul (trapezoid) = 12.
            d.dims = 1;
            d.ops_per_item = 12.0;
            d.bytes_in_per_item = 0.0;
            // At most 1024 partial sums per slice: the device tree-sums the per-group partials
            // of a large slice (runtime/src/job_quad.cpp), so the output is a few KiB.
            d.bytes_out_per_item = 0.0;
            return d;
        case KernelKind::custom:
            break;
    }
    throw InvalidArgument("describe_kernel: a custom kernel brings its own descriptor");
}

GlobalSize parse_size(const std::string& text, int dims) {
    if (dims != 1 && dims != 2)
        throw InvalidArgument("invalid size '" + text + "': only 1-D and 2-D kernels have sizes");
    const std::string expected = dims == 2
                                     ? "expected N or WxH with positive integers"
                                     : "expected N, a positive integer (1-D kernel)";
    const auto sep = text.find_first_of("xX");
    std::uint64_t w = 0, h = 0;
    bool overflow = false;
    if (sep == std::string::npos) {
        if (!parse_positive(text, w, overflow))
            bad_size(text, overflow ? "too large" : expected);
        if (dims == 1) return {w, 1};
        if (w > std::numeric_limits<std::uint64_t>::max() / w) bad_size(text, "too large");
        return {w, w};
    }
    if (dims == 1) bad_size(text, "a 1-D kernel takes one number N, not WxH");
    const std::string_view all(text);
    if (!parse_positive(all.substr(0, sep), w, overflow))
        bad_size(text, overflow ? "too large" : expected);
    if (!parse_positive(all.substr(sep + 1), h, overflow))
        bad_size(text, overflow ? "too large" : expected);
    if (h > std::numeric_limits<std::uint64_t>::max() / w) bad_size(text, "too large");
    return {w, h};
}

Priority parse_priority(const std::string& s) {
    if (s == "x") return Priority::x;
    if (s == "y") return Priority::y;
    throw InvalidArgument("unknown priority '" + s + "' (valid: x, y)");
}

}  // namespace worksize
