// A kernel task's input while it arrives (input_feed.hpp).
#include "jobs/input_feed.hpp"

#include <algorithm>

#include "worksize/scheduler/types.hpp"

namespace worksize {

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

InputParts::InputParts(std::vector<std::span<const std::byte>> parts) : parts_(std::move(parts)) {
    for (const auto& p : parts_) {
        starts_.push_back(total_);
        total_ += p.size();
    }
}

void InputParts::each(std::uint64_t at, std::uint64_t n,
                      const std::function<void(std::span<const std::byte>, std::uint64_t)>& f) const {
    if (at + n > total_)
        throw Error("the slice's input holds " + std::to_string(total_) + " bytes, not the " +
                    std::to_string(at + n) + " its upload needs");
    // The part holding byte `at`: the last whose start is at or before it.
    auto i = std::size_t(std::upper_bound(starts_.begin(), starts_.end(), at) - starts_.begin());
    i = i > 0 ? i - 1 : 0;
    for (std::uint64_t end = at + n; at < end && i < parts_.size(); ++i) {
        const std::uint64_t from = at - starts_[i], len = std::min<std::uint64_t>(parts_[i].size() - from, end - at);
        if (len > 0) f(parts_[i].subspan(from, len), at);
        at += len;
    }
}

}  // namespace worksize

