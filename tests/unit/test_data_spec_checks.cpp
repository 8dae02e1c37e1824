// validate()'s refusals of data-job declarations (scheduler/data_spec.hpp), each naming the
// kernel and the argument's buffer, and the errors of the JSON form, naming the place; the rest
// of the declaration's tests are test_data_spec.cpp.
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
using test::scalar;
using test::shared;
using test::split;

// --- validate()'s refusals: each names the kernel and the argument's buffer. -------------------

TEST(DataSpec, RefusesTwoWritesOfOneBuffer) {
    DataJobSpec s = copy_spec();
    s.kernels[0].args.push_back(access(ArgKind::write, 1));
    const std::string m = refusal(s);
    EXPECT_HAS(m, "kernel 'k', argument 3 ('y')");
    EXPECT_HAS(m, "overlapping writes");
}

TEST(DataSpec, RefusesAReadWriteAndAWriteOfOneBuffer) {
    DataJobSpec s = copy_spec();
    s.kernels[0].args[0] = access(ArgKind::read_write, 1);
    const std::string m = refusal(s);
    EXPECT_HAS(m, "kernel 'k', argument 1 ('y')");
    EXPECT_HAS(m, "overlapping writes");
}

TEST(DataSpec, RefusesWritingABufferReadWithAHalo) {
    DataJobSpec s = heat_spec();
    s.kernels[0].args[4] = access(ArgKind::write, kT);  // halo(t) and write(t) in one kernel
    const std::string m = refusal(s);
    EXPECT_HAS(m, "kernel 'heat_step', argument 4 ('t')");
    EXPECT_HAS(m, "overlapping writes");
    EXPECT_HAS(m, "halo");
}

TEST(DataSpec, RefusesAHaloOnASharedBuffer) {
    DataJobSpec s = copy_spec();
    s.buffers.push_back(shared("table", 16));
    s.kernels[0].args.push_back(access(ArgKind::halo, 2, 1));
    const std::string m = refusal(s);
    EXPECT_HAS(m, "kernel 'k', argument 3 ('table')");
    EXPECT_HAS(m, "a halo needs a split buffer");
}

TEST(DataSpec, RefusesAllOfASplitBuffer) {
    DataJobSpec s = copy_spec();
    s.kernels[0].args[0] = access(ArgKind::all, 0);
    const std::string m = refusal(s);
    EXPECT_HAS(m, "kernel 'k', argument 0 ('x')");
    EXPECT_HAS(m, "all() takes a shared buffer");
    EXPECT_HAS(m, "is split");
}

TEST(DataSpec, RefusesReadingASharedBufferByRows) {
    DataJobSpec s = copy_spec();
    s.buffers.push_back(shared("table", 16));
    s.kernels[0].args.push_back(access(ArgKind::read, 2));
    const std::string m = refusal(s);
    EXPECT_HAS(m, "kernel 'k', argument 3 ('table')");
    EXPECT_HAS(m, "is shared");
}

TEST(DataSpec, RefusesAReductionIntoASplitBuffer) {
    DataJobSpec s = copy_spec();
    s.kernels[0].args[1] = access(ArgKind::reduce, 1);
    const std::string m = refusal(s);
    EXPECT_HAS(m, "kernel 'k', argument 1 ('y')");
    EXPECT_HAS(m, "reduce() writes a shared buffer");
}

TEST(DataSpec, RefusesAReductionOfA2DJob) {
    DataJobSpec s = heat_spec();
    s.buffers.push_back(shared("sums", 4, false));
    s.kernels[0].args.push_back(access(ArgKind::reduce, 3));
    const std::string m = refusal(s);
    EXPECT_HAS(m, "kernel 'heat_step', argument 10 ('sums')");
    EXPECT_HAS(m, "1-D");
}

TEST(DataSpec, RefusesReadingWholeWhatTheKernelReducesInto) {
    DataJobSpec s = copy_spec();
    s.buffers.push_back(shared("sums", 4, false));
    s.kernels[0].args.push_back(access(ArgKind::all, 2));
    s.kernels[0].args.push_back(access(ArgKind::reduce, 2));
    const std::string m = refusal(s);
    EXPECT_HAS(m, "kernel 'k', argument 3 ('sums')");
    EXPECT_HAS(m, "reduces into it");
}

TEST(DataSpec, RefusesAHaloThatReadsPastTheBuffer) {
    DataJobSpec s = heat_spec();
    s.kernels[0].args[0].depth = 30;
    std::string m = refusal(s);
    EXPECT_HAS(m, "kernel 'heat_step', argument 0 ('t')");
    EXPECT_HAS(m, "reads past");
    s.kernels[0].args[0].depth = 29;
    EXPECT_EQ(refusal(s), "");
    s.kernels[0].args[0].depth = 0;
    EXPECT_HAS(refusal(s), "depth 0");
}

