// A kernel task's input while it arrives: the worker's main thread receives its pieces
// (transport/pieces.hpp) into the task's input buffer and says how far they have come; the
// task's lane, running the slice meanwhile, waits for each part only when it uploads it, so that
// a piece goes onto the device while the next one moves (execute_declared does; an executor that
// does not know feeds gets its whole input before it starts: KernelJobFactory::streams_input).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace worksize {

/// A value the slice this thread executes runs with (its feed, parts, output destination,
/// guard): set by a Scope while it lives, T{} outside one.
template <class T>
class ThreadCurrent {
public:
    static T get() { return slot(); }
    class Scope {
    public:
        explicit Scope(T value) : saved_(slot()) { slot() = value; }
        ~Scope() { slot() = saved_; }
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;

    private:
        T saved_;
    };

private:
    static T& slot() {
        thread_local T value{};
        return value;
    }
};

class InputFeed {
public:
    explicit InputFeed(std::uint64_t total) : total_(total) {}
    std::uint64_t total() const { return total_; }
    /// The receiving thread: the input's first `bytes` are there.
    void arrived(std::uint64_t bytes);
    /// The receiving thread: nothing more will come (`why`).
    void fail(const std::string& why);
    /// Blocks until the input's first `bytes` are there. @throws Error once fail() was called.
    void wait(std::uint64_t bytes) const;
    bool complete() const;

    /// The feed of the slice this thread executes, or null (its input is all there).
    static InputFeed* current() { return ThreadCurrent<InputFeed*>::get(); }
    /// Sets current() for this thread while it lives.
    using Scope = ThreadCurrent<InputFeed*>::Scope;

private:
    const std::uint64_t total_;
    mutable std::mutex m_;
    mutable std::condition_variable cv_;
    std::uint64_t arrived_ = 0;
    std::string failed_;
};

/// Rank 0's own slice's input as the job's memory holds it (KernelJob::input_parts: matmul's
/// rows of A and all of B), in order, instead of packed into one buffer: an executor that streams
/// its input (execute_declared) uploads each part's bytes straight from that memory.
class InputParts {
public:
    explicit InputParts(std::vector<std::span<const std::byte>> parts);
    std::uint64_t total() const { return total_; }
    /// Calls `f(bytes, at)` for each run of the input's bytes [at, at + n) that lies in one part
    /// (`at`: its offset in the input), in order.
    void each(std::uint64_t at, std::uint64_t n,
              const std::function<void(std::span<const std::byte>, std::uint64_t)>& f) const;

    /// The parts of the slice this thread executes, or null (its input is one buffer).
    static const InputParts* current() { return ThreadCurrent<const InputParts*>::get(); }
    /// Sets current() for this thread while it lives.
    using Scope = ThreadCurrent<const InputParts*>::Scope;

private:
    std::vector<std::span<const std::byte>> parts_;
    std::vector<std::uint64_t> starts_;  ///< each part's offset in the input
    std::uint64_t total_ = 0;
};

/// Rank 0's own slice's output downloaded straight into where the job keeps it
/// (KernelJob::output_target) instead of into the slice's buffer and copied there after: an
/// executor that streams its input (execute_declared) does so when the span is the slice's whole
/// output and it has no reductions.
class OutputInPlace {
public:
    /// The destination of the slice this thread executes, or empty.
    static std::span<std::byte> current() { return ThreadCurrent<std::span<std::byte>>::get(); }
    using Scope = ThreadCurrent<std::span<std::byte>>::Scope;
};

/// Whether rank 0's thread running a slice is copying to or from the job's memory (InputParts,
/// OutputInPlace), so that rank 0 never gives the slice up (--kernel-timeout) and returns while
/// a copy still touches that memory: a copy starts only by enter(), which fails once abandon()
/// succeeded, and abandon() fails while a copy runs.
class UserMemoryGuard {
public:
    bool enter() {
        int free = 0;
        return s_.compare_exchange_strong(free, 1);
    }
    void leave() {
        int busy = 1;
        s_.compare_exchange_strong(busy, 0);
    }
    /// Rank 0's main thread: no copy may start from now on; false while one runs.
    bool abandon() {
        int free = 0;
        return s_.compare_exchange_strong(free, 2) || s_.load() == 2;
    }
    /// The guard of the slice this thread executes, or null (nothing gives it up).
    static UserMemoryGuard* current() { return ThreadCurrent<UserMemoryGuard*>::get(); }
    using Scope = ThreadCurrent<UserMemoryGuard*>::Scope;

private:
    std::atomic<int> s_{0};  ///< 0 free, 1 copying, 2 given up
};

}  // namespace worksize

