// Data jobs (runtime/data_job.hpp) over three in-process ranks, each driving the local PoCL
// device: gathers every N steps reach rank 0 with the right contents, each rank's bytes per step
// are its halo rows exactly, and reductions combine every rank's records. Integer kernels, so
// every comparison is exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>

#include <unistd.h>

#include "local_cluster.hpp"
#include "smooth_job.hpp"
#include "pocl_device.hpp"
#include "worksize/runtime/data_job.hpp"
#include "worksize/runtime/declared_job.hpp"
#include "worksize/runtime/job_file_job.hpp"
#include "../../runtime/src/jobs/data_kernels.hpp"

namespace worksize {
namespace {

using test::run_local;

const char* kSource = test::kSmoothSource;

// Per-group reductions: each work-group (whatever its size, up to 256) writes one record of two
// sums into `sums` and one of its maximum into `maxima`.
const char* kGroupSource = R"CL(
__kernel void gstats(__global const int* a, const int ao, __global int* sums, __global int* maxima,
                     const int end) {
    __local int s0[256], s1[256], m[256];
    const size_t lid = get_local_id(0), g = get_group_id(0);
    const int i = get_global_id(0);
    const int v = i < end ? a[i - ao] : 0;
    s0[lid] = v % 1000;
    s1[lid] = v % 7;
    m[lid] = i < end ? v : INT_MIN;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid != 0) return;
    int x = 0, y = 0, z = INT_MIN;
    for (size_t k = 0; k < get_local_size(0); ++k) {
        x += s0[k];
        y += s1[k];
        z = max(z, m[k]);
    }
    sums[2 * g] = x;
    sums[2 * g + 1] = y;
    maxima[g] = z;
}
)CL";

std::vector<std::int32_t> group_input(int n) {
    std::vector<std::int32_t> a(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) a[std::size_t(i)] = std::int32_t(std::int64_t(i) * 104729 % 65521);
    return a;
}

using test::smooth_reference;

DeviceSelection every_rank_drives_its_devices() {
    DeviceSelection sel;
    sel.spec = "all";
    return sel;
}

TEST(DataJob, GathersEveryNStepsAndSendsOnlyHaloRows) {
    const int n = 3001, steps = 10;
    std::vector<std::int32_t> start(n);
    for (int i = 0; i < n; ++i) start[std::size_t(i)] = (i * 7919) % 101;
    std::vector<std::uint64_t> gathered_at;
    std::vector<std::string> wrong;
    const auto out = run_local(3, every_rank_drives_its_devices(), [&](Cluster& c) {
        std::vector<std::int32_t> a = start;
        DataJob job("smooth", kSource, std::uint64_t(n));
        const auto ba = job.split("a", 1, a), bb = job.split<std::int32_t>("b", 1);
        job.kernel("smooth", {arg::halo(ba, 1), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::value<int>(n),
                              arg::end()});
        job.swap(ba, bb).steps(steps).gather(ba).gather_every(3, [&](std::uint64_t step) {
            gathered_at.push_back(step);
            if (a != smooth_reference(start, int(step))) wrong.push_back("step " + std::to_string(step));
        });
        DataRunOptions o;
        o.strategy = "even";
        const DataRunResult r = run(c, job, o);
        EXPECT_EQ(a, smooth_reference(start, steps));
        EXPECT_EQ(r.ranks.size(), 3u);
        for (const auto& k : r.ranks) {
            EXPECT_EQ(k.sent_per_step.size(), std::size_t(steps));
            if (k.sent_per_step.size() != std::size_t(steps)) continue;
            // Step 1 reads the halos of the scatter; then one int to each neighbour on another rank.
            EXPECT_EQ(k.sent_per_step[0], 0u) << "rank " << k.rank;
            const std::uint64_t want = k.rank == 1 ? 8 : 4;
            for (int s = 1; s < steps; ++s) EXPECT_EQ(k.sent_per_step[std::size_t(s)], want) << "rank " << k.rank;
        }
        return 0;
    });
    for (const auto& o : out) EXPECT_EQ(o.code, 0) << o.error;
    EXPECT_EQ(gathered_at, (std::vector<std::uint64_t>{3, 6, 9}));
    EXPECT_TRUE(wrong.empty()) << "gathered contents differ from the reference at " << (wrong.empty() ? "" : wrong.front());
}

