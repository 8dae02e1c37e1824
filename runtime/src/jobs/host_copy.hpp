// Copies between a device buffer and host memory the runtime did not allocate (the job's own
// arrays, which rank 0's slices read and fill in place), one mechanism for the data jobs' inputs
// and the kernel slices' inputs and outputs:
// - memory one of the device's pinned pools holds (Cluster::host_vector) moves straight, without
//   blocking;
// - ordinary memory onto or from a GPU moves in pieces through two pinned halves, each piece's host
//   copy spread over up to 8 threads while the piece before it moves. NVIDIA's driver copies
//   ordinary memory through its own staging, at a fraction of the link's rate: matmul 8192's rows
//   of A and all of B written straight from ordinary memory onto an H200 took 60 ms more than
//   packed into pinned memory first (docs/results/inplace-h200-x2/);
// - ordinary memory onto a CPU device, or less than a piece, moves in one blocking copy.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "worksize/runtime/bytes.hpp"
#include "worksize/runtime/opencl.hpp"

namespace worksize {

/// Whether ordinary memory goes onto and from `ctx`'s device through pinned halves: a GPU's or an
/// accelerator's, not a CPU device's, whose copy from the job's memory is one copy already (PoCL:
/// k-means' 122 MiB in 5 ms direct, 27 ms staged). WORKSIZE_STAGED_UPLOADS=1 stages onto every
/// device (the tests), 0 onto none (a comparison).
bool stage_copies(const DeviceContext& ctx);

class HostCopy {
public:
    /// Copies with `ctx`'s queue-independent pinned pools; `stage`: ordinary memory goes through
    /// the halves (a GPU); `piece`: a half's bytes (pieces::piece_bytes()).
    HostCopy(DeviceContext& ctx, bool stage, std::uint64_t piece);
    HostCopy(const HostCopy&) = delete;
    HostCopy& operator=(const HostCopy&) = delete;
    /// Waits for the writes still reading the halves.
    ~HostCopy();

    /// Writes `src` into `buf` at byte `offset` on `q`. Returns once `src` has been read, except
    /// when it is pinned: then once the writes are enqueued (the caller waits for `events` before
    /// `src` goes). Each write's event is appended to `events`. Returns how: "pinned", "staged"
    /// or "blocking".
    const char* write(cl::CommandQueue& q, const cl::Buffer& buf, std::uint64_t offset, std::span<const std::byte> src,
                      std::vector<cl::Event>& events);
    /// Reads `buf` from byte `offset` into `dst` on `q`, after what is queued before it; returns
    /// once `dst` holds it. Each read's event is appended to `events`.
    void read(cl::CommandQueue& q, const cl::Buffer& buf, std::uint64_t offset, std::span<std::byte> dst,
              std::vector<cl::Event>& events);
    /// Waits for the writes still reading the halves.
    void finish();
    /// Whether `p` lies in one of the device's pinned pools.
    bool pinned(std::span<const std::byte> p) const;

private:
    Bytes& half(std::size_t h, std::uint64_t bytes);

    DeviceContext& ctx_;
    bool stage_;
    std::uint64_t piece_;
    std::uint64_t pinned_write_bytes_;  ///< WORKSIZE_PINNED_WRITE_BYTES (an experiment), 0: whole
    std::array<Bytes, 2> half_;
    std::array<cl::Event, 2> busy_;  ///< the last write reading each half
    std::size_t next_ = 0;
};

}  // namespace worksize
