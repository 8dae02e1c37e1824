// Sample kernel "sort": what its sources share (private to kernels/sort/). job.cpp holds the job,
// its executor's entry and its factory; partition.cpp rank 0's partition into buckets;
// bitonic.cpp and radix.cpp the two algorithms a slice runs.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "worksize/runtime/declared_job.hpp"
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

// bitonic.cpp, radix.cpp: the two algorithms as library routines of a slice (declared_job.hpp)

inline constexpr const char* kSortRadix = "sort_radix";
inline constexpr const char* kSortBitonic = "sort_bitonic";

/// The bitonic sort (sort.cl): values units, global size, local size (0: NULL).
std::vector<double> bitonic_values(const DeviceInfo& info, const SliceSpec& s);
LibraryCall bitonic_routine();

/// The LSD radix sort (radix.cl): values n, work-group size, bits, items and split per the device.
std::vector<double> radix_values(const DeviceInfo& info, const SliceSpec& s, const SortParams& p);
LibraryCall radix_routine();

}  // namespace worksize::detail::sort_kernel
