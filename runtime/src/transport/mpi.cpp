// The communicator over an MPI_Comm (chunked byte messages, non-blocking sends and receives with
// patience, short messages, gathers and broadcasts); the environment is mpi_environment.cpp.
#include "worksize/runtime/mpi.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "support/clock.hpp"
#include "transport/mpi_check.hpp"

namespace worksize::mpi {

namespace {

constexpr std::size_t kChunk = std::size_t(1) << 30;  // 1 GiB pieces: counts stay in int

}  // namespace

struct MpiComm::Handle {
    MPI_Comm comm;
};

struct MpiComm::PendingRecv {
    int source = 0, tag = 0;
    std::span<std::byte> dest;
    Bytes* into = nullptr;
    std::uint64_t size = 0, off = 0;
    bool have_size = false, piece_posted = false, wrong_size = false;
    int piece = 0;
    Bytes drained;  // a message of the wrong size, kept out of dest
    std::byte* target = nullptr;
    MPI_Request request = MPI_REQUEST_NULL;
    double last = 0;  // the last progress
};

struct MpiComm::PendingSend {
    std::uint64_t size = 0;  // the header word, sent from here
    int dest = 0;
    std::vector<MPI_Request> requests;
};

struct MpiComm::PendingShort {
    int source = 0;
    MPI_Request request = MPI_REQUEST_NULL;
    double waiting_since = -1;  ///< the first test_short: this rank's wait begins (not at posting)
};

MpiComm::MpiComm(const Environment& env)
    : handle_(std::make_unique<Handle>(Handle{MPI_COMM_WORLD})),
      rank_(env.rank()),
      size_(env.size()),
      node_rank_(env.local_rank()),
      node_size_(env.local_size()),
      master_on_node_(env.master_on_node()) {}

MpiComm::~MpiComm() = default;

namespace {

int source_of(int source) { return source == Comm::any_source ? MPI_ANY_SOURCE : source; }

/// A receive given up: cancelled and freed (nothing is written into its memory afterwards).
void cancel_request(MPI_Request& request) {
    if (request == MPI_REQUEST_NULL) return;
    MPI_Cancel(&request);
    MPI_Request_free(&request);
}


/// Between two polls of a message in flight: yield the core, do not sleep. MPI moves a large
/// message only inside MPI calls (UCX's rendezvous pipeline advances a fragment per call), so a
/// sleep between polls throttled a 64 MiB receive to a third of the rate MPI_Wait reaches.
void pause_in_message() { std::this_thread::yield(); }

/// How long a wait for a message that has not begun polls without sleeping.
constexpr double kSpinBeforeSleep_s = 0.002;

/// Complete `request`: blocking without patience; else polled, and a request that has not
/// completed `patience` seconds after `since` (the last sign of life of `peer`) throws
/// Error(lost_rank). Its status in *st. `in_message`: the request is part of a message that
/// has begun (poll without sleeping); else a message that may be long in coming.
void wait_patiently(Comm& self, MPI_Request& request, MPI_Status* st, double patience, int peer,
                    bool in_message = false) {
    if (patience <= 0) {
        check(MPI_Wait(&request, st), "MPI_Wait");
        return;
    }
    const double start = now_s();
    for (;;) {
        int done = 0;
        check(MPI_Test(&request, &done, st), "MPI_Test");
        if (done) return;
        if (self.silent(peer, start, patience)) {  // its signs of life (Comm::set_alive_tag) count
            cancel_request(request);
            mpi::note_lost_peer();
            throw Error(ErrorReason::lost_rank, "rank " + std::to_string(peer) + " sent nothing for " +
                                                    std::to_string(patience) + " s" +
                                                    (in_message ? " in the middle of a message" : "") +
                                                    " (--rank-timeout)");
        }
        try {
            self.pulse();
        } catch (...) {  // the pulse ended the wait (rank 0 found a worker lost)
            cancel_request(request);
            throw;
        }
        // The first milliseconds of a wait poll without sleeping: a step's halo rows or a
        // reduction's totals come within microseconds, and a 100 us sleep (more, rounded up by
        // the kernel's timer) per poll was most of a two-rank stencil step on two GPUs.
        if (in_message || now_s() - start < kSpinBeforeSleep_s)
            pause_in_message();
        else
            std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
}

/// The announced size of the payload that `source` sends next with `tag`.
std::uint64_t recv_header(Comm& self, MPI_Comm comm, int source, int tag, int* from, double patience) {
    std::uint64_t n = 0;
    MPI_Status st;
    MPI_Request rq;
    check(MPI_Irecv(&n, 1, MPI_UINT64_T, source_of(source), tag, comm, &rq), "MPI_Irecv");
    wait_patiently(self, rq, &st, patience, source);
    if (from) *from = st.MPI_SOURCE;
    return n;
}

/// The payload's pieces, whatever their sizes (the sender's parts), into dest[0, n).
void recv_pieces(Comm& self, MPI_Comm comm, std::byte* dest, std::uint64_t n, int source, int tag,
                 double patience) {
    for (std::uint64_t off = 0; off < n;) {
        MPI_Status st;
        if (patience <= 0) {
            check(MPI_Probe(source, tag, comm, &st), "MPI_Probe");
        } else {
            const double start = now_s();
            for (int flag = 0; !flag;) {
                check(MPI_Iprobe(source, tag, comm, &flag, &st), "MPI_Iprobe");
                if (flag) break;
                if (self.silent(source, start, patience)) {
                    mpi::note_lost_peer();
                    throw Error(ErrorReason::lost_rank, "rank " + std::to_string(source) + " sent nothing for " +
                                                            std::to_string(patience) +
                                                            " s in the middle of a message (--rank-timeout)");
                }
                self.pulse();
                pause_in_message();
            }
        }
        int count = 0;
        check(MPI_Get_count(&st, MPI_BYTE, &count), "MPI_Get_count");
        if (count <= 0 || off + std::uint64_t(count) > n)
            throw MpiError("rank " + std::to_string(source) + " sent more bytes than it announced");
        MPI_Request rq;
        check(MPI_Irecv(dest + off, count, MPI_BYTE, source, tag, comm, &rq), "MPI_Irecv");
        wait_patiently(self, rq, MPI_STATUS_IGNORE, patience, source, true);
        off += std::uint64_t(count);
    }
}

/// Complete sends to `peer`: blocking without patience; else polled, and sends that `peer` has
/// not taken `patience` seconds after they were posted throw Error(lost_rank) (a hung rank takes
/// no message; the requests are left to MPI, the job is ending).
void wait_sends(Comm& self, std::vector<MPI_Request>& requests, double patience, int peer) {
    if (patience <= 0) {
        check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
        return;
    }
    const double start = now_s();
    for (;;) {
        int done = 0;
        check(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
              "MPI_Testall");
        if (done) return;
        if (self.silent(peer, start, patience)) {
            for (auto& r : requests)
                if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
            mpi::note_lost_peer();
            throw Error(ErrorReason::lost_rank, "rank " + std::to_string(peer) + " took nothing sent to it for " +
                                                    std::to_string(patience) + " s (--rank-timeout)");
        }
        try {
            self.pulse();
        } catch (...) {
            for (auto& r : requests)
                if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
            throw;
        }
        pause_in_message();
    }
}

/// Posts a message to `dest`: the size word `*size` (the sum of the parts, set here; it must
/// outlive the sends), then each part in pieces of at most kChunk bytes. Appends the requests.
void post_parts(std::span<const std::span<const std::byte>> parts, int dest, int tag, MPI_Comm comm,
                std::uint64_t* size, std::vector<MPI_Request>& requests) {
    *size = 0;
    for (const auto& p : parts) *size += p.size();
    requests.emplace_back();
    check(MPI_Isend(size, 1, MPI_UINT64_T, dest, tag, comm, &requests.back()), "MPI_Isend");
    for (const auto& p : parts)
        for (std::size_t off = 0; off < p.size(); off += kChunk) {
            const int count = static_cast<int>(std::min(kChunk, p.size() - off));
            requests.emplace_back();
            check(MPI_Isend(p.data() + off, count, MPI_BYTE, dest, tag, comm, &requests.back()), "MPI_Isend");
        }
}

}  // namespace

void MpiComm::send_parts(std::span<const std::span<const std::byte>> parts, int dest, int tag) {
    std::uint64_t n = 0;
    if (patience() > 0) {  // posted at once, then completed with patience
        std::vector<MPI_Request> requests;
        post_parts(parts, dest, tag, handle_->comm, &n, requests);
        wait_sends(*this, requests, patience(), dest);
        return;
    }
    for (const auto& p : parts) n += p.size();
    check(MPI_Send(&n, 1, MPI_UINT64_T, dest, tag, handle_->comm), "MPI_Send");
    for (const auto& p : parts)
        for (std::size_t off = 0; off < p.size(); off += kChunk) {
            const int count = static_cast<int>(std::min(kChunk, p.size() - off));
            check(MPI_Send(p.data() + off, count, MPI_BYTE, dest, tag, handle_->comm), "MPI_Send");
        }
}

std::size_t MpiComm::isend_parts(std::span<const std::span<const std::byte>> parts, int dest, int tag) {
    auto pending = std::make_unique<PendingSend>();
    post_parts(parts, dest, tag, handle_->comm, &pending->size, pending->requests);
    pending->dest = dest;
    const std::size_t id = next_send_++;
    sends_.emplace(id, std::move(pending));
    return id;
}

bool MpiComm::test_send(std::size_t id) {
    auto it = sends_.find(id);
    if (it == sends_.end()) return true;
    auto& rq = it->second->requests;
    int done = 0;
    const int rc = MPI_Testall(static_cast<int>(rq.size()), rq.data(), &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
        const int dest = it->second->dest;
        sends_.erase(it);  // its requests are left to MPI: the destination is lost
        throw Error(ErrorReason::lost_rank,
                    "sending to rank " + std::to_string(dest) + " failed: " + mpi_error_text(rc));
    }
    if (done) sends_.erase(it);
    return done != 0;
}

void MpiComm::abandon_send(std::size_t id) {
    // The requests stay with MPI (cancelling a send to a dead rank may block); the handle is
    // forgotten, and its header word with it only when the job ends (kept in abandoned_).
    auto it = sends_.find(id);
    if (it == sends_.end()) return;
    abandoned_.push_back(std::move(it->second));
    sends_.erase(it);
}

std::size_t MpiComm::irecv_start(int source, int tag, std::span<std::byte> dest, Bytes* into) {
    auto p = std::make_unique<PendingRecv>();
    p->source = source;
    p->tag = tag;
    p->dest = dest;
    p->into = into;
    p->last = now_s();
    check(MPI_Irecv(&p->size, 1, MPI_UINT64_T, source, tag, handle_->comm, &p->request), "MPI_Irecv");
    const std::size_t id = next_recv_++;
    recvs_.emplace(id, std::move(p));
    return id;
}

bool MpiComm::test_recv(std::size_t id) {
    auto it = recvs_.find(id);
    if (it == recvs_.end()) return true;
    PendingRecv& p = *it->second;
    auto fail = [&](ErrorReason reason, const std::string& what) {
        cancel_request(p.request);
        recvs_.erase(it);
        throw Error(reason, what);
    };
    auto stalled = [&] {
        if (patience() > 0 && silent(p.source, p.last, patience()))
            fail(ErrorReason::lost_rank, "rank " + std::to_string(p.source) + " sent nothing for " +
                                             std::to_string(patience()) +
                                             " s in the middle of a message (--rank-timeout)");
        pulse();
        return false;
    };
    for (;;) {
        if (!p.have_size || p.piece_posted) {
            int done = 0;
            if (const int rc = MPI_Test(&p.request, &done, MPI_STATUS_IGNORE); rc != MPI_SUCCESS)
                fail(ErrorReason::lost_rank,
                     "receiving from rank " + std::to_string(p.source) + " failed: " + mpi_error_text(rc));
            if (!done) return stalled();
            p.last = now_s();
            if (!p.have_size) {
                p.have_size = true;
                if (p.into) {
                    p.into->clear();
                    p.into->resize(p.size);
                    p.target = p.into->data();
                } else if (p.size != p.dest.size()) {
                    p.wrong_size = true;
                    p.drained.resize(p.size);
                    p.target = p.drained.data();
                } else {
                    p.target = p.dest.data();
                }
            } else {
                p.piece_posted = false;
                p.off += std::uint64_t(p.piece);
            }
        }
        if (p.off == p.size) {
            const bool wrong = p.wrong_size;
            const std::uint64_t n = p.size, want = p.dest.size();
            const int source = p.source;
            recvs_.erase(it);
            if (wrong)
                throw MpiError("rank " + std::to_string(source) + " sent " + std::to_string(n) + " bytes where " +
                               std::to_string(want) + " were expected");
            return true;
        }
        int flag = 0;
        MPI_Status st;
        check(MPI_Iprobe(p.source, p.tag, handle_->comm, &flag, &st), "MPI_Iprobe");
        if (!flag) return stalled();
        int count = 0;
        check(MPI_Get_count(&st, MPI_BYTE, &count), "MPI_Get_count");
        if (count <= 0 || p.off + std::uint64_t(count) > p.size)
            fail(ErrorReason::generic, "rank " + std::to_string(p.source) + " sent more bytes than it announced");
        p.piece = count;
        check(MPI_Irecv(p.target + p.off, count, MPI_BYTE, p.source, p.tag, handle_->comm, &p.request), "MPI_Irecv");
        p.piece_posted = true;
    }
}

std::size_t MpiComm::isend_short(std::span<const std::byte> data, int dest, int tag) {
    if (data.size() > std::size_t(std::numeric_limits<int>::max()))
        throw MpiError("a short message of " + std::to_string(data.size()) + " bytes is too long");
    auto pending = std::make_unique<PendingSend>();
    pending->dest = dest;
    pending->requests.emplace_back();
    check(MPI_Isend(data.data(), static_cast<int>(data.size()), MPI_BYTE, dest, tag, handle_->comm,
                    &pending->requests.back()),
          "MPI_Isend");
    const std::size_t id = next_send_++;
    sends_.emplace(id, std::move(pending));
    return id;
}

std::size_t MpiComm::irecv_short(int source, int tag, std::span<std::byte> dest) {
    if (dest.size() > std::size_t(std::numeric_limits<int>::max()))
        throw MpiError("a short message of " + std::to_string(dest.size()) + " bytes is too long");
    auto p = std::make_unique<PendingShort>();
    p->source = source;
    check(MPI_Irecv(dest.data(), static_cast<int>(dest.size()), MPI_BYTE, source, tag, handle_->comm, &p->request),
          "MPI_Irecv");
    const std::size_t id = next_recv_++;
    shorts_.emplace(id, std::move(p));
    return id;
}

bool MpiComm::test_short(std::size_t id, std::size_t* got) {
    auto it = shorts_.find(id);
    if (it == shorts_.end()) return true;
    PendingShort& p = *it->second;
    int done = 0;
    MPI_Status st;
    const int rc = MPI_Test(&p.request, &done, &st);
    auto fail = [&](ErrorReason reason, const std::string& what) {
        cancel_request(p.request);
        shorts_.erase(it);
        throw Error(reason, what);
    };
    if (rc != MPI_SUCCESS)
        fail(ErrorReason::lost_rank, "receiving from rank " + std::to_string(p.source) + " failed: " + mpi_error_text(rc));
    if (!done) {
        if (p.waiting_since < 0) p.waiting_since = now_s();
        if (patience() > 0 && silent(p.source, p.waiting_since, patience())) {
            mpi::note_lost_peer();
            fail(ErrorReason::lost_rank, "rank " + std::to_string(p.source) + " sent nothing for " +
                                             std::to_string(patience()) + " s (--rank-timeout)");
        }
        pulse();
        return false;
    }
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    shorts_.erase(it);
    if (got) *got = std::size_t(count);
    return true;
}

void MpiComm::abandon_short(std::size_t id) {
    auto it = shorts_.find(id);
    if (it == shorts_.end()) return;
    cancel_request(it->second->request);
    shorts_.erase(it);
}

bool MpiComm::iprobe(int source, int tag, int* from) {
    int flag = 0;
    MPI_Status st;
    check(MPI_Iprobe(source_of(source), tag, handle_->comm, &flag, &st), "MPI_Iprobe");
    if (flag && from) *from = st.MPI_SOURCE;
    return flag != 0;
}

void MpiComm::send_recv(std::span<const std::span<const std::byte>> parts, int dest, int send_tag, Bytes& in,
                        int source, int recv_tag) {
    std::uint64_t n = 0;
    std::vector<MPI_Request> requests;
    if (dest != none) post_parts(parts, dest, send_tag, handle_->comm, &n, requests);
    try {
        if (source != none) recv_bytes_into(in, source, recv_tag);
    } catch (const Error& e) {
        // A lost source: the job ends, and waiting on the sends could be forever (dest may be
        // lost too). Another failure: the sends still complete.
        if (e.reason() == ErrorReason::lost_rank) {
            for (auto& r : requests)
                if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
        } else {
            MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
        }
        throw;
    } catch (...) {
        MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
        throw;
    }
    wait_sends(*this, requests, patience(), dest);
}

void MpiComm::recv_bytes_into(Bytes& buffer, int source, int tag, int* from) {
    int src = source;
    const std::uint64_t n = recv_header(*this, handle_->comm, source, tag, &src, patience());
    if (from) *from = src;
    // Cleared first: a buffer that must grow does not copy its old contents to the new memory.
    buffer.clear();
    buffer.resize(n);
    recv_pieces(*this, handle_->comm, buffer.data(), n, src, tag, patience());
}

void MpiComm::recv_bytes_exact(std::span<std::byte> dest, int source, int tag) {
    const std::uint64_t n = recv_header(*this, handle_->comm, source, tag, nullptr, patience());
    if (n != dest.size()) {
        Bytes drained(n);  // keep the message stream in step before refusing it
        recv_pieces(*this, handle_->comm, drained.data(), n, source, tag, patience());
        throw MpiError("rank " + std::to_string(source) + " sent " + std::to_string(n) + " bytes where " +
                       std::to_string(dest.size()) + " were expected");
    }
    recv_pieces(*this, handle_->comm, dest.data(), n, source, tag, patience());
}

std::vector<std::string> MpiComm::gather_strings(const std::string& mine) {
    const MPI_Comm comm = handle_->comm;
    if (mine.size() > INT_MAX) throw MpiError("gather_strings: message too large");
    int len = static_cast<int>(mine.size());
    std::vector<int> lens(rank_ == 0 ? size_ : 0);
    check(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm), "MPI_Gather");
    std::vector<int> displs(lens.size());
    std::size_t total = 0;
    for (std::size_t i = 0; i < lens.size(); ++i) {
        displs[i] = static_cast<int>(total);
        total += static_cast<std::size_t>(lens[i]);
    }
    std::string all(total, '\0');
    check(MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, comm),
          "MPI_Gatherv");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < lens.size(); ++i)
        out.push_back(all.substr(static_cast<std::size_t>(displs[i]), static_cast<std::size_t>(lens[i])));
    return out;
}

std::string MpiComm::broadcast_string(const std::string& value) {
    int len = static_cast<int>(value.size());
    check(MPI_Bcast(&len, 1, MPI_INT, 0, handle_->comm), "MPI_Bcast");
    std::string s = value;
    s.resize(static_cast<std::size_t>(len));
    check(MPI_Bcast(s.data(), len, MPI_CHAR, 0, handle_->comm), "MPI_Bcast");
    return s;
}

}  // namespace worksize::mpi
