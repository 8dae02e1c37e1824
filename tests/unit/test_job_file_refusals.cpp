// Job files (scheduler/job_file.hpp) without a device: each kind of mistake is refused with one
// message "job file 'PATH': <field>: why" that names the field; the files that parse are
// test_job_file.cpp.
#include <gtest/gtest.h>

#include <string>

#include "job_file_fixtures.hpp"
#include "worksize/scheduler/job_file.hpp"

namespace worksize {
namespace {

using test::filter_cl;
using test::filter_json;
using test::TempDir;

/// The message job_file_from_json(j) throws (InvalidArgument), or "" if it accepts j.
std::string refusal(const nlohmann::json& j, const std::string& dir = ".") {
    try {
        job_file_from_json(j, "f.json", dir);
    } catch (const InvalidArgument& e) {
        return e.what();
    }
    return "";
}

#define EXPECT_REFUSED(json, expected)                                                                   \
    do {                                                                                                 \
        const std::string msg_ = refusal(json);                                                          \
        EXPECT_EQ(msg_.rfind("job file 'f.json': ", 0), 0u) << "message: '" << msg_ << "'";             \
        EXPECT_NE(msg_.find(expected), std::string::npos) << "message: '" << msg_ << "'\nwant: " << (expected); \
    } while (0)

// --- Refused, naming the field ------------------------------------------------------------------

TEST(JobFile, MissingName) {
    auto j = filter_json();
    j.erase("name");
    EXPECT_REFUSED(j, "job file 'f.json': name: missing 'name'");
}

TEST(JobFile, MissingSource) {
    TempDir dir;
    auto j = filter_json();
    j["source"] = "no_such.cl";
    const std::string msg = refusal(j, dir.path().string());
    EXPECT_EQ(msg.rfind("job file 'f.json': source: cannot read '", 0), 0u) << msg;
    EXPECT_NE(msg.find("no_such.cl'"), std::string::npos) << msg;
    j.erase("source");
    EXPECT_REFUSED(j, "job file 'f.json': source: missing 'source'");
}

TEST(JobFile, UnknownBufferInAnArgument) {
    auto j = filter_json();
    j["kernels"][0]["args"][2] = {{"all", "w"}};
    EXPECT_EQ(refusal(j), "job file 'f.json': kernels[0].args[2].all: no buffer is named 'w'");
    j = filter_json();
    j["kernels"][0]["args"][3] = {{"out", 3}};
    EXPECT_REFUSED(j, "kernels[0].args[3].out: names a buffer by its name, not 3");
}

TEST(JobFile, ArgumentWithTwoKinds) {
    auto j = filter_json();
    j["kernels"][0]["args"][3] = {{"out", "out"}, {"in", "in"}};
    EXPECT_REFUSED(j, "kernels[0].args[3]: ");
    EXPECT_REFUSED(j, "is not one argument");
    j = filter_json();
    j["kernels"][0]["args"][5] = {{"int", "width"}, {"uint", 3}};
    EXPECT_REFUSED(j, "kernels[0].args[5]: ");
    EXPECT_REFUSED(j, "is not one argument");
    j = filter_json();
    j["kernels"][0]["args"][5] = {{"intt", "width"}};
    EXPECT_REFUSED(j, "kernels[0].args[5]: ");
    EXPECT_REFUSED(j, "is not one argument");
    j["kernels"][0]["args"][5] = nlohmann::json::object();
    EXPECT_REFUSED(j, "kernels[0].args[5]: an object such as");
}

TEST(JobFile, ReduceArgumentsMayWriteOneRecordPerWorkGroup) {
    auto j = nlohmann::json::parse(R"({
      "name": "maxima", "dims": 1, "size": [1000],
      "buffers": [{"name": "x", "init": {"constant": 1}}, {"name": "m", "layout": "shared", "count": 1, "output": true}],
      "kernels": [{"name": "filter", "args": [{"in": "x"}, {"reduce": "m", "op": "max", "per": "group"}, {"end": true}]}]
    })");
    j["source"] = filter_cl();
    const JobFile f = job_file_from_json(j, "f.json", ".");
    EXPECT_TRUE(f.spec.kernels[0].args[1].per_group);
    EXPECT_EQ(f.spec.kernels[0].args[1].op, ReduceOp::max);
    j["kernels"][0]["args"][1] = {{"reduce", "m"}, {"per", "item"}};
    EXPECT_FALSE(job_file_from_json(j, "f.json", ".").spec.kernels[0].args[1].per_group);
    j["kernels"][0]["args"][1] = {{"reduce", "m"}, {"per", "warp"}};
    EXPECT_REFUSED(j, "kernels[0].args[1].per: 'warp' is not item or group");
    j["kernels"][0]["args"][1] = {{"reduce", "m"}, {"op", "sum"}, {"per", "group"}, {"depth", 2}};
    EXPECT_REFUSED(j, "is not one argument");
}

TEST(JobFile, IndexArgumentsMayBeLong) {
    auto j = nlohmann::json::parse(R"({
      "name": "big", "dims": 1, "size": [3000000000],
      "buffers": [{"name": "z", "output": true}],
      "kernels": [{"name": "fill", "args": [{"out": "z"}, {"origin": "z", "type": "long"}, {"end": true, "type": "long"},
                                            {"begin": true, "type": "long"}, {"long": "units"}]}]
    })");
    j["source"] = filter_cl();
    const JobFile f = job_file_from_json(j, "f.json", ".");
    const auto& args = f.spec.kernels[0].args;
    ASSERT_EQ(args.size(), 5u);
    EXPECT_EQ(args[1].kind, ArgKind::origin);
    EXPECT_EQ(args[1].index_type, ElemType::i64);
    EXPECT_EQ(args[2].kind, ArgKind::end);
    EXPECT_EQ(args[2].index_type, ElemType::i64);
    EXPECT_EQ(args[3].index_type, ElemType::i64);
    EXPECT_EQ(args[4].kind, ArgKind::scalar);
    EXPECT_EQ(args[4].scalar_type, ElemType::i64);
    EXPECT_DOUBLE_EQ(args[4].value, 3e9);
    EXPECT_NO_THROW(f.spec_for({3000000000, 1}));
    // An int end cannot hold 3e9 items; "type": "int" is the default, said out loud.
    j["kernels"][0]["args"][2] = {{"end", true}, {"type", "int"}};
    EXPECT_REFUSED(j, "argument 2: end is an int, at most 2^31-1 (2147483647), but the job has 3000000000 items");
    j["kernels"][0]["args"][2] = {{"end", true}, {"type", "float"}};
    EXPECT_REFUSED(j, "kernels[0].args[2].type: 'float' is not int or long");
    j["kernels"][0]["args"][2] = {{"end", true}};
    j["kernels"][0]["args"][0] = {{"out", "z"}, {"type", "long"}};
    EXPECT_REFUSED(j, "is not one argument");
}

