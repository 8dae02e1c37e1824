// Kernels that index from their buffers' start (KernelDecl::slice_relative, Rodinia's srad) and
// value_of arguments, without a device: the buffers they share are held with one halo, starting
// within the problem; the split granule ignores their work-groups; the JSON form; the refusals.
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

/// srad's shape: a 1-D job of `cols` columns of 8 elements; "srad" reads the image with a halo of
/// 1 and writes c, "srad2" reads c with a halo of 1 and updates the image, "prepare" sums it.
DataJobSpec srad_spec(std::uint64_t cols = 40) {
    DataJobSpec s;
    s.name = "srad";
    s.source = "__kernel void k() {}";
    s.units = cols;
    s.steps = 3;
    s.host_every = 1;
    s.buffers = {split("I", 8, true, true), split("c", 8), split("jE", 1), shared("sum", 1, false),
                 shared("q0", 1)};
    s.buffers[4].host_written = true;
    KernelDecl srad;
    srad.name = "srad";
    srad.args = {scalar(ElemType::f32, 0.5), access(ArgKind::read, 2),
                 access(ArgKind::value_of, 4), access(ArgKind::write, 1), access(ArgKind::halo, 0, 1)};
    srad.runs = KernelRuns::after_first;
    KernelDecl srad2;
    srad2.name = "srad2";
    srad2.args = {access(ArgKind::halo, 1, 1), access(ArgKind::read_write, 0)};
    srad2.runs = KernelRuns::after_first;
    KernelDecl prepare;
    prepare.name = "prepare";
    prepare.args = {access(ArgKind::read, 0), access(ArgKind::reduce, 3)};
    for (KernelDecl* k : {&srad, &srad2, &prepare}) {
        k->slice_relative = true;
        k->required_local = {256, 1};
    }
    s.kernels = {srad, srad2, prepare};
    return s;
}


TEST(SliceRelative, BuffersShareOneHaloAndStartWithinTheProblem) {
    const DataJobSpec s = srad_spec();
    ASSERT_EQ(refusal(s), "");
    for (int b : {0, 1, 2}) {
        EXPECT_EQ(halo_rows(s, b), 1u) << s.buffers[std::size_t(b)].name;
        EXPECT_EQ(first_held_unit(s, b, 0), 0) << "no row before the problem";
        EXPECT_EQ(first_held_unit(s, b, 10), 9);
    }
    EXPECT_EQ(widest_pitch(s, s.kernels[0]), 8u);
    EXPECT_EQ(data_granule(s), 1u) << "its groups tile elements, not the split's units";
    EXPECT_TRUE(runs_in(s.kernels[0], 1, 3));
    EXPECT_FALSE(runs_in(s.kernels[0], 0, 3));
    EXPECT_TRUE(runs_steadily(s.kernels[0]));
}

TEST(SliceRelative, JsonRoundTrip) {
    const DataJobSpec back = data_job_from_json(to_json(srad_spec()));
    EXPECT_TRUE(back.kernels[0].slice_relative);
    EXPECT_FALSE(back.kernels[0].whole_arrays);
    EXPECT_EQ(back.kernels[0].runs, KernelRuns::after_first);
    EXPECT_EQ(back.kernels[0].args[2].kind, ArgKind::value_of);
    EXPECT_EQ(back.kernels[2].runs, KernelRuns::every);
}

TEST(SliceRelative, RefusesWhatItCannotDo) {
    DataJobSpec no_local = srad_spec();
    no_local.kernels[1].required_local = {};
    EXPECT_EQ(refusal(no_local), "data job 'srad', kernel 'srad2': a slice-relative kernel needs its work-group size "
                                 "(required_local): it computes its index from group ids");
    DataJobSpec split_value = srad_spec();
    split_value.kernels[0].args.push_back(access(ArgKind::value_of, 1));
    EXPECT_EQ(refusal(split_value), "data job 'srad', kernel 'srad', argument 5 (value_of): takes a shared buffer of at "
                                    "least one element; 'c' is split");
    DataJobSpec begin = srad_spec();
    begin.kernels[2].args.push_back(plain(ArgKind::begin));
    EXPECT_NE(refusal(begin).find("kernel 'prepare', argument 2 (begin): a slice-relative kernel indexes from its "
                                  "buffers' start"),
              std::string::npos)
        << refusal(begin);
    DataJobSpec groups = srad_spec();
    groups.kernels[2].args[1].per_group = true;
    EXPECT_NE(refusal(groups).find("kernel 'prepare', argument 1 (reduce): a slice-relative kernel writes one record "
                                   "per element"),
              std::string::npos)
        << refusal(groups);
    DataJobSpec two_d = srad_spec();
    two_d.dims = 2;
    two_d.width = 8;
    EXPECT_FALSE(refusal(two_d).empty());
}

}  // namespace
}  // namespace worksize
