// Sample kernel "sort": what its sources share (private to kernels/sort/). job.cpp holds the job,
// its executor's entry and its factory; partition.cpp rank 0's partition into buckets;
// bitonic.cpp and radix.cpp the two algorithms a slice runs.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "worksize/runtime/kernel_job.hpp"
#include "worksize/runtime/opencl.hpp"

namespace worksize::detail::sort_kernel {

/// The slice's parameters as the executor reads them: the algorithm and the radix build options.
struct SortParams {
    std::string algo = "auto";   ///< auto | radix | bitonic
    std::uint64_t bits = 0;      ///< radix bits per pass; 0: the device's default
    std::uint64_t items = 0;     ///< radix keys per work-item; 0: the device's default
    std::uint64_t split = 0;     ///< radix local sort's bits per split (1 or 2); 0: the default
};

// partition.cpp

/// The indices of the assignments that get a bucket, in offset order: all but those planned to
/// get nothing. Throws InvalidArgument unless the assignments cover the n items.
std::vector<std::size_t> bucket_order(const std::vector<Assignment>& as, std::uint64_t n);

/// The partition proper, for two or more buckets (`order` from bucket_order()): scatters `input`
/// into one bucket per assignment of `order`, the buckets one after the other in `buckets`, and
/// makes each assignment's offset/units/global/share its bucket's. `seed` seeds the splitters'
/// sample; `threads` is the partition_threads parameter (0: the host's hardware threads).
void partition_into_buckets(std::vector<Assignment>& as, const std::vector<std::size_t>& order,
                            const std::vector<float>& input, std::uint64_t seed, std::uint64_t threads,
                            std::unique_ptr<float[]>& buckets);

// job.cpp: checks and transfers common to both algorithms

/// Throws unless a buffer of `elems` floats for a slice of `units` items fits the kernel and the device.
void check_buffer(const DeviceInfo& info, std::uint64_t units, std::uint64_t elems);

/// Waits for the queue, adds the times of `events` (one iteration's launches) to `seconds` one by
/// one and clears the list.
void add_kernel_seconds(cl::CommandQueue& q, std::vector<cl::Event>& events, double& seconds);

/// Reads the first `bytes` of `from` into `out` (resized to them); returns the read's seconds.
double read_back(cl::CommandQueue& q, const cl::Buffer& from, std::uint64_t bytes, Bytes& out);

// bitonic.cpp, radix.cpp

/// The bitonic sort of the slice padded to a power of two with +INFINITY (sort.cl).
SliceTimes execute_bitonic(DeviceContext& ctx, const SliceSpec& s, std::span<const std::byte> in, Bytes& out);

/// The LSD radix sort of radix.cl.
SliceTimes execute_radix(DeviceContext& ctx, const SliceSpec& s, std::span<const std::byte> in, Bytes& out,
                         const SortParams& p);

}  // namespace worksize::detail::sort_kernel
