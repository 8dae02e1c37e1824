// Rank 0's own slice of a kernel job takes its input as the job's memory holds it
// (InputParts, runtime/src/jobs/input_feed.hpp): each upload goes straight from the parts, one
// write per part it spans, and the slice computes what it does from one packed buffer; its
// output goes straight where the job keeps it (OutputInPlace) when that is the whole output.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "pocl_device.hpp"
#include "worksize/runtime/data_job.hpp"
#include "worksize/runtime/declared_job.hpp"
#include "../../runtime/src/jobs/input_feed.hpp"

namespace worksize {
namespace {

std::vector<std::byte> numbered(std::size_t n, int first) {
    std::vector<std::byte> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = std::byte(first + int(i));
    return v;
}

// The runs of [at, at + n) follow the parts' boundaries (an empty part included), in order,
// each with its offset; together they are the packed input's bytes; past the end is refused.
TEST(DeclaredJob, InputPartsCutAnUploadAtThePartsBoundaries) {
    const auto a = numbered(3, 0), b = numbered(5, 3), c = numbered(2, 8);
    const InputParts parts({std::span(a), std::span<const std::byte>(), std::span(b), std::span(c)});
    EXPECT_EQ(parts.total(), 10u);
    std::vector<std::pair<std::uint64_t, std::size_t>> runs;
    std::vector<std::byte> got;
    parts.each(2, 7, [&](std::span<const std::byte> run, std::uint64_t at) {
        runs.emplace_back(at, run.size());
        got.insert(got.end(), run.begin(), run.end());
    });
    const std::vector<std::pair<std::uint64_t, std::size_t>> want{{2, 1}, {3, 5}, {8, 1}};
    EXPECT_EQ(runs, want);
    EXPECT_EQ(got, numbered(7, 2));
    EXPECT_THROW(parts.each(9, 2, [](std::span<const std::byte>, std::uint64_t) {}), std::exception);
}

constexpr const char* kAdd =
    "__kernel void add(__global const float* x, const int xo, __global const float* w, const int wo,"
    "                  __global float* y, const int yo, const int end) {"
    "  const int i = get_global_id(0); if (i >= end) return; y[i - yo] = x[i - xo] + 2.0f * w[i - wo]; }";

DataJobSpec add_spec() {
    DataJobSpec s;
    s.name = "parts-test";
    s.dims = 1;
    s.units = 4000;
    s.source = kAdd;
    s.buffers = {{"x", ElemType::f32, BufferLayout::split, 1, 0, true, false},
                 {"w", ElemType::f32, BufferLayout::split, 1, 0, true, false},
                 {"y", ElemType::f32, BufferLayout::split, 1, 0, false, true}};
    KernelDecl k;
    k.name = "add";
    k.args = {arg::in({0}), arg::origin({0}), arg::in({1}), arg::origin({1}), arg::out({2}), arg::origin({2}),
              arg::end()};
    s.kernels = {k};
    return s;
}

constexpr std::uint64_t kOffset = 1000, kUnits = 1500;

SliceSpec add_slice() {
    SliceSpec slice;
    slice.kernel = "parts-test";
    slice.problem = {4000, 1};
    slice.offset = kOffset;
    slice.units = kUnits;
    slice.global = {kUnits, 1};
    slice.iterations = 1;
    return slice;
}

struct AddInputs {
    std::vector<float> x = std::vector<float>(kUnits), w = std::vector<float>(kUnits);
    std::vector<std::byte> packed = std::vector<std::byte>(2 * kUnits * sizeof(float));
    AddInputs() {
        std::iota(x.begin(), x.end(), float(kOffset));
        for (std::uint64_t i = 0; i < kUnits; ++i) w[i] = float(i % 7) - 3.0f;
        std::memcpy(packed.data(), x.data(), kUnits * sizeof(float));
        std::memcpy(packed.data() + kUnits * sizeof(float), w.data(), kUnits * sizeof(float));
    }
    void check(const std::byte* y_bytes) const {
        std::vector<float> y(kUnits);
        std::memcpy(y.data(), y_bytes, y.size() * sizeof(float));
        for (std::uint64_t i = 0; i < kUnits; ++i) ASSERT_EQ(y[i], x[i] + 2.0f * w[i]) << i;
    }
};

// y = x + 2w over a slice of 1500 of 4000 units: its input in three parts (x, and w cut in two,
// so that w's upload is two writes) gives what the packed input gives.
TEST(DeclaredJob, ASliceTakesItsInputInPartsAsPacked) {
    const DataJobSpec s = add_spec();
    const SliceSpec slice = add_slice();
    const AddInputs in;
    Bytes from_packed, from_parts;
    execute_declared(s, test::first_device(), slice, in.packed, from_packed);
    const auto wb = std::as_bytes(std::span(in.w));
    const InputParts parts({std::as_bytes(std::span(in.x)), wb.first(700 * sizeof(float)), wb.subspan(700 * sizeof(float))});
    {
        const InputParts::Scope scope(&parts);
        const SliceTimes t = execute_declared(s, test::first_device(), slice, {}, from_parts);
        EXPECT_GT(t.h2d, 0.0);
    }
    ASSERT_EQ(from_parts.size(), kUnits * sizeof(float));
    ASSERT_EQ(from_packed.size(), from_parts.size());
    in.check(from_parts.data());
    EXPECT_EQ(std::memcmp(from_packed.data(), from_parts.data(), from_parts.size()), 0);
}

// The output straight into a destination of the slice's whole output (the slice's buffer left
// empty); a destination of another size is left alone and the buffer gets the output.
TEST(DeclaredJob, ASliceDownloadsIntoTheJobsMemoryWhenItIsTheWholeOutput) {
    const DataJobSpec s = add_spec();
    const AddInputs in;
    std::vector<std::byte> dest(kUnits * sizeof(float), std::byte{0x7f});
    Bytes out;
    {
        const OutputInPlace::Scope scope(dest);
        execute_declared(s, test::first_device(), add_slice(), in.packed, out);
    }
    EXPECT_TRUE(out.empty());
    in.check(dest.data());
    std::vector<std::byte> short_dest(dest.size() - 4, std::byte{0x7f});
    {
        const OutputInPlace::Scope scope(short_dest);
        execute_declared(s, test::first_device(), add_slice(), in.packed, out);
    }
    ASSERT_EQ(out.size(), dest.size());
    in.check(out.data());
    EXPECT_EQ(short_dest.front(), std::byte{0x7f});
}

// Rank 0 gives a slice up past --kernel-timeout only while no copy of the job's memory runs,
// and a copy never starts after it did: the slice throws and leaves that memory alone.
TEST(DeclaredJob, AGivenUpSliceNeverTouchesTheJobsMemory) {
    UserMemoryGuard g;
    ASSERT_TRUE(g.enter());
    EXPECT_FALSE(g.abandon());  // a copy runs
    g.leave();
    EXPECT_TRUE(g.abandon());
    EXPECT_TRUE(g.abandon());  // given up stays given up
    EXPECT_FALSE(g.enter());

    const AddInputs in;
    std::vector<std::byte> dest(kUnits * sizeof(float), std::byte{0x7f});
    Bytes out;
    UserMemoryGuard given_up;
    ASSERT_TRUE(given_up.abandon());
    const OutputInPlace::Scope scope(dest);
    const UserMemoryGuard::Scope guarded(&given_up);
    try {
        execute_declared(add_spec(), test::first_device(), add_slice(), in.packed, out);
        ADD_FAILURE() << "a given-up slice ran to its end";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("given up past --kernel-timeout"), std::string::npos) << e.what();
    }
    for (std::byte b : dest) ASSERT_EQ(b, std::byte{0x7f});

    UserMemoryGuard waiting;  // not given up: the copies run and end free
    const UserMemoryGuard::Scope guarded_too(&waiting);
    execute_declared(add_spec(), test::first_device(), add_slice(), in.packed, out);
    in.check(dest.data());
    EXPECT_TRUE(waiting.enter());
}

}  // namespace
}  // namespace worksize
