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
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include "jobs/job_util.hpp"
#include "sample_kernels.hpp"
#include "worksize/runtime/opencl.hpp"

namespace worksize::detail {
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

/// Threads of rank 0's partition: `wanted` (0: the host's hardware threads), at most one per
/// 64 Ki items.
std::size_t partition_threads(std::uint64_t n, std::uint64_t wanted) {
    const std::uint64_t hw = wanted ? wanted : std::max(1u, std::thread::hardware_concurrency());
    return std::size_t(std::clamp<std::uint64_t>(n >> 16, 1, hw));
}

/// f(0) ... f(T - 1), each in its own thread (f(0) in the caller's); the first exception any
/// of them threw is rethrown once all have ended.
template <class F>
void parallel_for(std::size_t T, F f) {
    std::vector<std::exception_ptr> errors(T);
    auto guarded = [&](std::size_t t) {
        try {
            f(t);
        } catch (...) {
            errors[t] = std::current_exception();
        }
    };
    std::vector<std::thread> threads;
    threads.reserve(T);
    for (std::size_t t = 1; t < T; ++t) threads.emplace_back(guarded, t);
    guarded(0);
    for (auto& th : threads) th.join();
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
}

/// The slice's parameters as the executor reads them: the algorithm and the radix build options.
struct SortParams {
    std::string algo = "auto";   ///< auto | radix | bitonic
    std::uint64_t bits = 0;      ///< radix bits per pass; 0: the device's default
    std::uint64_t items = 0;     ///< radix keys per work-item; 0: the device's default
    std::uint64_t split = 0;     ///< radix local sort's bits per split (1 or 2); 0: the default
};

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
        if (as.empty()) throw InvalidArgument("sort: no assignments to partition");
        std::vector<std::size_t> order(as.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t x, std::size_t y) { return as[x].offset < as[y].offset; });
        std::uint64_t planned = 0;
        for (auto i : order) planned += as[i].units;
        if (planned != n_)
            throw InvalidArgument("sort: the assignments cover " + std::to_string(planned) + " of " +
                                  std::to_string(n_) + " items");
        // Only devices with work get a bucket: a device planned to get nothing keeps nothing.
        std::erase_if(order, [&](std::size_t i) { return as[i].units == 0; });
        partitioned_.reset();
        // One device sorts the whole input: no splitters, no scatter (rank 0's O(n) pass).
        if (order.size() <= 1) return;
        const std::size_t k = order.size();
        const std::size_t nb = k - 1;  // bucket boundaries

        // Planned end of each bucket but the last.
        std::vector<std::uint64_t> target(nb);
        for (std::size_t i = 0, acc = 0; i < nb; ++i) target[i] = acc += as[order[i]].units;

        // Splitters: quantiles of a seeded sample (the whole input when it is small).
        const std::uint64_t m_goal = std::max<std::uint64_t>(4096, 256 * k);
        std::vector<float> sample;
        if (n_ <= m_goal) {
            sample = input();
        } else {
            std::mt19937_64 rng(seed_ ^ 0x9e3779b97f4a7c15ull);
            sample.resize(m_goal);
            for (auto& s : sample) s = input()[rng() % n_];
        }
        std::sort(sample.begin(), sample.end());
        const std::uint64_t m = sample.size();
        std::vector<float> split(nb);
        for (std::size_t i = 0; i < nb; ++i) {
            const auto q = std::min<std::uint64_t>(
                m - 1, std::uint64_t(double(target[i]) / double(n_) * double(m)));
            split[i] = sample[q];
        }

        // Distinct splitter values u_g, the items strictly between u_{g-1} and u_g, and equal to u_g.
        std::vector<float> u(split.begin(), split.end());
        u.erase(std::unique(u.begin(), u.end()), u.end());  // ==: +-0 count as one value
        const std::size_t G = u.size();
        // The group of x: how many distinct splitters lie below it, counted without branches
        // (G is below the number of devices). ue: u with a NaN after it, equal to nothing.
        auto group_of = [&](float x) {
            std::size_t g = 0;
            for (float v : u) g += v < x;
            return g;
        };
        std::vector<float> ue(u);
        ue.push_back(std::numeric_limits<float>::quiet_NaN());
        // The input in T contiguous chunks, one thread each; no pass over the whole input is
        // serial. Pass 1 counts, per chunk, the items of each group and those equal to u_g.
        const std::size_t T = partition_threads(n_, threads_);
        auto chunk = [&](std::size_t t) { return std::pair{n_ * t / T, n_ * (t + 1) / T}; };
        std::vector<std::vector<std::uint64_t>> below_t(T, std::vector<std::uint64_t>(G + 1, 0)),
            equal_t(T, std::vector<std::uint64_t>(G + 1, 0));  // [G]: always 0
        // Each thread counts into its own copies and stores them at the end: the threads' small
        // count vectors may share a cache line.
        parallel_for(T, [&](std::size_t t) {
            const auto [lo, hi] = chunk(t);
            std::vector<std::uint64_t> bl(G + 1, 0), eq(G + 1, 0);
            const float* const in = input().data();
            for (std::uint64_t j = lo; j < hi; ++j) {
                const float x = in[j];
                const auto g = group_of(x);
                const bool e = ue[g] == x;
                eq[g] += e;
                bl[g] += !e;
            }
            below_t[t] = std::move(bl);
            equal_t[t] = std::move(eq);
        });
        std::vector<std::uint64_t> below(G + 1, 0), equal(G, 0);
        for (std::size_t t = 0; t < T; ++t) {
            for (std::size_t g = 0; g <= G; ++g) below[g] += below_t[t][g];
            for (std::size_t g = 0; g < G; ++g) equal[g] += equal_t[t][g];
        }
        // less[g]: items < u_g. first_b/last_b: the boundaries whose splitter is u_g.
        std::vector<std::uint64_t> less(G, 0);
        for (std::size_t g = 0, acc = 0; g < G; ++g) {
            acc += below[g];
            less[g] = acc;
            acc += equal[g];
        }
        std::vector<std::size_t> first_b(G, nb), last_b(G, 0), group(nb);
        for (std::size_t i = 0; i < nb; ++i) {
            group[i] = group_of(split[i]);
            first_b[group[i]] = std::min(first_b[group[i]], i);
            last_b[group[i]] = std::max(last_b[group[i]], i);
        }
        // Quota: how many items equal to split[i] lie below boundary i; end[i] = bucket i's end.
        std::vector<std::uint64_t> quota(nb), end(k);
        for (std::size_t i = 0; i < nb; ++i) {
            const auto g = group[i];
            const auto want = target[i] > less[g] ? target[i] - less[g] : 0;
            quota[i] = std::min(want, equal[g]);
            end[i] = less[g] + quota[i];
        }
        end[nb] = n_;

        // Where each item goes. An item strictly below u_g goes to the first boundary of group g
        // (the last bucket past every splitter); the c-th item equal to u_g (c counted over the
        // whole input in its order) to the first boundary i of its group with c < quota[i], else
        // past the group. Chunk t's equal items of group g are those with c in [seen_t, seen_t +
        // equal_t), so its count per bucket follows from pass 1 without another pass.
        std::vector<std::vector<std::uint64_t>> seen_t(T, std::vector<std::uint64_t>(G, 0));
        std::vector<std::vector<std::uint64_t>> count_t(T, std::vector<std::uint64_t>(k, 0));
        for (std::size_t t = 0; t < T; ++t) {
            for (std::size_t g = 0; g < G; ++g) {
                seen_t[t][g] = t == 0 ? 0 : seen_t[t - 1][g] + equal_t[t - 1][g];
                count_t[t][first_b[g]] += below_t[t][g];
                const std::uint64_t c0 = seen_t[t][g], c1 = c0 + equal_t[t][g];
                std::uint64_t lo = 0;
                for (std::size_t i = first_b[g]; i <= last_b[g] + 1; ++i) {
                    const std::uint64_t hi = i <= last_b[g] ? quota[i] : c1;
                    if (hi > lo) count_t[t][i] += std::min(hi, c1) > std::max(lo, c0) ? std::min(hi, c1) - std::max(lo, c0) : 0;
                    lo = std::max(lo, hi);
                }
            }
            count_t[t][nb] += below_t[t][G];
        }
        // Chunk t writes bucket b from cursor_t[t][b]: after bucket b's earlier chunks.
        std::vector<std::vector<std::uint64_t>> cursor_t(T, std::vector<std::uint64_t>(k, 0));
        for (std::size_t b = 0; b < k; ++b)
            for (std::size_t t = 0, acc = b == 0 ? 0 : end[b - 1]; t < T; ++t) {
                cursor_t[t][b] = acc;
                acc += count_t[t][b];
            }
        // Pass 2, the parallel scatter. The buffer is not zeroed first (that would be a serial
        // pass): every item of it is written exactly once below, which the counts check.
        partitioned_.reset(new float[n_]);
        float* const dst = partitioned_.get();
        std::vector<std::vector<std::uint64_t>> done_t(T);
        std::vector<std::size_t> bucket_of(first_b);  // of an item of group g not equal to u_g
        bucket_of.push_back(nb);
        parallel_for(T, [&](std::size_t t) {
            const auto [lo, hi] = chunk(t);
            std::vector<std::uint64_t> cur = cursor_t[t];  // own copy, stored at the end
            auto seen = seen_t[t];
            const float* const in = input().data();
            for (std::uint64_t j = lo; j < hi; ++j) {
                const float x = in[j];
                const auto g = group_of(x);
                std::size_t b = bucket_of[g];
                if (ue[g] == x) {
                    const auto c = seen[g]++;
                    while (b <= last_b[g] && c >= quota[b]) ++b;
                }
                dst[cur[b]++] = x;
            }
            done_t[t] = std::move(cur);
        });
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t i = 0; i < k; ++i)
                if (done_t[t][i] != cursor_t[t][i] + count_t[t][i] ||
                    (t + 1 == T && done_t[t][i] != end[i]))
                    throw Error("sort: internal error, bucket " + std::to_string(i) +
                                " does not match its count");

        for (std::size_t i = 0; i < k; ++i) {
            Assignment& a = as[order[i]];
            a.offset = i == 0 ? 0 : end[i - 1];
            a.units = end[i] - a.offset;
            a.share = double(a.units) / double(n_);
            // Keep the planner's local size: a bucket that is no multiple of it gets an NDRange
            // rounded up (the kernels are grid-stride loops, the extra work-items idle).
            a.global = {a.units, 1};
            a.padded_global = a.global;
            if (!a.local.is_null() && a.units % a.local.x != 0) {
                a.padded_global.x = (a.units / a.local.x + 1) * a.local.x;
                a.note = "bucket of " + std::to_string(a.units) + " items; NDRange padded to " +
                         std::to_string(a.padded_global.x) + " for local size " + std::to_string(a.local.x);
            }
        }
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

