// Access to the OpenCL C sources in kernels/*.cl, embedded at build time.
#pragma once

#include <string_view>

namespace worksize {

/// Source of the embedded kernel file `name` (file name without ".cl"); empty if unknown.
std::string_view embedded_kernel_source(std::string_view name);

}  // namespace worksize
