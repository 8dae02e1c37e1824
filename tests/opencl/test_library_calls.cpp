// Library routines in a declared slice's instruction list (KernelDecl::library,
// register_library_call; matmul's CLBlast and sort's radix and bitonic sorts use them): the
// routine runs after the slice's uploads and before its download, once per iteration, prepared
// once; its kernels' times are the slice's kernel time; its failures, an unknown routine and an
// argument it cannot take are errors naming them.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "pocl_device.hpp"
#include "worksize/runtime/data_job.hpp"
#include "worksize/runtime/declared_job.hpp"

namespace worksize {
namespace {

std::atomic<int> prepared{0}, called{0};

/// y = x + 1 over `n` items: an OpenCL kernel of its own, as a library would have.
LibraryCall add_one() {
    LibraryCall c;
    c.prepare = [](DeviceContext& ctx, const std::vector<double>&, const std::string&) -> std::shared_ptr<void> {
        ++prepared;
        auto program = ctx.program_from_source(
            "__kernel void add_one(__global const float* x, __global float* y, const int n) {"
            " const int i = get_global_id(0); if (i < n) y[i] = x[i] + 1.0f; }",
            "");
        return std::make_shared<cl::Kernel>(program, "add_one");
    };
    c.call = [](DeviceContext& ctx, const std::vector<cl::Buffer>& buffers, const std::vector<double>& values,
                void* state, const std::string&) {
        ++called;
        auto& k = *static_cast<cl::Kernel*>(state);
        const int n = int(values.at(0));
        set_args(k, buffers.at(0), buffers.at(1), n);
        LibraryRun run;
        run.kernels.emplace_back();
        ctx.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(std::size_t(n)), cl::NullRange, nullptr,
                                         &run.kernels.back());
        run.last = run.kernels.back();
        return run;
    };
    return c;
}

/// x split in, y split out, and between them routine `name` with `args` after x and y.
DataJobSpec spec_calling(const std::string& name, std::vector<ArgDecl> extra) {
    DataJobSpec s;
    s.name = "library-test";
    s.dims = 1;
    s.units = 4000;
    s.buffers = {{"x", ElemType::f32, BufferLayout::split, 1, 0, true, false},
                 {"y", ElemType::f32, BufferLayout::split, 1, 0, false, true}};
    KernelDecl k;
    k.name = k.library = name;
    k.args = {arg::in({0}), arg::out({1})};
    k.args.insert(k.args.end(), extra.begin(), extra.end());
    s.kernels = {k};
    return s;
}

SliceSpec slice(std::uint64_t offset, std::uint64_t units, std::uint64_t iterations) {
    SliceSpec s;
    s.kernel = "library-test";
    s.problem = {4000, 1};
    s.offset = offset;
    s.units = units;
    s.global = {units, 1};
    s.iterations = iterations;
    return s;
}

TEST(DeclaredJob, ALibraryRoutineRunsBetweenTheUploadsAndTheDownload) {
    register_library_call("test_add_one", add_one());
    prepared = called = 0;
    const std::uint64_t offset = 1000, units = 1500;
    std::vector<float> x(units);
    for (std::uint64_t i = 0; i < units; ++i) x[i] = float(offset + i) * 0.5f;
    Bytes out;
    const SliceTimes t = execute_declared(spec_calling("test_add_one", {arg::value<int>(int(units))}),
                                          test::first_device(), slice(offset, units, 3), std::as_bytes(std::span(x)), out);
    ASSERT_EQ(out.size(), units * sizeof(float));
    std::vector<float> y(units);
    std::memcpy(y.data(), out.data(), out.size());
    for (std::uint64_t i = 0; i < units; ++i) ASSERT_EQ(y[i], x[i] + 1.0f) << i;
    EXPECT_EQ(prepared.load(), 1);
    EXPECT_EQ(called.load(), 3);  // each iteration calls it
    EXPECT_GT(t.kernel, 0.0);
    EXPECT_GT(t.h2d, 0.0);
    EXPECT_GT(t.d2h, 0.0);
}

TEST(DeclaredJob, ALibraryRoutinesFailuresNameIt) {
    LibraryCall failing = add_one();
    failing.call = [](DeviceContext&, const std::vector<cl::Buffer>&, const std::vector<double>&, void*,
                      const std::string& where) -> LibraryRun { throw Error("it broke, for " + where); };
    register_library_call("test_failing", failing);
    std::vector<float> x(100, 1.0f);
    const auto in = std::as_bytes(std::span(x));
    Bytes out;
    try {
        execute_declared(spec_calling("test_failing", {arg::value<int>(100)}), test::first_device(), slice(0, 100, 1),
                         in, out);
        FAIL() << "no error";
    } catch (const Error& e) {
        const std::string w = e.what();
        EXPECT_NE(w.find("it broke, for library routine 'test_failing' of job 'library-test' on "), std::string::npos)
            << w;
    }
    EXPECT_TRUE(out.empty());
    try {
        execute_declared(spec_calling("test_nowhere", {}), test::first_device(), slice(0, 100, 1), in, out);
        FAIL() << "no error";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("no library routine 'test_nowhere' is registered"), std::string::npos)
            << e.what();
    }
    register_library_call("test_add_one", add_one());
    try {
        execute_declared(spec_calling("test_add_one", {arg::end()}), test::first_device(), slice(0, 100, 1), in, out);
        FAIL() << "no error";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("takes buffers and values only, not a 'end' argument"), std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace worksize
