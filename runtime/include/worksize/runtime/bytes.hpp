// The byte buffer of slice payloads. Its allocator default-initialises: resize() does not zero
// memory that a copy, an MPI receive or a device read overwrites next (for a 64 MiB result the
// zeroing alone took milliseconds, docs/models.md "Data path").
//
// The allocator may also carry a host memory resource: the runtime's payload buffers get their
// memory from the device's pinned (page-locked) host memory that way (PinnedHostMemory in
// opencl.hpp), so that OpenCL copies from and to them run at full DMA speed. A Bytes made
// without one (every Bytes the user's code makes) uses std::allocator exactly as before.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace worksize {

/// Where a stateful DefaultInitAllocator gets its memory. Implementations must be thread-safe:
/// the buffers of one resource are allocated and freed from several threads.
class HostMemoryResource {
public:
    virtual ~HostMemoryResource() = default;
    /// `bytes` (> 0) aligned to at least `alignment` (a power of two). @throws std::bad_alloc
    virtual void* allocate(std::size_t bytes, std::size_t alignment) = 0;
    /// Frees what allocate(bytes, alignment) returned.
    virtual void deallocate(void* p, std::size_t bytes, std::size_t alignment) noexcept = 0;
};

template <class T, class Base = std::allocator<T>>
class DefaultInitAllocator : public Base {
    using Traits = std::allocator_traits<Base>;
    template <class U, class B>
    friend class DefaultInitAllocator;

public:
    template <class U>
    struct rebind {
        using other = DefaultInitAllocator<U, typename Traits::template rebind_alloc<U>>;
    };
    /// Stateful: two allocators are equal when they use the same resource (or none).
    using is_always_equal = std::false_type;
    /// A container that is move-assigned or swapped takes the other's allocator with its memory,
    /// so that pooled buffers can be moved in and out of a pool without a copy.
    using propagate_on_container_move_assignment = std::true_type;
    using propagate_on_container_swap = std::true_type;
    /// Copy assignment keeps the target's memory (a pinned buffer stays pinned).
    using propagate_on_container_copy_assignment = std::false_type;

    using Base::Base;
    DefaultInitAllocator() = default;
    /// Memory from `resource`; nullptr: std::allocator. The resource is shared: it lives as
    /// long as any allocator (and so any buffer) that uses it.
    explicit DefaultInitAllocator(std::shared_ptr<HostMemoryResource> resource) noexcept
        : resource_(std::move(resource)) {}
    // Declared copy operations and no move operations: a moved-from allocator keeps its resource
    // (the allocator requirements: moving an allocator leaves its value unchanged).
    DefaultInitAllocator(const DefaultInitAllocator&) = default;
    DefaultInitAllocator& operator=(const DefaultInitAllocator&) = default;
    template <class U, class B>
    DefaultInitAllocator(const DefaultInitAllocator<U, B>& other) noexcept
        : Base(other), resource_(other.resource_) {}

    const std::shared_ptr<HostMemoryResource>& resource() const noexcept { return resource_; }

    T* allocate(std::size_t n) {
        if (!resource_) return Traits::allocate(static_cast<Base&>(*this), n);
        if (n > std::size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
        return static_cast<T*>(resource_->allocate(n * sizeof(T), alignof(T)));
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if (!resource_)
            Traits::deallocate(static_cast<Base&>(*this), p, n);
        else
            resource_->deallocate(p, n * sizeof(T), alignof(T));
    }

    /// A copy of a container gets plain memory: a copy is a value leaving the pool (e.g. a
    /// result kept by the caller), and need not hold on to pinned memory.
    DefaultInitAllocator select_on_container_copy_construction() const { return {}; }

    /// Value-less construction default-initialises (a no-op for std::byte).
    template <class U>
    void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
        ::new (static_cast<void*>(p)) U;
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        Traits::construct(static_cast<Base&>(*this), p, std::forward<Args>(args)...);
    }

    template <class U, class B>
    friend bool operator==(const DefaultInitAllocator& a,
                           const DefaultInitAllocator<U, B>& b) noexcept {
        return a.resource_.get() == b.resource_.get();
    }

private:
    std::shared_ptr<HostMemoryResource> resource_;
};

using Bytes = std::vector<std::byte, DefaultInitAllocator<std::byte>>;

/// A host array whose memory may be pinned (Cluster::host_vector): its elements are left
/// uninitialised by resize(), and a copy of it is ordinary memory.
template <class T>
using HostVector = std::vector<T, DefaultInitAllocator<T>>;

/// An empty Bytes whose memory comes from `resource` (nullptr: std::allocator).
inline Bytes bytes_with(std::shared_ptr<HostMemoryResource> resource) {
    return Bytes(DefaultInitAllocator<std::byte>(std::move(resource)));
}

}  // namespace worksize
