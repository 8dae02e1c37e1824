// A kernel task's input while it arrives: the worker's main thread receives its pieces
// (transport/pieces.hpp) into the task's input buffer and says how far they have come; the
// task's lane, running the slice meanwhile, waits for each part only when it uploads it, so that
// a piece goes onto the device while the next one moves (execute_declared does; an executor that
// does not know feeds gets its whole input before it starts: KernelJobFactory::streams_input).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

namespace worksize {

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
    static InputFeed* current();
    /// Sets current() for this thread while it lives.
    class Scope {
    public:
        explicit Scope(InputFeed* feed);
        ~Scope();
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;

    private:
        InputFeed* saved_;
    };

private:
    const std::uint64_t total_;
    mutable std::mutex m_;
    mutable std::condition_variable cv_;
    std::uint64_t arrived_ = 0;
    std::string failed_;
};

}  // namespace worksize
