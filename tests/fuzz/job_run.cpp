// Job files run by the CLI for the fuzz driver (job_run.hpp).
#include "job_run.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "worksize/scheduler/job_file.hpp"

namespace worksize::fuzz {

namespace {

namespace fs = std::filesystem;
using Env = std::vector<std::pair<std::string, std::string>>;

/// The CLI's own limit on a slice's kernels, well inside the wall limit: a kernel that spins is
/// the CLI's to report (exit 1, one line), not a hang.
constexpr const char* kKernelTimeout = "5";

/// Small problems, so that a run costs a fraction of a second once PoCL's kernel cache is warm:
/// mostly a regular size, then an odd one and the smallest (below a required work-group size,
/// below a halo's depth), in turn. Whole buffers of at most 384 elements: a kernel that writes
/// past one (a pitch or a width changed) lands in --check-bounds's zone of 4 KiB after it, which
/// the CLI reports, instead of in the heap.
constexpr const char* kSizes1d[] = {"64", "64", "37", "1"};
constexpr const char* kSizes2d[] = {"24x16", "24x16", "37x5", "1x1"};

std::string g_scratch;  ///< removed at exit too: the driver ends a failing run with exit()

void remove_scratch() {
    if (g_scratch.empty()) return;
    std::error_code ec;
    fs::remove_all(g_scratch, ec);  // (links are removed, never followed)
    g_scratch.clear();
}

void link_entries(const fs::path& from, const fs::path& into, const fs::path& except) {
    for (const auto& e : fs::directory_iterator(from))
        if (e.path() != except) fs::create_directory_symlink(e.path(), into / e.path().filename());
}

/// A scratch directory in which a job file finds what it would find in the job directory: a
/// directory of the job directory's name with a link to each of its entries ("saxpy.cl"), beside
/// a link to each entry of its parent ("../filter2d/filter2d.cl"). Returns the inputs' path.
std::string make_scratch(const std::string& job_dir) {
    const fs::path jobs = fs::canonical(job_dir);
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/worksize-fuzz-XXXXXX";
    if (!::mkdtemp(pattern.data())) throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
    g_scratch = pattern;
    static const bool registered = std::atexit(remove_scratch) == 0;
    (void)registered;
    const fs::path mirror = fs::path(pattern) / (jobs.has_filename() ? jobs.filename() : fs::path("jobs"));
    fs::create_directory(mirror);
    link_entries(jobs, mirror, {});
    if (jobs.has_parent_path() && jobs.parent_path() != jobs) link_entries(jobs.parent_path(), pattern, jobs);
    return (mirror / "fuzz-input.json").string();
}

void write_file(const std::string& path, std::string_view text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), std::streamsize(text.size()));
    if (!out) throw std::runtime_error("cannot write " + path);
}

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void redirect(int fd, const std::string& path, int flags) {
    const int f = ::open(path.c_str(), flags, 0644);
    if (f >= 0 && f != fd) {
        ::dup2(f, fd);
        ::close(f);
    }
}

/// Starts `args` in a process group of its own (a hang's helpers are killed with it), its
/// output in the files `out` and `err`, `env` added to this environment.
pid_t spawn(const std::vector<std::string>& args, const Env& env, const std::string& out, const std::string& err) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
    if (pid == 0) {  // (the driver has one thread: allocating here is safe)
        ::setpgid(0, 0);
        redirect(0, "/dev/null", O_RDONLY);
        redirect(1, out, O_WRONLY | O_CREAT | O_TRUNC);
        redirect(2, err, O_WRONLY | O_CREAT | O_TRUNC);
        for (const auto& [key, value] : env) ::setenv(key.c_str(), value.c_str(), 1);
        ::execv(argv[0], argv.data());
        const std::string why = "worksize_fuzz: cannot run " + args[0] + ": " + std::strerror(errno) + "\n";
        (void)!::write(2, why.data(), why.size());
        ::_exit(127);
    }
    ::setpgid(pid, pid);  // as the child does: whichever runs first
    return pid;
}

/// Waits for `pid` at most `limit_s` seconds; past it, kills its process group and sets
/// `*hung`. Either way, whatever is left of the group is killed. Returns the wait status.
int wait_within(pid_t pid, unsigned limit_s, bool* hung) {
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::seconds(limit_s);
    auto nap = std::chrono::microseconds(500);
    int status = 0;
    for (;;) {
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "waitpid");
        if (clock::now() >= deadline) {
            *hung = true;
            ::kill(-pid, SIGKILL);
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            break;
        }
        std::this_thread::sleep_for(nap);
        nap = std::min(nap * 2, std::chrono::microseconds(5000));
    }
    ::kill(-pid, SIGKILL);
    return status;
}

