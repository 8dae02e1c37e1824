// The communicator's message helpers (JSON over bytes) and the in-process implementation: every
// rank has an inbox of (source, tag, bytes) messages guarded by one mutex; a receive takes the
// first message matching its source and tag, so that messages of one sender and tag arrive in
// order as under MPI. The gather and the broadcast are messages on tags of their own.
#include "worksize/runtime/comm.hpp"

#include <chrono>
#include <condition_variable>
#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>

#include "support/clock.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize {

void Comm::send_bytes(std::span<const std::byte> data, int dest, int tag) { send_parts({&data, 1}, dest, tag); }

void Comm::send_recv(std::span<const std::span<const std::byte>> parts, int dest, int send_tag, Bytes& in,
                     int source, int recv_tag) {
    if (dest != none) send_parts(parts, dest, send_tag);
    if (source != none) recv_bytes_into(in, source, recv_tag);
}

bool Comm::silent(int peer, double since, double patience) {
    const double now = now_s();
    if (alive_tag_ != 0 && !draining_ && now - last_drain_ >= 0.05) {
        drain_alive();
        last_drain_ = now;
    }
    if (const auto it = heard_.find(peer); it != heard_.end()) since = std::max(since, it->second);
    return now - since > patience;
}

void Comm::drain_alive() {
    if (alive_tag_ == 0 || draining_) return;
    draining_ = true;
    try {
        int from = 0;
        while (iprobe(any_source, alive_tag_, &from)) {
            (void)recv_bytes(from, alive_tag_);
            heard_[from] = now_s();
        }
    } catch (...) {
        draining_ = false;
        throw;
    }
    draining_ = false;
}

Bytes Comm::recv_bytes(int source, int tag, int* from) {
    Bytes out;
    recv_bytes_into(out, source, tag, from);
    return out;
}

void Comm::send_json(const nlohmann::json& j, int dest, int tag) {
    const std::string s = j.dump();
    send_bytes(std::as_bytes(std::span(s.data(), s.size())), dest, tag);
}

nlohmann::json Comm::recv_json(int source, int tag, int* from) {
    const Bytes b = recv_bytes(source, tag, from);
    try {
        return nlohmann::json::parse(reinterpret_cast<const char*>(b.data()),
                                     reinterpret_cast<const char*>(b.data()) + b.size());
    } catch (const nlohmann::json::exception& e) {
        throw Error(std::string("malformed message from another rank: ") + e.what());
    }
}

namespace {

constexpr int kGatherTag = -101, kBroadcastTag = -102;  // never used by the protocol

struct Hub {
    struct Message {
        int source;
        int tag;
        std::vector<std::byte> data;
        std::size_t id = 0;  ///< for test_send: the send is done once the message is taken
    };
    std::size_t next_id = 1;
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::deque<Message>> inbox;
    double timeout_s;
};

class LocalComm final : public Comm {
public:
    LocalComm(std::shared_ptr<Hub> hub, int rank) : hub_(std::move(hub)), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return static_cast<int>(hub_->inbox.size()); }

    void send_parts(std::span<const std::span<const std::byte>> parts, int dest, int tag) override {
        (void)post(parts, dest, tag);  // queued at once: a blocking send never waits for the receiver
    }

    // A non-blocking send is done once its receiver has taken the message, as a large message
    // under MPI: rank 0 can see a worker that takes nothing.
    std::size_t isend_parts(std::span<const std::span<const std::byte>> parts, int dest, int tag) override {
        const std::size_t id = post(parts, dest, tag);
        isends_.emplace(id, dest);
        return id;
    }
    bool test_send(std::size_t id) override {
        const auto it = isends_.find(id);
        if (it == isends_.end()) return true;
        {
            std::lock_guard lock(hub_->m);
            for (const auto& msg : hub_->inbox[static_cast<std::size_t>(it->second)])
                if (msg.id == id) return false;
        }
        isends_.erase(it);
        return true;
    }
    void abandon_send(std::size_t id) override { isends_.erase(id); }

    std::size_t irecv_start(int source, int tag, std::span<std::byte> dest, Bytes* into) override {
        recvs_.emplace(next_recv_, PendingRecv{source, tag, dest, into});
        return next_recv_++;
    }

    bool test_recv(std::size_t id) override {
        auto it = recvs_.find(id);
        if (it == recvs_.end()) return true;
        const PendingRecv p = it->second;
        if (!iprobe(p.source, p.tag, nullptr)) return false;
        recvs_.erase(it);
        if (p.into)
            recv_bytes_into(*p.into, p.source, p.tag, nullptr);
        else
            recv_bytes_exact(p.dest, p.source, p.tag);
        return true;
    }

    std::size_t isend_short(std::span<const std::byte> data, int dest, int tag) override {
        const std::span<const std::byte> parts[1] = {data};
        return isend_parts(parts, dest, tag);
    }
    std::size_t irecv_short(int source, int tag, std::span<std::byte> dest) override {
        recvs_.emplace(next_recv_, PendingRecv{source, tag, dest, nullptr});
        return next_recv_++;
    }
    bool test_short(std::size_t id, std::size_t* got) override {
        auto it = recvs_.find(id);
        if (it == recvs_.end()) return true;
        const PendingRecv p = it->second;
        if (!iprobe(p.source, p.tag, nullptr)) {
            pulse();
            return false;
        }
        recvs_.erase(it);
        const auto msg = take(p.source, p.tag);
        if (msg.data.size() > p.dest.size())
            throw Error("rank " + std::to_string(p.source) + " sent " + std::to_string(msg.data.size()) +
                        " bytes where at most " + std::to_string(p.dest.size()) + " were expected");
        if (!msg.data.empty()) std::memcpy(p.dest.data(), msg.data.data(), msg.data.size());
        if (got) *got = msg.data.size();
        return true;
    }