// A smooth job over `ranks` ranks whose input is in pinned memory (Cluster::host_vector).
void check_pinned_input(int ranks) {
    const int n = 300007, steps = 3;  // 1.2 MB: above the pinned memory's threshold
    std::vector<std::int32_t> start(n);
    for (int i = 0; i < n; ++i) start[std::size_t(i)] = std::int32_t(std::int64_t(i) * 7919 % 101);
    const auto out = run_local(ranks, every_rank_drives_its_devices(), [&](Cluster& c) {
        HostVector<std::int32_t> a = c.host_vector<std::int32_t>(std::size_t(n));
        std::copy(start.begin(), start.end(), a.begin());
        const auto* pinned = dynamic_cast<const PinnedHostMemory*>(c.host_memory().get());
        EXPECT_TRUE(pinned != nullptr);
        if (pinned && pinned->enabled()) {
            EXPECT_TRUE(pinned->holds(a.data(), a.size() * sizeof(std::int32_t)));
        }
        DataJob job("smooth", kSource, std::uint64_t(n));
        const auto ba = job.split("a", 1, a), bb = job.split<std::int32_t>("b", 1);
        job.kernel("smooth", {arg::halo(ba, 1), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::value<int>(n),
                              arg::end()});
        job.swap(ba, bb).steps(steps).gather(ba);
        DataRunOptions o;
        o.strategy = "even";
        run(c, job, o);
        EXPECT_TRUE(std::equal(a.begin(), a.end(), smooth_reference(start, steps).begin()));
        return 0;
    });
    for (const auto& o : out) EXPECT_EQ(o.code, 0) << ranks << " ranks: " << o.error;
}

// An input in the cluster's pinned host memory (Cluster::host_vector) is written onto each device
// straight from it: the same result as from ordinary memory, and the gather lands in it too.
// Alone (rank 0's upload_inputs) and beside a worker (rank 0's writes while its sends move).
TEST(DataJob, InputInPinnedHostMemoryGivesTheSameResult) {
    for (int ranks : {1, 2}) check_pinned_input(ranks);
}

// A device-only buffer declared no_init (the kernel writes every row of it before the swap makes
// it the one read with a halo): the same result, its start poisoned (0xFF bytes) instead of zeros.
TEST(DataJob, NoInitBufferWrittenWholeGivesTheSameResult) {
    ::setenv("WORKSIZE_POISON_NO_INIT", "1", 1);
    const int n = 2000, steps = 4;
    std::vector<std::int32_t> start(n);
    for (int i = 0; i < n; ++i) start[std::size_t(i)] = (i * 7919) % 101;
    const auto out = run_local(2, every_rank_drives_its_devices(), [&](Cluster& c) {
        std::vector<std::int32_t> a = start;
        DataJob job("smooth", kSource, std::uint64_t(n));
        const auto ba = job.split("a", 1, a), bb = job.split<std::int32_t>("b", 1);
        job.kernel("smooth", {arg::halo(ba, 1), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::value<int>(n),
                              arg::end()});
        job.swap(ba, bb).steps(steps).gather(ba).no_init(bb);
        EXPECT_TRUE(job.spec().buffers[1].no_init);
        DataRunOptions o;
        o.strategy = "even";
        run(c, job, o);
        EXPECT_EQ(a, smooth_reference(start, steps));
        return 0;
    });
    for (const auto& o : out) EXPECT_EQ(o.code, 0) << o.error;
}

// An output declared with rank 0's memory and no_init (k-means' labels): that memory is not sent
// (the spec's input is off), the devices start from poison, and the gather fills it whole.
TEST(DataJob, NoInitOutputInRankZerosMemoryIsNotSent) {
    ::setenv("WORKSIZE_POISON_NO_INIT", "1", 1);
    const int n = 2000;
    std::vector<std::int32_t> start(n);
    for (int i = 0; i < n; ++i) start[std::size_t(i)] = (i * 7919) % 101;
    const auto out = run_local(2, every_rank_drives_its_devices(), [&](Cluster& c) {
        std::vector<std::int32_t> a = start, b(n, -12345);
        DataJob job("smooth", kSource, std::uint64_t(n));
        const auto ba = job.split("a", 1, a), bb = job.split("b", 1, b);
        job.kernel("smooth", {arg::halo(ba, 1), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::value<int>(n),
                              arg::end()});
        job.steps(1).gather(bb).no_init(bb);
        EXPECT_FALSE(job.spec().buffers[1].input);
        DataRunOptions o;
        o.strategy = "even";
        run(c, job, o);
        if (c.is_master()) {
            EXPECT_EQ(b, smooth_reference(start, 1));
        }
        return 0;
    });
    for (const auto& o : out) EXPECT_EQ(o.code, 0) << o.error;
}

