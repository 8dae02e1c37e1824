// Sample kernel "sort": rank 0's partition of the input into one bucket of values per device
// (SortJob::partition() in job.cpp, whose top comment describes the method). The splitters are
// quantiles of a seeded sample; the count and the scatter run in threads, each over a contiguous
// chunk of the input.
#include <algorithm>
#include <exception>
#include <limits>
#include <numeric>
#include <random>
#include <thread>
#include <utility>

#include "sort_impl.hpp"

namespace worksize::detail::sort_kernel {
namespace {

/// Counts per chunk (one thread each): a vector per chunk, by group or by bucket.
using PerThread = std::vector<std::vector<std::uint64_t>>;

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

/// Planned end of each bucket but the last.
std::vector<std::uint64_t> planned_ends(const std::vector<Assignment>& as,
                                        const std::vector<std::size_t>& order) {
    const std::size_t nb = order.size() - 1;  // bucket boundaries
    std::vector<std::uint64_t> target(nb);
    for (std::size_t i = 0, acc = 0; i < nb; ++i) target[i] = acc += as[order[i]].units;
    return target;
}

/// Splitters: quantiles of a seeded sample (the whole input when it is small), one per boundary
/// at its planned end `target`, for k buckets.
std::vector<float> pick_splitters(const std::vector<float>& input, std::uint64_t seed,
                                  const std::vector<std::uint64_t>& target, std::size_t k) {
    const std::uint64_t n = input.size();
    const std::size_t nb = target.size();
    const std::uint64_t m_goal = std::max<std::uint64_t>(4096, 256 * k);
    std::vector<float> sample;
    if (n <= m_goal) {
        sample = input;
    } else {
        std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
        sample.resize(m_goal);
        for (auto& s : sample) s = input[rng() % n];
    }
    std::sort(sample.begin(), sample.end());
    const std::uint64_t m = sample.size();
    std::vector<float> split(nb);
    for (std::size_t i = 0; i < nb; ++i) {
        const auto q = std::min<std::uint64_t>(
            m - 1, std::uint64_t(double(target[i]) / double(n) * double(m)));
        split[i] = sample[q];
    }
    return split;
}

/// Distinct splitter values u_g; group g holds the items strictly between u_{g-1} and u_g, and
/// those equal to u_g.
struct SplitterGroups {
    std::vector<float> u;
    std::vector<float> ue;  ///< u with a NaN after it, equal to nothing

