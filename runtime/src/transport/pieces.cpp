// Bulk transfers in pieces (pieces.hpp).
#include "transport/pieces.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

#include "worksize/scheduler/types.hpp"

namespace worksize::pieces {

namespace {

constexpr std::uint64_t kPieceBytes = 16ull << 20;

template <class T>
std::vector<std::span<T>> cut_any(std::span<T> bytes, std::uint64_t most) {
    most = std::max<std::uint64_t>(most, 1);
    std::vector<std::span<T>> v;
    for (std::uint64_t at = 0; at < bytes.size(); at += most)
        v.push_back(bytes.subspan(at, std::min<std::uint64_t>(most, bytes.size() - at)));
    return v;
}

}  // namespace

std::uint64_t piece_bytes() {
    static const std::uint64_t piece = [] {
        const char* v = std::getenv("WORKSIZE_PIECE_BYTES");
        try {
            return v && *v ? std::max<std::uint64_t>(std::stoull(v), 1) : kPieceBytes;
        } catch (const std::exception&) {
            return kPieceBytes;
        }
    }();
    return piece;
}

std::vector<std::span<std::byte>> cut(std::span<std::byte> bytes, std::uint64_t most) { return cut_any(bytes, most); }
std::vector<std::span<const std::byte>> cut(std::span<const std::byte> bytes, std::uint64_t most) {
    return cut_any(bytes, most);
}

Inbound::Inbound(Comm& comm, int source, int tag, std::vector<std::span<std::byte>> places, std::size_t window)
    : comm_(comm), source_(source), tag_(tag), places_(std::move(places)), window_(std::max<std::size_t>(window, 1)) {}

Inbound::~Inbound() {
    for (std::size_t id : posted_) comm_.abandon_short(id);
}

std::uint64_t Inbound::total() const {
    std::uint64_t n = 0;
    for (const auto& p : places_) n += p.size();
    return n;
}

bool Inbound::poll() {
    while (next_ < places_.size() && posted_.size() < window_)
        posted_.push_back(comm_.irecv_short(source_, tag_, places_[next_++]));
    bool progress = false;
    while (!posted_.empty()) {
        std::size_t got = 0;
        bool arrived = false;
        try {
            arrived = comm_.test_short(posted_.front(), &got);
        } catch (...) {
            posted_.pop_front();  // forgotten by the Comm
            throw;
        }
        if (!arrived) break;
        posted_.pop_front();
        const std::size_t want = places_[done_].size();
        if (got != want)
            throw Error("rank " + std::to_string(source_) + " sent a piece of " + std::to_string(got) +
                        " bytes where " + std::to_string(want) + " were expected");
        arrived_ += got;
        ++done_;
        progress = true;
        if (next_ < places_.size()) posted_.push_back(comm_.irecv_short(source_, tag_, places_[next_++]));
    }
    return progress;
}

std::vector<std::size_t> post(Comm& comm, std::span<const std::byte> bytes, int dest, int tag) {
    std::vector<std::size_t> ids;
    for (const auto& p : cut(bytes, piece_bytes())) ids.push_back(comm.isend_short(p, dest, tag));
    return ids;
}

void send_all(Comm& comm, std::span<const std::byte> bytes, int dest, int tag) {
    for (std::size_t id : post(comm, bytes, dest, tag))
        while (!comm.test_send(id)) {
            comm.pulse();
            std::this_thread::yield();  // MPI moves a message only inside its calls
        }
}

void receive_all(Comm& comm, int source, int tag, std::span<std::byte> dest) {
    Inbound in(comm, source, tag, cut(dest, piece_bytes()));
    while (!in.done())
        if (!in.poll()) std::this_thread::yield();
}

}  // namespace worksize::pieces