// Ghost zones: halos three rows deep every third step, the rows between computed redundantly;
// the same result, and the bytes move only on the exchanging steps (three ints per neighbour).
TEST(DataJob, GhostZonesExchangeEveryKSteps) {
    const int n = 2000, steps = 10, every = 3;
    std::vector<std::int32_t> start(n);
    for (int i = 0; i < n; ++i) start[std::size_t(i)] = (i * 31) % 97;
    const auto out = run_local(3, every_rank_drives_its_devices(), [&](Cluster& c) {
        std::vector<std::int32_t> a = start;
        DataJob job("smooth", kSource, std::uint64_t(n));
        const auto ba = job.split("a", 1, a), bb = job.split<std::int32_t>("b", 1);
        job.kernel("smooth", {arg::halo(ba, 1), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::value<int>(n),
                              arg::end()});
        job.swap(ba, bb).steps(steps).gather(ba).exchange_every(every);
        DataRunOptions o;
        o.strategy = "even";
        const DataRunResult r = run(c, job, o);
        EXPECT_EQ(a, smooth_reference(start, steps));
        for (const auto& k : r.ranks) {
            EXPECT_EQ(k.sent_per_step.size(), std::size_t(steps));
            if (k.sent_per_step.size() != std::size_t(steps)) continue;
            const std::uint64_t want = (k.rank == 1 ? 2 : 1) * every * 4;
            for (int s = 0; s < steps; ++s)
                EXPECT_EQ(k.sent_per_step[std::size_t(s)], s > 0 && s % every == 0 ? want : 0u)
                    << "rank " << k.rank << ", step " << s;
        }
        EXPECT_EQ(r.layout.halo_bytes_per_step.at(1), 2u * every * 4);
        return 0;
    });
    for (const auto& o : out) EXPECT_EQ(o.code, 0) << o.error;
}

// --strategy model: a probe of a few steps measures each device's rate (leaving rank 0's data
// as it was), the split minimises the predicted step, and the job verifies with the predicted
// times in the plan. With ghost zones, so that the planned slices count redundant rows.
TEST(DataJob, ModelStrategyProbesThenPlansByThePredictedStep) {
    const int n = 3000, steps = 8;
    std::vector<std::int32_t> start(n);
    for (int i = 0; i < n; ++i) start[std::size_t(i)] = (i * 7919) % 101;
    const auto out = run_local(3, every_rank_drives_its_devices(), [&](Cluster& c) {
        std::vector<std::int32_t> a = start;
        DataJob job("smooth", kSource, std::uint64_t(n));
        const auto ba = job.split("a", 1, a), bb = job.split<std::int32_t>("b", 1);
        job.kernel("smooth", {arg::halo(ba, 1), arg::origin(ba), arg::out(bb), arg::origin(bb),
                              arg::value<int>(n), arg::end()});
        job.swap(ba, bb).steps(steps).gather(ba).exchange_every(2);
        const DataProbe probe = probe_data_job(c, job);
        EXPECT_EQ(a, start) << "the probe changed rank 0's data";
        EXPECT_EQ(probe.rates.size(), c.devices().size());
        for (const auto& r : probe.rates) EXPECT_TRUE(r.known() && r.step_s == 0);
        EXPECT_GT(probe.step_s, 0.0);
        // A rate is its rank's own work in a probe step (the step less its waits on other
        // ranks), so each slice's work on the probe's split fits in the probe's step.
        for (const auto& a : probe.slices) {
            if (a.units == 0) continue;
            EXPECT_LE(probe.rates.at(std::size_t(a.device)).unit_s * double(a.units), probe.step_s * (1 + 1e-9))
                << "device " << a.device;
        }
        EXPECT_GT(predict_data_step(job.probe(5).spec(), probe.slices, probe.rates).step_s, 0.0);
        DataRunOptions o;
        o.strategy = "model";
        const DataRunResult r = run(c, job, o);
        EXPECT_EQ(a, smooth_reference(start, steps));
        EXPECT_EQ(r.plan.strategy, "model");
        EXPECT_GT(r.plan.predicted_makespan_s, 0.0);
        double slowest = 0;
        for (const auto& s : r.plan.assignments) {
            if (s.units == 0) continue;
            EXPECT_GT(s.predicted_s, 0.0) << "device " << s.device;
            slowest = std::max(slowest, s.predicted_s);
        }
        // A slice's own launches fit in the step, which may also wait on halos (the simulation
        // of the instruction lists, simulate.hpp).
        EXPECT_LE(slowest, r.plan.predicted_makespan_s * (1 + 1e-9));
        const std::string report = format_report(r, c.devices());
        EXPECT_NE(report.find("  step: predicted "), std::string::npos) << report;
        return 0;
    });
    for (const auto& o : out) EXPECT_EQ(o.code, 0) << o.error;
}