    explicit SplitterGroups(const std::vector<float>& split) : u(split.begin(), split.end()) {
        u.erase(std::unique(u.begin(), u.end()), u.end());  // ==: +-0 count as one value
        ue = u;
        ue.push_back(std::numeric_limits<float>::quiet_NaN());
    }
    std::size_t size() const { return u.size(); }
    /// The group of x: how many distinct splitters lie below it, counted without branches
    /// (G is below the number of devices).
    std::size_t of(float x) const {
        std::size_t g = 0;
        for (float v : u) g += v < x;
        return g;
    }
};

/// The input of n items in T contiguous chunks, one thread each: chunk t's [lo, hi).
std::pair<std::uint64_t, std::uint64_t> chunk(std::uint64_t n, std::size_t T, std::size_t t) {
    return std::pair{n * t / T, n * (t + 1) / T};
}

/// Pass 1's counts per chunk and group: the items not equal to u_g ([G]: past every splitter)
/// and those equal to it ([G]: always 0).
struct ChunkCounts {
    PerThread below_t, equal_t;
};

/// Pass 1 counts, per chunk, the items of each group and those equal to u_g; no pass over the
/// whole input is serial.
ChunkCounts count_chunks(const std::vector<float>& input, const SplitterGroups& groups, std::size_t T) {
    const std::size_t G = groups.size();
    const std::uint64_t n = input.size();
    const std::vector<std::uint64_t> zeros(G + 1, 0);
    ChunkCounts c{PerThread(T, zeros), PerThread(T, zeros)};  // equal_t[t][G]: always 0
    // Each thread counts into its own copies and stores them at the end: the threads' small
    // count vectors may share a cache line.
    parallel_for(T, [&](std::size_t t) {
        const auto [lo, hi] = chunk(n, T, t);
        std::vector<std::uint64_t> bl(G + 1, 0), eq(G + 1, 0);
        const float* const in = input.data();
        for (std::uint64_t j = lo; j < hi; ++j) {
            const float x = in[j];
            const auto g = groups.of(x);
            const bool e = groups.ue[g] == x;
            eq[g] += e;
            bl[g] += !e;
        }
        c.below_t[t] = std::move(bl);
        c.equal_t[t] = std::move(eq);
    });
    return c;
}

/// Where the buckets end: per group, its first and last boundary; per boundary, its quota; per
/// bucket, its end.
struct Bounds {
    std::vector<std::size_t> first_b, last_b;
    std::vector<std::uint64_t> quota, end;
};

/// The bounds from pass 1's counts, for the splitters `split` at planned ends `target`.
Bounds bucket_bounds(const std::vector<float>& split, const std::vector<std::uint64_t>& target,
                     const SplitterGroups& groups, const ChunkCounts& c, std::uint64_t n) {
    const std::size_t nb = split.size(), k = nb + 1, G = groups.size(), T = c.below_t.size();
    std::vector<std::uint64_t> below(G + 1, 0), equal(G, 0);
    for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t g = 0; g <= G; ++g) below[g] += c.below_t[t][g];
        for (std::size_t g = 0; g < G; ++g) equal[g] += c.equal_t[t][g];
    }
    // less[g]: items < u_g. first_b/last_b: the boundaries whose splitter is u_g.
    std::vector<std::uint64_t> less(G, 0);
    for (std::size_t g = 0, acc = 0; g < G; ++g) {
        acc += below[g];
        less[g] = acc;
        acc += equal[g];
    }
    Bounds b{std::vector<std::size_t>(G, nb), std::vector<std::size_t>(G, 0), {}, {}};
    std::vector<std::size_t> group(nb);
    for (std::size_t i = 0; i < nb; ++i) {
        group[i] = groups.of(split[i]);
        b.first_b[group[i]] = std::min(b.first_b[group[i]], i);
        b.last_b[group[i]] = std::max(b.last_b[group[i]], i);
    }
    // Quota: how many items equal to split[i] lie below boundary i; end[i] = bucket i's end.
    b.quota.resize(nb);
    b.end.resize(k);
    for (std::size_t i = 0; i < nb; ++i) {
        const auto g = group[i];
        const auto want = target[i] > less[g] ? target[i] - less[g] : 0;
        b.quota[i] = std::min(want, equal[g]);
        b.end[i] = less[g] + b.quota[i];
    }
    b.end[nb] = n;
    return b;
}

/// Each chunk's share of the buckets: seen_t[t][g], the items equal to u_g before chunk t;
/// count_t[t][b], chunk t's items of bucket b; cursor_t[t][b], where chunk t writes bucket b.
struct ChunkPlan {
    PerThread seen_t, count_t, cursor_t;
};

/// Where each item goes. An item strictly below u_g goes to the first boundary of group g
/// (the last bucket past every splitter); the c-th item equal to u_g (c counted over the
/// whole input in its order) to the first boundary i of its group with c < quota[i], else
/// past the group. Chunk t's equal items of group g are those with c in [seen_t, seen_t +
/// equal_t), so its count per bucket follows from pass 1 without another pass.
ChunkPlan plan_chunks(const ChunkCounts& c, const Bounds& bounds, std::size_t G) {
    const std::size_t T = c.below_t.size(), k = bounds.end.size(), nb = k - 1;
    ChunkPlan p;
    p.seen_t.assign(T, std::vector<std::uint64_t>(G, 0));
    p.count_t.assign(T, std::vector<std::uint64_t>(k, 0));
    for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t g = 0; g < G; ++g) {
            p.seen_t[t][g] = t == 0 ? 0 : p.seen_t[t - 1][g] + c.equal_t[t - 1][g];
            p.count_t[t][bounds.first_b[g]] += c.below_t[t][g];
            const std::uint64_t c0 = p.seen_t[t][g], c1 = c0 + c.equal_t[t][g];
            std::uint64_t lo = 0;
            for (std::size_t i = bounds.first_b[g]; i <= bounds.last_b[g] + 1; ++i) {
                const std::uint64_t hi = i <= bounds.last_b[g] ? bounds.quota[i] : c1;
                if (hi > lo)
                    p.count_t[t][i] += std::min(hi, c1) > std::max(lo, c0)
                                           ? std::min(hi, c1) - std::max(lo, c0) : 0;
                lo = std::max(lo, hi);
            }
        }
        p.count_t[t][nb] += c.below_t[t][G];
    }
    // Chunk t writes bucket b from cursor_t[t][b]: after bucket b's earlier chunks.
    p.cursor_t.assign(T, std::vector<std::uint64_t>(k, 0));
    for (std::size_t b = 0; b < k; ++b)
        for (std::size_t t = 0, acc = b == 0 ? 0 : bounds.end[b - 1]; t < T; ++t) {
            p.cursor_t[t][b] = acc;
            acc += p.count_t[t][b];
        }
    return p;
}