    void abandon_short(std::size_t id) override { recvs_.erase(id); }

    bool iprobe(int source, int tag, int* from) override {
        std::lock_guard lock(hub_->m);
        for (const auto& msg : hub_->inbox[static_cast<std::size_t>(rank_)])
            if (msg.tag == tag && (source == any_source || msg.source == source)) {
                if (from) *from = msg.source;
                return true;
            }
        return false;
    }

    void recv_bytes_into(Bytes& buffer, int source, int tag, int* from) override {
        auto msg = take(source, tag);
        if (from) *from = msg.source;
        buffer.clear();
        buffer.insert(buffer.end(), msg.data.begin(), msg.data.end());
    }

    void recv_bytes_exact(std::span<std::byte> dest, int source, int tag) override {
        const auto msg = take(source, tag);
        if (msg.data.size() != dest.size())
            throw Error("rank " + std::to_string(source) + " sent " + std::to_string(msg.data.size()) +
                        " bytes where " + std::to_string(dest.size()) + " were expected");
        if (!dest.empty()) std::memcpy(dest.data(), msg.data.data(), dest.size());
    }

    std::vector<std::string> gather_strings(const std::string& mine) override {
        const auto bytes = std::as_bytes(std::span(mine.data(), mine.size()));
        if (rank_ != 0) {
            send_bytes(bytes, 0, kGatherTag);
            return {};
        }
        std::vector<std::string> out{mine};
        for (int r = 1; r < size(); ++r) {
            const auto msg = take(r, kGatherTag);
            out.emplace_back(reinterpret_cast<const char*>(msg.data.data()), msg.data.size());
        }
        return out;
    }

    std::string broadcast_string(const std::string& value) override {
        if (rank_ == 0) {
            for (int r = 1; r < size(); ++r) send_bytes(std::as_bytes(std::span(value.data(), value.size())), r, kBroadcastTag);
            return value;
        }
        const auto msg = take(0, kBroadcastTag);
        return std::string(reinterpret_cast<const char*>(msg.data.data()), msg.data.size());
    }

private:
    std::size_t post(std::span<const std::span<const std::byte>> parts, int dest, int tag) {
        if (dest < 0 || dest >= size()) throw Error("local comm: no rank " + std::to_string(dest));
        Hub::Message msg{rank_, tag, {}};
        for (const auto& p : parts) msg.data.insert(msg.data.end(), p.begin(), p.end());
        std::size_t id = 0;
        {
            std::lock_guard lock(hub_->m);
            id = msg.id = hub_->next_id++;
            hub_->inbox[static_cast<std::size_t>(dest)].push_back(std::move(msg));
        }
        hub_->cv.notify_all();
        return id;
    }

    Hub::Message take(int source, int tag) {
        std::unique_lock lock(hub_->m);
        auto& box = hub_->inbox[static_cast<std::size_t>(rank_)];
        const double wait_s = patience() > 0 ? std::min(patience(), hub_->timeout_s) : hub_->timeout_s;
        const double start = now_s();
        auto deadline = std::chrono::steady_clock::now() +
                              std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                  std::chrono::duration<double>(wait_s));
        for (;;) {
            for (auto it = box.begin(); it != box.end(); ++it) {
                if (it->tag != tag || (source != any_source && it->source != source)) continue;
                Hub::Message msg = std::move(*it);
                box.erase(it);
                return msg;
            }
            if (std::chrono::steady_clock::now() >= deadline) {
                // A sender that keeps sending signs of life (Comm::set_alive_tag) is waited on.
                lock.unlock();
                const bool gone = source == any_source || silent(source, start, wait_s);
                lock.lock();
                if (!gone) {
                    deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
                    continue;
                }
                throw Error(ErrorReason::lost_rank,
                            "rank " + std::to_string(rank_) + ": no message (tag " + std::to_string(tag) + ") from " +
                                (source == any_source ? std::string("any rank") : "rank " + std::to_string(source)) +
                                " within " + std::to_string(wait_s) + " s");
            }
            // A wait with patience calls the pulse (outside the lock) at least every 100 ms.
            const auto wake = patience() > 0 ? std::min(deadline, std::chrono::steady_clock::now() +
                                                                       std::chrono::milliseconds(100))
                                             : deadline;
            hub_->cv.wait_until(lock, wake);
            if (patience() > 0) {
                lock.unlock();
                pulse();
                lock.lock();
            }
        }
    }

    struct PendingRecv {
        int source, tag;
        std::span<std::byte> dest;
        Bytes* into;
    };
    std::shared_ptr<Hub> hub_;
    int rank_;
    std::map<std::size_t, PendingRecv> recvs_;
    std::map<std::size_t, int> isends_;  // non-blocking sends not yet seen done: their destination
    std::size_t next_recv_ = 0;
};

}  // namespace

std::vector<std::unique_ptr<Comm>> local_comms(int size, double timeout_s) {
    auto hub = std::make_shared<Hub>();
    hub->inbox.resize(static_cast<std::size_t>(size));
    hub->timeout_s = timeout_s;
    std::vector<std::unique_ptr<Comm>> out;
    for (int r = 0; r < size; ++r) out.push_back(std::make_unique<LocalComm>(hub, r));
    return out;
}

}  // namespace worksize