TEST(JobFile, PitchIsWidthHeightUnitsOrANumber) {
    auto j = filter_json();
    j["buffers"][0]["pitch"] = "depth";
    EXPECT_REFUSED(j, "job file 'f.json': buffers[0].pitch: 'depth' is neither a number nor width, height or units");
    j["buffers"][0]["pitch"] = 0;
    EXPECT_REFUSED(j, "buffers[0].pitch: must be a whole number >= 1");
    j["buffers"][0]["pitch"] = 2.5;
    EXPECT_REFUSED(j, "buffers[0].pitch: must be a whole number >= 1");
    j["buffers"][0]["pitch"] = "x*width";
    EXPECT_REFUSED(j, "buffers[0].pitch: 'x*width' is not N*width");
}

TEST(JobFile, HaloWithoutDepth) {
    auto j = filter_json();
    j["kernels"][0]["args"][0] = {{"halo", "in"}};
    EXPECT_REFUSED(j, "job file 'f.json': kernels[0].args[0]: missing 'depth'");
    j["kernels"][0]["args"][0] = {{"halo", "in"}, {"depth", 0}};
    EXPECT_REFUSED(j, "kernels[0].args[0].depth: 0 is not a whole number >= 1");
}

TEST(JobFile, RandomInitNeedsLoNotAboveHi) {
    auto j = filter_json();
    j["buffers"][0]["init"] = {{"random", {1, 0}}};
    EXPECT_REFUSED(j, "job file 'f.json': buffers[0].init.random: is [lo, hi] with lo <= hi");
    j["buffers"][0]["init"] = {{"random", {0}}};
    EXPECT_REFUSED(j, "buffers[0].init.random: is [lo, hi]");
    j["buffers"][0]["init"] = {{"random", {0, 1}}, {"seed", -1}};
    EXPECT_REFUSED(j, "buffers[0].init.seed: -1 is not a whole number >= 0");
}

