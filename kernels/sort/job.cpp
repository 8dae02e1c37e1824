// Sample kernel "sort": sorting n floats across devices by a splitter-based range partition.
//
// Master: generate() makes seeded floats (negatives, many duplicates, +-0, large magnitudes, no
// NaN). partition() samples the input, picks one splitter per bucket boundary at the planned
// cumulative shares, and scatters the input into buckets so that device i gets the values between
// splitters i-1 and i. Values equal to a splitter are divided between the buckets on both sides
// by a quota, so a heavily repeated value cannot push a bucket far off its planned share, and
// every element lands exactly once. Each assignment's offset/units/global/share become the real
// bucket's. The concatenation of the sorted buckets is sorted: finish() has nothing to merge
// (without partition() - slices of the raw input - it merges the sorted runs).
// Worker: bitonic sort of the bucket padded to a power of two with +INFINITY (sort.cl),
// R times from a pristine device-side copy; the kernel events of all iterations are timed.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>

#include "job_util.hpp"
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

class SortJob : public KernelJob {
public:
    explicit SortJob(const JobOptions& o)
        : n_(o.size.x), iterations_(o.iterations), seed_(o.seed),
          distribution_(distribution_param(o.params)) {
        if (n_ == 0 || o.size.y != 1) throw InvalidArgument("sort: the size must be n x 1 with n >= 1");
        if (iterations_ == 0) throw InvalidArgument("sort: iterations must be >= 1");
    }

    bool guards_index() const override { return true; }  // its kernel returns for ids past the slice
    KernelDescriptor descriptor() const override {
        KernelDescriptor d;
        d.name = "sort";
        d.dims = 1;
        d.default_priority = Priority::x;
        // A bitonic network over P = 2^p has p(p+1)/2 stages of P/2 pairs; a pair costs about
        // three counted operations (index add, two compares), i.e. 1.5 per item and stage.
        const double p = std::ceil(std::log2(double(std::max<std::uint64_t>(n_, 2))));
        d.ops_per_item = 1.5 * p * (p + 1.0) / 2.0;
        d.bytes_in_per_item = sizeof(float);
        d.bytes_out_per_item = sizeof(float);
        return d;
    }
    GlobalSize problem() const override { return {n_, 1}; }