/// Checks common to both algorithms; returns false for an empty slice.
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

SliceTimes execute_bitonic(DeviceContext& ctx, const SliceSpec& s, std::span<const std::byte> in,
                           Bytes& out) {
    SliceTimes t;
    const std::uint64_t units = s.units;
    const std::uint64_t P = std::bit_ceil(units);
    check_buffer(ctx.info(), units, P);
    const std::uint64_t bytes = P * sizeof(float);
    const auto& info = ctx.info();
    const std::uint64_t L = s.local.x;
    std::uint64_t G = std::max(s.global.x, units);
    if (L && G % L) G = (G / L + 1) * L;
    const std::string where = "sort.cl on " + info.name + " (global " + std::to_string(G) + ", local " +
                              (L ? std::to_string(L) : std::string("NULL")) + ")";
    auto& q = ctx.queue();
    try {
        cl::Program prog = ctx.program("sort");
        cl::Kernel step(prog, "bitonic_step");
        cl::Kernel local(prog, "bitonic_local");
        cl::Buffer pristine(ctx.context(), CL_MEM_READ_WRITE, bytes);
        cl::Buffer work(ctx.context(), CL_MEM_READ_WRITE, bytes);
        cl::Event w, fill;
        q.enqueueWriteBuffer(pristine, CL_FALSE, 0, units * sizeof(float), in.data(), nullptr, &w);
        if (P > units)
            q.enqueueFillBuffer(pristine, std::numeric_limits<float>::infinity(), units * sizeof(float),
                                (P - units) * sizeof(float), nullptr, &fill);
        q.finish();
        t.h2d = event_seconds(w) + (P > units ? event_seconds(fill) : 0.0);

        // The local-memory stages need a power-of-two group with 2L <= P that fits the kernel.
        const bool use_local =
            L >= 2 && std::has_single_bit(L) && 2 * L <= P &&
            L <= local.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(ctx.device()) &&
            2 * L * sizeof(float) <= info.local_mem_bytes;
        const cl::NDRange global(G), lsz = L ? cl::NDRange(L) : cl::NullRange;
        step.setArg(0, work);
        step.setArg(1, cl_uint(P / 2));
        if (use_local) {
            local.setArg(0, work);
            local.setArg(1, cl_uint(P));
            local.setArg(4, cl::Local(2 * L * sizeof(float)));
        }
        std::vector<cl::Event> events;
        for (std::uint64_t r = 0; r < s.iterations; ++r) {
            q.enqueueCopyBuffer(pristine, work, 0, 0, bytes);
            auto launch = [&](cl::Kernel& kern) {
                events.emplace_back();
                q.enqueueNDRangeKernel(kern, cl::NullRange, global, lsz, nullptr, &events.back());
            };
            std::uint64_t k = 2;
            if (use_local) {
                const std::uint64_t k_last = std::min(2 * L, P);
                local.setArg(2, cl_uint(2));
                local.setArg(3, cl_uint(k_last));
                launch(local);
                k = k_last * 2;
            }
            for (; k <= P; k *= 2) {
                const std::uint64_t j_stop = use_local ? L : 0;  // local kernel does j <= L
                for (std::uint64_t j = k / 2; j > j_stop; j /= 2) {
                    step.setArg(2, cl_uint(j));
                    step.setArg(3, cl_uint(k));
                    launch(step);
                }
                if (use_local) {
                    local.setArg(2, cl_uint(k));
                    local.setArg(3, cl_uint(k));
                    launch(local);
                }
            }
            // Bounded event lists: collect each iteration's times (R may be in the thousands).
            q.finish();
            for (const auto& e : events) t.kernel += event_seconds(e);
            events.clear();
        }
        out.resize(units * sizeof(float));
        cl::Event rd;
        q.enqueueReadBuffer(work, CL_TRUE, 0, out.size(), out.data(), nullptr, &rd);
        t.d2h = event_seconds(rd);
    } catch (const cl::Error& e) {
        finish_quietly(q);  // the upload enqueued from `in` may still be running
        rethrow_cl(e, where);
    }
    return t;
}

