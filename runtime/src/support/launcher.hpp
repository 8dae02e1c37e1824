// A worker rank ends with the process that launched it (docs/cluster.md, "The fault model").
#pragma once

namespace worksize::launcher {

/// For a worker (a rank other than 0 of a job of several ranks): the kernel ends this process
/// (SIGKILL) when its parent, the launcher's process (hydra's proxy, slurmstepd, or the
/// recipe's `bash -c` wrapper), ends. A worker whose launcher is gone can serve no one: rank 0
/// cannot reach it to end it, and one spun in an MPI wait for 45 minutes after its job was gone.
/// Rank 0 is left alone (a lone `nohup worksize tune ...` must outlive its shell). Linux only;
/// elsewhere it does nothing.
void end_with_parent(int rank, int size);

}  // namespace worksize::launcher
