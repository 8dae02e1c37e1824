// A thin, exception-safe layer over MPI: the environment (init/finalize), the world's rank and
// node-local rank, and the communicator (comm.hpp) over an MPI communicator: byte/JSON messages
// of any length, a gather and a broadcast. Only runtime/ includes mpi.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "worksize/runtime/bytes.hpp"
#include "worksize/runtime/comm.hpp"
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
    /// Rank 0 after a lost rank (lost_peer()): MPI_Finalize could wait forever for the lost
    /// rank, so the job ends with MPI_Abort(code), which also ends a hung rank; rank 0 has
    /// already printed its result or error. Flushes the output first.
    [[noreturn]] void end_after_loss(int code) const;

private:
    int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
    bool master_on_node_ = true;
};

/// Rank 0 lost a rank in this job (Cluster): the job must end by Environment::end_after_loss.
void note_lost_peer();
bool lost_peer();

/// A device of this rank is held by a kernel that ran past --kernel-timeout (Cluster): a thread
/// waits on it that cannot be stopped, so the rank must end by end_held().
void note_held_device();
bool held_device();
/// Ends this rank with `code` after MPI_Finalize (the other ranks finalize too), without
/// destructors or exit handlers: they would wait on the held device (the OpenCL runtime's
/// teardown, the waiting thread). Flushes the output first.
[[noreturn]] void end_held(int code);
/// A worker told by rank 0 that a rank of the job is lost: MPI_Finalize would wait for that
/// rank forever, so this rank ends with `code` without it (and without destructors, which may
/// hold MPI objects), 2 s later unless rank 0's MPI_Abort has ended it first. Flushes the
/// output first.
[[noreturn]] void end_unfinalized(int code);
/// Ends the whole job now (MPI_Abort, every rank and the launcher), from any thread: a rank whose
/// device runs a kernel past --kernel-timeout, after its one line. Flushes the output first and
/// silences MPI_Abort's own notice; without MPI, ends this process.
[[noreturn]] void end_job_now(int code);

/// The communicator over an MPI communicator handle (world: MPI_COMM_WORLD; others may be made
/// in mpi.cpp from any MPI_Comm). Messages of any length are split into chunks below 2^31 bytes;
/// an MPI failure is an MpiError.
class MpiComm final : public Comm {
public:
    /// The job's world communicator, with the node layout the environment found.
    explicit MpiComm(const Environment& env);
    ~MpiComm() override;
    MpiComm(const MpiComm&) = delete;
    MpiComm& operator=(const MpiComm&) = delete;

    int rank() const override { return rank_; }
    int size() const override { return size_; }
    int node_rank() const override { return node_rank_; }
    int node_size() const override { return node_size_; }
    bool master_on_node() const override { return master_on_node_; }
    void send_parts(std::span<const std::span<const std::byte>> parts, int dest, int tag) override;
    void recv_bytes_into(Bytes& buffer, int source, int tag, int* from = nullptr) override;
    void recv_bytes_exact(std::span<std::byte> dest, int source, int tag) override;
    /// Nonblocking sends (MPI_Isend) around the blocking receive.
    void send_recv(std::span<const std::span<const std::byte>> parts, int dest, int send_tag, Bytes& in, int source,
                   int recv_tag) override;
    std::size_t isend_parts(std::span<const std::span<const std::byte>> parts, int dest, int tag) override;
    bool test_send(std::size_t id) override;
    void abandon_send(std::size_t id) override;
    bool iprobe(int source, int tag, int* from = nullptr) override;
    std::size_t irecv_start(int source, int tag, std::span<std::byte> dest, Bytes* into) override;
    bool test_recv(std::size_t id) override;
    std::size_t isend_short(std::span<const std::byte> data, int dest, int tag) override;
    std::size_t irecv_short(int source, int tag, std::span<std::byte> dest) override;
    bool test_short(std::size_t id, std::size_t* got) override;
    void abandon_short(std::size_t id) override;
    std::vector<std::string> gather_strings(const std::string& mine) override;
    std::string broadcast_string(const std::string& value) override;

private:
    struct PendingSend;  // a message's requests and its size word (mpi.cpp)
    std::map<std::size_t, std::unique_ptr<PendingSend>> sends_;
    std::vector<std::unique_ptr<PendingSend>> abandoned_;
    std::size_t next_send_ = 1;
    struct PendingRecv;  // a message being received piece by piece (mpi.cpp)
    std::map<std::size_t, std::unique_ptr<PendingRecv>> recvs_;
    std::size_t next_recv_ = 1;
    struct PendingShort;  // an irecv_short (mpi.cpp)
    std::map<std::size_t, std::unique_ptr<PendingShort>> shorts_;
    struct Handle;  // the MPI_Comm (mpi.h stays out of this header)
    std::unique_ptr<Handle> handle_;
    int rank_ = 0, size_ = 1, node_rank_ = 0, node_size_ = 1;
    bool master_on_node_ = true;
};

}  // namespace worksize::mpi