/// The radix sort's geometry on one device: the work-group size (the slice's local size where
/// it is a power of two from 16 (GPUs: 128) to 1024, else the device type's default) and the
/// build options.
struct RadixGeometry {
    std::uint64_t wg = 0, bits = 0, items = 0, split = 0;
    std::uint64_t tile() const { return wg * items; }
    /// radix_scatter's local memory: two tiles with a padding word per 32, the packed scan's
    /// ulongs (at most 2 per work-item with their padding and run sums) and the digit row.
    std::uint64_t scatter_local_bytes() const {
        return (2 * (tile() + tile() / 32 + 1) + (std::uint64_t{1} << bits)) * 4 + 2 * wg * 8;
    }
    std::string options() const {
        return "-DRADIX_WG=" + std::to_string(wg) + " -DRADIX_BITS=" + std::to_string(bits) +
               " -DRADIX_ITEMS=" + std::to_string(items) + " -DRADIX_SPLIT=" + std::to_string(split);
    }
};

RadixGeometry radix_geometry(const DeviceInfo& info, const SliceSpec& s, const SortParams& p) {
    const bool cpu = info.type == DeviceType::cpu;
    RadixGeometry g;
    const std::uint64_t L = s.local.x;
    // Below 128 on a GPU the tiles get small and the digit counts to scan many: its default then.
    const std::uint64_t least = cpu ? 16 : 128;
    g.wg = (L >= least && L <= 1024 && std::has_single_bit(L)) ? L : (cpu ? 64 : 256);
    if (info.max_work_group_size) g.wg = std::min(g.wg, std::bit_floor(info.max_work_group_size));
    // GPUs: 6 bits (H200, 2^26 keys: 8.7 Gkeys/s against 8.4 with 4 and 8.1 with 8 bits).
    g.bits = p.bits ? p.bits : (cpu ? 8 : 6);
    g.items = p.items ? p.items : (cpu ? 16 : 8);
    // Two bits per local split: one packed scan where one bit took one scan each.
    g.split = p.split ? p.split : 2;
    // The scatter's local tile must fit the device (4 bytes a key, plus the scan and digit rows).
    while (info.local_mem_bytes && g.items > 1 && g.scatter_local_bytes() > info.local_mem_bytes)
        g.items /= 2;
    return g;
}