TEST(JobFile, InitOfAnUnknownKind) {
    auto j = filter_json();
    j["buffers"][1]["init"] = {{"gaussian", {0, 1}}};
    EXPECT_REFUSED(j, "job file 'f.json': buffers[1].init.gaussian: unknown key; valid: random, seed, constant, file");
    j["buffers"][1]["init"] = {{"constant", "x"}};
    EXPECT_REFUSED(j, "buffers[1].init.constant: is a number");
    j["buffers"][1]["init"] = {{"file", "no_such_weights.bin"}};
    EXPECT_REFUSED(j, "buffers[1].init.file: no file '");
}

TEST(JobFile, InitNoneOrZerosNamesAWrittenBuffersStart) {
    auto j = filter_json();
    j["buffers"][2]["init"] = "none";  // 'out', written whole by the filter
    const JobFile f = job_file_from_json(j, "f.json", ".");
    EXPECT_TRUE(f.spec.buffers[2].no_init);
    EXPECT_FALSE(f.spec.buffers[2].input);
    EXPECT_TRUE(f.spec.buffers[2].output);
    EXPECT_EQ(f.init[2].kind, BufferInit::Kind::zero);
    EXPECT_FALSE(f.spec.buffers[0].no_init);
    EXPECT_TRUE(f.spec_for({64, 32}).buffers[2].no_init);
    j["buffers"][2]["init"] = "zeros";
    const JobFile z = job_file_from_json(j, "f.json", ".");
    EXPECT_FALSE(z.spec.buffers[2].no_init);
    EXPECT_FALSE(z.spec.buffers[2].input);
    j["buffers"][2]["init"] = "ones";
    EXPECT_REFUSED(j, "job file 'f.json': buffers[2].init: 'ones' is neither zeros nor none");
}

TEST(JobFile, OneStepOnly) {
    auto j = filter_json();
    j["steps"] = 10;
    EXPECT_REFUSED(j, "job file 'f.json': steps: a job file runs one step");
    j = filter_json();
    j["swaps"] = {{"in", "out"}};
    EXPECT_REFUSED(j, "job file 'f.json': swaps: a job file runs one step");
}

TEST(JobFile, TwoDimensionalSizeIsWidthAndHeight) {
    auto j = filter_json();
    j["size"] = 4096;
    EXPECT_REFUSED(j, "job file 'f.json': size: a 2-D job's size is [width, height]");
    j["size"] = {1, 2, 3};
    EXPECT_REFUSED(j, "size: a 2-D job's size is [width, height]");
    j["size"] = {64, 0};
    EXPECT_REFUSED(j, "size[1]: 0 is not a whole number >= 1");
    j["size"] = {-64, 32};
    EXPECT_REFUSED(j, "size[0]: -64 is not a whole number >= 1");
    j.erase("size");
    EXPECT_REFUSED(j, "size: missing 'size'");
    j = filter_json();
    j["dims"] = 3;
    EXPECT_REFUSED(j, "dims: must be 1 or 2");
}

