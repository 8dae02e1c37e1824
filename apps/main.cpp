// worksize: query, plan and run OpenCL work sizes across the devices of an MPI job.
// Exceptions inside, exit codes at the edge: every failure is one line on rank 0's stderr and a
// non-zero exit on every rank.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "common.hpp"
#include "kernel_help.hpp"
#include "output_meta.hpp"
#include "worksize/runtime/job_file_job.hpp"
#include "worksize/runtime/wire.hpp"
#include "worksize/scheduler/format.hpp"
#include "worksize/scheduler/log.hpp"

namespace {

const char* kUsage =
    "usage: worksize <command> [options]\n"
    "\n"
    "commands:\n"
    "  devices    list every rank's OpenCL devices (compute units, PEs, limits)\n"
    "  plan       recommend each device's global share, local size and shape for a kernel\n"
    "  run        run a sample kernel split across the devices and verify it\n"
    "  calibrate  fit each device's cost model of a kernel from short runs (for --strategy model)\n"
    "             --links: measure host<->device and MPI links (for data jobs' --strategy model)\n"
    "  bench      compare split strategies (even, pe-ratio, paper, model, oracle) on a kernel\n"
    "  tune       tune local work sizes on every device into the database (--report: compare)\n"
    "  db         list, show or remove entries of the model, tuning and link database\n"
    "\n"
    "Run `worksize <command> --help` for a command's options. Under MPI: mpiexec -n N worksize ...\n"
    "Your own kernel: plan, run, tune, calibrate and bench take --job FILE (a JSON job file, see\n"
    "docs/user-guide.md) in place of --kernel.\n"
    "\n"
    "kernels (--kernel):\n";

/// `--job FILE` (or --job=FILE): every rank reads the job file and registers its job; the option
/// becomes `--kernel NAME`, with the file's size unless --size is given.
void expand_job_file(const std::string& cmd, std::vector<std::string>& args) {
    using namespace worksize;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string path;
        if (args[i] == "--job") {
            if (i + 1 >= args.size()) throw InvalidArgument("--job needs a job file");
            path = args[i + 1];
            args.erase(args.begin() + std::ptrdiff_t(i), args.begin() + std::ptrdiff_t(i) + 2);
        } else if (args[i].rfind("--job=", 0) == 0) {
            path = args[i].substr(6);
            args.erase(args.begin() + std::ptrdiff_t(i));
        } else {
            continue;
        }
        if (cmd != "plan" && cmd != "run" && cmd != "tune" && cmd != "calibrate" && cmd != "bench")
            throw InvalidArgument("--job is an option of plan, run, tune, calibrate and bench, not of " + cmd);
        for (const auto& a : args)
            if (a == "--kernel" || a.rfind("--kernel=", 0) == 0 || a == "-k")
                throw InvalidArgument("--job and --kernel exclude each other");
        auto file = std::make_shared<const JobFile>(read_job_file(path));
        const std::string name = register_job_file(file);
        args.insert(args.begin() + std::ptrdiff_t(i), {"--kernel", name});
        const bool sized = std::any_of(args.begin(), args.end(), [](const std::string& a) {
            return a == "--size" || a.rfind("--size=", 0) == 0 || a == "-s";
        });
        if (!sized) {
            const GlobalSize g = file->size();
            args.push_back("--size");
            args.push_back(file->spec.dims == 2 ? std::to_string(g.x) + "x" + std::to_string(g.y) : std::to_string(g.x));
        }
        return;
    }
}

/// Every report and the database write the host name as JSON: one that is not UTF-8 is
/// refused before any work (each rank checks its own).
void check_host_name() {
    using namespace worksize;
    if (const char* h = std::getenv("WORKSIZE_HOSTNAME"); h && !valid_utf8(h))
        throw InvalidArgument(std::string("WORKSIZE_HOSTNAME '") + printable(h) +
                              "' is not valid UTF-8 (reports and the database write it as JSON)");
}

}  // namespace

int main(int argc, char** argv) {
    using namespace worksize;
    std::unique_ptr<mpi::Environment> env;
    try {
        env = std::make_unique<mpi::Environment>(argc, argv);
    } catch (const std::exception& e) {
        log::error(e.what());
        return cli::kFailure;
    }
    const bool master = env->rank() == 0;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        if (master) (args.empty() ? std::cerr : std::cout) << kUsage << cli::kernels_usage();
        return args.empty() ? cli::kUsage : cli::kOk;
    }
    if (args[0] == "--version") {
        if (master) std::cout << "worksize " << cli::tool_version() << '\n';
        return cli::kOk;
    }
    const std::string cmd = args[0];
    args.erase(args.begin());
    // After a lost rank, MPI_Finalize could wait forever for it: rank 0 ends the job instead
    // (docs/cluster.md, "The fault model"); a rank whose device a kernel holds past
    // --kernel-timeout ends after MPI_Finalize, without destructors.
    // Results go to standard output only: a write that failed there (a full disk, /dev/full) is
    // a failed command, not a silent exit 0.
    auto end = [&](int code) {
        errno = 0;
        std::cout.flush();
        if (master && !std::cout) {
            log::error(std::string("cannot write the results to standard output") +
                       (errno ? std::string(": ") + std::strerror(errno) : std::string()));
            if (code == cli::kOk) code = cli::kFailure;
        }
        if (master && mpi::lost_peer()) env->end_after_loss(code);
        // A device held by a kernel past --kernel-timeout: destructors would wait on it.
        if (mpi::held_device()) mpi::end_held(code);
        return code;
    };
    try {
        // The level of WORKSIZE_LOG_LEVEL; a command's --quiet or --log-level overrides it.
        if (const auto level = log::level_from_env()) log::set_level(*level);
        check_host_name();
        expand_job_file(cmd, args);
        if (cmd == "devices") return end(cli::cmd_devices(*env, args));
        if (cmd == "plan") return end(cli::cmd_plan(*env, args));
        if (cmd == "run") return end(cli::cmd_run(*env, args));
        if (cmd == "tune") return end(cli::cmd_tune(*env, args));
        if (cmd == "calibrate") return end(cli::cmd_calibrate(*env, args));
        if (cmd == "bench") return end(cli::cmd_bench(*env, args));
        if (cmd == "db") return end(cli::cmd_db(*env, args));
        throw InvalidArgument("unknown command '" + cmd +
                              "' (commands: devices, plan, run, tune, calibrate, bench, db; see worksize --help)");
    } catch (const JobAborted& e) {
        // Rank 0 has said why; the same code as rank 0's (mpiexec ORs the ranks' codes).
        return e.reason() == ErrorReason::bad_input ? cli::kUsage : cli::kFailure;
    } catch (const std::exception& e) {
        // The exit code follows the failure's reason, whichever rank it came from: bad input is
        // a usage error (2), anything else a failure (1).
        const int code = reason_of(e) == ErrorReason::bad_input ? cli::kUsage : cli::kFailure;
        if (master) {
            log::error(wire::failure_of(e).message);  // std::bad_alloc: with the memory limit
            return end(code);
        }
        // Bad input (e.g. the arguments every rank parsed alike): rank 0 has said why.
        if (code == cli::kUsage) return code;
        // A worker failed outside the job protocol: say so and end the whole job, so that
        // nobody waits for this rank.
        log::error(e.what());  // worksize[rank N]: error: ...
        env->abort(cli::kFailure);
    }
}
