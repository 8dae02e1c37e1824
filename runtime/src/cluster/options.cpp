// Options shared by the CLI and cluster_main() (options.hpp).
#include "worksize/runtime/options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "worksize/scheduler/parse.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize::options {

namespace {

/// "an integer >= 1", "a non-negative integer", "an integer in [1, 100]".
template <class T>
std::string integer_range_text(T min, T max) {
    if (max == std::numeric_limits<T>::max())
        return min == 0 ? "a non-negative integer" : "an integer >= " + std::to_string(min);
    return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

template <class T>
T parse_count(const std::string& option, const std::string& text, T min, T max) {
    T v{};
    const char* end = text.data() + text.size();
    const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    const auto [ptr, ec] = std::from_chars(text.data(), end, v);
    if (!digits || ec != std::errc() || ptr != end || v < min || v > max)
        throw InvalidArgument("--" + option + " must be " + integer_range_text(min, max) + ", got '" + text + "'");
    return v;
}

template <class T>
po::typed_value<std::string>* count_value_impl(const std::string& option, T* target, T min, T max) {
    return po::value<std::string>()
        ->default_value(std::to_string(*target))
        ->notifier([option, target, min, max](const std::string& text) { *target = parse_count(option, text, min, max); });
}

bool open_low(Open o) { return o == Open::low || o == Open::both; }
bool open_high(Open o) { return o == Open::high || o == Open::both; }

/// "a number > 0", "a number in [0, 1)", "a number >= 0".
std::string real_range_text(double lo, double hi, Open open) {
    const bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
    if (has_lo && has_hi)
        return std::string("a number in ") + (open_low(open) ? "(" : "[") + default_text(lo) + ", " + default_text(hi) +
               (open_high(open) ? ")" : "]");
    if (has_lo) return std::string("a number ") + (open_low(open) ? "> " : ">= ") + default_text(lo);
    if (has_hi) return std::string("a number ") + (open_high(open) ? "< " : "<= ") + default_text(hi);
    return "a finite number";
}

double parse_real(const std::string& option, const std::string& text, double lo, double hi, Open open) {
    const auto parsed = parse_number(text);
    const double v = parsed.value_or(0.0);
    const bool ok = parsed && (open_low(open) ? v > lo : v >= lo) && (open_high(open) ? v < hi : v <= hi);
    if (!ok) throw InvalidArgument("--" + option + " must be " + real_range_text(lo, hi, open) + ", got '" + text + "'");
    return v;
}

}  // namespace

po::typed_value<std::string>* count_value(const std::string& option, std::uint64_t* target, std::uint64_t min,
                                          std::uint64_t max) {
    return count_value_impl(option, target, min, max);
}

po::typed_value<std::string>* count_value(const std::string& option, int* target, int min, int max) {
    return count_value_impl(option, target, min, max);
}

po::typed_value<std::string>* real_value(const std::string& option, double* target, double lo, double hi, Open open) {
    return po::value<std::string>()
        ->default_value(default_text(*target))
        ->notifier([=](const std::string& text) { *target = parse_real(option, text, lo, hi, open); });
}

po::typed_value<std::string>* real_value(const std::string& option, std::optional<double>* target, double lo,
                                         double hi, Open open) {
    return po::value<std::string>()->notifier(
        [=](const std::string& text) { *target = parse_real(option, text, lo, hi, open); });
}

std::string default_text(double v) {
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest that reads back
    return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

po::options_description selection_options(DeviceSelection& sel, const char* default_select) {
    po::options_description d("Device selection");
    d.add_options()
        ("select", po::value(&sel.spec)->default_value(default_select),
         "which devices each rank drives: auto (one process: all; several ranks: rank 0 is the "
         "master and the k-th other rank of a node takes the node's k-th device), all, or "
         "RANK=DEVICE[+DEVICE..][,RANK=..] with DEVICE an index as `worksize devices` shows it, a word "
         "naming one device (gpu, cpu, a vendor or name word) or WORD:N, the word's N-th device (gpu:1)")
        ("filter", po::value(&sel.filter), "only devices whose platform, name or vendor contains this")
        ("master-works", po::bool_switch(&sel.master_works), "rank 0 also drives devices in a job of several ranks")
        ("devices-per-rank", count_value("devices-per-rank", &sel.per_rank, 1),
         "auto mode: how many of its node's devices each rank drives; RANK=WORD: how many one word may name")
        ("allow-shared-device", po::bool_switch()->notifier([&sel](bool on) {
             if (on) sel.shared = DeviceSelection::Shared::count_once;
         }),
         "let ranks of one host drive one GPU or accelerator (refused otherwise): a warning, and the "
         "device counts once, for the lowest of those ranks")
        ("rank-timeout", real_value("rank-timeout", &sel.rank_timeout_s, 0, 3600, Open::low),
         "seconds without a sign of life after which rank 0 declares a worker lost (default 5)")
        ("kernel-timeout", real_value("kernel-timeout", &sel.kernel_timeout_s, 0, 1e6, Open::low),
         "seconds per iteration (a data job: per step) after which a slice whose kernels have not "
         "finished ends the command, "
         "naming the kernel and the device (default 60)")
        ("check-bounds", po::bool_switch(&sel.check_bounds),
         "guard zones around every device buffer of a data job or job file, checked after each launch: a "
         "kernel that writes outside its buffer ends the run naming the kernel, the buffer and the device "
         "(slow: for finding bugs)");
    return d;
}

}  // namespace worksize::options