SliceTimes execute_radix(DeviceContext& ctx, const SliceSpec& s, std::span<const std::byte> in,
                         Bytes& out, const SortParams& p) {
    SliceTimes t;
    const std::uint64_t n = s.units;
    const auto& info = ctx.info();
    check_buffer(info, n, n);
    const RadixGeometry geo = radix_geometry(info, s, p);
    const std::uint64_t tiles = (n + geo.tile() - 1) / geo.tile();
    const std::uint64_t m = (std::uint64_t{1} << geo.bits) * tiles;  // histogram entries
    const std::uint64_t blocks = (m + geo.tile() - 1) / geo.tile();  // scan blocks
    const std::uint64_t bytes = n * sizeof(float);
    const std::string where = "radix.cl on " + info.name + " (" + geo.options() + ", " +
                              std::to_string(tiles) + " tiles)";
    auto& q = ctx.queue();
    try {
        cl::Program prog = ctx.program("radix", geo.options());
        cl::Kernel to_keys(prog, "radix_to_keys"), from_keys(prog, "radix_from_keys");
        cl::Kernel hist(prog, "radix_histogram"), reduce(prog, "radix_scan_reduce");
        cl::Kernel top(prog, "radix_scan_top"), down(prog, "radix_scan_down");
        cl::Kernel scatter(prog, "radix_scatter");
        cl::Buffer pristine(ctx.context(), CL_MEM_READ_WRITE, bytes);
        cl::Buffer keys[2] = {cl::Buffer(ctx.context(), CL_MEM_READ_WRITE, bytes),
                              cl::Buffer(ctx.context(), CL_MEM_READ_WRITE, bytes)};
        cl::Buffer counts(ctx.context(), CL_MEM_READ_WRITE, m * sizeof(cl_uint));
        cl::Buffer sums(ctx.context(), CL_MEM_READ_WRITE, blocks * sizeof(cl_uint));
        cl::Event w;
        q.enqueueWriteBuffer(pristine, CL_FALSE, 0, bytes, in.data(), nullptr, &w);
        q.finish();
        t.h2d = event_seconds(w);

        const std::uint64_t passes = (32 + geo.bits - 1) / geo.bits;
        const cl::NDRange L(geo.wg), tiles_range(tiles * geo.wg), blocks_range(blocks * geo.wg);
        // The conversions are grid-stride loops: enough groups to fill the device, no more.
        const std::uint64_t cu = std::max<std::uint64_t>(1, info.compute_units);
        const cl::NDRange map_range(std::min(tiles, cu * 8) * geo.wg);
        hist.setArg(2, cl_uint(n));
        set_args(reduce, counts, sums, cl_uint(m));
        set_args(top, sums, cl_uint(blocks));
        set_args(down, counts, sums, cl_uint(m));
        scatter.setArg(2, counts);
        scatter.setArg(3, cl_uint(n));
        std::vector<cl::Event> events;
        auto launch = [&](cl::Kernel& k, const cl::NDRange& g) {
            events.emplace_back();
            q.enqueueNDRangeKernel(k, cl::NullRange, g, L, nullptr, &events.back());
        };
        std::size_t cur = 0;
        for (std::uint64_t r = 0; r < s.iterations; ++r) {
            set_args(to_keys, pristine, keys[0], cl_uint(n));
            launch(to_keys, map_range);
            cur = 0;
            for (std::uint64_t pass = 0; pass < passes; ++pass) {
                const cl_uint shift = cl_uint(pass * geo.bits);
                hist.setArg(0, keys[cur]);
                hist.setArg(1, counts);
                hist.setArg(3, shift);
                launch(hist, tiles_range);
                launch(reduce, blocks_range);
                launch(top, L);
                launch(down, blocks_range);
                scatter.setArg(0, keys[cur]);
                scatter.setArg(1, keys[1 - cur]);
                scatter.setArg(4, shift);
                launch(scatter, tiles_range);
                cur = 1 - cur;
            }
            // Back to floats, into the other key buffer.
            set_args(from_keys, keys[cur], keys[1 - cur], cl_uint(n));
            launch(from_keys, map_range);
            q.finish();
            for (const auto& e : events) t.kernel += event_seconds(e);
            events.clear();
        }
        out.resize(bytes);
        cl::Event rd;
        q.enqueueReadBuffer(keys[1 - cur], CL_TRUE, 0, bytes, out.data(), nullptr, &rd);
        t.d2h = event_seconds(rd);
    } catch (const cl::Error& e) {
        finish_quietly(q);  // the upload enqueued from `in` may still be running
        rethrow_cl(e, where);
    }
    return t;
}

SliceTimes execute_sort(DeviceContext& ctx, const SliceSpec& s, std::span<const std::byte> in,
                        Bytes& out) {
    out.clear();
    const std::uint64_t units = s.units;
    if (in.size() != units * sizeof(float))
        throw InvalidArgument("sort: slice input of " + std::to_string(in.size()) + " bytes for " +
                              std::to_string(units) + " items");
    const SortParams p = sort_params(s.params);
    if (units == 0) return {};
    if (resolved_algo(p.algo) == "radix") return execute_radix(ctx, s, in, out, p);
    return execute_bitonic(ctx, s, in, out);
}

}  // namespace

KernelJobFactory sort_job_factory() {
    KernelJobFactory f;
    f.name = "sort";
    f.make = [](const JobOptions& o) { return std::unique_ptr<KernelJob>(new SortJob(o)); };
    f.execute = execute_sort;
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