TEST(DataSpec, RefusesABufferIndexThatDoesNotExist) {
    DataJobSpec s = copy_spec();
    s.kernels[0].args.push_back(access(ArgKind::read, 7));
    std::string m = refusal(s);
    EXPECT_HAS(m, "kernel 'k', argument 3");
    EXPECT_HAS(m, "names no declared buffer");
    s.kernels[0].args.back() = access(ArgKind::origin, -1);
    m = refusal(s);
    EXPECT_HAS(m, "kernel 'k', argument 3");
    EXPECT_HAS(m, "names no declared buffer");
}

TEST(DataSpec, RefusesASwapOfDifferentPitches) {
    DataJobSpec s = heat_spec();
    s.buffers[kNext].pitch = 9;
    const std::string m = refusal(s);
    EXPECT_HAS(m, "swap of 't' and 'next'");
    EXPECT_HAS(m, "same type and pitch");
}

TEST(DataSpec, RefusesASwapOfABufferWithItself) {
    DataJobSpec s = heat_spec();
    s.swaps = {{kT, kT}};
    EXPECT_HAS(refusal(s), "two different declared buffers");
    s.swaps = {{kT, 5}};
    EXPECT_HAS(refusal(s), "two different declared buffers");
}

TEST(DataSpec, RefusesAnUnusedBuffer) {
    DataJobSpec s = heat_spec();
    s.buffers.push_back(split("scratch", 8));
    const std::string m = refusal(s);
    EXPECT_HAS(m, "buffer 'scratch'");
    EXPECT_HAS(m, "no kernel uses it");
}

TEST(DataSpec, RefusesANonIntegerIntScalar) {
    DataJobSpec s = heat_spec();
    s.kernels[0].args[6] = scalar(ElemType::i32, 8.5);
    std::string m = refusal(s);
    EXPECT_HAS(m, "kernel 'heat_step', argument 6");
    EXPECT_HAS(m, "is not a int");
    s.kernels[0].args[6] = scalar(ElemType::u32, -1);
    EXPECT_HAS(refusal(s), "is not a uint");
    s.kernels[0].args[6] = scalar(ElemType::i32, 4294967296.0);
    EXPECT_HAS(refusal(s), "is not a int");
    s.kernels[0].args[6] = scalar(ElemType::f32, 8.5);  // a float may be anything
    EXPECT_EQ(refusal(s), "");
}

TEST(DataSpec, IndexArgumentsAreIntUpTo2To31ItemsElseLong) {
    constexpr std::uint64_t two31 = std::uint64_t(1) << 31;
    DataJobSpec s = copy_spec(two31 - 1);  // end is an int: 2^31-1 items fit
    EXPECT_EQ(refusal(s), "");
    s = copy_spec(two31);
    std::string m = refusal(s);
    EXPECT_HAS(m, "kernel 'k', argument 2: end is an int, at most 2^31-1 (2147483647), but the job has 2147483648 items");
    EXPECT_HAS(m, "declare it long");
    s.kernels[0].args[2].index_type = ElemType::i64;
    EXPECT_EQ(refusal(s), "");
    s = copy_spec(3000000000);
    s.kernels[0].args[2] = plain(ArgKind::begin);
    EXPECT_HAS(refusal(s), "argument 2: begin is an int");
    // begin and end count items: 2 units per item halve them.
    s.kernels[0].units_per_item = 2;
    EXPECT_EQ(refusal(s), "");
    // origin counts the buffer's rows, whatever the kernel's items.
    s.kernels[0].args.push_back(access(ArgKind::origin, 0));
    EXPECT_HAS(refusal(s), "argument 3 ('x'): origin is an int, at most 2^31-1 (2147483647), but the job has 3000000000 rows of 'x'");
    s.kernels[0].args[3].index_type = ElemType::i64;
    EXPECT_EQ(refusal(s), "");
    // A buffer of its own units: its rows, not the job's, bound its origin.
    s = copy_spec(1000);
    s.buffers[0].units = two31 + 2;
    s.buffers[0].map_num = two31 + 2;
    s.buffers[0].map_den = 1000;
    s.steps = 1;
    s.kernels[0].args.push_back(access(ArgKind::origin, 0));
    EXPECT_HAS(refusal(s), "but the job has 2147483650 rows of 'x'");
    s.kernels[0].args[3].index_type = ElemType::i64;
    EXPECT_EQ(refusal(s), "");
    // Only int and long are index types, and only index arguments take one.
    s.kernels[0].args[3].index_type = ElemType::u32;
    EXPECT_HAS(refusal(s), "argument 3 ('x'): origin is an int or a long, not a uint");
    s = copy_spec();
    s.kernels[0].args[0].index_type = ElemType::i64;
    EXPECT_HAS(refusal(s), "argument 0 ('x'): an index type ('long') is for begin, end, origin and step, not read");
}

