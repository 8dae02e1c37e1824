// The data-job declaration (scheduler/data_spec.hpp) without a device: the halo rows of swap
// partners, the JSON form, the split granule, the slices' checks and the halo bytes each slice
// sends per step (data_layout), which the runtime's counters must match; validate()'s refusals
// and the JSON form's errors are test_data_spec_checks.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "worksize/scheduler/data_spec.hpp"
#include "data_spec_fixtures.hpp"

namespace worksize {
namespace {

using test::access;
using test::copy_spec;
using test::heat_spec;
using test::kNext;
using test::kPower;
using test::kT;
using test::refusal;
using test::plain;
using test::shared;
using test::slice;
using test::split;

// ---------------------------------------------------------------------------------------------

TEST(DataSpec, HeatValidatesAndSwapPartnersShareTheHalo) {
    const DataJobSpec s = heat_spec();
    EXPECT_NO_THROW(validate(s));
    EXPECT_EQ(halo_rows(s, kT), 1u);
    EXPECT_EQ(halo_rows(s, kNext), 1u) << "next becomes t after the swap: it needs t's halo rows";
    EXPECT_EQ(halo_rows(s, kPower), 0u);
    EXPECT_EQ(data_granule(s), 1u);
}

TEST(DataSpec, SwapChainsShareTheDeepestHalo) {
    DataJobSpec s = heat_spec();
    s.buffers.push_back(split("spare", 8));
    s.kernels[0].args.push_back(access(ArgKind::read_write, 3));
    s.swaps.push_back({kNext, 3});  // t <-> next <-> spare
    s.kernels[0].args[0].depth = 2;
    ASSERT_NO_THROW(validate(s));
    EXPECT_EQ(halo_rows(s, 3), 2u);
    EXPECT_EQ(halo_rows(s, kNext), 2u);
    EXPECT_EQ(halo_rows(s, kPower), 0u);
}

TEST(DataSpec, JsonRoundTrip) {
    const DataJobSpec s = heat_spec();
    const DataJobSpec back = data_job_from_json(to_json(s));
    EXPECT_EQ(to_json(back), to_json(s));
    EXPECT_EQ(back.name, "heat");
    EXPECT_EQ(back.dims, 2);
    EXPECT_EQ(back.width, 8u);
    EXPECT_EQ(back.units, 30u);
    EXPECT_EQ(back.steps, 50u);
    EXPECT_EQ(back.gather_every, 10u);
    ASSERT_EQ(back.buffers.size(), 3u);
    EXPECT_TRUE(back.buffers[kT].input && back.buffers[kT].output);
    EXPECT_FALSE(back.buffers[kNext].input || back.buffers[kNext].output);
    ASSERT_EQ(back.kernels.size(), 1u);
    ASSERT_EQ(back.kernels[0].args.size(), 10u);
    EXPECT_EQ(back.kernels[0].args[0].kind, ArgKind::halo);
    EXPECT_EQ(back.kernels[0].args[0].depth, 1u);
    EXPECT_EQ(back.kernels[0].args[6].scalar_type, ElemType::i32);
    EXPECT_EQ(back.kernels[0].args[6].value, 8.0);
    EXPECT_EQ(back.kernels[0].args[9].value, 0.125);
    ASSERT_EQ(back.swaps.size(), 1u);
    EXPECT_EQ(back.swaps[0], (std::pair<int, int>{kT, kNext}));
    EXPECT_NO_THROW(validate(back));
}

TEST(DataSpec, JsonRoundTripOfAReductionAndAGranule) {
    DataJobSpec s = copy_spec(1000);
    s.buffers.push_back(shared("sums", 5, false));
    ArgDecl r = access(ArgKind::reduce, 2);
    r.op = ReduceOp::max;
    s.kernels[0].args.push_back(r);
    s.kernels[0].units_per_item = 4;
    s.kernels[0].required_local = {8, 1};
    ASSERT_NO_THROW(validate(s));
    const DataJobSpec back = data_job_from_json(to_json(s));
    EXPECT_EQ(to_json(back), to_json(s));
    EXPECT_EQ(back.kernels[0].args[3].op, ReduceOp::max);
    EXPECT_EQ(back.kernels[0].units_per_item, 4u);
    EXPECT_EQ(back.kernels[0].required_local.x, 8u);
}

TEST(DataSpec, PerGroupReductionsRoundTripAndOnlyOnReduce) {
    DataJobSpec s = copy_spec(1000);
    s.buffers.push_back(shared("sums", 2, false));
    ArgDecl r = access(ArgKind::reduce, 2);
    r.per_group = true;
    s.kernels[0].args.push_back(r);
    ASSERT_NO_THROW(validate(s));
    const nlohmann::json j = to_json(s);
    EXPECT_EQ(j["kernels"][0]["args"][3]["per"], "group");
    EXPECT_FALSE(j["kernels"][0]["args"][0].contains("per"));  // one record per item: the default
    const DataJobSpec back = data_job_from_json(j);
    EXPECT_TRUE(back.kernels[0].args[3].per_group);
    EXPECT_FALSE(back.kernels[0].args[0].per_group);
    EXPECT_EQ(to_json(back), j);
    nlohmann::json bad = j;
    bad["kernels"][0]["args"][3]["per"] = "row";
    try {
        data_job_from_json(bad);
        ADD_FAILURE() << "per 'row' accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_STREQ(e.what(), "data job, kernel 'k', argument 3: per 'row' (item or group)");
    }
    bad["kernels"][0]["args"][3]["per"] = "item";
    EXPECT_FALSE(data_job_from_json(bad).kernels[0].args[3].per_group);
    s.kernels[0].args[1].per_group = true;  // a split write
    const std::string m = refusal(s);
    EXPECT_HAS(m, "kernel 'k', argument 1 ('y')");
    EXPECT_HAS(m, "one record per work-group");
    EXPECT_HAS(m, "not write");
}

TEST(DataSpec, NoInitRoundTripsAndIsRefusedOnAnInput) {
    DataJobSpec s = copy_spec(1000);
    s.buffers[1].no_init = true;  // 'y', written whole by 'k'
    ASSERT_NO_THROW(validate(s));
    const nlohmann::json j = to_json(s);
    EXPECT_EQ(j["buffers"][1]["init"], "none");
    EXPECT_FALSE(j["buffers"][0].contains("init"));  // zeros: the default
    const DataJobSpec back = data_job_from_json(j);
    EXPECT_TRUE(back.buffers[1].no_init);
    EXPECT_FALSE(back.buffers[0].no_init);
    EXPECT_EQ(to_json(back), j);
    nlohmann::json other = j;
    other["buffers"][1]["init"] = "zeros";
    EXPECT_FALSE(data_job_from_json(other).buffers[1].no_init);
    other["buffers"][1]["init"] = "ones";
    try {
        data_job_from_json(other);
        ADD_FAILURE() << "init 'ones' accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_STREQ(e.what(), "data job, buffer 1: init 'ones' (zeros or none)");
    }
    s.buffers[0].no_init = true;  // 'x', an input
    const std::string m = refusal(s);
    EXPECT_HAS(m, "buffer 'x'");
    EXPECT_HAS(m, "\"init\": \"none\" on an input");
}

TEST(DataSpec, LocalArraysRoundTripAndNeedAWholeCount) {
    DataJobSpec s = copy_spec(1000);
    ArgDecl l{ArgKind::local};
    l.scalar_type = ElemType::f64;
    l.value = 96;
    s.kernels[0].args.push_back(l);
    ASSERT_NO_THROW(validate(s));
    const DataJobSpec back = data_job_from_json(to_json(s));
    EXPECT_EQ(back.kernels[0].args.back().kind, ArgKind::local);
    EXPECT_EQ(back.kernels[0].args.back().scalar_type, ElemType::f64);
    EXPECT_EQ(back.kernels[0].args.back().value, 96.0);
    for (const double bad : {0.0, 2.5, -4.0}) {
        s.kernels[0].args.back().value = bad;
        try {
            validate(s);
            ADD_FAILURE() << bad << " elements accepted";
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find("__local array"), std::string::npos) << e.what();
        }
    }
}

TEST(DataSpec, LayoutOfThreeSlices) {
    const DataJobSpec s = heat_spec();
    const DataLayout l = data_layout(s, {slice(0, 0, 0, 10), slice(1, 1, 10, 12), slice(2, 2, 22, 8)});
    ASSERT_EQ(l.slices.size(), 3u);
    EXPECT_EQ(l.slices[0].left, -1);
    EXPECT_EQ(l.slices[0].right, 1);
    EXPECT_EQ(l.slices[1].left, 0);
    EXPECT_EQ(l.slices[1].right, 2);
    EXPECT_EQ(l.slices[2].left, 1);
    EXPECT_EQ(l.slices[2].right, -1);
    EXPECT_EQ(l.slices[1].offset, 10u);
    EXPECT_EQ(l.slices[1].units, 12u);
    EXPECT_EQ(l.slices[2].rank, 2);
    const std::uint64_t row = 1 * 8 * 4;  // halo rows x pitch x sizeof(float)
    EXPECT_EQ(l.halo_bytes_per_step, (std::vector<std::uint64_t>{row, 2 * row, row}));
}

TEST(DataSpec, LayoutOrdersSlicesAndSkipsEmptyOnes) {
    const DataJobSpec s = heat_spec();
    // Given out of order, with an empty slice: the layout walks them along the split dimension.
    const DataLayout l =
        data_layout(s, {slice(2, 2, 22, 8), slice(3, 2, 30, 0), slice(0, 0, 0, 10), slice(1, 1, 10, 12)});
    ASSERT_EQ(l.slices.size(), 3u);
    EXPECT_EQ(l.slices[0].device, 0);
    EXPECT_EQ(l.slices[2].device, 2);
    EXPECT_EQ(l.halo_bytes_per_step, (std::vector<std::uint64_t>{32, 64, 32}));
    // Alone: no neighbour, nothing sent.
    EXPECT_EQ(data_layout(s, {slice(0, 0, 0, 30)}).halo_bytes_per_step, (std::vector<std::uint64_t>{0}));
}

TEST(DataSpec, LayoutHaloOfDepthTwoAndDoubles) {
    DataJobSpec s = heat_spec();
    s.kernels[0].args[0].depth = 2;
    for (auto& b : s.buffers) b.type = ElemType::f64;
    ASSERT_NO_THROW(validate(s));
    const DataLayout l = data_layout(s, {slice(0, 0, 0, 10), slice(1, 1, 10, 12), slice(2, 2, 22, 8)});
    const std::uint64_t row = 2 * 8 * 8;
    EXPECT_EQ(l.halo_bytes_per_step, (std::vector<std::uint64_t>{row, 2 * row, row}));
}

TEST(DataSpec, ReadOnlyHaloBufferSendsNothing) {
    // The halo buffer is an input no kernel writes: the scattered halo rows stay valid.
    DataJobSpec s = copy_spec(30);
    s.kernels[0].args[0] = access(ArgKind::halo, 0, 2);
    s.steps = 1;
    ASSERT_NO_THROW(validate(s));
    EXPECT_EQ(halo_rows(s, 0), 2u);
    const auto assignments = std::vector<Assignment>{slice(0, 0, 0, 10), slice(1, 1, 10, 12), slice(2, 2, 22, 8)};
    EXPECT_EQ(data_layout(s, assignments).halo_bytes_per_step, (std::vector<std::uint64_t>{0, 0, 0}));
    s.steps = 100;  // the steps do not matter
    EXPECT_EQ(data_layout(s, assignments).halo_bytes_per_step, (std::vector<std::uint64_t>{0, 0, 0}));
}

TEST(DataSpec, LayoutRefusesSlicesThatDoNotTile) {
    const DataJobSpec s = heat_spec();
    EXPECT_THROW(data_layout(s, {slice(0, 0, 0, 10), slice(1, 1, 12, 18)}), InvalidArgument);
    EXPECT_THROW(data_layout(s, {slice(0, 0, 0, 10), slice(1, 1, 10, 12)}), InvalidArgument);
}

// --- Slices against the declaration. -------------------------------------------------------------

TEST(DataSpec, CheckSlicesRefusesAHaloDeeperThanASlice) {
    DataJobSpec s = heat_spec();
    s.kernels[0].args[0].depth = 3;
    ASSERT_NO_THROW(validate(s));
    try {
        check_slices(s, {slice(0, 0, 0, 10), slice(1, 1, 10, 2), slice(2, 2, 12, 18)});
        ADD_FAILURE() << "a halo of 3 rows over a slice of 2 was accepted";
    } catch (const InvalidArgument& e) {
        const std::string m = e.what();
        EXPECT_HAS(m, "kernel 'heat_step', argument 0 ('t')");
        EXPECT_HAS(m, "deeper than the slice");
        EXPECT_HAS(m, "device 1");
    }
    // Slices of at least the halo's depth pass, and a lone slice has no neighbour to read.
    EXPECT_NO_THROW(check_slices(s, {slice(0, 0, 0, 10), slice(1, 1, 10, 3), slice(2, 2, 13, 17)}));
    EXPECT_NO_THROW(check_slices(s, {slice(0, 0, 0, 30)}));
}

TEST(DataSpec, CheckSlicesRefusesAnOffsetOffTheUnitsPerItem) {
    DataJobSpec s = copy_spec(100);
    s.kernels[0].units_per_item = 4;
    ASSERT_NO_THROW(validate(s));
    try {
        check_slices(s, {slice(0, 0, 0, 10), slice(1, 1, 10, 90)});
        ADD_FAILURE() << "a slice starting at unit 10 with 4 units per item was accepted";
    } catch (const InvalidArgument& e) {
        const std::string m = e.what();
        EXPECT_HAS(m, "kernel 'k'");
        EXPECT_HAS(m, "starts at unit 10");
        EXPECT_HAS(m, "not a multiple of the 4 units");
    }
    // The last slice may end anywhere.
    EXPECT_NO_THROW(check_slices(s, {slice(0, 0, 0, 12), slice(1, 1, 12, 88)}));
    EXPECT_NO_THROW(check_slices(s, {slice(0, 0, 0, 96), slice(1, 1, 96, 4)}));
}

TEST(DataSpec, GranuleIsTheLcmOfUnitsPerItemAndTheRequiredGroup) {
    DataJobSpec s = copy_spec(1000);
    EXPECT_EQ(data_granule(s), 1u);
    s.kernels[0].units_per_item = 6;
    EXPECT_EQ(data_granule(s), 6u);
    KernelDecl k2 = s.kernels[0];
    k2.name = "k2";
    k2.units_per_item = 4;
    s.kernels.push_back(k2);
    EXPECT_EQ(data_granule(s), 12u);  // lcm(6, 4)
    s.kernels[1].required_local = {8, 1};
    EXPECT_EQ(data_granule(s), 96u);  // lcm(6, 8 x 4)

    // 2-D: the required group's extent along y (the split) counts, not along x.
    DataJobSpec h = heat_spec();
    h.kernels[0].required_local = {8, 5};
    EXPECT_EQ(data_granule(h), 5u);
    EXPECT_EQ(data_plan_request(h).granule, 5u);
    h.kernels[0].units_per_item = 3;
    EXPECT_EQ(data_granule(h), 15u);  // lcm(3, 5 x 3)
}

TEST(DataSpec, PlanRequestOfTheHeatJob) {
    const PlanRequest r = data_plan_request(heat_spec());
    EXPECT_EQ(r.global.x, 8u);
    EXPECT_EQ(r.global.y, 30u);
    EXPECT_EQ(r.kernel.dims, 2);
    EXPECT_EQ(r.iterations, 50u);
    // Per item (one of 8 per row): t and power come in (2 floats), t goes out (1 float).
    EXPECT_DOUBLE_EQ(r.kernel.bytes_in_per_item, 8.0);
    EXPECT_DOUBLE_EQ(r.kernel.bytes_out_per_item, 4.0);
    EXPECT_DOUBLE_EQ(r.kernel.ops_per_item, 12.0);
}

TEST(DataSpec, GhostRowsMoveRowsFromInteriorSlices) {
    DataJobSpec s = heat_spec();  // 30 rows, halo 1
    s.units = 300;
    s.exchange_every = 9;  // on average (9 - 1) * 1 / 2 = 4 redundant rows per neighbour and step
    validate(s);
    std::vector<Assignment> a = {slice(0, 0, 0, 100), slice(1, 1, 100, 100), slice(2, 2, 200, 100)};
    for (auto& x : a) x.share = 1.0 / 3;
    balance_ghost_rows(s, a);
    // Equal devices: own + redundant rows equal (101.3 + 4 = 97.3 + 2 * 4), rounded down, the
    // rounding's rows to the last slice.
    EXPECT_EQ(a[0].units, 101u);
    EXPECT_EQ(a[1].units, 97u);
    EXPECT_EQ(a[2].units, 102u);
    EXPECT_EQ(a[1].offset, 101u);
    EXPECT_EQ(a[2].offset, 198u);
    EXPECT_EQ(a[2].global.y, 102u);

    // A device twice as fast, in the middle: still in proportion to the shares.
    std::vector<Assignment> b = {slice(0, 0, 0, 75), slice(1, 1, 75, 150), slice(2, 2, 225, 75)};
    b[0].share = b[2].share = 0.25;
    b[1].share = 0.5;
    balance_ghost_rows(s, b);
    EXPECT_EQ(b[0].units + b[1].units + b[2].units, 300u);
    EXPECT_NEAR(double(b[1].units + 8) / double(b[0].units + 4), 2.0, 0.05);

    // Without ghost zones, or alone: the plan stays.
    s.exchange_every = 1;
    std::vector<Assignment> c = {slice(0, 0, 0, 100), slice(1, 1, 100, 200)};
    c[0].share = 1.0 / 3;
    c[1].share = 2.0 / 3;
    balance_ghost_rows(s, c);
    EXPECT_EQ(c[0].units, 100u);
    s.exchange_every = 9;
    std::vector<Assignment> one = {slice(0, 0, 0, 300)};
    one[0].share = 1;
    balance_ghost_rows(s, one);
    EXPECT_EQ(one[0].units, 300u);
}

// Buffers of their own units: a resize's declaration. 100 output rows in row groups of 4 (25 job
// units) read an image of 50 rows with a neighbourhood 1 row deep and write 100 rows of 8.
DataJobSpec resize_spec() {
    DataJobSpec s;
    s.name = "resize";
    s.source = "__kernel void k() {}";
    s.dims = 2;
    s.width = 2;
    s.units = 25;
    BufferDecl in = split("in", 4, true);
    in.units = 50;
    in.map_num = 4 * 50;  // job unit o: output row 4·o, input row 4·o·50/100
    in.map_den = 100;
    BufferDecl out = split("out", 8, false, true);
    out.units = 100;
    out.map_num = 4;
    out.map_den = 1;
    s.buffers = {in, out};
    KernelDecl k;
    k.name = "k";
    k.args = {access(ArgKind::halo, 0, 1), access(ArgKind::write, 1), access(ArgKind::origin, 0), plain(ArgKind::end)};
    s.kernels = {k};
    return s;
}

TEST(DataSpec, BufferOfItsOwnUnitsMapsLinearlyOntoTheJobsUnits) {
    const DataJobSpec s = resize_spec();
    EXPECT_EQ(refusal(s), "");
    // Row groups 10..14 = output rows 40..59 read input rows [20 - 1, 30 + 1) and write 40..59.
    EXPECT_EQ(input_rows(s, 0, 10, 5), (std::pair<std::uint64_t, std::uint64_t>{19, 12}));
    EXPECT_EQ(input_rows(s, 1, 10, 5), (std::pair<std::uint64_t, std::uint64_t>{40, 20}));
    // Clamped to the image at both ends; an empty slice holds none.
    EXPECT_EQ(input_rows(s, 0, 0, 25), (std::pair<std::uint64_t, std::uint64_t>{0, 50}));
    EXPECT_EQ(input_rows(s, 0, 24, 1), (std::pair<std::uint64_t, std::uint64_t>{47, 3}));
    EXPECT_EQ(input_rows(s, 0, 3, 0).second, 0u);
    // A fraction rounds outwards: 3 job units over 7 rows (7/3 rows each).
    DataJobSpec odd = s;
    odd.units = 3;
    odd.buffers[0].units = 7;
    odd.buffers[0].map_num = odd.buffers[0].map_den = 0;  // the default map: 7 rows / 3 units
    odd.buffers[1].units = 12;
    EXPECT_EQ(refusal(odd), "");
    EXPECT_EQ(input_rows(odd, 0, 1, 1), (std::pair<std::uint64_t, std::uint64_t>{1, 5}));  // [7/3 - 1, 14/3 + 1)
    // The last row group of an output of 98 rows holds 2.
    DataJobSpec tail = s;
    tail.buffers[1].units = 98;
    EXPECT_EQ(input_rows(tail, 1, 24, 1), (std::pair<std::uint64_t, std::uint64_t>{96, 2}));
    // The planner counts its rows per job unit.
    const PlanRequest r = data_plan_request(s);
    EXPECT_DOUBLE_EQ(r.kernel.bytes_in_per_item, 4.0 * 4 * 50 / 25 / 2);
    EXPECT_DOUBLE_EQ(r.kernel.bytes_out_per_item, 8.0 * 4 * 100 / 25 / 2);
    // Its halo is no neighbour's business: slices of one row group are fine.
    std::vector<Assignment> ones;
    for (std::uint64_t o = 0; o < 25; ++o) ones.push_back(slice(int(o), 0, o, 1));
    EXPECT_NO_THROW(check_slices(s, ones));
    // An input: nothing to exchange between slices.
    for (const auto bytes : data_layout(s, ones).halo_bytes_per_step) EXPECT_EQ(bytes, 0u);
}

TEST(DataSpec, BufferOfItsOwnUnitsRoundTripsInJson) {
    const DataJobSpec s = resize_spec();
    const auto j = to_json(s);
    EXPECT_EQ(j.at("buffers").at(0).at("units"), 50);
    EXPECT_EQ(j.at("buffers").at(0).at("map"), nlohmann::json::array({200, 100}));
    const DataJobSpec back = data_job_from_json(j);
    EXPECT_EQ(to_json(back), j);
    EXPECT_EQ(back.buffers[1].units, 100u);
    EXPECT_EQ(back.buffers[1].map_num, 4u);
    EXPECT_EQ(back.buffers[1].map_den, 1u);
    // Buffers without them keep the form they had.
    EXPECT_FALSE(to_json(heat_spec()).at("buffers").at(0).contains("units"));
    auto bad = j;
    bad["buffers"][0]["map"] = {1, 2, 3};
    EXPECT_THROW(data_job_from_json(bad), InvalidArgument);
}

TEST(DataSpec, RefusesWhatABufferOfItsOwnUnitsCannotDo) {
    // Written where slices share its rows (a fraction of a row per job unit).
    DataJobSpec s = resize_spec();
    s.kernels[0].args[0] = access(ArgKind::read_write, 0);
    s.buffers[0].map_num = 3;  // 1.5 rows per job unit
    s.buffers[0].map_den = 2;
    EXPECT_EQ(refusal(s), "kernel 'k', argument 0 ('in'): 'in' has its own 50 units, mapped onto the job's by a "
                          "fraction: neighbouring slices share rows of it, so it can only be read (written, it needs "
                          "a map [R, 1])");
    // A halo of an output.
    s = resize_spec();
    s.kernels[0].args.push_back(access(ArgKind::halo, 1, 1));
    EXPECT_HAS(refusal(s), "argument 4 ('out'): 'out' has its own units: a halo of it reads rank 0's input");
    // In a multi-step job, or swapped.
    s = resize_spec();
    s.steps = 2;
    EXPECT_HAS(refusal(s), "buffer 'in': a buffer of its own units is read by one-step jobs only (steps 2)");
    s = resize_spec();
    s.buffers.push_back(s.buffers[0]);
    s.buffers.back().name = "in2";
    s.kernels[0].args.push_back(access(ArgKind::read, 2));
    s.swaps = {{0, 2}};
    EXPECT_HAS(refusal(s), "swap of 'in' and 'in2': a buffer of its own units cannot swap");
    // A half-given map, a map without units, a shared buffer.
    s = resize_spec();
    s.buffers[0].map_den = 0;
    EXPECT_HAS(refusal(s), "buffer 'in': a map needs both num and den above 0");
    s = resize_spec();
    s.buffers[1].units = 0;
    EXPECT_HAS(refusal(s), "buffer 'out': a map needs the buffer's own units");
}
}  // namespace
}  // namespace worksize

