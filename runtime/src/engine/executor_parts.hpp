// The executor's inner records (executor.hpp), shared by its sources: executor.cpp (the steps)
// and executor_gather.cpp (the gathers).
#pragma once

#include <future>
#include <map>
#include <utility>
#include <vector>

#include "engine/executor.hpp"

namespace worksize::engine {

/// A staging slot: rows read back to send or to write into another device, or rows received.
/// A message is one piece: the status word, then (unless the sender failed) the rows. A gather's
/// piece is the rows alone (rows.data() + 8 on).
struct Executor::Slot {
    Bytes rows;             ///< status word, then the rows read_rows fills (pinned)
    Bytes in;               ///< a received message: status word, then the rows
    cl::Event read, write;  ///< the read that filled `rows`; the last write that reads `rows` or `in`
    int read_slice = -1;
    std::size_t send_id = 0, recv_id = 0, got = 0;
    bool sending = false, receiving = false, received_ok = false;
    int send_peer = -1, recv_peer = -1;
    std::uint64_t want = 0;
};

/// The gather list being run: its receives (by list index), its downloads into the job's memory,
/// a worker's status word.
struct Executor::Gather {
    struct Recv {
        std::size_t id = 0;
        bool posted = false, done = false, ok = false;  ///< ok: a status word that said so
        std::uint64_t status = 0;
    };
    std::map<std::size_t, Recv> recvs;
    /// Downloads into the job's memory, per slice: their list indexes, in order, read in a thread
    /// of the slice's own (or here), their events.
    struct Download {
        int slice = -1;
        std::vector<std::size_t> index;
        std::future<std::vector<cl::Event>> thread;
        std::vector<cl::Event> evs;
        double host_s = 0.0;
    };
    std::vector<Download> downloads;
    bool threads = false;  ///< downloads in threads (messages beside them, or several devices)
    bool started = false;  ///< the threads run
    bool sent_ok = true;   ///< a worker's status word said so: "failed" sends no pieces
};

/// The scatter list being run: rank 0's sends (peer, handle) and its own uploads' events, a
/// worker's receives (by list index) and its writes from each slot.
struct Executor::Scatter {
    std::vector<std::pair<int, std::size_t>> sends;
    std::vector<std::pair<int, cl::Event>> uploads;  ///< (slice, event)
    std::vector<Instruction> held;  ///< rank 0's uploads when nothing moves beside them (Target::upload_host)
    bool direct = false;            ///< rank 0's uploads straight from its memory, not blocking
    std::map<std::size_t, std::size_t> recvs;                      ///< list index -> handle
    std::map<int, std::vector<std::pair<int, cl::Event>>> writes;  ///< slot -> (slice, event)
};

}  // namespace worksize::engine