// The model's plan from given rates, without a device: equal rates and free links give the even
// split; a slower device gets fewer rows; no rates and oracle are refused with one line.
TEST(DataJob, ModelPlanFromGivenRates) {
    std::vector<std::int32_t> a(1000);
    DataJob job("smooth", kSource, std::uint64_t(a.size()));
    const auto ba = job.split("a", 1, a), bb = job.split<std::int32_t>("b", 1);
    job.kernel("smooth", {arg::halo(ba, 1), arg::origin(ba), arg::out(bb), arg::origin(bb),
                          arg::value<int>(1000), arg::end()});
    job.swap(ba, bb).steps(4).gather(ba);
    std::vector<DeviceInfo> devices(3);
    for (int i = 0; i < 3; ++i) {
        devices[std::size_t(i)].rank = i;
        devices[std::size_t(i)].name = "cpu";
        devices[std::size_t(i)].type = DeviceType::cpu;
        devices[std::size_t(i)].compute_units = 1;
        devices[std::size_t(i)].pes_per_cu = 1;
        devices[std::size_t(i)].max_work_group_size = 1024;
        devices[std::size_t(i)].max_work_item_sizes = {1024, 1024, 1024};
    }
    DataRunOptions even;
    even.strategy = "even";
    DataRunOptions model;
    model.strategy = "model";
    model.links.same_rank = model.links.between_ranks = {};
    model.rates.assign(3, {1e-6, 0});
    const Plan pe = plan_data_job(devices, job, even), pm = plan_data_job(devices, job, model);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(pm.assignments[i].units, pe.assignments[i].units) << i;
    EXPECT_NEAR(pm.predicted_makespan_s, 4 * 334e-6, 1e-12);  // the largest slice, 4 steps
    model.rates[2].unit_s = 3e-6;                             // 1/1 : 1/1 : 1/3 of 1000 = 428.6, 428.6, 142.9
    const Plan slow = plan_data_job(devices, job, model);
    EXPECT_EQ(slow.assignments[2].units, 143u);
    model.rates.clear();
    try {
        plan_data_job(devices, job, model);
        ADD_FAILURE() << "planned by the model without rates";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("needs a measured rate for each of the 3 devices"),
                  std::string::npos)
            << e.what();
    }
    model.strategy = "oracle";
    EXPECT_THROW(plan_data_job(devices, job, model), InvalidArgument);
}

