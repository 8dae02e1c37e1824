// Copies between a device buffer and the job's own host memory: host_copy.hpp.
#include "jobs/host_copy.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "jobs/job_util.hpp"

namespace worksize {

namespace {
/// Each piece's host copy in threads of 2 MiB (8 for a 16 MiB piece).
constexpr std::size_t kPerThread = std::size_t(2) << 20;

std::uint64_t pinned_write_bytes() {
    const char* w = std::getenv("WORKSIZE_PINNED_WRITE_BYTES");
    return w ? std::strtoull(w, nullptr, 10) : 0;
}
}  // namespace

bool stage_copies(const DeviceContext& ctx) {
    const char* v = std::getenv("WORKSIZE_STAGED_UPLOADS");
    if (v && std::string(v) == "1") return true;
    if (v && std::string(v) == "0") return false;
    return ctx.info().type != DeviceType::cpu;
}

HostCopy::HostCopy(DeviceContext& ctx, bool stage, std::uint64_t piece)
    : ctx_(ctx),
      stage_(stage),
      piece_(std::max<std::uint64_t>(piece, 4096)),
      pinned_write_bytes_(pinned_write_bytes()),
      half_{bytes_with(ctx.host_memory()), bytes_with(ctx.host_memory())} {}

HostCopy::~HostCopy() {
    try {
        finish();
    } catch (const cl::Error&) {
        // the device failed; its error is the one the copy threw
    }
}

void HostCopy::finish() {
    for (auto& b : busy_)
        if (b()) {
            b.wait();
            b = cl::Event();
        }
}

bool HostCopy::pinned(std::span<const std::byte> p) const {
    for (const auto* m : {ctx_.host_memory().get(), ctx_.rank_memory().get()})
        if (m && m->enabled() && m->holds(p.data(), p.size())) return true;
    return false;
}

Bytes& HostCopy::half(std::size_t h, std::uint64_t bytes) {
    if (busy_[h]()) {
        busy_[h].wait();
        busy_[h] = cl::Event();
    }
    if (half_[h].size() < bytes) half_[h].resize(piece_);
    return half_[h];
}

const char* HostCopy::write(cl::CommandQueue& q, const cl::Buffer& buf, std::uint64_t offset,
                            std::span<const std::byte> src, std::vector<cl::Event>& events) {
    const std::uint64_t n = src.size();
    if (pinned(src)) {  // no copy
        const std::uint64_t most = pinned_write_bytes_ > 0 ? pinned_write_bytes_ : std::max<std::uint64_t>(n, 1);
        for (std::uint64_t off = 0; off < n; off += most)
            q.enqueueWriteBuffer(buf, CL_FALSE, offset + off, std::min(most, n - off), src.data() + off, nullptr,
                                 &events.emplace_back());
        q.flush();
        return "pinned";
    }
    if (!stage_ || n < piece_) {
        q.enqueueWriteBuffer(buf, CL_TRUE, offset, n, src.data(), nullptr, &events.emplace_back());
        return "blocking";
    }
    for (std::uint64_t off = 0; off < n; off += piece_, next_ ^= 1) {
        const std::uint64_t len = std::min(piece_, n - off);
        Bytes& b = half(next_, len);
        detail::parallel_copy(b.data(), src.data() + off, len, kPerThread);
        q.enqueueWriteBuffer(buf, CL_FALSE, offset + off, len, b.data(), nullptr, &busy_[next_]);
        q.flush();  // under way while the next piece is copied
        events.push_back(busy_[next_]);
    }
    return "staged";
}

void HostCopy::read(cl::CommandQueue& q, const cl::Buffer& buf, std::uint64_t offset, std::span<std::byte> dst,
                    std::vector<cl::Event>& events) {
    const std::uint64_t n = dst.size();
    if (pinned(dst) || !stage_ || n < piece_) {
        q.enqueueReadBuffer(buf, CL_TRUE, offset, n, dst.data(), nullptr, &events.emplace_back());
        return;
    }
    // Piece i into half i % 2; the read of piece i + 1 runs while piece i is copied out.
    const std::uint64_t count = (n + piece_ - 1) / piece_;
    std::array<cl::Event, 2> ready;
    auto enqueue = [&](std::uint64_t i) {
        const std::uint64_t off = i * piece_, len = std::min(piece_, n - off);
        Bytes& b = half(std::size_t(i % 2), len);
        q.enqueueReadBuffer(buf, CL_FALSE, offset + off, len, b.data(), nullptr, &ready[i % 2]);
        q.flush();
        events.push_back(ready[i % 2]);
    };
    try {
        enqueue(0);
        for (std::uint64_t i = 0; i < count; ++i) {
            if (i + 1 < count) enqueue(i + 1);
            ready[i % 2].wait();
            const std::uint64_t off = i * piece_, len = std::min(piece_, n - off);
            detail::parallel_copy(dst.data() + off, half_[i % 2].data(), len, kPerThread);
        }
    } catch (...) {
        for (auto& r : ready)  // a read still filling a half must end before the half goes
            if (r()) try {
                    r.wait();
                } catch (const cl::Error&) {
                    // the device failed: its error is the one rethrown
                }
        throw;
    }
}

}  // namespace worksize