TEST(JobFile, DeclarationRefusedByValidate) {
    // A halo on a shared buffer: the fields parse, data_spec's validate() refuses it.
    auto j = filter_json();
    j["kernels"][0]["args"][0] = {{"halo", "weights"}, {"depth", 2}};
    const std::string msg = refusal(j);
    EXPECT_EQ(msg.rfind("job file 'f.json': ", 0), 0u) << msg;
    EXPECT_NE(msg.find("a halo needs a split buffer; 'weights' is shared"), std::string::npos) << msg;
    // all() of a split buffer, likewise.
    j = filter_json();
    j["kernels"][0]["args"][2] = {{"all", "in"}};
    EXPECT_REFUSED(j, "all() takes a shared buffer; 'in' is split");
    // A split buffer nobody initialises, writes or gets back.
    j = filter_json();
    j["buffers"][2]["output"] = false;
    j["kernels"][0]["args"][3] = {{"in", "out"}};
    EXPECT_REFUSED(j, "buffers: 'out' is neither initialised (init), written nor an output");
}

TEST(JobFile, SpecForRefusesASizeTheDeclarationCannotTake) {
    const JobFile f = job_file_from_json(filter_json(), "f.json", ".");
    // A halo of 2 rows on a 1-row problem reads past the buffer: validate() at that size.
    try {
        (void)f.spec_for({64, 1});
        FAIL() << "spec_for({64, 1}) accepted a halo of 2 rows on one row";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(std::string(e.what()).rfind("job file 'f.json': ", 0), 0u) << e.what();
        EXPECT_NE(std::string(e.what()).find("a halo of 2 rows reads past the buffer"), std::string::npos) << e.what();
    }
}

TEST(JobFile, OtherFieldsNamed) {
    auto j = filter_json();
    j["verify"] = {{"tol", 1e-3}};
    EXPECT_REFUSED(j, "verify.tol: unknown key (did you mean \"tolerance\"?)");
    j["verify"] = nlohmann::json::object();
    EXPECT_REFUSED(j, "verify: missing 'tolerance'");
    j = filter_json();
    j["buffers"][1]["layout"] = "replicated";
    EXPECT_REFUSED(j, "buffers[1].layout: 'replicated' is neither split nor shared");
    j = filter_json();
    j["buffers"][0]["type"] = "half";
    EXPECT_REFUSED(j, "buffers[0].type: unknown element type 'half'");
    j = filter_json();
    j["buffers"][1].erase("count");
    EXPECT_REFUSED(j, "buffers[1]: missing 'count'");
    j = filter_json();
    j["kernels"] = nlohmann::json::array();
    EXPECT_REFUSED(j, "kernels: a list of at least one kernel");
    j = filter_json();
    j["ops_per_unit"] = "lots";
    EXPECT_REFUSED(j, "ops_per_unit: 'lots' is neither a number nor width, height or units");
    EXPECT_REFUSED(nlohmann::json::array(), "(top): a job file is a JSON object");
}

TEST(JobFile, ReadJobFileRefusesAMissingOrMalformedFile) {
    TempDir dir;
    const std::string missing = (dir.path() / "none.json").string();
    try {
        (void)read_job_file(missing);
        FAIL() << "read a missing file";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(std::string(e.what()), "job file '" + missing + "': cannot read it");
    }
    dir.write("bad.json", "{\"name\": \"x\",\n");
    const std::string bad = (dir.path() / "bad.json").string();
    try {
        (void)read_job_file(bad);
        FAIL() << "read malformed JSON";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(std::string(e.what()).rfind("job file '" + bad + "': not JSON: ", 0), 0u) << e.what();
    }
}

