// Sizes over the whole uint64 range (issue 28): every text --size can hold either parses to a
// size the planner takes or is refused with one line, and every size that parses is planned or
// refused with InvalidArgument, for 1-D and 2-D kernels, every local policy without a database,
// both priorities and padded or not: never a hang, a crash or a plan whose slices lose work.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "worksize/scheduler/parse.hpp"
#include "worksize/scheduler/planner.hpp"

using namespace worksize;

namespace {

DeviceInfo device(const std::string& name, std::uint32_t cus, std::uint32_t pes, std::uint64_t wg) {
    DeviceInfo d;
    d.name = name;
    d.type = DeviceType::gpu;
    d.compute_units = cus;
    d.pes_per_cu = pes;
    d.max_work_group_size = wg;
    d.max_work_item_sizes = {wg, wg, 64};
    return d;
}

/// Edge values of the range and random ones of every magnitude (a seeded generator: the same
/// values on every run).
std::vector<std::uint64_t> sizes_over_the_range(int random_count) {
    const std::uint64_t top = kMaxPlanItems;
    std::vector<std::uint64_t> v = {0,       1,       2,           3,           1023,    1024,     1025,
                                    top - 1, top,     top + 1,     1ull << 32,  (1ull << 32) + 1,
                                    1ull << 63, ~0ull, ~0ull - 1, (1ull << 26) + 1};
    std::mt19937_64 rng(28);
    for (int i = 0; i < random_count; ++i) v.push_back(rng() >> (rng() % 64));
    return v;
}

/// The plan of `g` or its refusal; a plan's slices must hold every unit once and launch at
/// least their work-items.
void plan_or_refuse(const KernelDescriptor& k, GlobalSize g, LocalPolicy policy, Priority priority, bool pad,
                    const std::string& strategy) {
    PlanRequest r;
    r.kernel = k;
    r.global = g;
    r.local_policy = policy;
    r.priority = priority;
    r.pad_ndrange = pad;
    r.strategy = strategy;
    const std::string what = std::to_string(g.x) + "x" + std::to_string(g.y) + " " + strategy + " " +
                             to_string(policy) + " pad " + std::to_string(pad);
    Plan plan;
    try {
        plan = make_plan({device("A", 13, 192, 1024), device("B", 4, 48, 256)}, r);
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << what;
        return;
    }
    const std::uint64_t units = k.dims == 2 ? g.y : g.x;
    std::uint64_t total = 0;
    for (const auto& a : plan.assignments) {
        total += a.units;
        EXPECT_GE(a.padded_global.x, a.global.x) << what;
        EXPECT_GE(a.padded_global.y, a.global.y) << what;
    }
    EXPECT_EQ(total, units) << what;
}

}  // namespace

TEST(PlanRange, EverySizeTextParsesWithinThePlanLimitOrIsRefused) {
    const auto values = sizes_over_the_range(200);
    for (const std::uint64_t a : values)
        for (const std::uint64_t b : std::vector<std::uint64_t>{1, 3, a, ~0ull}) {
            for (const auto& [text, dims] : {std::pair{std::to_string(a), 1}, std::pair{std::to_string(a), 2},
                                             std::pair{std::to_string(a) + "x" + std::to_string(b), 2}}) {
                try {
                    const GlobalSize g = parse_size(text, dims);
                    EXPECT_LE(g.x, kMaxPlanItems / g.y) << text;
                    EXPECT_EQ(g.x, a) << text;
                } catch (const InvalidArgument& e) {
                    const std::string msg = e.what();
                    EXPECT_EQ(msg.rfind("invalid size '" + text + "': ", 0), 0u) << msg;
                }
            }
        }
    // The limit itself: 2^53 work-items parse, one more is refused with the limit in the message.
    EXPECT_EQ(parse_size(std::to_string(kMaxPlanItems), 1).x, kMaxPlanItems);
    EXPECT_EQ(parse_size("94906265", 2), (GlobalSize{94906265, 94906265}));  // 2^53 > 94906265^2
    try {
        parse_size(std::to_string(kMaxPlanItems + 1), 1);
        ADD_FAILURE() << "2^53 + 1 parsed";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("more than 2^53 (9007199254740992) work-items"), std::string::npos)
            << e.what();
    }
    EXPECT_THROW(parse_size("94906266", 2), InvalidArgument);  // 94906266^2 > 2^53
    EXPECT_THROW(parse_size("18446744073709551615", 1), InvalidArgument);
}

TEST(PlanRange, EveryParsedSizeIsPlannedOrRefused) {
    KernelDescriptor k1{.name = "one", .dims = 1, .ops_per_item = 3.0};
    KernelDescriptor k2{.name = "two", .dims = 2, .ops_per_item = 3.0};
    const auto values = sizes_over_the_range(24);
    std::mt19937_64 rng(5);
    for (const std::uint64_t a : values) {
        for (const LocalPolicy policy : {LocalPolicy::null, LocalPolicy::paper})
            for (const bool pad : {false, true}) {
                const std::string strategy = rng() % 2 ? "paper" : "pe-ratio";
                const std::uint64_t b = rng() >> (rng() % 64);
                for (const auto& [kernel, text] : {std::pair{k1, std::to_string(a)},
                                                   std::pair{k2, std::to_string(a) + "x" + std::to_string(b)},
                                                   std::pair{k2, std::to_string(b) + "x" + std::to_string(a)}}) {
                    GlobalSize g;
                    try {
                        g = parse_size(text, kernel.dims);
                    } catch (const InvalidArgument&) {
                        continue;  // refused where it is parsed: the case above
                    }
                    for (const Priority p : {Priority::x, Priority::y}) plan_or_refuse(kernel, g, policy, p, pad, strategy);
                }
            }
    }
}
