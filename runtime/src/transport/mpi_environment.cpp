// The MPI environment: MPI_Init and MPI_Finalize, the rank's place on its node, and the ways a
// rank ends (held device, lost peer, the job's abort).
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <iostream>
#include <thread>
#include <unistd.h>

#include "support/launcher.hpp"
#include "transport/mpi_check.hpp"
#include "worksize/runtime/mpi.hpp"
#include "worksize/scheduler/log.hpp"

namespace worksize::mpi {

Environment::Environment(int& argc, char**& argv) {
    int provided = 0;
    check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    // Under `mpiexec -disable-auto-cleanup`, hydra tells the surviving ranks that one has
    // exited with SIGUSR1, whose default action would end them: rank 0 finds a lost rank by
    // its own deadlines (docs/cluster.md, "The fault model"), so the notice is ignored.
    std::signal(SIGUSR1, SIG_IGN);
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    launcher::end_with_parent(rank_, size_);  // no worker outlives its launcher, spinning
    log::set_rank(rank_);  // messages of ranks other than 0 say which rank wrote them
    MPI_Comm node;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
          "MPI_Comm_split_type");
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_size(node, &local_size_);
    int is0 = rank_ == 0 ? 1 : 0, any0 = 0;
    check(MPI_Allreduce(&is0, &any0, 1, MPI_INT, MPI_MAX, node), "MPI_Allreduce");
    master_on_node_ = any0 != 0;
    MPI_Comm_free(&node);
}

Environment::~Environment() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

void Environment::abort(int code) const { MPI_Abort(MPI_COMM_WORLD, code); std::abort(); }

namespace {
bool g_lost_peer = false;
}

void note_lost_peer() { g_lost_peer = true; }
bool lost_peer() { return g_lost_peer; }

namespace {
std::atomic<bool> g_held_device{false};
}

void note_held_device() { g_held_device = true; }
bool held_device() { return g_held_device; }

void end_held(int code) {
    std::fflush(stdout);
    std::fflush(stderr);
    std::cout.flush();
    std::cerr.flush();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
    std::_Exit(code);
}

void end_unfinalized(int code) {
    std::fflush(stdout);
    std::fflush(stderr);
    std::cout.flush();
    std::cerr.flush();
    // Rank 0 is about to print its line and end the job with MPI_Abort (end_after_loss), which
    // normally ends this rank too; a launcher that leaves it running (hydra's
    // -disable-auto-cleanup, with a rank already gone) would wait for it: it ends by itself, late
    // enough not to cut rank 0's line short (a launcher that ends the job when a rank exits).
    std::this_thread::sleep_for(std::chrono::seconds(2));
    std::_Exit(code);
}

void end_job_now(int code) {
    std::fflush(stdout);
    std::fflush(stderr);
    std::cout.flush();
    // The launcher forwards this rank's output through pipes and stops reading them once the
    // abort reaches it: a moment for the last lines to get through (a CI run lost them once).
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) {
        // MPI_Abort's own notice would be a second line after the rank's report: silenced.
        if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) ::dup2(null, 2);
        MPI_Abort(MPI_COMM_WORLD, code);
    }
    std::_Exit(code);
}

void Environment::end_after_loss(int code) const { end_job_now(code); }

}  // namespace worksize::mpi
