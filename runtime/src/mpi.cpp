// MPI wrappers: the environment and the communicator over an MPI_Comm (chunked byte messages,
// gathers and broadcasts).
#include "worksize/runtime/mpi.hpp"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "worksize/scheduler/log.hpp"

namespace worksize::mpi {

namespace {

void check(int rc, const char* call) {
    if (rc == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw MpiError(std::string(call) + " failed: " + std::string(msg, static_cast<std::size_t>(len)));
}

constexpr std::size_t kChunk = std::size_t(1) << 30;  // 1 GiB pieces: counts stay in int

}  // namespace

Environment::Environment(int& argc, char**& argv) {
    int provided = 0;
    check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    log::set_rank(rank_);  // messages of ranks other than 0 say which rank wrote them
    MPI_Comm node;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
          "MPI_Comm_split_type");
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_size(node, &local_size_);
    int is0 = rank_ == 0 ? 1 : 0, any0 = 0;
    check(MPI_Allreduce(&is0, &any0, 1, MPI_INT, MPI_MAX, node), "MPI_Allreduce");
    master_on_node_ = any0 != 0;
    MPI_Comm_free(&node);
}

Environment::~Environment() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

void Environment::abort(int code) const { MPI_Abort(MPI_COMM_WORLD, code); std::abort(); }

struct MpiComm::Handle {
    MPI_Comm comm;
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

/// The announced size of the payload that `source` sends next with `tag`.
std::uint64_t recv_header(MPI_Comm comm, int source, int tag, int* from) {
    std::uint64_t n = 0;
    MPI_Status st;
    check(MPI_Recv(&n, 1, MPI_UINT64_T, source_of(source), tag, comm, &st), "MPI_Recv");
    if (from) *from = st.MPI_SOURCE;
    return n;
}

/// The payload's pieces, whatever their sizes (the sender's parts), into dest[0, n).
void recv_pieces(MPI_Comm comm, std::byte* dest, std::uint64_t n, int source, int tag) {
    for (std::uint64_t off = 0; off < n;) {
        MPI_Status st;
        check(MPI_Probe(source, tag, comm, &st), "MPI_Probe");
        int count = 0;
        check(MPI_Get_count(&st, MPI_BYTE, &count), "MPI_Get_count");
        if (count <= 0 || off + std::uint64_t(count) > n)
            throw MpiError("rank " + std::to_string(source) + " sent more bytes than it announced");
        check(MPI_Recv(dest + off, count, MPI_BYTE, source, tag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
        off += std::uint64_t(count);
    }
}

}  // namespace

void MpiComm::send_parts(std::span<const std::span<const std::byte>> parts, int dest, int tag) {
    std::uint64_t n = 0;
    for (const auto& p : parts) n += p.size();
    check(MPI_Send(&n, 1, MPI_UINT64_T, dest, tag, handle_->comm), "MPI_Send");
    for (const auto& p : parts)
        for (std::size_t off = 0; off < p.size(); off += kChunk) {
            const int count = static_cast<int>(std::min(kChunk, p.size() - off));
            check(MPI_Send(p.data() + off, count, MPI_BYTE, dest, tag, handle_->comm), "MPI_Send");
        }
}

void MpiComm::send_recv(std::span<const std::span<const std::byte>> parts, int dest, int send_tag, Bytes& in,
                        int source, int recv_tag) {
    std::uint64_t n = 0;
    std::vector<MPI_Request> requests;
    if (dest != none) {
        for (const auto& p : parts) n += p.size();
        requests.emplace_back();
        check(MPI_Isend(&n, 1, MPI_UINT64_T, dest, send_tag, handle_->comm, &requests.back()), "MPI_Isend");
        for (const auto& p : parts)
            for (std::size_t off = 0; off < p.size(); off += kChunk) {
                const int count = static_cast<int>(std::min(kChunk, p.size() - off));
                requests.emplace_back();
                check(MPI_Isend(p.data() + off, count, MPI_BYTE, dest, send_tag, handle_->comm, &requests.back()),
                      "MPI_Isend");
            }
    }
    try {
        if (source != none) recv_bytes_into(in, source, recv_tag);
    } catch (...) {
        MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
        throw;
    }
    check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

void MpiComm::recv_bytes_into(Bytes& buffer, int source, int tag, int* from) {
    int src = source;
    const std::uint64_t n = recv_header(handle_->comm, source, tag, &src);
    if (from) *from = src;
    // Cleared first: a buffer that must grow does not copy its old contents to the new memory.
    buffer.clear();
    buffer.resize(n);
    recv_pieces(handle_->comm, buffer.data(), n, src, tag);
}

void MpiComm::recv_bytes_exact(std::span<std::byte> dest, int source, int tag) {
    const std::uint64_t n = recv_header(handle_->comm, source, tag, nullptr);
    if (n != dest.size()) {
        Bytes drained(n);  // keep the message stream in step before refusing it
        recv_pieces(handle_->comm, drained.data(), n, source, tag);
        throw MpiError("rank " + std::to_string(source) + " sent " + std::to_string(n) + " bytes where " +
                       std::to_string(dest.size()) + " were expected");
    }
    recv_pieces(handle_->comm, dest.data(), n, source, tag);
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
