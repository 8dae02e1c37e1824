// A thin, exception-safe layer over MPI: the environment (init/finalize), the world's rank and
// node-local rank, and byte/JSON messages of any length. Only runtime/ includes mpi.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "worksize/runtime/bytes.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize::mpi {

/// An MPI call failed; what() names the call and MPI's error string.
class MpiError : public Error {
public:
    using Error::Error;
};

/// Owns MPI_Init/MPI_Finalize (funneled threading: only the main thread calls MPI). Non-copyable.
/// MPI errors are returned (MPI_ERRORS_RETURN) and turned into MpiError.
class Environment {
public:
    Environment(int& argc, char**& argv);
    ~Environment();
    Environment(const Environment&) = delete;
    Environment& operator=(const Environment&) = delete;

    int rank() const { return rank_; }
    int size() const { return size_; }
    /// Rank among the ranks sharing this node (MPI_COMM_TYPE_SHARED), and their count.
    int local_rank() const { return local_rank_; }
    int local_size() const { return local_size_; }
    /// Whether world rank 0 runs on this node (it is then node-local rank 0).
    bool master_on_node() const { return master_on_node_; }
    /// Ends every rank of the job at once (MPI_Abort); for failures that cannot be reported.
    [[noreturn]] void abort(int code) const;

private:
    int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
    bool master_on_node_ = true;
};

using worksize::Bytes;

/// Blocking send of any number of bytes (split into chunks below 2^31) to `dest` with `tag`.
void send_bytes(const Bytes& data, int dest, int tag);
void send_bytes(const std::byte* data, std::size_t size, int dest, int tag);
/// One payload made of several pieces sent in order, without packing them first (the receiver
/// sees one payload of their total size).
void send_parts(std::span<const std::span<const std::byte>> parts, int dest, int tag);
/// Receive what send_bytes or send_parts sent; `source` may be any_source(); returns the sender
/// in *from.
Bytes recv_bytes(int source, int tag, int* from = nullptr);
/// The same into `buffer`, whose capacity is reused (no reallocation, no zeroing, when it is
/// large enough).
void recv_bytes_into(Bytes& buffer, int source, int tag, int* from = nullptr);
/// The same straight into `dest` (e.g. the job's output rows); `source` must be a rank. A payload
/// of another size is received and refused (MpiError), keeping the message stream in step.
void recv_bytes_into(std::span<std::byte> dest, int source, int tag);
void send_json(const nlohmann::json& j, int dest, int tag);
nlohmann::json recv_json(int source, int tag, int* from = nullptr);
int any_source();

/// Every rank contributes `mine`; rank 0 gets all ranks' strings in rank order, the others
/// an empty vector.
std::vector<std::string> gather_strings(const std::string& mine);
/// Rank 0's value reaches every rank.
int broadcast_int(int value);
std::string broadcast_string(const std::string& value);

}  // namespace worksize::mpi
