// Kernels of whole arrays (KernelDecl::whole_arrays) and step arguments in a data-job declaration,
// without a device: which buffers a device holds whole and where their rows sit, the memory a
// slice takes, the split granule such kernels add, the JSON form, validate()'s refusals.
#include <gtest/gtest.h>

#include <string>

#include "declarations.hpp"
#include "worksize/scheduler/data_spec.hpp"

namespace worksize {
namespace {

using test::access;
using test::refusal;
using test::plain;
using test::scalar;
using test::shared;
using test::split;

/// PolyBench's fdtd-2d as a data job of `rows` rows of 10 floats: kernel1 updates ey from hz and
/// the row above, kernel3 hz from ex and the row below of ey; `whole` marks both as kernels of
/// whole arrays. A second kernel reads 'aux' through its origin (a slice kernel).
DataJobSpec fdtd_spec(std::uint64_t rows, bool whole) {
    DataJobSpec s;
    s.name = "fdtd";
    s.source = "__kernel void k1() {}";
    s.dims = 2;
    s.width = 10;
    s.units = rows;
    s.steps = 20;
    s.buffers = {shared("fict", 20), split("ex", 10, true, true), split("ey", 10, true, true),
                 split("hz", 10, true, true), split("aux", 10, true)};
    KernelDecl k1;
    k1.name = "k1";
    ArgDecl t = plain(ArgKind::step);
    k1.args = {access(ArgKind::all, 0), access(ArgKind::read_write, 2), access(ArgKind::halo, 3, 1), t,
               scalar(ElemType::i32, double(rows))};
    k1.whole_arrays = whole;
    KernelDecl k3;
    k3.name = "k3";
    k3.args = {access(ArgKind::read, 1), access(ArgKind::halo, 2, 1), access(ArgKind::read_write, 3)};
    k3.whole_arrays = whole;
    KernelDecl k4;
    k4.name = "k4";
    k4.args = {access(ArgKind::read, 4), access(ArgKind::origin, 4), access(ArgKind::origin, 1),
               access(ArgKind::read_write, 1), plain(ArgKind::end)};
    s.kernels = {k1, k3, k4};
    return s;
}


TEST(DataPlacement, WholeArraysKernelsHoldTheirBuffersWhole) {
    const DataJobSpec s = fdtd_spec(100, true);
    ASSERT_EQ(refusal(s), "");
    EXPECT_FALSE(held_whole(s, 0)) << "a shared buffer is whole anyway";
    EXPECT_TRUE(held_whole(s, 1));  // ex: k3 reads it
    EXPECT_TRUE(held_whole(s, 2));
    EXPECT_TRUE(held_whole(s, 3));
    EXPECT_FALSE(held_whole(s, 4)) << "'aux' is touched only by the slice kernel k4";
    // Rows sit at their global place (origin 0) in a whole buffer; a slice buffer starts at its
    // first row minus the halo.
    EXPECT_EQ(first_held_unit(s, 2, 48), 0);
    EXPECT_EQ(first_held_unit(s, 4, 48), 48);
    EXPECT_EQ(held_elements(s, 0, 16), 20u);
    EXPECT_EQ(held_elements(s, 2, 16), 100u * 10u);
    EXPECT_EQ(held_elements(s, 4, 16), 16u * 10u);
    EXPECT_EQ(held_bytes(s, 16), (20u + 3u * 1000u + 160u) * 4u);

    const DataJobSpec slices = fdtd_spec(100, false);
    ASSERT_EQ(refusal(slices), "");
    EXPECT_FALSE(held_whole(slices, 2));
    EXPECT_EQ(first_held_unit(slices, 2, 48), 47) << "halo of 1";
    EXPECT_EQ(first_held_unit(slices, 2, 0), -1);
    EXPECT_EQ(held_elements(slices, 2, 16), 18u * 10u);
}

TEST(DataPlacement, WholeArraysKernelsAlignTheSlices) {
    EXPECT_EQ(data_granule(fdtd_spec(100, false)), 1u);
    EXPECT_EQ(data_granule(fdtd_spec(100, true)), kWholeArraysAlignment2D);
    DataJobSpec one_d;
    one_d.name = "x";
    one_d.source = "k";
    one_d.units = 5000;
    one_d.buffers = {split("a", 1, true, true)};
    KernelDecl k;
    k.name = "k";
    k.args = {access(ArgKind::read_write, 0)};
    k.whole_arrays = true;
    k.units_per_item = 3;
    one_d.kernels = {k};
    ASSERT_EQ(refusal(one_d), "");
    EXPECT_EQ(data_granule(one_d), kWholeArraysAlignment1D * 3);
}

TEST(DataPlacement, JsonRoundTripOfWholeArraysAndStepArguments) {
    DataJobSpec s = fdtd_spec(64, true);
    s.kernels[0].args[3].step_times = 4;
    s.kernels[0].args[3].step_plus = -2;
    s.kernels[0].args[3].index_type = ElemType::i64;
    const DataJobSpec back = data_job_from_json(to_json(s));
    EXPECT_EQ(to_json(back), to_json(s));
    EXPECT_TRUE(back.kernels[0].whole_arrays);
    EXPECT_FALSE(back.kernels[2].whole_arrays);
    const ArgDecl& t = back.kernels[0].args[3];
    EXPECT_EQ(t.kind, ArgKind::step);
    EXPECT_EQ(t.step_times, 4);
    EXPECT_EQ(t.step_plus, -2);
    EXPECT_EQ(t.index_type, ElemType::i64);

    nlohmann::json j = to_json(s);
    j["kernels"][0]["arrays"] = "global";
    try {
        data_job_from_json(j);
        ADD_FAILURE() << "arrays 'global' accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("kernel 0: arrays 'global' (whole, slice or relative)"), std::string::npos) << e.what();
    }
}

TEST(DataPlacement, RefusesWhatWholeArraysCannotDo) {
    DataJobSpec ghost = fdtd_spec(64, true);
    ghost.kernels.resize(1);
    ghost.buffers.resize(4);
    ghost.exchange_every = 2;
    EXPECT_NE(refusal(ghost).find("kernel 'k1': a kernel of whole arrays runs without ghost zones"), std::string::npos)
        << refusal(ghost);

    DataJobSpec own_units = fdtd_spec(64, true);
    own_units.steps = 1;
    own_units.buffers[3].units = 32;
    EXPECT_NE(refusal(own_units).find("'hz' has its own units; a kernel of whole arrays indexes the job's rows"),
              std::string::npos)
        << refusal(own_units);
}

TEST(DataPlacement, StepArgumentsMustFitTheirType) {
    DataJobSpec s = fdtd_spec(64, true);
    s.steps = 1000;
    s.kernels[0].args[3].step_times = 3000000;  // 999 * 3e6 > 2^31
    const std::string m = refusal(s);
    EXPECT_NE(m.find("kernel 'k1', argument 3: step * 3000000 + 0 leaves an int within 1000 steps; declare it long"),
              std::string::npos)
        << m;
    s.kernels[0].args[3].index_type = ElemType::i64;
    EXPECT_EQ(refusal(s), "");
    s.kernels[0].args[3].index_type = ElemType::i32;
    s.kernels[0].args[3].step_times = -1;
    s.kernels[0].args[3].step_plus = 999;  // 999 down to 0
    EXPECT_EQ(refusal(s), "");
    s.kernels[0].args[4].index_type = ElemType::i64;
    EXPECT_NE(refusal(s).find("is for begin, end, origin and step, not scalar"), std::string::npos) << refusal(s);
}

/// Rodinia's pathfinder as a declaration: groups of 256 items per 216 columns, expressions.
DataJobSpec pyramid_spec() {
    DataJobSpec s;
    s.name = "pathfinder";
    s.source = "k";
    s.units = 5000;
    s.steps = 5;
    s.buffers = {shared("wall", 99 * 5000), split("src", 1, true, true), split("dst", 1), shared("debug", 16384, false)};
    KernelDecl k;
    k.name = "dynproc_kernel";
    ArgDecl it = plain(ArgKind::expr);
    it.expr = "min(h, rows - 1 - step * h)";
    it.constants = {{"h", 20}, {"rows", 100}};
    ArgDecl border = plain(ArgKind::expr);
    border.expr = "h - begin";
    border.constants = {{"h", 20}};
    k.args = {it, access(ArgKind::all, 0), access(ArgKind::halo, 1, 20), access(ArgKind::write, 2), border,
              access(ArgKind::scratch, 3)};
    k.whole_arrays = true;
    k.group_items = 256;
    k.group_units = 216;
    s.kernels = {k};
    s.swaps = {{1, 2}};
    return s;
}

TEST(DataPlacement, LaunchGeometryOfItsOwnRoundTripsAndSetsTheGranule) {
    const DataJobSpec s = pyramid_spec();
    ASSERT_EQ(refusal(s), "");
    EXPECT_EQ(data_granule(s), 216u) << "whole groups, not the alignment of whole arrays";
    EXPECT_FALSE(data_plan_request(s).align_1d_to_groups) << "the plan's work-group is not the kernel's";
    const DataJobSpec back = data_job_from_json(to_json(s));
    EXPECT_EQ(to_json(back), to_json(s));
    EXPECT_EQ(back.kernels[0].group_items, 256u);
    EXPECT_EQ(back.kernels[0].group_units, 216u);
    EXPECT_EQ(back.kernels[0].args[0].expr, "min(h, rows - 1 - step * h)");
    EXPECT_EQ(back.kernels[0].args[0].constants, (ExprConstants{{"h", 20}, {"rows", 100}}));
    EXPECT_EQ(back.kernels[0].args[5].kind, ArgKind::scratch);
}

TEST(DataPlacement, RefusesBadGeometriesExpressionsAndScratch) {
    DataJobSpec half = pyramid_spec();
    half.kernels[0].group_units = 0;
    EXPECT_NE(refusal(half).find("a launch geometry needs both items and units per group"), std::string::npos);
    DataJobSpec two_d = pyramid_spec();
    two_d.dims = 2;
    two_d.width = 4;
    EXPECT_NE(refusal(two_d).find("a launch geometry of its own (256 items per 216 units) is for 1-D jobs"),
              std::string::npos)
        << refusal(two_d);
    DataJobSpec unknown = pyramid_spec();
    unknown.kernels[0].args[4].constants.clear();
    EXPECT_EQ(refusal(unknown), "kernel 'dynproc_kernel', argument 4: expression 'h - begin', at 1: unknown name 'h' "
                                "(step, steps, begin, end, units, min, max, or a constant of the declaration)");
    DataJobSpec out = pyramid_spec();
    out.buffers[3].output = true;
    EXPECT_NE(refusal(out).find("argument 5 ('debug'): 'debug' is scratch on each device"), std::string::npos)
        << refusal(out);
    DataJobSpec split_scratch = pyramid_spec();
    split_scratch.kernels[0].args[5].buffer = 2;
    EXPECT_NE(refusal(split_scratch).find("scratch() takes a shared buffer; 'dst' is split"), std::string::npos)
        << refusal(split_scratch);
}

TEST(DataPlacement, KernelsRunInTheirSteps) {
    KernelDecl k;
    EXPECT_TRUE(runs_in(k, 0, 5) && runs_in(k, 4, 5));
    k.every = 3;
    EXPECT_FALSE(runs_in(k, 0, 10));
    EXPECT_TRUE(runs_in(k, 2, 10));
    EXPECT_TRUE(runs_in(k, 5, 10));
    EXPECT_FALSE(runs_in(k, 6, 10));
    k.every = 1;
    k.runs = KernelRuns::first_step;
    EXPECT_TRUE(runs_in(k, 0, 10));
    EXPECT_FALSE(runs_in(k, 1, 10));
    k.runs = KernelRuns::last_step;
    EXPECT_TRUE(runs_in(k, 9, 10));
    EXPECT_FALSE(runs_in(k, 0, 10));
    EXPECT_FALSE(runs_every_step(k));

    DataJobSpec s = fdtd_spec(64, true);
    s.kernels[2].runs = KernelRuns::last_step;
    s.kernels[1].every = 4;
    ASSERT_EQ(refusal(s), "");
    const DataJobSpec back = data_job_from_json(to_json(s));
    EXPECT_EQ(back.kernels[2].runs, KernelRuns::last_step);
    EXPECT_EQ(back.kernels[1].every, 4u);
    EXPECT_EQ(to_json(back), to_json(s));
    s.kernels[2].every = 2;
    EXPECT_NE(refusal(s).find("kernel 'k4': runs in the last step only, so not every 2 steps as well"), std::string::npos)
        << refusal(s);
    s.kernels[2].every = 0;
    EXPECT_NE(refusal(s).find("kernel 'k4': runs every 0th step"), std::string::npos) << refusal(s);
}

TEST(DataPlacement, HostWrittenBuffersAreSharedInputsOfAJobWithHostSteps) {
    DataJobSpec s = pyramid_spec();
    s.buffers.push_back(shared("centres", 8));
    s.kernels[0].args.push_back(access(ArgKind::all, 4));
    s.buffers[4].host_written = true;
    EXPECT_NE(refusal(s).find("buffer 'centres': a host step writes shared inputs only, in a job with host steps"),
              std::string::npos)
        << refusal(s);
    s.host_every = 1;
    ASSERT_EQ(refusal(s), "");
    const DataJobSpec back = data_job_from_json(to_json(s));
    EXPECT_TRUE(back.buffers[4].host_written);
    EXPECT_EQ(back.host_every, 1u);
    s.buffers[1].host_written = true;  // split
    EXPECT_NE(refusal(s).find("buffer 'src': a host step writes shared inputs only"), std::string::npos) << refusal(s);
    s.buffers[1].host_written = false;
    ArgDecl r = access(ArgKind::reduce, 4);
    s.kernels[0].args.back() = r;
    EXPECT_NE(refusal(s).find("the host step writes 'centres'; a reduction into it would race it"), std::string::npos)
        << refusal(s);
}

TEST(DataPlacement, GeneratedBuffersAreNotInputs) {
    DataJobSpec s = pyramid_spec();
    s.buffers[0].input = false;
    s.buffers[0].generator = "wall";
    s.buffers[0].generator_args = {1000, 9};
    ASSERT_EQ(refusal(s), "");
    const DataJobSpec back = data_job_from_json(to_json(s));
    EXPECT_EQ(back.buffers[0].generator, "wall");
    EXPECT_EQ(back.buffers[0].generator_args, (std::vector<std::int64_t>{1000, 9}));
    EXPECT_EQ(data_plan_request(s).kernel.bytes_in_fixed, 0.0) << "nothing of it is sent";
    s.buffers[0].input = true;
    EXPECT_NE(refusal(s).find("buffer 'wall': generated on every rank (generator 'wall'), so neither rank 0's input"),
              std::string::npos)
        << refusal(s);
}

}  // namespace
}  // namespace worksize
