// Job files run by the CLI for the fuzz driver (job_run.hpp).
#include "job_run.hpp"

#include <algorithm>
#include <cctype>
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

/// Mirrors `from` in `into`: a link to each entry, but directories made (and mirrored) up to
/// `depth` levels down, and `dir` (the job directory) always; with `stub`, each .cl file is
/// written with its kernels' bodies emptied (empty_kernels()) instead of linked.
void mirror(const fs::path& from, const fs::path& into, int depth, bool stub, const fs::path& dir) {
    fs::create_directories(into);
    for (const auto& e : fs::directory_iterator(from, fs::directory_options::skip_permission_denied)) {
        const fs::path to = into / e.path().filename();
        if (e.is_directory() && (depth > 0 || e.path() == dir))
            mirror(e.path(), to, depth - 1, stub, dir);
        else if (stub && e.is_regular_file() && e.path().extension() == ".cl")
            write_file(to.string(), empty_kernels(read_text(e.path().string())));
        else
            fs::create_symlink(e.path(), to);
    }
}

/// A scratch directory with two trees in which a job file finds what it would find in the job
/// directory ("saxpy.cl", "../filter2d/filter2d.cl": the directory's parent is mirrored, with
/// the job directory in it): real/, of links, and empty/, whose kernel sources have empty kernels.
/// Returns the directory.
std::string make_scratch(const std::string& job_dir) {
    const fs::path jobs = fs::canonical(job_dir);
    if (!jobs.has_filename() || jobs.parent_path() == jobs)
        throw std::runtime_error("--job-dir '" + job_dir + "': the job directory cannot be /");
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/worksize-fuzz-XXXXXX";
    if (!::mkdtemp(pattern.data())) throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
    g_scratch = pattern;
    static const bool registered = std::atexit(remove_scratch) == 0;
    (void)registered;
    mirror(jobs.parent_path(), fs::path(pattern) / "real", 0, false, jobs);
    mirror(jobs.parent_path(), fs::path(pattern) / "empty", 3, true, jobs);  // (examples/: 2 levels)
    return pattern;
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

/// The first mark of a sanitizer's report in `errors` (a CLI built under them), or null.
const char* sanitizer_mark(const std::string& errors) {
    for (const char* mark : {"AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer", ": runtime error: "})
        if (errors.find(mark) != std::string::npos) return mark;
    return nullptr;
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
    for (const char* raw : {"[json.exception", "terminate called", sanitizer_mark(errors)})
        if (raw && errors.find(raw) != std::string::npos)
            return "exited " + std::to_string(code) + " with '" + raw + "' on its standard error";
    // Exit 3 prints the differences on standard output; 1 and 2 say why in one line.
    const std::size_t said = lines_starting(errors, "worksize: error: ");
    if ((code == 1 || code == 2) && said != 1)
        return "exited " + std::to_string(code) + " with " + std::to_string(said) +
               " lines 'worksize: error: ...' on its standard error (the contract: one)";
    return "";
}

std::string empty_kernels(const std::string& source) {
    std::string out;
    std::size_t copied = 0;  // source[0, copied) is in `out`
    int depth = 0;           // of braces
    bool kernel = false;     // a kernel's name seen, its body not yet
    std::size_t body = 0;    // where the kernel's body opened
    for (std::size_t i = 0; i < source.size(); ++i) {
        const char c = source[i];
        if (c == '/' && i + 1 < source.size() && (source[i + 1] == '/' || source[i + 1] == '*')) {
            const bool line = source[i + 1] == '/';
            const std::size_t end = source.find(line ? "\n" : "*/", i + 2);
            i = end == std::string::npos ? source.size() : end + (line ? 0 : 1);
        } else if (c == '"' || c == '\'') {
            while (++i < source.size() && source[i] != c) i += source[i] == '\\';
        } else if (c == '#' && depth == 0) {  // a directive, with its continuation lines
            while (i < source.size() && (source[i] != '\n' || source[i - 1] == '\\')) ++i;
        } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            std::size_t end = i;
            while (end < source.size() && (std::isalnum(static_cast<unsigned char>(source[end])) || source[end] == '_'))
                ++end;
            const std::string_view word(source.data() + i, end - i);
            if (depth == 0 && (word == "__kernel" || word == "kernel")) kernel = true;
            i = end - 1;
        } else if (c == ';' && depth == 0) {
            kernel = false;  // a declaration
        } else if (c == '{') {
            if (depth++ == 0 && kernel) body = i + 1;
        } else if (c == '}' && depth > 0 && --depth == 0 && kernel) {
            out.append(source, copied, body - copied).append("}");
            copied = i + 1;
            kernel = false;
        }
    }
    return out.append(source, copied);
}

JobRunner::JobRunner(JobRunOptions o) : o_(std::move(o)) {
    if (::access(o_.worksize.c_str(), X_OK) != 0)
        throw std::runtime_error("'" + o_.worksize + "' is not an executable (--worksize: the worksize CLI)");
    scratch_ = make_scratch(o_.job_dir);
    jobs_name_ = fs::canonical(o_.job_dir).filename().string();
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

JobRunner::Attempt JobRunner::attempt(std::string_view input, const std::string& tree, const std::string& size) {
    const std::string job = scratch_ + "/" + tree + "/" + jobs_name_ + "/fuzz-input.json";
    write_file(job, input);
    const std::vector<std::string> args = {o_.worksize, "run", "--job", job, "--size", size, "--kernel-timeout",
                                           kKernelTimeout, "--rank-timeout", kKernelTimeout};
    // A database of its own (the user's is never touched); guard zones around every buffer, so
    // that a write just past one is reported instead of corrupting the heap.
    const Env env = {{"WORKSIZE_DB", scratch_ + "/db.json"}, {"WORKSIZE_CHECK_BOUNDS", "1"}};
    Attempt a;
    a.command = describe(env, args);
    const std::string err = scratch_ + "/stderr";
    bool hung = false;
    a.status = wait_within(spawn(args, env, scratch_ + "/stdout", err), o_.wall_s, &hung);
    a.errors = read_text(err);
    a.failure = hung ? "was still running after " + std::to_string(o_.wall_s) + " s (a hang?): its processes were killed"
                     : judge_run(a.status, a.errors);
    // (a sanitizer reports a kernel's stray access too, as an error of its own: exit 1)
    a.crashed = hung || WIFSIGNALED(a.status) || (WIFEXITED(a.status) && WEXITSTATUS(a.status) > 3) ||
                sanitizer_mark(a.errors);
    return a;
}

JobRunResult JobRunner::run(std::string_view input) {
    JobRunResult r;
    r.size = o_.size.empty() ? next_size(input) : o_.size;
    ++runs_;
    Attempt a = attempt(input, "real", r.size);
    r.command = a.command;
    r.errors = a.errors;
    r.failure = a.failure;
    if (a.crashed) {
        // A kernel told wrong sizes (a mutated width, origin or pitch) reads and writes where
        // OpenCL on a CPU cannot stop it. Run again with the kernels' bodies empty: a crash or a
        // hang that goes with them was the kernels', one that stays is the runtime's.
        const Attempt empty = attempt(input, "empty", r.size);
        if (empty.failure.empty()) {
            ++kernel_faults_;
            r.kernel_fault = r.failure;
            r.failure.clear();
            return r;
        }
        r.failure += "; with the kernels' bodies empty, it " + empty.failure;
    }
    if (WIFEXITED(a.status) && !a.crashed) r.code = WEXITSTATUS(a.status);
    if (r.failure.empty()) ++codes_[std::size_t(r.code)];
    return r;
}

}  // namespace worksize::fuzz