/// Pass 2, the parallel scatter into `dst`; returns each chunk's cursors after it.
PerThread scatter_chunks(const std::vector<float>& input, const SplitterGroups& groups, const Bounds& bounds,
                         const ChunkPlan& p, float* const dst) {
    const std::size_t T = p.cursor_t.size(), nb = bounds.end.size() - 1;
    const std::uint64_t n = input.size();
    PerThread done_t(T);
    std::vector<std::size_t> bucket_of(bounds.first_b);  // of an item of group g not equal to u_g
    bucket_of.push_back(nb);
    parallel_for(T, [&](std::size_t t) {
        const auto [lo, hi] = chunk(n, T, t);
        std::vector<std::uint64_t> cur = p.cursor_t[t];  // own copy, stored at the end
        auto seen = p.seen_t[t];
        const float* const in = input.data();
        for (std::uint64_t j = lo; j < hi; ++j) {
            const float x = in[j];
            const auto g = groups.of(x);
            std::size_t b = bucket_of[g];
            if (groups.ue[g] == x) {
                const auto c = seen[g]++;
                while (b <= bounds.last_b[g] && c >= bounds.quota[b]) ++b;
            }
            dst[cur[b]++] = x;
        }
        done_t[t] = std::move(cur);
    });
    return done_t;
}

/// Throws unless every chunk wrote exactly its count into each bucket and the last chunk ended
/// each bucket at its end.
void check_scatter(const PerThread& done_t, const ChunkPlan& p, const std::vector<std::uint64_t>& end) {
    const std::size_t T = done_t.size(), k = end.size();
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < k; ++i)
            if (done_t[t][i] != p.cursor_t[t][i] + p.count_t[t][i] ||
                (t + 1 == T && done_t[t][i] != end[i]))
                throw Error("sort: internal error, bucket " + std::to_string(i) +
                            " does not match its count");
}

/// Each assignment's offset/units/global/share become its bucket's (bucket i ends at end[i]).
void assign_buckets(std::vector<Assignment>& as, const std::vector<std::size_t>& order,
                    const std::vector<std::uint64_t>& end, std::uint64_t n) {
    for (std::size_t i = 0; i < order.size(); ++i) {
        Assignment& a = as[order[i]];
        a.offset = i == 0 ? 0 : end[i - 1];
        a.units = end[i] - a.offset;
        a.share = double(a.units) / double(n);
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

}  // namespace

std::vector<std::size_t> bucket_order(const std::vector<Assignment>& as, std::uint64_t n) {
    if (as.empty()) throw InvalidArgument("sort: no assignments to partition");
    std::vector<std::size_t> order(as.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return as[x].offset < as[y].offset; });
    std::uint64_t planned = 0;
    for (auto i : order) planned += as[i].units;
    if (planned != n)
        throw InvalidArgument("sort: the assignments cover " + std::to_string(planned) + " of " +
                              std::to_string(n) + " items");
    // Only devices with work get a bucket: a device planned to get nothing keeps nothing.
    std::erase_if(order, [&](std::size_t i) { return as[i].units == 0; });
    return order;
}

void partition_into_buckets(std::vector<Assignment>& as, const std::vector<std::size_t>& order,
                            const std::vector<float>& input, std::uint64_t seed, std::uint64_t threads,
                            std::unique_ptr<float[]>& buckets) {
    const std::uint64_t n = input.size();
    const std::vector<std::uint64_t> target = planned_ends(as, order);
    const std::vector<float> split = pick_splitters(input, seed, target, order.size());
    const SplitterGroups groups(split);
    const std::size_t T = partition_threads(n, threads);
    const ChunkCounts counts = count_chunks(input, groups, T);
    const Bounds bounds = bucket_bounds(split, target, groups, counts, n);
    const ChunkPlan plan = plan_chunks(counts, bounds, groups.size());
    // The buffer is not zeroed first (that would be a serial pass): every item of it is written
    // exactly once by the scatter, which the counts check.
    buckets.reset(new float[n]);
    const PerThread done_t = scatter_chunks(input, groups, bounds, plan, buckets.get());
    check_scatter(done_t, plan, bounds.end);
    assign_buckets(as, order, bounds.end, n);
}

}  // namespace worksize::detail::sort_kernel