namespace worksize {
namespace {
// Ghost zones: every split buffer holds k times the deepest halo, launches between exchanges
// cover the rows the next steps read, the traffic of an exchanging step is k rows per neighbour;
// jobs of several kernels or with reductions are refused.
TEST(DataSpec, GhostZones) {
    DataJobSpec s = heat_spec();
    s.exchange_every = 4;
    validate(s);
    for (std::size_t b = 0; b < s.buffers.size(); ++b) EXPECT_EQ(halo_rows(s, int(b)), 4u) << s.buffers[b].name;
    EXPECT_EQ(ghost_rows(s, 0), 3u);
    EXPECT_EQ(ghost_rows(s, 3), 0u);
    EXPECT_EQ(ghost_rows(s, 4), 3u);
    EXPECT_EQ(data_job_from_json(to_json(s)).exchange_every, 4u);
    s.exchange_every = 1;
    EXPECT_EQ(ghost_rows(s, 0), 0u);

    DataJobSpec two = heat_spec();
    two.kernels.push_back(two.kernels.front());
    two.exchange_every = 2;
    try {
        validate(two);
        FAIL() << "ghost zones over two kernels were accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("ghost zones (exchange_every 2) need a job of one kernel"), std::string::npos)
            << e.what();
    }
}

// k-means' shape: `accumulate` sums chunks of 256 points. A split that leaves a slice 7,091
// items (7 · 1013) would launch it in groups of 7; boundaries move to multiples of 256·64 where
// that costs at most 1/64 of the smaller slice.
TEST(DataSpec, ChunkedKernelsGetSliceBoundariesOnWholeWorkGroups) {
    DataJobSpec s;
    s.name = "kmeans";
    s.source = "__kernel void k() {}";
    s.units = 2097152;
    s.buffers = {split("p", 16, true)};
    KernelDecl k;
    k.name = "k";
    k.args = {access(ArgKind::read, 0), plain(ArgKind::begin)};
    k.units_per_item = 256;
    s.kernels = {k};
    std::vector<Assignment> a = {slice(0, 0, 0, 1815296), slice(1, 1, 1815296, 2097152 - 1815296)};
    align_slices(s, a);
    EXPECT_EQ(a[0].offset, 0u);
    EXPECT_EQ(a[0].units % (256 * 64), 0u) << a[0].units;
    EXPECT_LE(a[0].units > 1815296 ? a[0].units - 1815296 : 1815296 - a[0].units, (2097152 - 1815296) / 64);
    EXPECT_EQ(a[1].offset, a[0].units);
    EXPECT_EQ(a[0].units + a[1].units, 2097152u);
    EXPECT_EQ(a[1].global.x, a[1].units);
    EXPECT_NEAR(a[0].share + a[1].share, 1.0, 1e-12);

    // Small slices: no boundary may move by more than 1/64 of them, so none moves.
    std::vector<Assignment> b = {slice(0, 0, 0, 256 * 30), slice(1, 1, 256 * 30, 256 * 27), slice(2, 2, 256 * 57, 256 * 13)};
    align_slices(s, b);
    EXPECT_EQ(b[0].units, 256u * 30);
    EXPECT_EQ(b[1].units, 256u * 27);
    EXPECT_EQ(b[2].units, 256u * 13);

    // A kernel with its own work-group, or of one unit per item (padded, guarded by `end`): no change.
    s.kernels[0].required_local = {64, 1};
    const std::uint64_t odd = 16384 * 111;  // a multiple of the granule lcm(256, 256·64), not of twice it
    std::vector<Assignment> c = {slice(0, 0, 0, odd), slice(1, 1, odd, 2097152 - odd)};
    align_slices(s, c);
    EXPECT_EQ(c[0].units, odd);
}
}  // namespace
}  // namespace worksize
