// worksize_fuzz --parser job_run: job files that the job-file parser accepts are run end to end
// by the real CLI, `worksize run --job FILE` in a child process on the OpenCL device (PoCL's CPU
// device on CI), at a small --size, with bounds checking, a kernel timeout and a database of its
// own. Parsing only (--parser job_file) never reaches what a job file makes the runtime do:
// allocate and guard buffers, build the program, set the arguments, launch, read back, verify.
//
// The CLI's contract (docs/user-guide.md, "Exit codes and errors"), which a run must keep:
// exit 0, 1, 2 or 3 (3: the results differ from a single-device run, which a mutated kernel
// argument may well cause), never a signal (heap corruption: "double free", a segfault) nor an
// abort's 134 or a segfault's 139; a failure says why in a line "worksize: error: ..."; no
// exception escapes raw ("[json.exception...", "terminate called") and no sanitizer reports; and
// it ends within the wall limit, else its process group is killed and the run is a hang. A crash
// or hang that goes away with every kernel's body emptied was the kernels' (mutated arguments
// make them read and write outside their buffers, which OpenCL on a CPU cannot stop): a kernel
// fault, counted, not a failure.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace worksize::fuzz {

struct JobRunOptions {
    std::string worksize;   ///< the CLI's executable (--worksize; CMake: $<TARGET_FILE:worksize>)
    std::string job_dir;    ///< where the job files' relative paths start (their kernel sources)
    std::string size;       ///< --size of every run (--size); "": a small one chosen per run
    unsigned wall_s = 20;   ///< a run still going after this is a hang
};

/// One run of the CLI.
struct JobRunResult {
    std::string failure;   ///< "": it kept the contract; else how it broke it
    /// A crash or hang that did not happen with the kernels' bodies empty: the kernels', which
    /// mutated arguments made read or write outside their buffers (not a failure).
    std::string kernel_fault;
    int code = -1;         ///< its exit code, 0 to 3 (-1: it did not exit so, or broke the contract)
    std::string size;      ///< its --size
    std::string command;   ///< what ran (the environment, the arguments)
    std::string errors;    ///< its standard error
};

/// Runs job files with the CLI from a scratch directory (under $TMPDIR, else /tmp) that it
/// removes when destroyed or at exit. A run that crashes or hangs runs again with every
/// kernel's body empty (empty_kernels()): the runtime then does all it did (buffers, guards,
/// builds, arguments, launches, transfers) but no kernel touches memory. If that run keeps the
/// contract, the crash was the kernels' (JobRunResult::kernel_fault); if not, the runtime's.
class JobRunner {
public:
    explicit JobRunner(JobRunOptions o);
    ~JobRunner();
    JobRunner(const JobRunner&) = delete;
    JobRunner& operator=(const JobRunner&) = delete;

    /// Runs `input`, a job file that parse_job_file accepted relative to the job directory.
    JobRunResult run(std::string_view input);

    /// The runs so far by exit code: 0, 1, 2, 3 (kernel faults and failures not counted).
    const std::array<std::uint64_t, 4>& codes() const { return codes_; }
    std::uint64_t runs() const { return runs_; }
    std::uint64_t kernel_faults() const { return kernel_faults_; }

private:
    struct Attempt {
        int status = 0;        ///< waitpid's
        bool crashed = false;  ///< a signal, an exit code past 3, a sanitizer's report, or a hang
        std::string failure, command, errors;
    };
    std::string next_size(std::string_view input) const;
    /// One run of `input` from the scratch directory's tree `tree` ("real" or "empty").
    Attempt attempt(std::string_view input, const std::string& tree, const std::string& size);

    JobRunOptions o_;
    std::string scratch_;    ///< the scratch directory: real/ and empty/ (make_scratch)
    std::string jobs_name_;  ///< the job directory's name, in each tree
    std::array<std::uint64_t, 4> codes_{};
    std::uint64_t runs_ = 0, kernel_faults_ = 0;
};

/// `source` (OpenCL C) with every kernel's body emptied: the same kernels, parameters and
/// attributes, helper functions and directives kept.
std::string empty_kernels(const std::string& source);

/// Whether a run that ended with wait status `status` (waitpid) and standard error `errors`
/// kept the CLI's contract: "" if so, else how it broke it.
std::string judge_run(int status, const std::string& errors);

}  // namespace worksize::fuzz