// --strategy model weighs the whole run: over a slow MPI link, a one-step job's scatter and
// gather cost more than two devices save, so rank 0's device runs it alone; a thousand steps
// make the split pay. (Planned without a device: given rates and links.)
TEST(DataJob, ModelWeighsTheScatterAndTheGather) {
    std::vector<std::int32_t> a(1000 * 1024);  // 4 KiB a unit, 4 MB in all
    auto plan_for = [&](std::uint64_t steps) {
        DataJob job("smooth", kSource, 1000);
        const auto ba = job.split("a", 1024, a), bb = job.split<std::int32_t>("b", 1024);
        job.kernel("smooth", {arg::halo(ba, 1), arg::origin(ba), arg::out(bb), arg::origin(bb),
                              arg::value<int>(1000), arg::end()});
        job.swap(ba, bb).steps(steps).gather(ba);
        std::vector<DeviceInfo> devices(3);
        for (int i = 0; i < 3; ++i) {
            auto& d = devices[std::size_t(i)];
            d.rank = i;
            d.name = "cpu";
            d.type = DeviceType::cpu;
            d.compute_units = d.pes_per_cu = 1;
            d.max_work_group_size = 1024;
            d.max_work_item_sizes = {1024, 1024, 1024};
        }
        DataRunOptions model;
        model.strategy = "model";
        model.links.same_rank = {};                  // copies within a rank are free here
        model.links.between_ranks = {1e-8, 10e-6};  // MPI at 100 MB/s
        model.rates.assign(3, {1e-6, 0});           // 1 ms for all 1000 units on one device
        return plan_data_job(devices, job, model);
    };
    const Plan once = plan_for(1);
    EXPECT_EQ(once.assignments[0].units, 1000u);
    for (std::size_t i = 1; i < 3; ++i) {
        EXPECT_EQ(once.assignments[i].units, 0u) << i;
        EXPECT_NE(once.assignments[i].note.find("scatter, steps and gather) is faster on device 0 alone"),
                  std::string::npos)
            << once.assignments[i].note;
    }
    EXPECT_NEAR(once.predicted_makespan_s, 1e-3, 1e-9);  // the steps' time, not the transfers'
    const Plan many = plan_for(1000);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_GE(many.assignments[i].units, 250u) << i;  // split three ways
}

TEST(DataJob, ReductionsCombineEveryRanksRecords) {
    const int n = 5000;
    std::vector<std::int32_t> a(n);
    for (int i = 0; i < n; ++i) a[std::size_t(i)] = (i * 104729) % 65521;
    std::int64_t want_sum = 0;
    std::int32_t want_max = 0;
    for (auto v : a) want_sum += v % 1000, want_max = std::max(want_max, v);
    const auto out = run_local(3, every_rank_drives_its_devices(), [&](Cluster& c) {
        std::vector<std::int32_t> sum(1, 0), max(1, 0);
        DataJob job("stats", kSource, std::uint64_t(n));
        const auto ba = job.split("a", 1, a);
        const auto bs = job.shared("sum", sum), bm = job.shared("max", max);
        job.kernel("stats", {arg::in(ba), arg::origin(ba), arg::reduce(bs, ReduceOp::sum),
                             arg::reduce(bm, ReduceOp::max), arg::begin(), arg::end()});
        const DataRunResult r = run(c, job);
        EXPECT_EQ(sum[0], want_sum);
        EXPECT_EQ(max[0], want_max);
        for (const auto& k : r.ranks) EXPECT_GT(k.sent_per_step.at(0), 0u) << "rank " << k.rank << " sent no total";
        return 0;
    });
    for (const auto& o : out) EXPECT_EQ(o.code, 0) << o.error;
}

/// Per-group sums and a maximum of `n` items over two ranks (NULL and paper local sizes), for
/// `steps` steps, against the CPU; every step reads one record per slice and reduction (2 + 1
/// ints): the groups' records are tree-combined on the device first.
void check_group_stats(int n, int steps) {
    auto a = group_input(n);
    std::int64_t s0 = 0, s1 = 0;
    std::int32_t mx = 0;
    for (auto v : a) s0 += v % 1000, s1 += v % 7, mx = std::max(mx, v);
    for (const LocalPolicy local : {LocalPolicy::null, LocalPolicy::paper}) {
        const auto out = run_local(2, every_rank_drives_its_devices(), [&](Cluster& c) {
            std::vector<std::int32_t> sums(2, 0), maxima(1, 0);
            DataJob job("gstats", kGroupSource, std::uint64_t(n));
            const auto ba = job.split("a", 1, std::span(a));
            const auto bs = job.shared("sums", sums), bm = job.shared("maxima", maxima);
            job.kernel("gstats", {arg::in(ba), arg::origin(ba), arg::group_reduce(bs),
                                  arg::group_reduce(bm, ReduceOp::max), arg::end()});
            job.steps(std::uint64_t(steps));
            DataRunOptions o;
            o.local = local;
            o.strategy = "even";
            const DataRunResult r = run(c, job, o);
            EXPECT_EQ(sums[0], s0);
            EXPECT_EQ(sums[1], s1);
            EXPECT_EQ(maxima[0], mx);
            EXPECT_EQ(r.ranks.size(), 2u);
            for (const auto& k : r.ranks) {
                EXPECT_EQ(k.records_per_step.size(), std::size_t(steps)) << "rank " << k.rank;
                if (k.records_per_step.size() != std::size_t(steps)) continue;
                const std::uint64_t one = k.devices.size() * (2 + 1) * sizeof(std::int32_t);
                for (int st = 0; st < steps; ++st)
                    EXPECT_EQ(k.records_per_step[std::size_t(st)], one) << "rank " << k.rank << ", step " << st;
            }
            return 0;
        });
        for (const auto& o : out) EXPECT_EQ(o.code, 0) << o.error;
    }
}