    void generate() override {
        input_ = cached_input(n_, seed_, distribution_);  // shared, never copied: read-only
        output_.assign(n_, 0.0f);
        partitioned_.clear();
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
        partitioned_.clear();
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
        std::vector<std::uint64_t> below(G + 1, 0), equal(G, 0);
        auto group_of = [&](float x) {
            return std::size_t(std::lower_bound(u.begin(), u.end(), x) - u.begin());
        };
        for (float x : input()) {
            const auto g = group_of(x);
            if (g < G && u[g] == x) ++equal[g]; else ++below[g];
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

        // Scatter. An item strictly below u_g goes to the first boundary of group g (the last
        // bucket past every splitter); the c-th item equal to u_g to the first boundary i of
        // its group with c < quota[i], else past the group.
        partitioned_.assign(n_, 0.0f);
        std::vector<std::uint64_t> cursor(k, 0), seen(G, 0);
        for (std::size_t i = 1; i < k; ++i) cursor[i] = end[i - 1];
        for (float x : input()) {
            const auto g = group_of(x);
            std::size_t b;
            if (g < G && u[g] == x) {
                const auto c = seen[g]++;
                b = first_b[g];
                while (b <= last_b[g] && c >= quota[b]) ++b;
            } else {
                b = g < G ? first_b[g] : nb;
            }
            partitioned_[cursor[b]++] = x;
        }
        for (std::size_t i = 0; i < k; ++i)
            if (cursor[i] != end[i]) throw Error("sort: internal error, bucket " + std::to_string(i) +
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
        s.params = {{"distribution", distribution_}};
        return s;
    }

    Bytes slice_input(const Assignment& a) const override {
        check_range(a);
        const auto& src = partitioned_.empty() ? input() : partitioned_;
        Bytes b(a.units * sizeof(float));
        if (a.units) std::memcpy(b.data(), src.data() + a.offset, b.size());
        return b;
    }

    /// The bucket (or the raw slice), sent from where it is.
    std::vector<std::span<const std::byte>> input_parts(const Assignment& a) const override {
        check_range(a);
        if (a.units == 0) return {};
        const auto& src = partitioned_.empty() ? input() : partitioned_;
        return {std::as_bytes(std::span(src.data() + a.offset, a.units))};
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
        if (!partitioned_.empty()) return;  // buckets are value ranges: already globally sorted
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
        auto runs = runs_;
        std::sort(runs.begin(), runs.end());
        std::uint64_t next = 0;
        for (const auto& [off, len] : runs) {
            if (off != next)
                return {false, "items [" + std::to_string(std::min(off, next)) + ", " +
                                   std::to_string(std::max(off, next)) + ") " +
                                   (off > next ? "missing" : "returned twice")};
            next = off + len;
        }
        if (next != n_)
            return {false, "items [" + std::to_string(next) + ", " + std::to_string(n_) + ") missing"};
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
                          std::to_string(runs.size()) + " slices)"};
    }

    std::string summary() const override {
        if (n_ == 0 || output_.empty()) return {};
        char range[96];
        std::snprintf(range, sizeof range, "min %.7g, max %.7g", double(output_.front()), double(output_.back()));
        return "sorted " + std::to_string(n_) + " floats (" + distribution_ + "), " + range;
    }

private:
    void check_range(const Assignment& a) const {
        if (a.offset > n_ || a.units > n_ - a.offset)
            throw InvalidArgument("sort: slice [" + std::to_string(a.offset) + ", +" +
                                  std::to_string(a.units) + ") outside the " + std::to_string(n_) +
                                  " items");
    }

    std::uint64_t n_;
    std::uint64_t iterations_;
    std::uint64_t seed_;
    std::string distribution_;
    /// The job's input (generate()): the cache's vector itself, shared by every job of this input.
    const std::vector<float>& input() const { return *input_; }

    std::shared_ptr<const std::vector<float>> input_;
    std::vector<float> output_, partitioned_;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs_;  ///< accepted (offset, units)
};

SliceTimes execute_sort(DeviceContext& ctx, const SliceSpec& s, std::span<const std::byte> in,
                        Bytes& out) {
    SliceTimes t;
    out.clear();
    const std::uint64_t units = s.units;
    if (in.size() != units * sizeof(float))
        throw InvalidArgument("sort: slice input of " + std::to_string(in.size()) + " bytes for " +
                              std::to_string(units) + " items");
    if (units == 0) return t;
    const std::uint64_t P = std::bit_ceil(units);
    if (P > (std::uint64_t{1} << 31))
        throw InvalidArgument("sort: a slice of " + std::to_string(units) +
                              " items exceeds the kernel's 2^31-item limit");
    const std::uint64_t bytes = P * sizeof(float);
    const auto& info = ctx.info();
    if (info.max_alloc_bytes && bytes > info.max_alloc_bytes)
        throw Error("sort: a slice of " + std::to_string(units) + " items needs a buffer of " +
                    std::to_string(bytes >> 20) + " MiB, over " + info.name +
                    "'s largest allocation (" + std::to_string(info.max_alloc_bytes >> 20) + " MiB)");
    const std::uint64_t L = s.local.x;
    std::uint64_t G = std::max(s.global.x, units);
    if (L && G % L) G = (G / L + 1) * L;
    const std::string where = "sort.cl on " + info.name + " (global " + std::to_string(G) + ", local " +
                              (L ? std::to_string(L) : std::string("NULL")) + ")";
    try {
        cl::Program prog = ctx.program("sort");
        cl::Kernel step(prog, "bitonic_step");
        cl::Kernel local(prog, "bitonic_local");
        auto& q = ctx.queue();
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
        rethrow_cl(e, where);
    }
    return t;
}

}  // namespace

KernelJobFactory sort_job_factory() {
    KernelJobFactory f;
    f.name = "sort";
    f.make = [](const JobOptions& o) { return std::unique_ptr<KernelJob>(new SortJob(o)); };
    f.execute = execute_sort;
    f.dims = 1;
    f.description = "sorts n floats: splitter-based range partition, a bitonic sort per device";
    f.params = {{"distribution", "the input: mixed (default), uniform, duplicates, sorted, reversed"}};
    f.calibration_sizes = {"4096", "16384", "65536"};
    f.tune_size = "65536";
    // Sort was not in the paper's split experiment: our size, and the job's own compute amount.
    f.paper_case = PaperCase{"262144", 1, 0};
    return f;
}

}  // namespace worksize::detail