std::string describe(const Env& env, const std::vector<std::string>& args) {
    std::string s;
    for (const auto& [key, value] : env) s += key + "=" + value + " ";
    for (const auto& a : args) s += a + (&a == &args.back() ? "" : " ");
    return s;
}

std::size_t lines_starting(const std::string& text, std::string_view prefix) {
    std::size_t n = 0;
    for (std::size_t at = 0; at < text.size();) {
        if (text.compare(at, prefix.size(), prefix) == 0) ++n;
        const std::size_t end = text.find('\n', at);
        if (end == std::string::npos) break;
        at = end + 1;
    }
    return n;
}

}  // namespace

std::string judge_run(int status, const std::string& errors) {
    if (WIFSIGNALED(status))
        return "died of signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
    if (!WIFEXITED(status)) return "ended with wait status " + std::to_string(status);
    const int code = WEXITSTATUS(status);
    if (code == 134 || code == 139)
        return "exited " + std::to_string(code) + " (a shell's code for an abort or a segfault)";
    if (code > 3) return "exited " + std::to_string(code) + " (the CLI's codes are 0, 1, 2 and 3)";
    // An exception that escaped its message, and the sanitizers' reports (a build under them).
    for (const char* raw : {"[json.exception", "terminate called", "AddressSanitizer", "LeakSanitizer",
                            "UndefinedBehaviorSanitizer", ": runtime error: "})
        if (errors.find(raw) != std::string::npos)
            return "exited " + std::to_string(code) + " with '" + raw + "' on its standard error";
    // Exit 3 prints the differences on standard output; 1 and 2 say why in one line.
    const std::size_t said = lines_starting(errors, "worksize: error: ");
    if ((code == 1 || code == 2) && said != 1)
        return "exited " + std::to_string(code) + " with " + std::to_string(said) +
               " lines 'worksize: error: ...' on its standard error (the contract: one)";
    return "";
}

JobRunner::JobRunner(JobRunOptions o) : o_(std::move(o)) {
    if (::access(o_.worksize.c_str(), X_OK) != 0)
        throw std::runtime_error("'" + o_.worksize + "' is not an executable (--worksize: the worksize CLI)");
    job_path_ = make_scratch(o_.job_dir);
    scratch_ = g_scratch;
}

JobRunner::~JobRunner() { remove_scratch(); }

std::string JobRunner::next_size(std::string_view input) const {
    int dims = 1;
    try {
        dims = parse_job_file(std::string(input), "fuzz.json", o_.job_dir).spec.dims;
    } catch (const InvalidArgument&) {
        // the caller runs accepted inputs only; the CLI will say what is wrong
    }
    const std::size_t turn = std::size_t(runs_ % std::size(kSizes1d));
    return dims == 2 ? kSizes2d[turn] : kSizes1d[turn];
}

JobRunResult JobRunner::run(std::string_view input) {
    write_file(job_path_, input);
    JobRunResult r;
    r.size = o_.size.empty() ? next_size(input) : o_.size;
    const std::vector<std::string> args = {o_.worksize,       "run",          "--job",          job_path_, "--size",
                                           r.size,            "--kernel-timeout", kKernelTimeout, "--rank-timeout",
                                           kKernelTimeout};
    // A database of its own (the user's is never touched); guard zones around every buffer, so
    // that a write just past one is reported instead of corrupting the heap.
    const Env env = {{"WORKSIZE_DB", scratch_ + "/db.json"}, {"WORKSIZE_CHECK_BOUNDS", "1"}};
    r.command = describe(env, args);
    const std::string err = scratch_ + "/stderr";
    bool hung = false;
    const int status = wait_within(spawn(args, env, scratch_ + "/stdout", err), o_.wall_s, &hung);
    ++runs_;
    r.errors = read_text(err);
    if (hung) {
        r.failure = "was still running after " + std::to_string(o_.wall_s) + " s (a hang?): its processes were killed";
        return r;
    }
    r.failure = judge_run(status, r.errors);
    if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
    if (r.failure.empty()) ++codes_[std::size_t(r.code)];
    return r;
}

}  // namespace worksize::fuzz
