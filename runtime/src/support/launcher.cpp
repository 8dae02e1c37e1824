// A worker rank ends with the process that launched it (launcher.hpp).
#include "support/launcher.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>

#ifdef __linux__
#include <sys/prctl.h>
#include <unistd.h>
#endif

namespace worksize::launcher {

void end_with_parent(int rank, int size) {
#ifdef __linux__
    if (rank == 0 || size < 2) return;
    const pid_t parent = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return;  // best effort: the job's deadlines still hold
    // The parent may have ended before the call: then nothing would ever signal this process.
    if (getppid() != parent) {
        std::fprintf(stderr, "worksize: error: rank %d: the process that launched it has ended; exiting\n", rank);
        std::_Exit(1);
    }
#else
    (void)rank, (void)size;
#endif
}

}  // namespace worksize::launcher
