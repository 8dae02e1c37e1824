// Descriptors of the four sample kernels (dimensionality, operation counts, bytes moved) and
// parsing of kernel names and sizes given on the command line.
#pragma once

#include <string>
#include <vector>

#include "worksize/scheduler/types.hpp"

namespace worksize {

/// The sample kernels' names, in the order the CLI lists them.
const std::vector<std::string>& sample_kernel_names();

/// @throws InvalidArgument naming the unknown kernel and the valid ones.
KernelKind parse_kernel(const std::string& name);
const char* to_string(KernelKind k);

/// Descriptor of a sample kernel for the problem size `global` (ops depend on size for matmul
/// and sort).
KernelDescriptor describe_kernel(KernelKind kind, GlobalSize global);

/// Parse "N" (N x N for 2-D kernels, N items for 1-D) or "WxH".
/// @throws InvalidArgument for 0, negative, non-numeric or overflowing sizes.
GlobalSize parse_size(const std::string& text, int dims);

Priority parse_priority(const std::string& s);

}  // namespace worksize
