// A kernel task's input while it arrives (input_feed.hpp).
#include "jobs/input_feed.hpp"

#include "worksize/scheduler/types.hpp"

namespace worksize {

namespace {
thread_local InputFeed* current_feed = nullptr;
}  // namespace

void InputFeed::arrived(std::uint64_t bytes) {
    {
        std::lock_guard lock(m_);
        arrived_ = bytes;
    }
    cv_.notify_all();
}

void InputFeed::fail(const std::string& why) {
    {
        std::lock_guard lock(m_);
        failed_ = why.empty() ? std::string("the input stopped coming") : why;
    }
    cv_.notify_all();
}

void InputFeed::wait(std::uint64_t bytes) const {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return arrived_ >= bytes || !failed_.empty(); });
    if (arrived_ < bytes) throw Error("the slice's input did not arrive: " + failed_);
}

bool InputFeed::complete() const {
    std::lock_guard lock(m_);
    return arrived_ >= total_;
}

InputFeed* InputFeed::current() { return current_feed; }

InputFeed::Scope::Scope(InputFeed* feed) : saved_(current_feed) { current_feed = feed; }
InputFeed::Scope::~Scope() { current_feed = saved_; }

}  // namespace worksize