// One step of 300,001 items: 1172 groups of 256 in all, about 586 a slice.
TEST(DataJob, PerGroupReductionsCombineEveryRanksGroups) { check_group_stats(300001, 1); }

// "init": "none" in execute_declared: an output the kernel writes whole comes back exact; where the
// kernel skips elements, they hold the poison (0xFF bytes, -1) that WORKSIZE_POISON_NO_INIT=1
// puts in place of the zero-fill, and zeros without no_init: the check above can fail.
TEST(DeclaredJob, NoInitOutputWrittenWholeVerifiesAndAGapShows) {
    ::setenv("WORKSIZE_POISON_NO_INIT", "1", 1);
    const char* source = R"CL(
__kernel void fill(__global int* out, const int origin, const int skip, const int end) {
    const int i = get_global_id(0);
    if (i >= end || (skip > 0 && i % skip == 0)) return;
    out[i - origin] = 3 * i + 1;
}
)CL";
    const int n = 10000;
    const std::uint64_t offset = 1234, units = 5000;
    for (const int skip : {0, 97})
        for (const bool no_init : {true, false}) {
            DataJobSpec spec;
            spec.name = "fill";
            spec.source = source;
            spec.units = std::uint64_t(n);
            spec.buffers = {{"out", ElemType::i32, BufferLayout::split, 1, 0, false, true}};
            spec.buffers[0].no_init = no_init;
            KernelDecl k;
            k.name = "fill";
            k.args = {arg::out({0}), arg::origin({0}), arg::value<int>(skip), arg::end()};
            spec.kernels = {k};
            ASSERT_NO_THROW(validate(spec));
            SliceSpec s;
            s.kernel = "fill";
            s.problem = {std::uint64_t(n), 1};
            s.offset = offset;
            s.units = units;
            s.global = {units, 1};
            Bytes out;
            execute_declared(spec, test::first_device(), s, {}, out);
            ASSERT_EQ(out.size(), units * sizeof(std::int32_t));
            std::vector<std::int32_t> got(units);
            std::memcpy(got.data(), out.data(), out.size());
            std::size_t wrong = 0;
            for (std::uint64_t j = 0; j < units; ++j) {
                const std::int64_t i = std::int64_t(offset + j);
                const std::int32_t want = skip > 0 && i % skip == 0 ? (no_init ? -1 : 0) : std::int32_t(3 * i + 1);
                wrong += got[j] != want;
            }
            EXPECT_EQ(wrong, 0u) << "skip " << skip << ", no_init " << no_init;
        }
}

// A multi-step job whose slices launch thousands of work-groups (about 3900 of 256 a slice).
TEST(DataJob, ManyGroupsRecordsCombineOnTheDeviceEveryStep) { check_group_stats(2000000, 3); }

