// Internal: the registration functions of the four sample kernel jobs (runtime/src/job_*.cpp).
#pragma once

#include "worksize/runtime/kernel_job.hpp"

namespace worksize::detail {

KernelJobFactory matmul_job_factory();
KernelJobFactory interp_job_factory();
KernelJobFactory sort_job_factory();
KernelJobFactory quad_job_factory();

}  // namespace worksize::detail