// Found by the fuzzer under UBSan (tests/fuzz): numbers that the reader or the runtime converted
// to a type that cannot hold them (undefined behaviour) are refused, naming the field.
TEST(JobFile, NumbersOutOfTheirTypesRangeAreRefused) {
    auto j = filter_json();
    j["dims"] = -9.2e18;
    EXPECT_REFUSED(j, "dims: must be 1 or 2");
    j = filter_json();
    j["dims"] = 2.0;
    EXPECT_REFUSED(j, "dims: must be 1 or 2");
    j = filter_json();
    j["buffers"][0]["pitch"] = "1e300*width";
    EXPECT_REFUSED(j, "buffers[0].pitch: must be a whole number >= 1");
    j = filter_json();
    j["buffers"][0]["pitch"] = 1.8446744073709552e19;
    EXPECT_REFUSED(j, "buffers[0].pitch: must be a whole number >= 1");
    j = filter_json();
    j["buffers"][1]["init"] = {{"constant", 1e300}};
    EXPECT_REFUSED(j, "buffers[1].init.constant: 1e+300 is out of range: a float takes finite numbers of magnitude at most");
    j = filter_json();
    j["buffers"][0]["type"] = "int";
    j["buffers"][0]["init"] = {{"constant", 2.5}};  // was stored as 2
    EXPECT_REFUSED(j, "buffers[0].init.constant: 2.5 is not a whole number: an int takes whole numbers in [-2147483648, 2147483647]");
    j = filter_json();
    j["buffers"][0]["type"] = "int";
    j["buffers"][0]["init"] = {{"random", {-1e10, 1}}};
    EXPECT_REFUSED(j, "buffers[0].init.random: [lo, hi] must be within the range of int");
    j = filter_json();
    j["buffers"][0]["type"] = "uint";
    j["buffers"][0]["init"] = {{"random", {-1, 1}}};
    EXPECT_REFUSED(j, "buffers[0].init.random: [lo, hi] must be within the range of uint");
    j = filter_json();
    j["kernels"][0]["args"][5] = {{"float", 1e300}};
    EXPECT_REFUSED(j, "kernels[0].args[5].float: 1e+300 is out of range");
    // A float given to an int argument: refused with the field's path (validate() said
    // "kernel 'filter', argument 5: 2.500000 is not a int" without it).
    j = filter_json();
    j["kernels"][0]["args"][5] = {{"int", 2.5}};
    EXPECT_REFUSED(j, "kernels[0].args[5].int: 2.5 is not a whole number: an int takes whole numbers in [-2147483648, 2147483647]");
    j = filter_json();
    j["kernels"][0]["args"][5] = {{"uint", -1}};
    EXPECT_REFUSED(j, "kernels[0].args[5].uint: -1 is out of range: a uint takes whole numbers in [0, 4294967295]");
    j = filter_json();
    j["kernels"][0]["args"][5] = {{"int", "0.0001*width"}};
    EXPECT_REFUSED(j, "kernels[0].args[5].int: \"0.0001*width\" = 0.2048 is not a whole number");
    j = filter_json();
    j["kernels"][0]["args"][5] = {{"float", 3e38}};  // within a float's range
    EXPECT_EQ(refusal(j), "");
}

// Found by fuzz.job_run (tests/fuzz): a pitch of 2^63 (or a count of 2^62) made a buffer's size
// wrap to 0 bytes, and `worksize run` wrote the inputs through a null pointer. A buffer of more
// than 2^53 bytes is refused, at the file's size and at another (2^40 floats a row: 2048 rows
// are 2^53 bytes, 4096 rows too many).
TEST(JobFile, BuffersOfMoreThan2To53BytesAreRefused) {
    auto j = filter_json();
    j["buffers"][0]["pitch"] = std::uint64_t(1) << 63;
    EXPECT_REFUSED(j, "buffers[0].pitch: makes buffer 'in' more than 2^53 bytes (2048 x 9223372036854775808 ");
    j = filter_json();
    j["buffers"][1]["count"] = std::uint64_t(1) << 62;
    EXPECT_REFUSED(j, "buffers[1].count: makes buffer 'weights' more than 2^53 bytes (4611686018427387904 ");
    j = filter_json();
    j["buffers"][0]["pitch"] = std::uint64_t(1) << 40;
    const JobFile f = job_file_from_json(j, "f.json", ".");
    EXPECT_THROW((void)f.spec_for({64, 4096}), InvalidArgument);
}