/// execute_declared on one slice away from the start: per-group records of a plan's local size
/// (4688 groups of 64) and of NULL (its own width), combined on the device, then in double.
TEST(DeclaredJob, PerGroupRecordsOfASliceCombineOnTheDevice) {
    const int n = 400000;
    const auto a = group_input(n);
    DataJobSpec spec;
    spec.name = "gstats";
    spec.source = kGroupSource;
    spec.units = std::uint64_t(n);
    spec.buffers = {{"a", ElemType::i32, BufferLayout::split, 1, 0, true, false},
                    {"sums", ElemType::i32, BufferLayout::shared, 1, 2, false, true},
                    {"maxima", ElemType::i32, BufferLayout::shared, 1, 1, false, true}};
    KernelDecl k;
    k.name = "gstats";
    k.args = {arg::in({0}), arg::origin({0}), arg::group_reduce({1}), arg::group_reduce({2}, ReduceOp::max),
              arg::end()};
    spec.kernels = {k};
    ASSERT_NO_THROW(validate(spec));
    const std::uint64_t offset = 12345, units = 300000;
    double s0 = 0, s1 = 0, mx = INT32_MIN;
    for (std::uint64_t i = offset; i < offset + units; ++i)
        s0 += a[i] % 1000, s1 += a[i] % 7, mx = std::max<double>(mx, a[i]);
    for (const LocalSize local : {LocalSize{64, 1}, LocalSize{}}) {
        SliceSpec s;
        s.kernel = "gstats";
        s.problem = {std::uint64_t(n), 1};
        s.offset = offset;
        s.units = units;
        s.global = {units, 1};
        s.local = local;
        s.iterations = 2;
        Bytes out;
        execute_declared(spec, test::first_device(), s, std::as_bytes(std::span(a).subspan(offset, units)),
                         out);
        ASSERT_EQ(out.size(), 3 * sizeof(double));
        double got[3];
        std::memcpy(got, out.data(), sizeof got);
        EXPECT_EQ(got[0], s0) << "local " << local.x;
        EXPECT_EQ(got[1], s1) << "local " << local.x;
        EXPECT_EQ(got[2], mx) << "local " << local.x;
    }
}


// A kernel of several units per item runs unpadded: its work-group divides its items, a power of
// two up to the plan's local size (at least 16 of it), else the driver's choice.
TEST(DataJob, ChunkedKernelsGetAWorkGroupThatDividesTheirItems) {
    EXPECT_EQ(data::chunk_local(7168, {128, 1}).x, 128u);
    EXPECT_EQ(data::chunk_local(7104, {128, 1}).x, 64u);   // 64 · 111
    EXPECT_TRUE(data::chunk_local(7091, {128, 1}).is_null());  // 7 · 1013
    EXPECT_EQ(data::chunk_local(1088, {16, 1}).x, 16u);
    EXPECT_EQ(data::chunk_local(1088, {100, 1}).x, 64u);  // the cap: bit_floor(100)
    EXPECT_TRUE(data::chunk_local(12, {8, 1}).is_null());  // 4 < min(8, 16)
    EXPECT_EQ(data::chunk_local(24, {8, 1}).x, 8u);
    EXPECT_TRUE(data::chunk_local(64, {}).is_null());  // NULL plan: NULL
}

// Found by fuzz.job_run with the CLI under UBSan: the random inputs of a float buffer in
// [-1, 1e19] also made an integer distribution of bounds converted to long, 1e19 beyond it
// (undefined behaviour; the sanitizer stage runs this case). A float buffer's inputs come from
// the real distribution only. Needs no device.
TEST(DeclaredJob, JobFileFloatRandomInputsBeyondALong) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("worksize_random_inputs_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "copy.cl") << "__kernel void copy(__global const float* x, const int xo, "
                                      "__global float* y, const int yo, const int end) {}";
    // A name of its own each time (a job file's name stays registered): --gtest_repeat works.
    static int run = 0;
    const std::string name = "random-beyond-long-" + std::to_string(run++);
    const auto file = std::make_shared<const JobFile>(parse_job_file(R"({"name": ")" + name + R"(",
        "source": "copy.cl", "size": 64,
        "buffers": [{"name": "x", "init": {"random": [-1, 1e19], "seed": 1}}, {"name": "y", "output": true}],
        "kernels": [{"name": "copy", "args": [{"in": "x"}, {"origin": "x"}, {"out": "y"}, {"origin": "y"},
                                               {"end": true}]}]})",
                                                                     "random.json", dir.string()));
    fs::remove_all(dir);
    JobOptions o;
    o.size = {64, 1};
    const auto job = kernel_job(register_job_file(file)).make(o);
    job->generate();
    Assignment a;
    a.units = 64;
    const Bytes in = job->slice_input(a);
    ASSERT_EQ(in.size(), 64 * sizeof(float));
    std::vector<float> x(64);
    std::memcpy(x.data(), in.data(), in.size());
    for (const float v : x) EXPECT_TRUE(std::isfinite(v) && v >= -1.0f && v <= 1e19f) << v;
    EXPECT_GT(*std::max_element(x.begin(), x.end()), 1e15f);  // spread over the range, not truncated
}

}  // namespace
}  // namespace worksize
