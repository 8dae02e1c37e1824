// The byte buffer of slice payloads. Its allocator default-initialises: resize() does not zero
// memory that a copy, an MPI receive or a device read overwrites next (for a 64 MiB result the
// zeroing alone took milliseconds, docs/models.md "Data path").
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace worksize {

template <class T, class Base = std::allocator<T>>
class DefaultInitAllocator : public Base {
    using Traits = std::allocator_traits<Base>;

public:
    template <class U>
    struct rebind {
        using other = DefaultInitAllocator<U, typename Traits::template rebind_alloc<U>>;
    };
    using Base::Base;
    DefaultInitAllocator() = default;
    template <class U, class B>
    DefaultInitAllocator(const DefaultInitAllocator<U, B>& other) noexcept : Base(other) {}

    /// Value-less construction default-initialises (a no-op for std::byte).
    template <class U>
    void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
        ::new (static_cast<void*>(p)) U;
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        Traits::construct(static_cast<Base&>(*this), p, std::forward<Args>(args)...);
    }
};

using Bytes = std::vector<std::byte, DefaultInitAllocator<std::byte>>;

}  // namespace worksize
