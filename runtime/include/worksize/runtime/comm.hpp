// The communicator the cluster protocol talks through: ranks, point-to-point byte and JSON
// messages (blocking, or non-blocking sends and probes for rank 0's polling loop, with an optional
// patience on receives), a gather and a broadcast. Two implementations: MpiComm (mpi.hpp) over an MPI
// communicator for real jobs, and the in-process one made by local_comms(), whose "ranks" are
// threads of one process exchanging messages through queues, so that the master/worker protocol
// can be unit-tested without mpiexec.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "worksize/runtime/bytes.hpp"

namespace worksize {

class Comm {
public:
    /// A receive's `source` that matches any sender.
    static constexpr int any_source = -1;
    /// send_recv()'s `dest` or `source` when there is nothing to send or receive.
    static constexpr int none = -2;

    virtual ~Comm() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    /// Rank among the ranks sharing this node, their count, and whether rank 0 is one of them
    /// (auto device selection). The in-process communicator is one node.
    virtual int node_rank() const { return rank(); }
    virtual int node_size() const { return size(); }
    virtual bool master_on_node() const { return true; }

    /// One message made of several pieces sent in order (the receiver sees one payload of
    /// their total size). Blocking until the pieces may be reused.
    virtual void send_parts(std::span<const std::span<const std::byte>> parts, int dest, int tag) = 0;
    /// Receive one message into `buffer`, reusing its capacity; the sender in *from.
    virtual void recv_bytes_into(Bytes& buffer, int source, int tag, int* from = nullptr) = 0;
    /// Receive one message from rank `source` straight into `dest`; a message of another size
    /// is received and refused (Error), keeping the message stream in step.
    virtual void recv_bytes_exact(std::span<std::byte> dest, int source, int tag) = 0;
    /// Send `parts` to `dest` while receiving one message from `source` into `in` (either may
    /// be none): ranks in a line that each send to one neighbour and receive from the other
    /// cannot deadlock, whatever the message size. The default sends, then receives, which is
    /// right for a communicator whose sends never wait for the receiver.
    virtual void send_recv(std::span<const std::span<const std::byte>> parts, int dest, int send_tag, Bytes& in,
                           int source, int recv_tag);
    /// Start sending `parts` as one message (like send_parts) and return at once; the parts'
    /// memory must stay valid until test_send() says the send is done. Returns its handle.
    virtual std::size_t isend_parts(std::span<const std::span<const std::byte>> parts, int dest, int tag) = 0;
    /// Whether the send of handle `id` is done (a done handle is forgotten: ask once).
    /// @throws Error (lost_rank) for a send that failed (e.g. its destination is gone).
    virtual bool test_send(std::size_t id) = 0;
    /// Give up a send whose destination is lost: never tested again.
    virtual void abandon_send(std::size_t id) = 0;
    /// Start receiving one message from rank `source` (not any_source) and return at once: into
    /// `dest` when it is not empty (a message of another size is received and refused by
    /// test_recv, as recv_bytes_exact does), else into *into (any size). The memory must stay
    /// valid until test_recv() says it is done. Returns its handle.
    virtual std::size_t irecv_start(int source, int tag, std::span<std::byte> dest, Bytes* into) = 0;
    /// Whether the receive of handle `id` is done (a done handle is forgotten). @throws Error
    /// for a message of the wrong size, or (lost_rank) when MPI fails or nothing of the message
    /// arrives for patience() seconds.
    virtual bool test_recv(std::size_t id) = 0;
    /// One message of at most a few MiB as one piece, without the size word of isend_parts: the
    /// receiver posts irecv_short() with room for the most it accepts (the engine's halo rows,
    /// where both sides know the size). Done like isend_parts (test_send).
    virtual std::size_t isend_short(std::span<const std::byte> data, int dest, int tag) = 0;
    /// Start receiving one isend_short() message of at most dest.size() bytes into `dest`.
    virtual std::size_t irecv_short(int source, int tag, std::span<std::byte> dest) = 0;
    /// Whether the irecv_short() of handle `id` is done; its size in *got. @throws Error
    /// (lost_rank) when MPI fails or nothing arrives for patience() seconds, Error for a message
    /// longer than the room posted.
    virtual bool test_short(std::size_t id, std::size_t* got) = 0;
    /// Give up an irecv_short() not yet done (its sender is lost, or the receiver gives up):
    /// cancelled, so that nothing is written into its memory afterwards; never tested again.
    virtual void abandon_short(std::size_t id) = 0;
    /// Whether a message with `tag` from `source` (any_source) is waiting, without receiving it
    /// or waiting; its sender in *from.
    virtual bool iprobe(int source, int tag, int* from = nullptr) = 0;
    /// Seconds a blocking receive from another rank may go without any part of its message
    /// arriving before it throws Error (lost_rank); 0: wait forever (the default for MPI).
    void set_patience(double seconds) { patience_s_ = seconds; }
    double patience() const { return patience_s_; }
    /// Called at every poll of a wait with patience (a receive, a send, a probe loop), so that a
    /// worker waiting on a neighbour still tells rank 0 that it is alive (data jobs; the function
    /// sends a heartbeat when one is due). Empty: nothing is called.
    void set_pulse(std::function<void()> f) { pulse_ = std::move(f); }
    /// Seconds between a worker's heartbeats to rank 0 (wire::kHeartbeat): a third of
    /// --rank-timeout, at most a second (Cluster sets it from the selection), so that rank 0
    /// hears a healthy worker at least three times within any timeout.
    void set_heartbeat(double seconds) { heartbeat_s_ = seconds; }
    double heartbeat() const { return heartbeat_s_; }
    void pulse() const {
        if (pulse_) pulse_();
    }
    /// Messages with `tag` are signs of life (wire::kAlive: a data job's neighbours send them
    /// while they step and wait): a wait with patience on a rank goes on while that rank's come
    /// (silent()). 0: none (the default).
    void set_alive_tag(int tag) { alive_tag_ = tag; }
    /// Whether a wait with `patience` on `peer` that began (or last heard from it) at `since`
    /// has run out: `patience` seconds without a sign of life from `peer` since then. Takes the
    /// alive-tag messages that came (at most every 50 ms), noting their senders.
    bool silent(int peer, double since, double patience);
    /// Receives every alive-tag message that has come (the end of a data job: none left over).
    void drain_alive();

