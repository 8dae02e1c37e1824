// Bulk transfers in pieces: one mechanism under every large message between ranks (a data job's
// scatter and gathers, a kernel task's input and output). A transfer is cut into pieces of at
// most piece_bytes(), each its own message (Comm::isend_short), so that the receiver can post
// the receives of several pieces ahead, straight into their places, and put each piece to use
// (an upload onto a device) while the next one moves. Both sides know the pieces' sizes: the
// sender says the total first (a header of its own protocol) and both cut it the same way.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "worksize/runtime/comm.hpp"

namespace worksize::pieces {

/// A piece's most bytes: 16 MiB, or WORKSIZE_PIECE_BYTES (test-only, docs/testing.md; the same on
/// every rank), so that small jobs use several.
std::uint64_t piece_bytes();

/// `bytes` cut into pieces of at most `most` bytes (at least one byte each; none for no bytes).
std::vector<std::span<std::byte>> cut(std::span<std::byte> bytes, std::uint64_t most);
std::vector<std::span<const std::byte>> cut(std::span<const std::byte> bytes, std::uint64_t most);

/// Receives of rank `source`'s pieces (`tag`) into their places, in order, `window` of them
/// posted ahead. poll() takes what has come; receives still posted when it is destroyed (a
/// failure) are cancelled, so that nothing writes into the places afterwards.
class Inbound {
public:
    static constexpr std::size_t kWindow = 8;
    Inbound(Comm& comm, int source, int tag, std::vector<std::span<std::byte>> places, std::size_t window = kWindow);
    ~Inbound();
    Inbound(const Inbound&) = delete;
    Inbound& operator=(const Inbound&) = delete;
    /// Posts and tests without waiting; whether a piece arrived. @throws Error (lost_rank) as
    /// Comm::test_short does, Error for a piece of another size than its place.
    bool poll();
    bool done() const { return done_ == places_.size(); }
    /// Bytes arrived so far, in order from the first piece.
    std::uint64_t arrived() const { return arrived_; }
    std::uint64_t total() const;

private:
    Comm& comm_;
    int source_, tag_;
    std::vector<std::span<std::byte>> places_;
    std::size_t window_, next_ = 0, done_ = 0;
    std::uint64_t arrived_ = 0;
    std::deque<std::size_t> posted_;
};

/// Posts every piece of `bytes` to rank `dest` (`tag`) at once; the handles, for Comm::test_send.
/// The memory must stay as it is until they are done.
std::vector<std::size_t> post(Comm& comm, std::span<const std::byte> bytes, int dest, int tag);
/// post(), then until every piece is sent (Comm::pulse() between the looks).
void send_all(Comm& comm, std::span<const std::byte> bytes, int dest, int tag);
/// Every piece of `dest.size()` bytes from `source` into `dest`, through an Inbound.
void receive_all(Comm& comm, int source, int tag, std::span<std::byte> dest);

}  // namespace worksize::pieces
