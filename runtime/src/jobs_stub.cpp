// TEMPORARY stubs so that the runtime links before the jobs land; each helper deletes its own
// function from here when it adds runtime/src/job_<name>.cpp.
#include "jobs.hpp"
namespace worksize::detail {
}  // namespace worksize::detail