    /// Collective: rank 0 gets every rank's string in rank order, the others an empty vector.
    virtual std::vector<std::string> gather_strings(const std::string& mine) = 0;
    /// Collective: rank 0's value reaches every rank.
    virtual std::string broadcast_string(const std::string& value) = 0;

    void send_bytes(std::span<const std::byte> data, int dest, int tag);
    Bytes recv_bytes(int source, int tag, int* from = nullptr);
    void send_json(const nlohmann::json& j, int dest, int tag);
    /// @throws Error for a message that is not JSON.
    nlohmann::json recv_json(int source, int tag, int* from = nullptr);

private:
    double patience_s_ = 0.0;
    double heartbeat_s_ = 1.0;
    std::function<void()> pulse_;
    int alive_tag_ = 0;
    double last_drain_ = 0.0;
    bool draining_ = false;
    std::map<int, double> heard_;  ///< by rank: when its last alive-tag message was taken
};

/// Sets a Comm's patience for a scope, then puts the previous one back.
class PatienceScope {
public:
    PatienceScope(Comm& comm, double seconds) : comm_(comm), saved_(comm.patience()) { comm.set_patience(seconds); }
    ~PatienceScope() { comm_.set_patience(saved_); }
    PatienceScope(const PatienceScope&) = delete;
    PatienceScope& operator=(const PatienceScope&) = delete;

private:
    Comm& comm_;
    double saved_;
};

/// `size` in-process communicators (index = rank) sharing one set of queues; give each to its
/// own thread. A receive that waits longer than `timeout_s` throws Error (lost_rank), so that a
/// protocol bug fails a test instead of hanging it.
std::vector<std::unique_ptr<Comm>> local_comms(int size, double timeout_s = 120.0);

}  // namespace worksize
