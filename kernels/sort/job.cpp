// Sample kernel "sort": sorting n floats across devices by a splitter-based range partition.
//
// Master: generate() makes seeded floats (negatives, many duplicates, +-0, large magnitudes, no
// NaN). partition() samples the input, picks one splitter per bucket boundary at the planned
// cumulative shares, and scatters the input into buckets so that device i gets the values between
// splitters i-1 and i. Values equal to a splitter are divided between the buckets on both sides
// by a quota, so a heavily repeated value cannot push a bucket far off its planned share, and
// every element lands exactly once. The scatter runs in threads, each over a contiguous chunk
// (count, then scatter from cursors that the counts give): rank 0 makes no serial pass over the
// input, and the buckets are those of one thread item for item. Each assignment's
// offset/units/global/share become the real bucket's. The concatenation of the sorted buckets is
// sorted: finish() has nothing to merge (without partition() - slices of the raw input - it
// merges the sorted runs).
// Worker: `algo` radix (the default, `auto`): the LSD radix sort of radix.cl; bitonic: the bitonic
// sort of the slice padded to a power of two with +INFINITY (sort.cl). Either runs R times from a
// pristine device-side copy; the kernel events of all iterations are timed.
// partition.cpp holds the partition, bitonic.cpp and radix.cpp the two algorithms, sort_impl.hpp
// what they share.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>

#include "jobs/job_util.hpp"
#include "worksize/runtime/data_job.hpp"
#include "sample_kernels.hpp"
#include "sort_impl.hpp"
#include "worksize/runtime/opencl.hpp"