TEST(DataSpec, LongIsForValuesAndIndexesNotBuffers) {
    DataJobSpec s = copy_spec();
    s.kernels[0].args.push_back(scalar(ElemType::i64, 0x1p53));
    EXPECT_EQ(refusal(s), "");
    s.kernels[0].args.back() = scalar(ElemType::i64, -0x1p63);
    EXPECT_EQ(refusal(s), "");
    s.kernels[0].args.back() = scalar(ElemType::i64, 0x1p63);
    EXPECT_HAS(refusal(s), "argument 3: 9.223372036854776e+18 is not a long");
    s.kernels[0].args.back() = scalar(ElemType::i64, 1.5);
    EXPECT_HAS(refusal(s), "is not a long");
    s = copy_spec();
    s.buffers[1].type = ElemType::i64;
    EXPECT_HAS(refusal(s), "buffer 'y': buffers of long are not supported");
    EXPECT_EQ(elem_size(ElemType::i64), 8u);
    EXPECT_EQ(parse_elem_type("long"), ElemType::i64);
}

TEST(DataSpec, LongIndexesRoundTripInJson) {
    DataJobSpec s = copy_spec(3000000000);
    s.kernels[0].args[2].index_type = ElemType::i64;
    s.kernels[0].args.push_back(access(ArgKind::origin, 1));
    s.kernels[0].args.back().index_type = ElemType::i64;
    s.kernels[0].args.push_back(plain(ArgKind::begin));  // an int: no "type" on the wire
    s.kernels[0].args.push_back(scalar(ElemType::i64, 5e9));
    s.kernels[0].units_per_item = 2;  // (so that begin's int holds the items)
    const auto j = to_json(s);
    EXPECT_EQ(j["kernels"][0]["args"][2]["type"], "long");
    EXPECT_FALSE(j["kernels"][0]["args"][4].contains("type"));
    const DataJobSpec r = data_job_from_json(j);
    ASSERT_EQ(r.kernels[0].args.size(), 6u);
    EXPECT_EQ(r.kernels[0].args[2].index_type, ElemType::i64);
    EXPECT_EQ(r.kernels[0].args[3].index_type, ElemType::i64);
    EXPECT_EQ(r.kernels[0].args[4].index_type, ElemType::i32);
    EXPECT_EQ(r.kernels[0].args[5].scalar_type, ElemType::i64);
    EXPECT_EQ(r.kernels[0].args[5].index_type, ElemType::i32);
    EXPECT_DOUBLE_EQ(r.kernels[0].args[5].value, 5e9);
    EXPECT_EQ(refusal(r), "");
}

TEST(DataSpec, RefusesMalformedJobs) {
    DataJobSpec s = heat_spec();
    s.units = 0;
    EXPECT_HAS(refusal(s), "no units");
    s = heat_spec();
    s.dims = 3;
    EXPECT_HAS(refusal(s), "dims must be 1 or 2");
    s = copy_spec();
    s.width = 4;
    EXPECT_HAS(refusal(s), "a 1-D job has width 1");
    s = heat_spec();
    s.steps = 0;
    EXPECT_HAS(refusal(s), "steps");
    s = heat_spec();
    s.buffers[kPower].name = "t";
    EXPECT_HAS(refusal(s), "buffer 't': declared twice");
    s = heat_spec();
    s.kernels.clear();
    EXPECT_HAS(refusal(s), "no kernel");
    s = copy_spec();
    s.kernels[0].units_per_item = 0;
    EXPECT_HAS(refusal(s), "kernel 'k': units_per_item 0");
}
// --- The JSON form's errors name the place. ------------------------------------------------------

TEST(DataSpec, JsonNamesTheMissingField) {
    nlohmann::json j = to_json(heat_spec());
    j.erase("units");
    try {
        data_job_from_json(j);
        ADD_FAILURE() << "a job without units was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_HAS(std::string(e.what()), "data job, job:");
        EXPECT_HAS(std::string(e.what()), "units");
    }
    j = to_json(heat_spec());
    j["buffers"][1].erase("name");
    try {
        data_job_from_json(j);
        ADD_FAILURE() << "a buffer without a name was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_HAS(std::string(e.what()), "data job, buffer 1:");
        EXPECT_HAS(std::string(e.what()), "name");
    }
    j = to_json(heat_spec());
    j["kernels"][0]["args"][2].erase("access");
    try {
        data_job_from_json(j);
        ADD_FAILURE() << "an argument without an access was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_HAS(std::string(e.what()), "data job, kernel 'heat_step', argument 2:");
        EXPECT_HAS(std::string(e.what()), "access");
    }
}

TEST(DataSpec, JsonNamesTheUnknownAccess) {
    DataJobSpec s = copy_spec();
    nlohmann::json j = to_json(s);
    j["kernels"][0]["args"][0]["access"] = "readonly";
    try {
        data_job_from_json(j);
        ADD_FAILURE() << "access 'readonly' was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_HAS(std::string(e.what()), "data job, kernel 'k', argument 0: unknown access 'readonly'");
    }
    j = to_json(s);
    j["buffers"][0]["type"] = "half";
    try {
        data_job_from_json(j);
        ADD_FAILURE() << "type 'half' was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_HAS(std::string(e.what()), "data job, buffer 0: unknown element type 'half'");
    }
    j = to_json(s);
    j["buffers"][1]["layout"] = "striped";
    EXPECT_THROW(data_job_from_json(j), InvalidArgument);
}

}  // namespace
}  // namespace worksize
