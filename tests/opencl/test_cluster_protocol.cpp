// The master/worker protocol over the in-process communicator (local_comms): a master and its
// workers are threads of this process, each with its own Cluster over PoCL's CPU device, so that
// jobs, failures and their reasons are checked without mpiexec. Also the wire format's failure
// and inventory messages.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <thread>

#include "local_cluster.hpp"
#include "worksize/runtime/cluster.hpp"
#include "worksize/runtime/comm.hpp"
#include "worksize/runtime/devices.hpp"
#include "worksize/runtime/wire.hpp"
#include "worksize/scheduler/planner.hpp"

namespace worksize {
namespace {

using test::Outcome;
using test::run_local;

std::unique_ptr<KernelJob> quad_job() {
    JobOptions o;
    o.size = {1u << 14, 1};
    auto job = kernel_job("quad").make(o);
    job->generate();
    return job;
}

Plan even_plan(const Cluster& c, const KernelJob& job) {
    PlanRequest r;
    r.kernel = job.descriptor();
    r.global = job.problem();
    r.strategy = "even";
    r.granule = job.granule();
    return make_plan(c.devices(), r);
}

/// A job whose packing of one device's slice input throws (after the command went out).
class ThrowingPack : public KernelJob {
public:
    ThrowingPack(std::unique_ptr<KernelJob> inner, int device) : inner_(std::move(inner)), device_(device) {}
    KernelDescriptor descriptor() const override { return inner_->descriptor(); }
    GlobalSize problem() const override { return inner_->problem(); }
    std::uint64_t granule() const override { return inner_->granule(); }
    void generate() override { inner_->generate(); }
    void partition(std::vector<Assignment>& a) override { inner_->partition(a); }
    SliceSpec slice_spec(const Assignment& a) const override { return inner_->slice_spec(a); }
    Bytes slice_input(const Assignment& a) const override {
        check(a);
        return inner_->slice_input(a);
    }
    std::vector<std::span<const std::byte>> input_parts(const Assignment& a) const override {
        check(a);
        return inner_->input_parts(a);
    }
    std::span<std::byte> output_target(const Assignment& a) override { return inner_->output_target(a); }
    void accept_output(const Assignment& a, std::span<const std::byte> out) override { inner_->accept_output(a, out); }
    void finish() override { inner_->finish(); }
    Verdict verify() const override { return inner_->verify(); }

private:
    void check(const Assignment& a) const {
        if (a.device == device_) throw Error(ErrorReason::launch_failure, "packing failed on purpose");
    }
    std::unique_ptr<KernelJob> inner_;
    int device_;
};

TEST(ClusterProtocol, MasterAndTwoWorkersRunAJob) {
    const auto out = run_local(3, {}, [](Cluster& c) {
        EXPECT_EQ(c.ranks(), 3);
        EXPECT_EQ(c.devices().size(), 2u);  // auto: rank 0 is only the master
        EXPECT_EQ(c.hosts().size(), 3u);
        auto job = quad_job();
        const Plan plan = even_plan(c, *job);
        const JobResult res = c.run(*job, plan.assignments, "quad");
        EXPECT_TRUE(res.verdict.ok) << res.verdict.detail;
        EXPECT_EQ(res.devices.size(), 2u);
        return 0;
    });
    for (const auto& o : out) {
        EXPECT_EQ(o.code, 0) << o.error;
        EXPECT_TRUE(o.error.empty()) << o.error;
    }
}

TEST(ClusterProtocol, AWorkerThatStopsAnsweringIsLostAndTheJobIsReplannedOnTheOthers) {
    // Rank 2 joins the cluster, then hangs (never serves) for twice --rank-timeout: rank 0 must
    // give up on it by its deadline (had it waited out the hang, rank 2 would have ended with
    // its own error and never been named lost), name it, and run the job again, verified, on
    // rank 1 alone. The healthy worker's heartbeats come every third of the timeout, while it
    // builds its first slice's program too.
    DeviceSelection sel;
    sel.rank_timeout_s = 1.0;
    const auto out = run_local(
        3, sel,
        [&](Cluster& c) {
            auto job = quad_job();
            const Plan plan = even_plan(c, *job);
            EXPECT_EQ(plan.assignments.size(), 2u);
            try {
                c.run(*job, plan.assignments, "quad");
                ADD_FAILURE() << "a hung worker went unnoticed";
            } catch (const Error& e) {
                EXPECT_EQ(e.reason(), ErrorReason::lost_rank);
                EXPECT_NE(std::string(e.what()).find(" is lost"), std::string::npos) << e.what();
                EXPECT_NE(std::string(e.what()).find("rank 2 on host "), std::string::npos) << e.what();
                EXPECT_NE(std::string(e.what()).find("(device '"), std::string::npos) << e.what();
            }
            EXPECT_EQ(c.lost_ranks(), std::vector<int>{2});
            EXPECT_EQ(c.drop_lost_devices(), 1u);
            auto again = quad_job();
            const Plan replan = even_plan(c, *again);
            EXPECT_EQ(replan.assignments.size(), 1u);
            const JobResult res = c.run(*again, replan.assignments, "quad");
            EXPECT_TRUE(res.verdict.ok) << res.verdict.detail;
            return 0;
        },
        [](Cluster& c) {
            if (!c.is_master() && !c.devices().empty() && c.devices().front().rank == 2) {
                std::this_thread::sleep_for(std::chrono::milliseconds(2000));
                throw std::runtime_error("rank 2 hung on purpose");
            }
        });
    EXPECT_EQ(out[0].code, 0) << out[0].error;
    EXPECT_EQ(out[1].code, 0) << out[1].error;
}

TEST(ClusterProtocol, PackingThatThrowsAfterTheCommandEndsTheJobNotTheWorkers) {
    const auto out = run_local(3, {}, [](Cluster& c) {
        {
            ThrowingPack job(quad_job(), 0);  // device 0: rank 1's
            const Plan plan = even_plan(c, job);
            try {
                c.run(job, plan.assignments, "quad");
                ADD_FAILURE() << "run did not throw";
            } catch (const Error& e) {
                EXPECT_NE(std::string(e.what()).find("rank 0: packing the input of rank 1"), std::string::npos)
                    << e.what();
                EXPECT_NE(std::string(e.what()).find("packing failed on purpose"), std::string::npos) << e.what();
                EXPECT_EQ(e.reason(), ErrorReason::launch_failure);
            }
        }
        // The workers went back to serving: the next job runs.
        auto job = quad_job();
        const JobResult res = c.run(*job, even_plan(c, *job).assignments, "quad");
        EXPECT_TRUE(res.verdict.ok) << res.verdict.detail;
        return 5;
    });
    for (const auto& o : out) EXPECT_EQ(o.code, 5) << o.error;
}

TEST(ClusterProtocol, AWorkersDeviceLimitReachesRankZeroWithItsReason) {
    const auto out = run_local(2, {}, [](Cluster& c) {
        auto job = quad_job();
        Plan plan = even_plan(c, *job);
        // Beyond the device's max work-group size: the launch fails on rank 1.
        plan.assignments.at(0).local = {c.devices().at(0).max_work_group_size * 2, 1};
        try {
            c.run(*job, plan.assignments, "quad");
            ADD_FAILURE() << "run did not throw";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("rank 1, device"), std::string::npos) << e.what();
            EXPECT_EQ(e.reason(), ErrorReason::device_limit) << e.what();
        }
        return 0;
    });
    EXPECT_EQ(out[1].code, 0) << out[1].error;
}

TEST(ClusterProtocol, ACollectFailureKeepsItsReason) {
    const auto out = run_local(
        2, {},
        [](Cluster& c) {
            EXPECT_THROW(c.collect("db"), InvalidArgument);
            return 0;
        },
        [](Cluster& c) {
            if (!c.is_master())
                c.set_collect_handler([](const std::string&) -> std::string { throw InvalidArgument("bad key"); });
        });
    EXPECT_EQ(out[1].code, 0) << out[1].error;
}

TEST(ClusterProtocol, ABadSelectionOnAWorkerIsBadInputOnRankZero) {
    DeviceSelection sel;
    sel.spec = "1=7";
    const auto out = run_local(2, sel, [](Cluster&) { return 0; });
    EXPECT_FALSE(out[0].code.has_value());
    EXPECT_EQ(out[0].reason, ErrorReason::bad_input) << out[0].error;
    EXPECT_NE(out[0].error.find("rank 1: --select names device '7'"), std::string::npos) << out[0].error;
    EXPECT_TRUE(out[1].aborted) << out[1].error;
}

TEST(Wire, EveryReasonSurvivesAFailureMessage) {
    for (auto r : {ErrorReason::generic, ErrorReason::bad_input, ErrorReason::build_failure, ErrorReason::device_limit,
                   ErrorReason::launch_failure, ErrorReason::wrong_result, ErrorReason::lost_rank}) {
        nlohmann::json j = {{"task", 3}, {"ok", false}};
        wire::put_failure(j, {"it failed", r});
        const auto f = wire::failure_from_json(nlohmann::json::parse(j.dump()));
        EXPECT_EQ(f.reason, r) << to_string(r);
        EXPECT_EQ(f.message, "it failed");
        try {
            f.raise("rank 2: ");
        } catch (const Error& e) {
            EXPECT_EQ(e.reason(), r);
            EXPECT_EQ(std::string(e.what()), "rank 2: it failed");
            EXPECT_EQ(dynamic_cast<const InvalidArgument*>(&e) != nullptr, r == ErrorReason::bad_input);
        }
    }
    // A peer's reason this rank does not know reads as generic.
    EXPECT_EQ(wire::failure_from_json({{"error", "x"}, {"reason", "from-the-future"}}).reason, ErrorReason::generic);
    EXPECT_EQ(wire::failure_from_json({{"error", "x"}}).reason, ErrorReason::generic);
}

TEST(Wire, InventoryRoundTripAndFailures) {
    DeviceInfo d;
    d.rank = 2;
    d.index = 3;
    d.host = "node7";
    d.platform = "Portable Computing Language";
    d.name = "pthread";
    d.vendor = "v";
    d.driver_version = "6.0";
    d.type = DeviceType::cpu;
    d.compute_units = 4;
    d.pes_per_cu = 8;
    d.pe_source = PeSource::cpu_vector_width;
    d.max_clock_mhz = 0;  // not reported by the driver: allowed for a live device
    d.max_work_group_size = 4096;
    d.max_work_item_sizes = {4096, 4096, 4096};
    d.local_mem_bytes = 1 << 16;
    d.global_mem_bytes = 1ull << 33;
    d.preferred_wg_multiple = 8;
    const auto inv = wire::parse_inventory(wire::inventory_message(2, "node7", {d}).dump(), 2);
    EXPECT_EQ(inv.host, "node7");
    ASSERT_EQ(inv.devices.size(), 1u);
    EXPECT_EQ(to_json(inv.devices[0]), to_json(d));

    EXPECT_THROW(wire::parse_inventory(wire::inventory_message(2, "node7", {d}).dump(), 1), Error);
    EXPECT_THROW(wire::parse_inventory("{\"worksize_inventory\": 1, \"rank\": ", 0), Error);
    try {
        wire::parse_inventory(wire::inventory_failure(1, "h", {"--select names device '7'", ErrorReason::bad_input}).dump(), 1);
        ADD_FAILURE();
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(std::string(e.what()), "--select names device '7'");
    }
}

TEST(Wire, SliceSpecKeepsItsLayoutAndRefusesAMalformedOne) {
    SliceSpec s;
    s.kernel = "matmul";
    s.problem = {512, 300};
    s.offset = 100;
    s.units = 50;
    s.global = {512, 56};
    s.local = {16, 8};
    s.iterations = 3;
    s.params = {{"k", 512}};
    const nlohmann::json j = to_json(s);
    EXPECT_EQ(j, nlohmann::json::parse(R"({"kernel": "matmul", "problem": [512, 300], "offset": 100, "units": 50,
        "global": [512, 56], "local": [16, 8], "iterations": 3, "params": {"k": 512}})"));
    const SliceSpec back = slice_spec_from_json(nlohmann::json::parse(j.dump()));
    EXPECT_EQ(back.kernel, s.kernel);
    EXPECT_EQ(back.problem, s.problem);
    EXPECT_EQ(back.offset, s.offset);
    EXPECT_EQ(back.units, s.units);
    EXPECT_EQ(back.global, s.global);
    EXPECT_EQ(back.local, s.local);
    EXPECT_EQ(back.iterations, s.iterations);
    EXPECT_EQ(back.params, s.params);
    for (const auto& [key, value] : {std::pair<const char*, nlohmann::json>{"units", nullptr},
                                     {"local", {16}},
                                     {"offset", "100"},
                                     {"problem", 512}}) {
        nlohmann::json bad = j;
        if (value.is_null()) bad.erase(key);
        else bad[key] = value;
        try {
            slice_spec_from_json(bad);
            ADD_FAILURE() << bad.dump();
        } catch (const Error& e) {
            EXPECT_EQ(std::string(e.what()).rfind("malformed slice specification: ", 0), 0u) << e.what();
        }
    }
}

}  // namespace
}  // namespace worksize