// Found by the fuzzer (tests/fuzz): a job file nested 84,000 levels deep overflowed the stack
// (nlohmann's copy recurses). Documents deeper than 64 levels are refused before parsing; one of
// 64 levels still parses (and is refused for its content).
TEST(JobFile, DeeplyNestedFileIsRefused) {
    const std::string deep = "{\"name\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
    try {
        (void)parse_job_file(deep, "deep.json", ".");
        FAIL() << "parsed a file nested 100,001 levels deep";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(std::string(e.what()), "job file 'deep.json': nested deeper than 64 levels");
    }
    const std::string ok = "{\"name\": " + std::string(63, '[') + std::string(63, ']') + "}";
    try {
        (void)parse_job_file(ok, "ok.json", ".");
        FAIL() << "accepted a job file without a source";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(std::string(e.what()), "job file 'ok.json': source: missing 'source'");
    }
}

}  // namespace
// Issue 28: unknown keys with the nearest valid name, types and ranges with the field's path, a
// job that returns nothing, inputs that are no regular file.
TEST(JobFile, UnknownKeysNameTheNearestValidOne) {
    auto j = filter_json();
    j["verfy"] = {{"tolerance", 1e-5}};
    EXPECT_REFUSED(j, "job file 'f.json': verfy: unknown key (did you mean \"verify\"?); valid: name, description,");
    j = filter_json();
    j["buffers"][2].erase("output");
    j["buffers"][2]["ouptut"] = true;
    EXPECT_REFUSED(j, "buffers[2].ouptut: unknown key (did you mean \"output\"?)");
    j = filter_json();
    j["kernels"][0]["nmae"] = "x";
    EXPECT_REFUSED(j, "kernels[0].nmae: unknown key (did you mean \"name\"?)");
}

TEST(JobFile, TypesAndRangesNameTheField) {
    auto j = filter_json();
    j["name"] = 5;
    EXPECT_REFUSED(j, "job file 'f.json': name: must be a string, not 5");
    j = filter_json();
    j["buffers"][0]["type"] = 3;
    EXPECT_REFUSED(j, "buffers[0].type: must be a string, not 3");
    j = filter_json();
    j["buffers"][2]["output"] = "yes";
    EXPECT_REFUSED(j, "buffers[2].output: must be true or false, not \"yes\"");
    j = filter_json();
    j["verify"] = {{"tolerance", -1}};
    EXPECT_REFUSED(j, "verify.tolerance: must be a number >= 0");
    j = filter_json();
    j["ops_per_unit"] = -5;
    EXPECT_REFUSED(j, "ops_per_unit: must be a number > 0");
    j = filter_json();
    j["buffers"][1]["name"] = "in";
    EXPECT_REFUSED(j, "buffers[1].name: 'in' names an earlier buffer too");
}

TEST(JobFile, AJobThatReturnsNothingIsRefused) {
    auto j = filter_json();
    j["buffers"][2]["output"] = false;  // written by the kernel, never returned
    EXPECT_REFUSED(j, "buffers: no buffer has \"output\": true and no kernel reduces");
}

TEST(JobFile, FileInputsAreRegularFiles) {
    auto j = filter_json();
    j["buffers"][0]["init"] = {{"file", "/dev/zero"}};
    EXPECT_REFUSED(j, "buffers[0].init.file: '/dev/zero' is not a regular file");
}

}  // namespace worksize
