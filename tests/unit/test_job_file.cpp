// Job files (scheduler/job_file.hpp) without a device: a filter5x5-like file parses, its sizes
// follow the problem's in spec_for(), and the committed examples read; each kind of mistake is
// refused by test_job_file_refusals.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "job_file_fixtures.hpp"
#include "source_dir.hpp"
#include "worksize/scheduler/job_file.hpp"

namespace worksize {
namespace {

namespace fs = std::filesystem;

using test::filter_json;
using test::TempDir;

TEST(JobFile, FilterParses) {
    const JobFile f = job_file_from_json(filter_json(), "f.json", ".");
    EXPECT_EQ(f.path, "f.json");
    EXPECT_EQ(f.description, "5x5 neighbourhood filter");
    EXPECT_DOUBLE_EQ(f.tolerance, 1e-5);
    EXPECT_EQ(f.size(), (GlobalSize{2048, 2048}));
    const DataJobSpec& s = f.spec;
    EXPECT_EQ(s.name, "filter5x5");
    EXPECT_NE(s.source.find("__kernel void filter("), std::string::npos) << "the source text, not its path";
    EXPECT_EQ(s.build_options, "-DR=2");
    EXPECT_EQ(s.dims, 2);
    EXPECT_EQ(s.width, 2048u);
    EXPECT_EQ(s.units, 2048u);
    EXPECT_EQ(s.steps, 1u);
    EXPECT_TRUE(s.swaps.empty());
    EXPECT_DOUBLE_EQ(s.ops_per_unit, 50.0 * 2048);
    ASSERT_EQ(s.buffers.size(), 3u);
    EXPECT_EQ(s.buffers[0].name, "in");
    EXPECT_EQ(s.buffers[0].layout, BufferLayout::split);
    EXPECT_EQ(s.buffers[0].pitch, 2048u);
    EXPECT_TRUE(s.buffers[0].input);
    EXPECT_FALSE(s.buffers[0].output);
    EXPECT_EQ(s.buffers[1].layout, BufferLayout::shared);
    EXPECT_EQ(s.buffers[1].type, ElemType::f32);
    EXPECT_EQ(s.buffers[1].count, 25u);
    EXPECT_TRUE(s.buffers[1].input);
    EXPECT_FALSE(s.buffers[2].input);
    EXPECT_TRUE(s.buffers[2].output);
    ASSERT_EQ(s.kernels.size(), 1u);
    const auto& args = s.kernels[0].args;
    ASSERT_EQ(args.size(), 8u);
    EXPECT_EQ(args[0].kind, ArgKind::halo);
    EXPECT_EQ(args[0].buffer, 0);
    EXPECT_EQ(args[0].depth, 2u);
    EXPECT_EQ(args[1].kind, ArgKind::origin);
    EXPECT_EQ(args[2].kind, ArgKind::all);
    EXPECT_EQ(args[2].buffer, 1);
    EXPECT_EQ(args[3].kind, ArgKind::write);
    EXPECT_EQ(args[3].buffer, 2);
    EXPECT_EQ(args[5].kind, ArgKind::scalar);
    EXPECT_EQ(args[5].scalar_type, ElemType::i32);
    EXPECT_DOUBLE_EQ(args[5].value, 2048);
    EXPECT_DOUBLE_EQ(args[6].value, 2048);
    EXPECT_EQ(args[7].kind, ArgKind::end);
    ASSERT_EQ(f.init.size(), 3u);
    EXPECT_EQ(f.init[0].kind, BufferInit::Kind::random);
    EXPECT_DOUBLE_EQ(f.init[0].lo, 0.0);
    EXPECT_DOUBLE_EQ(f.init[0].hi, 1.0);
    EXPECT_EQ(f.init[0].seed, 3u);
    EXPECT_EQ(f.init[1].kind, BufferInit::Kind::constant);
    EXPECT_DOUBLE_EQ(f.init[1].value, 0.04);
    EXPECT_EQ(f.init[2].kind, BufferInit::Kind::zero);
}

TEST(JobFile, SpecForResolvesSizesAtAnotherProblemSize) {
    const JobFile f = job_file_from_json(filter_json(), "f.json", ".");
    const DataJobSpec s = f.spec_for({1024, 512});
    EXPECT_EQ(s.width, 1024u);
    EXPECT_EQ(s.units, 512u);
    EXPECT_EQ(s.buffers[0].pitch, 1024u) << "pitch \"width\"";
    EXPECT_EQ(s.buffers[2].pitch, 1024u) << "pitch \"width\"";
    EXPECT_EQ(s.buffers[1].count, 25u) << "a shared buffer's count does not follow the size";
    EXPECT_DOUBLE_EQ(s.kernels[0].args[5].value, 1024) << "int \"width\"";
    EXPECT_DOUBLE_EQ(s.kernels[0].args[6].value, 512) << "int \"height\"";
    EXPECT_DOUBLE_EQ(s.ops_per_unit, 50.0 * 1024) << "ops \"50*width\"";
    EXPECT_EQ(s.source, f.spec.source);
    // The file's own size is unchanged.
    EXPECT_EQ(f.size(), (GlobalSize{2048, 2048}));
    EXPECT_EQ(f.spec.buffers[0].pitch, 2048u);
}

TEST(JobFile, OneDimensionalSizesAndNamedScalars) {
    auto j = filter_json();
    j["dims"] = 1;
    j["size"] = 1000;
    j["ops_per_unit"] = 7;
    j["buffers"][0]["pitch"] = 4;
    j["buffers"][2].erase("pitch");
    j["kernels"][0]["args"][5] = {{"uint", "units"}};
    j["kernels"][0]["args"][6] = {{"float", "2*units"}};
    const JobFile f = job_file_from_json(j, "f.json", ".");
    EXPECT_EQ(f.size(), (GlobalSize{1000, 1}));
    EXPECT_EQ(f.spec.width, 1u);
    EXPECT_EQ(f.spec.units, 1000u);
    EXPECT_EQ(f.spec.buffers[0].pitch, 4u);
    EXPECT_EQ(f.spec.buffers[2].pitch, 1u);
    const DataJobSpec s = f.spec_for({300, 1});
    EXPECT_EQ(s.units, 300u);
    EXPECT_DOUBLE_EQ(s.ops_per_unit, 7.0);
    EXPECT_EQ(s.kernels[0].args[5].scalar_type, ElemType::u32);
    EXPECT_DOUBLE_EQ(s.kernels[0].args[5].value, 300);
    EXPECT_DOUBLE_EQ(s.kernels[0].args[6].value, 600);
    // [n] is a 1-D size too.
    j["size"] = {77};
    EXPECT_EQ(job_file_from_json(j, "f.json", ".").size(), (GlobalSize{77, 1}));
}

TEST(JobFile, RelativePathsStartAtTheJobFilesDirectory) {
    TempDir dir;
    dir.write("k.cl", "__kernel void filter() {}\n");
    dir.write("weights.bin", std::string(25 * sizeof(float), '\0'));
    auto j = filter_json();
    j["source"] = "k.cl";
    j["buffers"][1]["init"] = {{"file", "weights.bin"}};
    const JobFile f = job_file_from_json(j, "f.json", dir.path().string());
    EXPECT_EQ(f.spec.source, "__kernel void filter() {}\n");
    EXPECT_EQ(f.init[1].kind, BufferInit::Kind::file);
    EXPECT_EQ(fs::path(f.init[1].path), dir.path() / "weights.bin");
    // Without "verify", no verification.
    j.erase("verify");
    EXPECT_LT(job_file_from_json(j, "f.json", dir.path().string()).tolerance, 0.0);
}

TEST(JobFile, CommittedExamplesRead) {
    const fs::path jobs = test::source_dir() / "examples" / "jobs";
    const JobFile filter = read_job_file((jobs / "filter5x5.json").string());
    EXPECT_EQ(filter.spec.name, "filter5x5");
    EXPECT_EQ(filter.size(), (GlobalSize{2048, 2048}));
    EXPECT_NE(filter.spec.source.find("__kernel void filter("), std::string::npos);
    EXPECT_DOUBLE_EQ(filter.tolerance, 1e-6);
    EXPECT_EQ(filter.spec_for({300, 200}).buffers[0].pitch, 300u);

    const JobFile saxpy = read_job_file((jobs / "saxpy.json").string());
    EXPECT_EQ(saxpy.spec.name, "saxpy-job");
    EXPECT_EQ(saxpy.spec.dims, 1);
    EXPECT_EQ(saxpy.size(), (GlobalSize{1000003, 1}));
    EXPECT_DOUBLE_EQ(saxpy.tolerance, 0.0);
    EXPECT_DOUBLE_EQ(saxpy.spec.ops_per_unit, 2.0);
    EXPECT_EQ(saxpy.spec_for({4099, 1}).units, 4099u);
}

}  // namespace
}  // namespace worksize
