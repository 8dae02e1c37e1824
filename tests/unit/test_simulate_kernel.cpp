// The simulated kernel job (scheduler/simulate_kernel.hpp) without a device: where nothing
// overlaps it is the analytic model (evaluate_split) to rounding, for random splits, models and
// layouts; hand-computed timelines of the overlaps it adds (uploads as the pieces arrive, rank
// 0's pieces taking turns on one link, a worker answering once all its slices are done).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model_fixtures.hpp"
#include "worksize/scheduler/simulate_kernel.hpp"

namespace worksize {
namespace {

using test::line;

double uniform(std::mt19937& rng, double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
}

/// A random model: every phase a line of positive coefficients, the host phase sometimes in its
/// ln form, a contention factor in [1, 3]; `mpi`: a send and a receive (else none, as on rank 0).
CostModel random_model(std::mt19937& rng, bool mpi) {
    CostModel m;
    if (mpi) {
        m.send = line(uniform(rng, 0, 1e-3), uniform(rng, 1e-10, 1e-9));
        m.recv = line(uniform(rng, 0, 1e-3), uniform(rng, 1e-10, 1e-9));
    }
    m.h2d = line(uniform(rng, 0, 1e-4), uniform(rng, 1e-11, 1e-10));
    m.kernel = line(uniform(rng, 0, 1e-3), uniform(rng, 1e-12, 1e-10));
    m.d2h = line(uniform(rng, 0, 1e-4), uniform(rng, 1e-11, 1e-10));
    m.host = rng() % 3 == 0 ? PhaseModel{uniform(rng, 0, 1e-3), 0, uniform(rng, 1e-5, 1e-3), 1e5}
                            : line(uniform(rng, 0, 2e-3), uniform(rng, 0, 1e-11));
    m.prepare = line(0, uniform(rng, 0, 1e-11));
    m.combine = line(uniform(rng, 0, 1e-4), uniform(rng, 0, 1e-11));
    m.contention = uniform(rng, 1, 3);
    return m;
}

SplitJob random_job(std::mt19937& rng) {
    SplitJob job;
    job.total_units = 64 + rng() % 4000;
    job.ops_per_unit = uniform(rng, 1e3, 1e7);
    job.bytes_in_per_unit = 4.0 * double(1 + rng() % 50000);
    job.bytes_out_per_unit = rng() % 4 == 0 ? 0.0 : 4.0 * double(1 + rng() % 20000);
    job.bytes_in_fixed = rng() % 2 ? 0.0 : 4.0 * double(1 + rng() % 20000000);
    job.granule = 1 + rng() % 4;
    job.serial_sends = false;
    return job;
}

/// Random units for `n` devices summing to the job's (some devices may get none).
std::vector<std::uint64_t> random_units(std::mt19937& rng, std::size_t n, std::uint64_t total) {
    std::vector<double> w(n);
    for (auto& x : w) x = rng() % 4 == 0 ? 0.0 : uniform(rng, 0.05, 1.0);
    if (std::all_of(w.begin(), w.end(), [](double x) { return x == 0; })) w[0] = 1;
    double sum = 0;
    for (double x : w) sum += x;
    std::vector<std::uint64_t> u(n);
    std::uint64_t given = 0;
    for (std::size_t i = 0; i < n; ++i) given += u[i] = std::uint64_t(std::floor(w[i] / sum * double(total)));
    for (std::size_t i = 0; given < total; i = (i + 1) % n)
        if (w[i] > 0) ++u[i], ++given;
    return u;
}

void expect_rel(double a, double b, const std::string& what) {
    EXPECT_NEAR(a, b, 1e-9 * std::max(std::abs(b), 1e-12)) << what;
}

void expect_same_timeline(const SplitResult& sim, const SplitResult& ana, const std::string& what) {
    expect_rel(sim.makespan_s, ana.makespan_s, what + ": makespan");
    for (std::size_t i = 0; i < ana.units.size(); ++i) {
        const std::string d = what + ", device " + std::to_string(i);
        expect_rel(sim.finish_s[i], ana.finish_s[i], d + ": finish");
        const Prediction &s = sim.predicted[i], &a = ana.predicted[i];
        for (const auto& [x, y, name] : {std::tuple{s.send_s, a.send_s, "send"},
                                         {s.h2d_s, a.h2d_s, "h2d"},
                                         {s.kernel_s, a.kernel_s, "kernel"},
                                         {s.d2h_s, a.d2h_s, "d2h"},
                                         {s.recv_s, a.recv_s, "recv"},
                                         {s.host_s, a.host_s, "host"},
                                         {s.total_s, a.total_s, "total"}})
            expect_rel(x, y, d + ": " + name);
    }
}

/// Two split inputs (one with a halo), a shared input, two kernels, a split output and a
/// reduction: lists of another shape than the job's layout (the phases are still the job's).
DataJobSpec two_kernel_spec(std::uint64_t units) {
    DataJobSpec s;
    s.name = "two";
    s.units = units;
    auto buf = [](const char* name, BufferLayout l, std::uint64_t n, bool in, bool out) {
        BufferDecl b;
        b.name = name;
        b.layout = l;
        (l == BufferLayout::split ? b.pitch : b.count) = n;
        b.input = in;
        b.output = out;
        return b;
    };
    s.buffers = {
        buf("a", BufferLayout::split, 3000, true, false), buf("b", BufferLayout::split, 500, true, false),
        buf("c", BufferLayout::shared, 1000000, true, false), buf("d", BufferLayout::split, 700, false, true),
        buf("sum", BufferLayout::shared, 4, false, false)};
    auto arg = [](ArgKind k, int b, std::uint64_t depth = 0) {
        ArgDecl a;
        a.kind = k;
        a.buffer = b;
        a.depth = depth;
        return a;
    };
    KernelDecl k1, k2;
    k1.name = "one";
    k1.args = {arg(ArgKind::halo, 0, 2), arg(ArgKind::read, 1), arg(ArgKind::all, 2), arg(ArgKind::write, 3)};
    k2.name = "two";
    k2.args = {arg(ArgKind::read, 3), arg(ArgKind::reduce, 4)};
    s.kernels = {k1, k2};
    return s;
}

TEST(SimulateKernel, OneRankIsTheAnalyticModel) {
    std::mt19937 rng(26);
    for (int trial = 0; trial < 60; ++trial) {
        const std::size_t n = 1 + rng() % 4;
        std::vector<CostModel> models;
        // A model with a send on rank 0 (one calibrated over MPI) is charged it there too.
        for (std::size_t i = 0; i < n; ++i) models.push_back(random_model(rng, trial % 5 == 0));
        SplitJob job = random_job(rng);
        job.local_inputs = trial % 7 == 3;
        for (std::size_t i = 0; i < n && trial % 3 == 1; ++i)
            job.padding.push_back({1 + rng() % 64, uniform(rng, 1, 1.3)});
        const std::vector<int> ranks(n, 0);
        DeclareSlices declare;
        if (trial % 4 == 2)  // lists of another shape than the layout: two kernels, a halo, a reduction
            declare = [&](const std::vector<std::uint64_t>& units) {
                std::vector<KernelSliceDecl> v;
                std::uint64_t offset = 0;
                for (auto u : units) {
                    if (u) v.push_back({two_kernel_spec(job.total_units), 0, offset, u});
                    offset += u;
                }
                return v;
            };
        for (int split = 0; split < 4; ++split) {
            const auto units = random_units(rng, n, job.total_units);
            const std::string what = "trial " + std::to_string(trial) + " split " + std::to_string(split);
            expect_same_timeline(simulate_split(models, job, units, ranks, declare),
                                 evaluate_split(models, job, units), what);
        }
    }
}

// Messages change nothing while each worker has a link of its own and uploads only once its whole
// input is there (the analytic model's parallel sends), one slice per rank.
TEST(SimulateKernel, WithoutStreamingAndALinkPerWorkerMessagesAreTheAnalyticModel) {
    std::mt19937 rng(15);
    KernelSimOptions o;
    o.shared_link = false;
    o.streams_input = false;
    for (int trial = 0; trial < 40; ++trial) {
        const std::size_t n = 1 + rng() % 4;
        std::vector<CostModel> models;
        std::vector<int> ranks;
        for (std::size_t i = 0; i < n; ++i) {
            ranks.push_back(int(i) + (trial % 2));  // rank 0 with or without a device
            models.push_back(random_model(rng, ranks.back() != 0));
        }
        const SplitJob job = random_job(rng);
        for (int split = 0; split < 4; ++split) {
            const auto units = random_units(rng, n, job.total_units);
            expect_same_timeline(simulate_split(models, job, units, ranks, {}, o),
                                 evaluate_split(models, job, units),
                                 "trial " + std::to_string(trial) + " split " + std::to_string(split));
        }
    }
}

/// A job of 16 rows of 1 MiB each, nothing else, and its lists in 4 MiB pieces.
SplitJob mib_rows() {
    SplitJob job;
    job.total_units = 16;
    job.bytes_in_per_unit = 1 << 20;
    return job;
}
KernelLists lists_of(const SplitJob& job, const std::vector<std::uint64_t>& units,
                     const std::vector<int>& ranks, std::uint64_t piece = 4 << 20) {
    KernelProgramOptions po;
    po.piece_bytes = piece;
    return kernel_job_lists(layout_slices(job, units, ranks), po);
}
KernelSliceCost cost(double send, double h2d, double kernel, double d2h, double recv, double host) {
    return {{send, 0}, {h2d, 0}, kernel, {d2h, 0}, {recv, 0}, host};
}

// One worker, its 16 MiB input in 4 pieces of 4 rows: each piece is uploaded as it arrives, so
// only the last upload follows the send; without streaming all four do.
TEST(SimulateKernel, UploadsOverlapTheArrivingPieces) {
    const auto lists = lists_of(mib_rows(), {16}, {1});
    KernelSimOptions o;
    o.prepare_s = 0.5;
    o.combine_s = 0.25;
    const auto c = cost(8, 2, 3, 0.5, 0.125, 1);  // a piece: 2 s on the link, 0.5 s to upload
    const SimulatedKernelJob r = simulate_kernel_job(lists, {c}, o);
    EXPECT_DOUBLE_EQ(r.start_s[0], 0.5);
    EXPECT_DOUBLE_EQ(r.finish_s[0], 0.5 + 8 + 0.5 + 3 + 0.5 + 1 + 0.125);
    EXPECT_DOUBLE_EQ(r.makespan_s, r.finish_s[0] + 0.25);
    EXPECT_DOUBLE_EQ(r.busy[0].h2d_s, 2);
    EXPECT_DOUBLE_EQ(r.busy[0].total_s, 8 + 2 + 3 + 0.5 + 0.125 + 1);
    o.streams_input = false;
    EXPECT_DOUBLE_EQ(simulate_kernel_job(lists, {c}, o).finish_s[0], 0.5 + 8 + 2 + 3 + 0.5 + 1 + 0.125);
    // Uploads slower than the link: they queue on the device, the last ends 4 x 3 s after the first piece.
    const auto slow = cost(8, 12, 3, 0.5, 0.125, 1);
    o.streams_input = true;
    EXPECT_DOUBLE_EQ(simulate_kernel_job(lists, {slow}, o).finish_s[0], 0.5 + 2 + 12 + 3 + 0.5 + 1 + 0.125);
}

// Rank 0 keeps 4 rows; ranks 1 and 2 get 8 and 4 (two pieces and one). Over one link the pieces
// take turns (rank 1's first, rank 2's, rank 1's second); with a link each they run side by side.
TEST(SimulateKernel, RankZerosPiecesTakeTurnsOnOneLink) {
    const auto lists = lists_of(mib_rows(), {4, 8, 4}, {0, 1, 2});
    const std::vector<KernelSliceCost> c = {cost(0, 1, 2, 0, 0, 0), cost(4, 0, 1, 0, 0.5, 0),
                                            cost(3, 0, 1, 0, 0.5, 0)};
    const SimulatedKernelJob one = simulate_kernel_job(lists, c, {});
    EXPECT_DOUBLE_EQ(one.finish_s[0], 3);  // rank 0's own: h2d and kernel, beside the sends
    EXPECT_DOUBLE_EQ(one.start_s[1], 0);
    EXPECT_DOUBLE_EQ(one.start_s[2], 2);  // after rank 1's first piece
    EXPECT_DOUBLE_EQ(one.finish_s[2], 2 + 3 + 1 + 0.5);
    EXPECT_DOUBLE_EQ(one.finish_s[1], 2 + 3 + 2 + 1 + 0.5);  // its second piece after rank 2's
    EXPECT_DOUBLE_EQ(one.makespan_s, 8.5);
    KernelSimOptions own;
    own.shared_link = false;
    const SimulatedKernelJob two = simulate_kernel_job(lists, c, own);
    EXPECT_DOUBLE_EQ(two.finish_s[1], 4 + 1 + 0.5);
    EXPECT_DOUBLE_EQ(two.finish_s[2], 3 + 1 + 0.5);
}

// A worker with two devices answers once both are done, their outputs one after the other.
TEST(SimulateKernel, AWorkerAnswersOnceAllItsSlicesAreDone) {
    SplitJob job = mib_rows();
    job.bytes_in_per_unit = 0;
    job.bytes_out_per_unit = 1 << 20;
    const auto lists = lists_of(job, {8, 8}, {1, 1});
    const std::vector<KernelSliceCost> c = {cost(0, 0, 1, 0.5, 2, 0.25), cost(0, 0, 4, 0.5, 3, 0.25)};
    const SimulatedKernelJob r = simulate_kernel_job(lists, c, {});
    EXPECT_DOUBLE_EQ(r.finish_s[0], 4.75 + 2);
    EXPECT_DOUBLE_EQ(r.finish_s[1], 4.75 + 2 + 3);
}

TEST(SimulateKernel, Refusals) {
    const auto lists = lists_of(mib_rows(), {8, 8}, {0, 1});
    EXPECT_THROW(simulate_kernel_job(lists, {cost(1, 1, 1, 1, 1, 1)}),
                 InvalidArgument);  // a slice without a cost
    const std::vector<CostModel> models(2);
    EXPECT_THROW(simulate_split(models, mib_rows(), {8, 8}, {0}), InvalidArgument);
    EXPECT_THROW(layout_slices(mib_rows(), {8, 8}, {0}), InvalidArgument);
    const DeclareSlices one = [](const std::vector<std::uint64_t>&) {
        return std::vector<KernelSliceDecl>(1);
    };
    EXPECT_THROW(simulate_split(models, mib_rows(), {8, 8}, {0, 1}, one), InvalidArgument);
}

}  // namespace
}  // namespace worksize
