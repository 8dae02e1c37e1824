// Help texts about the registered kernels, built from the kernel-job registry (so that no
// command names a sample kernel).
#pragma once

#include <string>
#include <vector>

namespace worksize::cli {

/// The registered kernels' names in registration order, joined by ", " and the last pair by
/// `last_sep` ("matmul, interp, sort, quad"; with " or ": "matmul, interp, sort or quad").
std::string kernel_list(const std::string& last_sep = ", ");
/// The registered kernels that have a case in `run --paper-experiment`, joined by ", ".
std::string paper_kernel_list();
/// The first registered kernel's first default calibration size ("matmul 64").
std::string calibration_example();
/// --param's help: the parameter keys of every kernel that has some.
std::string param_help();
/// One block per registered kernel: its description and parameters (for `worksize --help`).
std::string kernels_usage();
/// Each registered kernel's default size of `tune --kernel all`, kernels of equal size grouped
/// in order: "matmul/interp 256, sort/quad 65536".
std::string tune_sizes_help();

}  // namespace worksize::cli
