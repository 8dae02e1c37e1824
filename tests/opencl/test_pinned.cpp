// Pinned host staging (PinnedHostMemory, the stateful Bytes allocator): a Bytes whose memory is
// a device's pinned host memory round-trips data through enqueueWriteBuffer/enqueueReadBuffer,
// keeps its contents when it grows, stays valid when moved between Bytes, and copies into plain
// memory; small or refused allocations and WORKSIZE_PINNED=0 fall back to ordinary memory.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <utility>
#include <vector>

#include "pocl_device.hpp"
#include "worksize/runtime/bytes.hpp"
#include "worksize/runtime/devices.hpp"
#include "worksize/runtime/kernel_job.hpp"
#include "worksize/runtime/opencl.hpp"
#include "../../runtime/src/jobs/host_copy.hpp"

namespace worksize {
namespace {

constexpr std::size_t kMiB = std::size_t(1) << 20;

void fill(Bytes& b, std::uint8_t seed) {
    for (std::size_t i = 0; i < b.size(); ++i)
        b[i] = std::byte(static_cast<std::uint8_t>(seed + i * 131 + (i >> 12)));
}

::testing::AssertionResult holds(const Bytes& b, std::uint8_t seed, std::size_t n) {
    if (b.size() < n) return ::testing::AssertionFailure() << "size " << b.size() << " < " << n;
    for (std::size_t i = 0; i < n; ++i)
        if (b[i] != std::byte(static_cast<std::uint8_t>(seed + i * 131 + (i >> 12))))
            return ::testing::AssertionFailure() << "byte " << i << " differs";
    return ::testing::AssertionSuccess();
}

/// Host -> device from `in`, device -> device copy, device -> host into `out` (out.resize as the
/// executors do it), all through the device's profiling queue.
void round_trip(DeviceContext& ctx, const Bytes& in, Bytes& out) {
    cl::CommandQueue& q = ctx.queue();
    cl::Buffer a(ctx.context(), CL_MEM_READ_ONLY, in.size());
    cl::Buffer b(ctx.context(), CL_MEM_WRITE_ONLY, in.size());
    q.enqueueWriteBuffer(a, CL_FALSE, 0, in.size(), in.data());
    q.enqueueCopyBuffer(a, b, 0, 0, in.size());
    out.clear();
    out.resize(in.size());
    q.enqueueReadBuffer(b, CL_TRUE, 0, out.size(), out.data());
}

TEST(Pinned, DeviceContextHasEnabledResource) {
    auto& ctx = test::first_device();
    ASSERT_TRUE(ctx.host_memory());
    if (PinnedHostMemory::enabled_by_environment()) {
        EXPECT_TRUE(ctx.host_memory()->enabled());
    }
    EXPECT_EQ(ctx.host_memory()->threshold(), PinnedHostMemory::kDefaultThreshold);
}

TEST(Pinned, RoundTripThroughDeviceInPinnedMemory) {
    auto& ctx = test::first_device();
    if (!ctx.host_memory()->enabled()) GTEST_SKIP() << "WORKSIZE_PINNED=0 in the environment";
    const auto& mem = ctx.host_memory();
    const std::size_t before = mem->pinned_count();
    {
        Bytes in = bytes_with(mem), out = bytes_with(mem);
        in.resize(3 * kMiB + 17);
        fill(in, 7);
        EXPECT_TRUE(mem->is_pinned(in.data()));
        round_trip(ctx, in, out);
        EXPECT_TRUE(mem->is_pinned(out.data()));
        EXPECT_TRUE(holds(out, 7, in.size()));
        EXPECT_EQ(mem->pinned_count(), before + 2);
        EXPECT_GE(mem->pinned_bytes(), 2 * in.size());
    }
    EXPECT_EQ(mem->pinned_count(), before);  // both unmapped and released
}

// A freed staging-sized block stays mapped and serves the next allocation of its size (the
// halves and slots every run makes), within the limit; a block over 32 MiB is released.
TEST(Pinned, AFreedBlockServesTheNextOfItsSize) {
    auto& ctx = test::first_device();
    if (!ctx.host_memory()->enabled()) GTEST_SKIP() << "WORKSIZE_PINNED=0 in the environment";
    PinnedHostMemory mem(ctx.context(), ctx.device());
    if (mem.spare_limit() < 4 * kMiB) GTEST_SKIP() << "WORKSIZE_PINNED_SPARE_BYTES below 4 MiB in the environment";
    void* p = mem.allocate(2 * kMiB, 64);
    ASSERT_TRUE(mem.is_pinned(p));
    mem.deallocate(p, 2 * kMiB, 64);
    EXPECT_EQ(mem.pinned_count(), 0u);
    EXPECT_EQ(mem.spare_bytes(), 2 * kMiB);
    void* other = mem.allocate(kMiB, 64);  // another size: a block of its own
    EXPECT_NE(other, p);
    void* again = mem.allocate(2 * kMiB, 64);
    EXPECT_EQ(again, p);
    EXPECT_TRUE(mem.is_pinned(again));
    EXPECT_EQ(mem.spare_bytes(), 0u);
    EXPECT_EQ(mem.pinned_bytes(), 3 * kMiB);
    mem.deallocate(other, kMiB, 64);
    mem.deallocate(again, 2 * kMiB, 64);
    EXPECT_EQ(mem.spare_bytes(), 3 * kMiB);
    void* big = mem.allocate(PinnedHostMemory::kMaxSpareBlock + kMiB, 64);
    mem.deallocate(big, PinnedHostMemory::kMaxSpareBlock + kMiB, 64);
    EXPECT_EQ(mem.spare_bytes(), 3 * kMiB);  // released, not kept
}

TEST(Pinned, GrowthKeepsContentsAndStaysPinned) {
    auto& ctx = test::first_device();
    if (!ctx.host_memory()->enabled()) GTEST_SKIP() << "WORKSIZE_PINNED=0 in the environment";
    const auto& mem = ctx.host_memory();
    Bytes b = bytes_with(mem);
    b.resize(1000);  // below the threshold: ordinary memory
    fill(b, 3);
    EXPECT_FALSE(mem->is_pinned(b.data()));
    Bytes want = b;
    const std::size_t sizes[] = {kMiB, kMiB + 1, 5 * kMiB, 5 * kMiB - 3, 9 * kMiB};
    for (const std::size_t n : sizes) {
        const std::size_t keep = std::min(n, b.size());
        b.resize(n);
        EXPECT_TRUE(mem->is_pinned(b.data())) << n;
        EXPECT_TRUE(holds(b, 3, keep)) << "after resize to " << n;
        fill(b, 3);
    }
    // The grown buffer works with the device too.
    Bytes out = bytes_with(mem);
    round_trip(ctx, b, out);
    EXPECT_TRUE(holds(out, 3, b.size()));
    // shrink_to_fit moves it to an exactly sized (pinned) allocation.
    b.resize(2 * kMiB);
    b.shrink_to_fit();
    EXPECT_TRUE(mem->is_pinned(b.data()));
    EXPECT_TRUE(holds(b, 3, b.size()));
}

TEST(Pinned, HoldsRangesInsideOneLiveAllocationOnly) {
    auto& ctx = test::first_device();
    if (!ctx.host_memory()->enabled()) GTEST_SKIP() << "WORKSIZE_PINNED=0 in the environment";
    const auto& mem = ctx.host_memory();
    Bytes b = bytes_with(mem);
    b.resize(kMiB);
    ASSERT_TRUE(mem->is_pinned(b.data()));
    EXPECT_TRUE(mem->holds(b.data(), b.size()));
    EXPECT_TRUE(mem->holds(b.data() + 4096, 8192));
    EXPECT_TRUE(mem->holds(b.data() + b.size(), 0));
    EXPECT_FALSE(mem->holds(b.data() + 1, b.size()));  // one byte past its end
    EXPECT_FALSE(mem->holds(b.data(), b.size() + 1));
    std::vector<std::byte> plain(kMiB);
    EXPECT_FALSE(mem->holds(plain.data(), 16));
    const std::byte* gone = b.data();
    b = Bytes();  // freed: no longer held
    EXPECT_FALSE(mem->holds(gone, 16));
}

TEST(Pinned, MovesKeepMemoryAndCopiesArePlain) {
    auto& ctx = test::first_device();
    if (!ctx.host_memory()->enabled()) GTEST_SKIP() << "WORKSIZE_PINNED=0 in the environment";
    const auto& mem = ctx.host_memory();
    const std::size_t before = mem->pinned_count();
    {
        Bytes pool = bytes_with(mem);
        pool.resize(2 * kMiB);
        fill(pool, 11);
        const std::byte* p = pool.data();

        // Move-construct and move-assign into plain Bytes: the memory travels, no copy.
        Bytes w(std::move(pool));
        EXPECT_EQ(w.data(), p);
        EXPECT_EQ(pool.get_allocator().resource().get(), mem.get());  // the moved-from keeps it
        Bytes v;
        v = std::move(w);
        EXPECT_EQ(v.data(), p);
        EXPECT_EQ(v.get_allocator(), DefaultInitAllocator<std::byte>(mem));
        EXPECT_TRUE(holds(v, 11, v.size()));

        // Back into the pool slot, as Cluster does between jobs; still usable with the device.
        pool = std::move(v);
        EXPECT_EQ(pool.data(), p);
        Bytes out = bytes_with(mem);
        round_trip(ctx, pool, out);
        EXPECT_TRUE(holds(out, 11, pool.size()));

        // swap exchanges memory and allocators.
        Bytes plain(100);
        pool.swap(plain);
        EXPECT_EQ(plain.data(), p);
        EXPECT_EQ(pool.get_allocator(), DefaultInitAllocator<std::byte>());
        EXPECT_EQ(plain.get_allocator().resource().get(), mem.get());
        pool.swap(plain);

        // A copy gets plain memory; copy assignment keeps the target's (pinned) memory.
        Bytes copy = pool;
        EXPECT_EQ(copy.get_allocator(), DefaultInitAllocator<std::byte>());
        EXPECT_FALSE(mem->is_pinned(copy.data()));
        EXPECT_TRUE(holds(copy, 11, copy.size()));
        Bytes target = bytes_with(mem);
        target = copy;
        EXPECT_TRUE(mem->is_pinned(target.data()));
        EXPECT_TRUE(holds(target, 11, target.size()));

        // A plain buffer moved into a pinned one replaces it (the pinned memory is freed).
        const std::size_t live = mem->pinned_count();
        Bytes fresh(kMiB);
        target = std::move(fresh);
        EXPECT_EQ(mem->pinned_count(), live - 1);
        EXPECT_EQ(target.get_allocator(), DefaultInitAllocator<std::byte>());
    }
    EXPECT_EQ(mem->pinned_count(), before);
}

TEST(Pinned, BuffersOutliveTheirDeviceContext) {
    auto devs = all_local_devices();
    ASSERT_FALSE(devs.empty());
    Bytes keep;
    std::weak_ptr<PinnedHostMemory> weak;
    {
        DeviceContext ctx(devs.front().device, devs.front().info);
        if (!ctx.host_memory()->enabled()) GTEST_SKIP() << "WORKSIZE_PINNED=0 in the environment";
        weak = ctx.host_memory();
        keep = bytes_with(ctx.host_memory());
        keep.resize(kMiB);
        fill(keep, 5);
        EXPECT_TRUE(ctx.host_memory()->is_pinned(keep.data()));
    }
    // The resource (with its cl::Context) lives as long as a buffer uses it.
    EXPECT_FALSE(weak.expired());
    EXPECT_TRUE(holds(keep, 5, keep.size()));
    keep = Bytes();
    EXPECT_TRUE(weak.expired());
}

TEST(Pinned, RefusedAllocationFallsBackToOrdinaryMemory) {
    auto& ctx = test::first_device();
    // threshold 0: every allocation tries the device, a zero-size one never reaches it.
    auto mem = std::make_shared<PinnedHostMemory>(ctx.context(), ctx.device(), true, 0);
    const std::uint64_t limit = ctx.info().max_alloc_bytes;
    {
        Bytes b = bytes_with(mem);
        b.resize(64);
        EXPECT_TRUE(mem->is_pinned(b.data()));
        fill(b, 1);
        EXPECT_TRUE(holds(b, 1, 64));
    }
    // More than CL_DEVICE_MAX_MEM_ALLOC_SIZE cannot be a buffer: clCreateBuffer fails and the
    // allocation comes from ordinary memory, freed as such. Only tried where the host can
    // give it (PoCL's limit is a fraction of the host memory; the pages are not touched but one).
    if (limit != 0 && limit < (std::uint64_t(8) << 30)) {
        const std::size_t n = static_cast<std::size_t>(limit) + 1;
        void* p = mem->allocate(n, 1);
        ASSERT_NE(p, nullptr);
        EXPECT_FALSE(mem->is_pinned(p));
        EXPECT_EQ(mem->fallbacks(), 1u);
        static_cast<volatile char*>(p)[n - 1] = 1;
        mem->deallocate(p, n, 1);
    }
    EXPECT_EQ(mem->pinned_count(), 0u);
}

TEST(Pinned, DisabledUsesOrdinaryMemory) {
    auto& ctx = test::first_device();
    auto mem = std::make_shared<PinnedHostMemory>(ctx.context(), ctx.device(), false);
    Bytes in = bytes_with(mem), out = bytes_with(mem);
    in.resize(2 * kMiB);
    fill(in, 9);
    EXPECT_FALSE(mem->is_pinned(in.data()));
    round_trip(ctx, in, out);
    EXPECT_TRUE(holds(out, 9, in.size()));
    EXPECT_EQ(mem->pinned_count(), 0u);
    EXPECT_EQ(mem->fallbacks(), 0u);
}

TEST(Pinned, EnvironmentSwitch) {
    const char* old = std::getenv("WORKSIZE_PINNED");
    const std::string saved = old ? old : "";
    const bool was = PinnedHostMemory::enabled_by_environment();
    for (const char* off : {"0", "off", "OFF", "no", "false"}) {
        ::setenv("WORKSIZE_PINNED", off, 1);
        EXPECT_FALSE(PinnedHostMemory::enabled_by_environment()) << off;
    }
    for (const char* on : {"1", "on", "yes", "maybe"}) {  // an unknown value warns once and stays on
        ::setenv("WORKSIZE_PINNED", on, 1);
        EXPECT_TRUE(PinnedHostMemory::enabled_by_environment()) << on;
    }
    ::setenv("WORKSIZE_PINNED", "0", 1);
    auto devs = all_local_devices();
    ASSERT_FALSE(devs.empty());
    {
        DeviceContext ctx(devs.front().device, devs.front().info);
        EXPECT_FALSE(ctx.host_memory()->enabled());
        Bytes b = bytes_with(ctx.host_memory());
        b.resize(2 * kMiB);
        EXPECT_FALSE(ctx.host_memory()->is_pinned(b.data()));
    }
    if (old)
        ::setenv("WORKSIZE_PINNED", saved.c_str(), 1);
    else
        ::unsetenv("WORKSIZE_PINNED");
    EXPECT_EQ(PinnedHostMemory::enabled_by_environment(), was);
}

TEST(Pinned, PlainBytesAreUnchanged) {
    // Default-constructed Bytes: std::allocator, equal to each other, default-initialising.
    Bytes a(16), b;
    EXPECT_EQ(a.get_allocator(), b.get_allocator());
    EXPECT_FALSE(a.get_allocator().resource());
    b = a;
    EXPECT_EQ(b.size(), 16u);
    static_assert(std::is_same_v<Bytes, std::vector<std::byte, DefaultInitAllocator<std::byte>>>);
    static_assert(std::is_nothrow_move_constructible_v<Bytes>);
    static_assert(std::is_nothrow_move_assignable_v<Bytes>);
}


// The job's ordinary memory goes through the two pinned halves in pieces (the last one short)
// and arrives whole, each piece its own write; read back the same way into ordinary memory; less
// than a piece, or without staging, in one blocking copy; pinned memory straight.
TEST(Pinned, HostCopyMovesOrdinaryMemoryInPiecesThroughPinnedHalves) {
    auto& ctx = test::first_device();
    constexpr std::uint64_t kPiece = 64 * 1024;
    const std::size_t n = 5 * kPiece + 777;
    std::vector<std::byte> src(n), back(n);
    for (std::size_t i = 0; i < n; ++i) src[i] = std::byte(static_cast<std::uint8_t>(i * 7 + (i >> 9)));
    cl::Buffer buf(ctx.context(), CL_MEM_READ_WRITE, n + 64);
    std::vector<cl::Event> writes, reads;
    {
        HostCopy copy(ctx, true, kPiece);
        EXPECT_STREQ(copy.write(ctx.queue(), buf, 64, src, writes), "staged");
        EXPECT_EQ(writes.size(), 6u);
        copy.read(ctx.queue(), buf, 64, back, reads);
        EXPECT_EQ(reads.size(), 6u);
    }
    EXPECT_EQ(std::memcmp(src.data(), back.data(), n), 0);

    std::vector<std::byte> small(kPiece - 1, std::byte{5}), got(kPiece - 1);
    HostCopy copy(ctx, true, kPiece);
    writes.clear();
    EXPECT_STREQ(copy.write(ctx.queue(), buf, 0, small, writes), "blocking");
    EXPECT_EQ(writes.size(), 1u);
    copy.read(ctx.queue(), buf, 0, got, reads);
    EXPECT_EQ(got, small);
    HostCopy plain(ctx, false, kPiece);
    writes.clear();
    EXPECT_STREQ(plain.write(ctx.queue(), buf, 64, src, writes), "blocking");
    std::fill(back.begin(), back.end(), std::byte{0});
    reads.clear();
    plain.read(ctx.queue(), buf, 64, back, reads);
    EXPECT_EQ(reads.size(), 1u);
    EXPECT_EQ(std::memcmp(src.data(), back.data(), n), 0);

    if (!ctx.host_memory()->enabled()) GTEST_SKIP() << "pinned memory disabled (WORKSIZE_PINNED=0)";
    Bytes pinned = bytes_with(ctx.host_memory());
    pinned.resize(n);
    std::memcpy(pinned.data(), src.data(), n);
    EXPECT_TRUE(copy.pinned(std::span<const std::byte>(pinned.data(), n)));
    EXPECT_FALSE(copy.pinned(src));
    writes.clear();
    EXPECT_STREQ(copy.write(ctx.queue(), buf, 0, std::span<const std::byte>(pinned.data(), n), writes), "pinned");
    cl::Event::waitForEvents(writes);
    std::fill(back.begin(), back.end(), std::byte{0});
    copy.read(ctx.queue(), buf, 0, back, reads);
    EXPECT_EQ(std::memcmp(src.data(), back.data(), n), 0);
}


// The sample kernels make their host arrays in the memory the job is given (Cluster::generate
// gives rank 0's pinned memory): every input part of a whole-problem slice and its output target
// lie in it, so that rank 0's own slices copy nothing on the host; without it, ordinary memory.
TEST(Pinned, SampleKernelsMakeTheirArraysInTheJobsHostMemory) {
    auto& ctx = test::first_device();
    if (!ctx.host_memory()->enabled()) GTEST_SKIP() << "pinned memory disabled (WORKSIZE_PINNED=0)";
    const auto& pinned = *ctx.host_memory();
    for (const auto& [kernel, size] : {std::pair{"matmul", GlobalSize{512, 512}}, std::pair{"interp", GlobalSize{1024, 512}}}) {
        SCOPED_TRACE(kernel);
        JobOptions o;
        o.size = size;
        for (const bool given : {true, false}) {
            auto job = kernel_job(kernel).make(o);
            if (given) job->host_memory(ctx.host_memory());
            job->generate();
            Assignment a;
            a.units = job->problem().y;
            a.global = job->problem();
            const auto parts = job->input_parts(a);
            ASSERT_FALSE(parts.empty());
            for (const auto& p : parts) EXPECT_EQ(pinned.holds(p.data(), p.size()), given) << p.size() << " bytes";
            const auto out = job->output_target(a);
            ASSERT_FALSE(out.empty());
            EXPECT_EQ(pinned.holds(out.data(), out.size()), given);
        }
    }
}

}  // namespace
}  // namespace worksize