namespace worksize::detail {
namespace sort_kernel {
namespace {

/// Uniform double in [0, 1) from a 64-bit engine, identical on every standard library.
double unit(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

std::vector<float> make_input(std::uint64_t n, std::uint64_t seed, const std::string& dist) {
    std::mt19937_64 rng(seed);
    std::vector<float> v(n);
    static constexpr float kRepeated[] = {-512.0f, -7.5f, -1.0f, 1.0f, 2.5f, 42.0f, 999.0f};
    auto uniform = [&] { return float(-1e3 + 2e3 * unit(rng)); };
    if (dist == "mixed") {
        for (auto& x : v) {
            const double r = unit(rng);
            if (r < 0.5) {
                x = uniform();
            } else if (r < 0.75) {
                x = kRepeated[rng() % std::size(kRepeated)];
            } else if (r < 0.85) {
                x = (rng() & 1) ? -0.0f : 0.0f;
            } else {
                // Large magnitudes, log-uniform in [1e6, 1e38], either sign; a few subnormals.
                const float m = (r < 0.87) ? 1e-41f : float(std::pow(10.0, 6.0 + 32.0 * unit(rng)));
                x = (rng() & 1) ? -m : m;
            }
        }
    } else if (dist == "uniform") {
        for (auto& x : v) x = uniform();
    } else if (dist == "duplicates") {
        for (auto& x : v) x = kRepeated[rng() % 3];
    } else if (dist == "sorted" || dist == "reversed") {
        for (auto& x : v) x = uniform();
        std::sort(v.begin(), v.end());
        if (dist == "reversed") std::reverse(v.begin(), v.end());
    } else {
        throw InvalidArgument("sort: unknown distribution '" + dist +
                              "' (known: mixed, uniform, duplicates, sorted, reversed)");
    }
    return v;
}

/// The last input and its sorted reference, shared by the jobs of one (n, seed, distribution).
/// Rank 0 makes a new job for every timed run of a calibration or bench; generating 2^25 floats
/// and sorting a copy for the check took seconds per run, most of the sort calibration's time.
/// The check is unchanged: the output must equal the sorted input, item by item.
struct InputCache {
    std::uint64_t n = 0, seed = 0;
    std::string dist;
    std::shared_ptr<const std::vector<float>> input, sorted;
};

std::mutex g_cache_mutex;
InputCache g_cache;

InputCache& cache_for(std::uint64_t n, std::uint64_t seed, const std::string& dist) {
    if (!g_cache.input || g_cache.n != n || g_cache.seed != seed || g_cache.dist != dist) {
        g_cache = {};  // free the old pair first
        g_cache.input = std::make_shared<const std::vector<float>>(make_input(n, seed, dist));
        g_cache.n = n;
        g_cache.seed = seed;
        g_cache.dist = dist;
    }
    return g_cache;
}

std::shared_ptr<const std::vector<float>> cached_input(std::uint64_t n, std::uint64_t seed, const std::string& dist) {
    std::lock_guard lock(g_cache_mutex);
    return cache_for(n, seed, dist).input;
}

std::shared_ptr<const std::vector<float>> cached_sorted(std::uint64_t n, std::uint64_t seed, const std::string& dist) {
    std::lock_guard lock(g_cache_mutex);
    auto& c = cache_for(n, seed, dist);
    if (!c.sorted) {
        auto ref = std::make_shared<std::vector<float>>(*c.input);
        std::sort(ref->begin(), ref->end());
        c.sorted = std::move(ref);
    }
    return c.sorted;
}

/// The "distribution" parameter, checked here (at job construction, before any device work)
/// rather than when the input is generated.
std::string distribution_param(const nlohmann::json& p) {
    if (!p.is_object() || !p.contains("distribution")) return "mixed";
    const auto& v = p.at("distribution");
    const std::string d = v.is_string() ? v.get<std::string>() : v.dump();
    for (const char* known : {"mixed", "uniform", "duplicates", "sorted", "reversed"})
        if (d == known) return d;
    throw InvalidArgument("sort: unknown distribution '" + d + "' (known: mixed, uniform, duplicates, sorted, reversed)");
}

std::uint64_t uint_param(const nlohmann::json& p, const char* key, std::uint64_t lo, std::uint64_t hi) {
    if (!p.is_object() || !p.contains(key)) return 0;
    const auto& v = p.at(key);
    std::uint64_t x = 0;
    bool ok = false;
    if (v.is_number_integer() && (v.is_number_unsigned() || v.get<std::int64_t>() >= 0)) {
        x = v.get<std::uint64_t>();
        ok = true;
    } else if (v.is_string()) {
        const std::string t = v.get<std::string>();
        ok = !t.empty() && t.size() < 10 && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (ok) x = std::stoull(t);
    }
    if (!ok || x < lo || x > hi) {
        std::string m = "sort: ";
        m += key;
        m += " must be an integer from ";
        m += std::to_string(lo);
        m += " to ";
        m += std::to_string(hi);
        m += " (got ";
        m += v.is_string() ? v.get<std::string>() : v.dump();
        m += ")";
        throw InvalidArgument(m);
    }
    return x;
}

SortParams sort_params(const nlohmann::json& p) {
    SortParams s;
    if (p.is_object() && p.contains("algo")) {
        const auto& v = p.at("algo");
        s.algo = v.is_string() ? v.get<std::string>() : v.dump();
        if (s.algo != "auto" && s.algo != "radix" && s.algo != "bitonic")
            throw InvalidArgument("sort: unknown algo '" + s.algo + "' (known: auto, radix, bitonic)");
    }
    s.bits = uint_param(p, "radix_bits", 1, 8);
    s.items = uint_param(p, "radix_items", 1, 32);
    s.split = uint_param(p, "radix_split", 1, 2);
    return s;
}

/// The algorithm that runs: `auto` is the radix sort on every device type. On GPUs it is the
/// point of it; on PoCL's CPU device it was also faster than the bitonic sort at every size
/// measured, 4096 to 2^24 floats (docs/user-guide.md).
std::string resolved_algo(const std::string& algo) { return algo == "auto" ? "radix" : algo; }

class SortJob : public KernelJob {
public:
    explicit SortJob(const JobOptions& o)
        : n_(o.size.x), iterations_(o.iterations), seed_(o.seed),
          distribution_(distribution_param(o.params)), params_(sort_params(o.params)),
          threads_(uint_param(o.params, "partition_threads", 1, 1024)) {
        if (n_ == 0 || o.size.y != 1) throw InvalidArgument("sort: the size must be n x 1 with n >= 1");
        if (iterations_ == 0) throw InvalidArgument("sort: iterations must be >= 1");
    }

    bool guards_index() const override { return true; }  // its kernel returns for ids past the slice
    KernelDescriptor descriptor() const override {
        KernelDescriptor d;
        d.name = "sort";
        d.dims = 1;
        d.default_priority = Priority::x;
        if (resolved_algo(params_.algo) == "radix") {
            // ceil(32 / b) passes; a pass counts the key's digit, ranks it by its b bits (stable
            // splits of radix_split bits each, counted per bit) and scatters it: about b + 2
            // counted operations per item and pass (b = 8 unless set; GPUs
            // run 6 by default, about 20 % more counted operations than the descriptor says).
            const double b = double(params_.bits ? params_.bits : 8);
            d.ops_per_item = std::ceil(32.0 / b) * (b + 2.0);
        } else {
            // A bitonic network over P = 2^p has p(p+1)/2 stages of P/2 pairs; a pair costs about
            // three counted operations (index add, two compares), i.e. 1.5 per item and stage.
            const double p = std::ceil(std::log2(double(std::max<std::uint64_t>(n_, 2))));
            d.ops_per_item = 1.5 * p * (p + 1.0) / 2.0;
        }
        d.bytes_in_per_item = sizeof(float);
        d.bytes_out_per_item = sizeof(float);
        return d;
    }
    GlobalSize problem() const override { return {n_, 1}; }

    void generate() override {
        input_ = cached_input(n_, seed_, distribution_);  // shared, never copied: read-only
        output_.assign(n_, 0.0f);
        partitioned_.reset();
        runs_.clear();
    }

    void partition(std::vector<Assignment>& as) override {
        const std::vector<std::size_t> order = bucket_order(as, n_);
        partitioned_.reset();
        // One device sorts the whole input: no splitters, no scatter (rank 0's O(n) pass).
        if (order.size() <= 1) return;
        partition_into_buckets(as, order, input(), seed_, threads_, partitioned_);
    }

    SliceSpec slice_spec(const Assignment& a) const override {
        SliceSpec s = base_slice_spec("sort", problem(), a, iterations_);
        // The algorithm that runs, `auto` resolved: plans and reports show it per slice.
        s.params = {{"distribution", distribution_}, {"algo", resolved_algo(params_.algo)}};
        if (params_.bits) s.params["radix_bits"] = params_.bits;
        if (params_.items) s.params["radix_items"] = params_.items;
        if (params_.split) s.params["radix_split"] = params_.split;
        return s;
    }

    Bytes slice_input(const Assignment& a) const override {
        check_range(a);
        const float* src = partitioned_ ? partitioned_.get() : input().data();
        Bytes b(a.units * sizeof(float));
        if (a.units) std::memcpy(b.data(), src + a.offset, b.size());
        return b;
    }

    /// The bucket (or the raw slice), sent from where it is.
    std::vector<std::span<const std::byte>> input_parts(const Assignment& a) const override {
        check_range(a);
        if (a.units == 0) return {};
        const float* src = partitioned_ ? partitioned_.get() : input().data();
        return {std::as_bytes(std::span(src + a.offset, a.units))};
    }

    std::span<std::byte> output_target(const Assignment& a) override {
        check_range(a);
        if (a.units == 0) return {};
        return std::as_writable_bytes(std::span(output_.data() + a.offset, a.units));
    }

    void accept_output(const Assignment& a, std::span<const std::byte> out) override {
        check_range(a);
        if (out.size() != a.units * sizeof(float))
            throw Error("sort: device " + std::to_string(a.device) + " returned " +
                        std::to_string(out.size()) + " bytes for " + std::to_string(a.units) +
                        " items");
        store_output(output_.data() + a.offset, out);
        runs_.push_back({a.offset, a.units});
    }

    void finish() override {
        std::sort(runs_.begin(), runs_.end());
        if (partitioned_) return;  // buckets are value ranges: already globally sorted
        // Slices of the raw input: merge the sorted runs.
        for (std::size_t i = 1; i < runs_.size(); ++i) {
            const auto mid = runs_[i].first;
            const auto last = std::min<std::uint64_t>(n_, mid + runs_[i].second);
            if (mid <= n_)
                std::inplace_merge(output_.begin(), output_.begin() + std::ptrdiff_t(mid),
                                   output_.begin() + std::ptrdiff_t(last));
        }
    }

    /// Sorted (non-decreasing) and a permutation of the input. The output is compared with
    /// std::sort of the input by ==, which treats -0.0 and +0.0 as equal (the device may order
    /// them either way); the count of -0.0 is compared separately. With no NaN in the input,
    /// both checks together mean the output's multiset equals the input's bit for bit.
    Verdict verify() const override {
        if (auto gap = coverage_error(runs_, n_, "items", "returned twice"); !gap.empty())
            return {false, std::move(gap)};
        for (std::uint64_t i = 1; i < n_; ++i)
            if (output_[i] < output_[i - 1])
                return {false, "not sorted at " + std::to_string(i) + ": " +
                                   std::to_string(output_[i - 1]) + " > " + std::to_string(output_[i])};
        // The sorted input, shared with the earlier jobs of this input (generate() took its input
        // from the same cache, and nothing changes it afterwards).
        const auto ref_ptr = cached_sorted(n_, seed_, distribution_);
        const std::vector<float>& ref = *ref_ptr;
        for (std::uint64_t i = 0; i < n_; ++i)
            if (!(output_[i] == ref[i]))
                return {false, "not a permutation of the input: item " + std::to_string(i) + " is " +
                                   std::to_string(output_[i]) + ", expected " + std::to_string(ref[i])};
        auto neg_zeros = [](const std::vector<float>& v) {
            return std::count_if(v.begin(), v.end(), [](float x) { return x == 0.0f && std::signbit(x); });
        };
        if (neg_zeros(output_) != neg_zeros(input()))
            return {false, "not a permutation of the input: " + std::to_string(neg_zeros(output_)) +
                               " times -0.0, expected " + std::to_string(neg_zeros(input()))};
        return {true, std::to_string(n_) + " floats sorted, a permutation of the input (" +
                          std::to_string(runs_.size()) + " slices)"};
    }

    std::string summary() const override {
        if (n_ == 0 || output_.empty()) return {};
        char range[96];
        std::snprintf(range, sizeof range, "min %.7g, max %.7g", double(output_.front()), double(output_.back()));
        std::string r = "sorted " + std::to_string(n_) + " floats (" + distribution_ + ") by ";
        r += resolved_algo(params_.algo) == "radix" ? "radix sort" : "bitonic sort";
        r += ", ";
        r += range;
        return r;
    }

private:
    void check_range(const Assignment& a) const { check_slice("sort", a.offset, a.units, n_, "items"); }

    std::uint64_t n_;
    std::uint64_t iterations_;
    std::uint64_t seed_;
    std::string distribution_;
    SortParams params_;
    std::uint64_t threads_ = 0;  ///< partition_threads; 0: the host's hardware threads
    /// The job's input (generate()): the cache's vector itself, shared by every job of this input.
    const std::vector<float>& input() const { return *input_; }

    std::shared_ptr<const std::vector<float>> input_;
    std::vector<float> output_;
    /// The buckets one after the other (partition()), or null: slices of the raw input.
    std::unique_ptr<float[]> partitioned_;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs_;  ///< accepted (offset, units)
};

}  // namespace

/// Checks common to both algorithms.
void check_buffer(const DeviceInfo& info, std::uint64_t units, std::uint64_t elems) {
    if (elems > (std::uint64_t{1} << 31))
        throw InvalidArgument("sort: a slice of " + std::to_string(units) +
                              " items exceeds the kernel's 2^31-item limit");
    const std::uint64_t bytes = elems * sizeof(float);
    if (info.max_alloc_bytes && bytes > info.max_alloc_bytes)
        throw Error("sort: a slice of " + std::to_string(units) + " items needs a buffer of " +
                    std::to_string(bytes >> 20) + " MiB, over " + info.name +
                    "'s largest allocation (" + std::to_string(info.max_alloc_bytes >> 20) + " MiB)");
}

namespace {

/// A slice as it runs on `device`: the bucket's items in ("keys", split by the job's items), the
/// sorted items out ("sorted"), and between them the radix or bitonic sort as a library routine
/// (declared_job.hpp), so that the slice is an instruction list like every declared slice: its
/// uploads as the bucket's pieces arrive, the sort `iterations` times from the same input, the
/// download.
DataJobSpec declare_sort(const SliceSpec& s, const DeviceInfo& device) {
    const SortParams p = sort_params(s.params);
    DataJobSpec spec;
    spec.name = "sort";
    spec.dims = 1;
    spec.units = std::max<std::uint64_t>(s.problem.x, s.offset + s.units);
    BufferDecl keys{"keys", ElemType::f32, BufferLayout::split, 1, 0, true, false};
    BufferDecl sorted{"sorted", ElemType::f32, BufferLayout::split, 1, 0, false, true};
    sorted.no_init = true;  // each call writes every item of the slice
    spec.buffers = {keys, sorted};
    KernelDecl kd;
    const bool radix = resolved_algo(p.algo) == "radix";
    kd.name = kd.library = radix ? kSortRadix : kSortBitonic;
    kd.args = {arg::in({0}), arg::out({1})};
    for (const double v : radix ? radix_values(device, s, p) : bitonic_values(device, s))
        kd.args.push_back(arg::value<double>(v));
    spec.kernels = {kd};
    return spec;
}

SliceTimes execute_sort(DeviceContext& ctx, const SliceSpec& s, std::span<const std::byte> in,
                        Bytes& out) {
    out.clear();
    const std::uint64_t units = s.units;
    if (in.size() != units * sizeof(float))
        throw InvalidArgument("sort: slice input of " + std::to_string(in.size()) + " bytes for " +
                              std::to_string(units) + " items");
    if (units == 0) return {};
    return execute_declared(declare_sort(s, ctx.info()), ctx, s, in, out);
}

}  // namespace
}  // namespace sort_kernel

KernelJobFactory sort_job_factory() {
    KernelJobFactory f;
    f.name = "sort";
    f.make = [](const JobOptions& o) { return std::unique_ptr<KernelJob>(new sort_kernel::SortJob(o)); };
    f.execute = sort_kernel::execute_sort;
    f.streams_input = true;  // execute_declared (input_feed.hpp)
    register_library_call(sort_kernel::kSortRadix, sort_kernel::radix_routine());
    register_library_call(sort_kernel::kSortBitonic, sort_kernel::bitonic_routine());
    f.dims = 1;
    f.description = "sorts n floats: splitter-based range partition, a bitonic sort per device";
    f.params = {{"distribution", "the input: mixed (default), uniform, duplicates, sorted, reversed"},
                {"algo", "auto (default: radix), radix (LSD radix sort, radix.cl) or bitonic (sort.cl)"},
                {"radix_bits", "radix sort: bits per pass, 1 to 8 (default 6 on GPUs, 8 on CPUs)"},
                {"radix_items", "radix sort: keys per work-item, 1 to 32 (default 8 on GPUs, 16 on CPUs)"},
                {"radix_split", "radix sort: bits per stable split of the local sort, 1 or 2 (default 2)"},
                {"partition_threads", "rank 0's threads for the split's partition (default: all its hardware threads)"}};
    f.calibration_sizes = {"4096", "16384", "65536"};
    f.tune_size = "65536";
    // Sort was not in the paper's split experiment: our size, and the job's own compute amount.
    f.paper_case = PaperCase{"262144", 1, 0};
    return f;
}

}  // namespace worksize::detail
