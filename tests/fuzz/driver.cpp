// A bounded, deterministic mutation fuzzer for the parsers' targets (targets.hpp), for builds
// without libFuzzer (GCC; CI's sanitizer build). From a seed corpus it makes a given number of
// inputs with a seeded generator (mutator.hpp: bytes, JSON tokens and JSON trees). Inputs the
// parser accepts join the pool, so that later mutations start from them. Each input has a time
// limit and is written to <crash-dir>/fuzz-<parser>-current.in before it runs, so that the first
// failure (a broken contract, an unexpected exception, a hang, a crash, a sanitizer report)
// leaves it there; the run then exits non-zero. At the end it prints the inputs run, accepted
// and rejected.
//
// --parser job_run: job files (the job_file parser first) whose accepted inputs are also run
// end to end by the CLI, `worksize run --job` in a child process on the OpenCL device, at a
// small size (job_run.hpp: the CLI's contract it checks). --inputs then counts those runs, and
// only inputs that ran their kernels to the end (exit 0 or 3) join the pool. A run that breaks
// the contract (a signal, an exit code outside 0-3, no error line, a raw exception, a run past
// --timeout) fails like a parser's input, its standard error saved beside the input as
// fuzz-job_run-current.stderr, unless it was a crash or hang that goes away with the kernels'
// bodies emptied (a kernel fault: counted, not a failure).
//
//   worksize_fuzz --parser profile|store|job_file --corpus DIR [--inputs N] [--full-inputs M]
//                 [--seed S] [--job-dir DIR] [--crash-dir DIR] [--timeout SECONDS]
//   worksize_fuzz --parser job_run --worksize PATH [--size S] [--verbose] (and the options above)
//   (--full-inputs: the count when WORKSIZE_TEST_TIER=full, the suite's long tier; --size: every
//   run's, instead of small ones in turn; --verbose: a line per run, its exit code and error)
//   worksize_fuzz --parser NAME [--worksize PATH --size S] FILE...   replay: each file once
#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "job_run.hpp"
#include "mutator.hpp"
#include "targets.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define WORKSIZE_FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WORKSIZE_FUZZ_ASAN 1
#endif
#endif
#ifdef WORKSIZE_FUZZ_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using worksize::fuzz::JobRunner;
using worksize::fuzz::Mutator;
using worksize::fuzz::Parser;

constexpr std::size_t kMaxPool = 4096;
constexpr std::size_t kMaxPoolInput = 8 << 10;   ///< larger accepted inputs do not join the pool
/// job_run: the most inputs made per run of the CLI (the job-file parser accepts a few % of the
/// mutants), so that a corpus whose mutants are all refused still ends.
constexpr std::uint64_t kMadePerRun = 1000;

// ---- the input being run, for the crash and time-limit handlers ---------------------------

struct Current {
    const char* data = nullptr;
    std::size_t size = 0;
    char path[4096] = {};  ///< where each input is written before it runs ("": replaying files)
} g_current;

/// Writes the current input to g_current.path, so that whatever ends the process (a sanitizer
/// report, a signal, a time limit) leaves it there. The file stays open: rewritten in place
/// (truncating it to 0 each time made ext4 flush it, 5 ms an input).
void save_current() {
    static int fd = -1;
    if (!g_current.data || !g_current.path[0]) return;
    if (fd < 0) fd = ::open(g_current.path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    std::size_t done = 0;
    while (done < g_current.size) {
        const ssize_t w = ::pwrite(fd, g_current.data + done, g_current.size - done, off_t(done));
        if (w <= 0) break;
        done += std::size_t(w);
    }
    (void)!::ftruncate(fd, off_t(g_current.size));
}

void say(const char* text) { (void)!::write(2, text, std::strlen(text)); }

void on_death() {
    if (!g_current.path[0]) return;
    say("worksize_fuzz: the input that failed is saved in ");
    say(g_current.path);
    say("\n");
}

void on_alarm(int) {
    say("worksize_fuzz: an input ran past the time limit (a hang?)\n");
    on_death();
    ::_exit(1);
}

[[maybe_unused]] void on_signal(int sig) {
    say("worksize_fuzz: crashed on a signal\n");
    on_death();
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

void install_handlers() {
    std::signal(SIGALRM, on_alarm);
#ifdef WORKSIZE_FUZZ_ASAN
    __sanitizer_set_death_callback(on_death);  // ASan's reports end through it (GCC's UBSan's do not)
#else
    // On a stack of its own: a stack overflow must still save the input.
    static std::vector<char> alt(1 << 16);
    stack_t ss{};
    ss.ss_sp = alt.data();
    ss.ss_size = alt.size();
    ::sigaltstack(&ss, nullptr);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
        struct sigaction sa{};
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_ONSTACK;
        ::sigaction(sig, &sa, nullptr);
    }
#endif
}

std::string type_name(const std::type_info& t) {
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> n(abi::__cxa_demangle(t.name(), nullptr, nullptr, &status), std::free);
    return status == 0 && n ? n.get() : t.name();
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// ---- the run ------------------------------------------------------------------------------

struct Options {
    Parser parser = Parser::profile;
    bool parser_set = false;
    std::string corpus, crash_dir = ".";
    std::uint64_t inputs = 10000, seed = 1;
    std::uint64_t full_inputs = 0;  ///< --full-inputs: the count under WORKSIZE_TEST_TIER=full
    unsigned timeout_s = 20;
    std::vector<std::string> replay;
    bool job_run = false;               ///< --parser job_run: job files, the accepted ones run by the CLI
    worksize::fuzz::JobRunOptions run;  ///< its --worksize and --size
    bool verbose = false;               ///< --verbose: a line per run of the CLI
};

const char* parser_name(const Options& o) { return o.job_run ? "job_run" : worksize::fuzz::to_string(o.parser); }

[[noreturn]] void usage(const std::string& why) {
    std::cerr << "worksize_fuzz: error: " << why << "\n"
              << "usage: worksize_fuzz --parser profile|store|job_file --corpus DIR [--inputs N] [--full-inputs M]\n"
              << "                     [--seed S] [--job-dir DIR] [--crash-dir DIR] [--timeout SECONDS]\n"
              << "       worksize_fuzz --parser job_run --worksize PATH [--size S] [--verbose] (and the same options)\n"
              << "       worksize_fuzz --parser NAME [--worksize PATH --size S] FILE...   (replay each file once)\n";
    std::exit(2);
}

std::uint64_t number_arg(const std::string& opt, const std::string& v) {
    std::size_t used = 0;
    std::uint64_t n = 0;
    try {
        n = std::stoull(v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != v.size() || v.empty() || v[0] == '-') usage(opt + " wants a whole number, got '" + v + "'");
    return n;
}

Options parse_args(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(a + " needs a value");
            return argv[++i];
        };
        if (a == "--parser") {
            const std::string p = value();
            o.job_run = p == "job_run";  // the job-file parser first
            if (!worksize::fuzz::parse_parser(o.job_run ? "job_file" : p, &o.parser))
                usage("unknown parser '" + p + "'");
            o.parser_set = true;
        } else if (a == "--worksize") {
            o.run.worksize = value();
        } else if (a == "--size") {
            o.run.size = value();
        } else if (a == "--verbose") {
            o.verbose = true;
        } else if (a == "--corpus") {
            o.corpus = value();
        } else if (a == "--inputs") {
            o.inputs = number_arg(a, value());
        } else if (a == "--full-inputs") {
            o.full_inputs = number_arg(a, value());
        } else if (a == "--seed") {
            o.seed = number_arg(a, value());
        } else if (a == "--job-dir") {
            worksize::fuzz::set_job_dir(value());
        } else if (a == "--crash-dir") {
            o.crash_dir = value();
        } else if (a == "--timeout") {
            o.timeout_s = unsigned(std::max<std::uint64_t>(1, number_arg(a, value())));
        } else if (!a.empty() && a[0] == '-') {
            usage("unknown option '" + a + "'");
        } else {
            o.replay.push_back(a);
        }
    }
    if (!o.parser_set) usage("--parser is required");
    if (o.corpus.empty() == o.replay.empty()) usage("give either --corpus DIR or files to replay");
    if (o.job_run && o.run.worksize.empty()) usage("--parser job_run needs --worksize PATH (the worksize CLI)");
    if (!o.job_run && !(o.run.worksize.empty() && o.run.size.empty()))
        usage("--worksize and --size are options of --parser job_run");
    o.run.job_dir = worksize::fuzz::job_dir();
    o.run.wall_s = o.timeout_s;
    const char* tier = std::getenv("WORKSIZE_TEST_TIER");
    if (o.full_inputs > 0 && tier && std::string(tier) == "full") o.inputs = o.full_inputs;
    return o;
}

/// Runs one input; on failure prints why and where the input is saved, and exits 1.
bool run_guarded(const Options& o, const std::string& input, std::uint64_t index) {
    g_current.data = input.data();
    g_current.size = input.size();
    save_current();
    std::string why;
    bool accepted = false;
    ::alarm(o.timeout_s);
    try {
        accepted = worksize::fuzz::run_one(o.parser, input);
    } catch (const worksize::fuzz::Broken& e) {
        why = std::string("contract broken: ") + e.what();
    } catch (const std::exception& e) {
        why = "unexpected exception " + type_name(typeid(e)) + ": " + e.what();
    } catch (...) {
        why = "unexpected exception of a type that is not std::exception";
    }
    ::alarm(0);
    if (!why.empty()) {
        std::cerr << "worksize_fuzz: " << parser_name(o) << " input #" << index << ": " << why << "\n";
        if (g_current.path[0])
            std::cerr << "worksize_fuzz: the input is saved in " << g_current.path << "; replay: worksize_fuzz --parser "
                      << worksize::fuzz::to_string(o.parser) << " " << g_current.path << "\n";
        std::exit(1);
    }
    return accepted;
}

/// job_run: runs an accepted input with the CLI and returns how it went. If the run broke the
/// CLI's contract, prints how, what ran and its standard error (saved beside the input) and
/// exits 1.
worksize::fuzz::JobRunResult run_cli(const Options& o, JobRunner& runner, const std::string& input, std::uint64_t index) {
    const worksize::fuzz::JobRunResult r = runner.run(input);
    if (o.verbose)  // what the runs reach: the exit code and the error's first line
        std::cout << "job_run input #" << index << ", --size " << r.size << ": "
                  << (r.kernel_fault.empty() ? "exit " + std::to_string(r.code) : "kernel fault: " + r.kernel_fault)
                  << " " << r.errors.substr(0, std::min(r.errors.find('\n'), std::size_t(200))) << std::endl;
    if (r.failure.empty()) return r;
    std::cerr << "worksize_fuzz: job_run input #" << index << ": worksize run " << r.failure << "\n"
              << "worksize_fuzz: it ran " << r.command << "\n";
    if (g_current.path[0]) {
        std::string saved = g_current.path;
        saved.replace(saved.size() - 3, 3, ".stderr");  // fuzz-job_run-current.stderr
        std::ofstream(saved, std::ios::binary) << r.errors;
        std::cerr << "worksize_fuzz: the input is saved in " << g_current.path << ", its standard error in " << saved
                  << "; replay: worksize_fuzz --parser job_run --worksize " << o.run.worksize << " --job-dir "
                  << o.run.job_dir << " --size " << r.size << " " << g_current.path << "\n";
    }
    constexpr std::size_t kShown = 4000;
    std::cerr << "--- its standard error" << (r.errors.size() > kShown ? " (the end)" : "") << "\n"
              << r.errors.substr(r.errors.size() - std::min(r.errors.size(), kShown)) << "---\n";
    std::exit(1);
}

std::string run_counts(const JobRunner& runner) {
    const auto& c = runner.codes();
    return "; worksize run " + std::to_string(runner.runs()) + " times: exit 0 " + std::to_string(c[0]) +
           ", exit 1 " + std::to_string(c[1]) + ", exit 2 " + std::to_string(c[2]) + ", exit 3 " +
           std::to_string(c[3]) + ", kernel faults " + std::to_string(runner.kernel_faults());
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse_args(argc, argv);
    install_handlers();
    const char* name = parser_name(o);
    std::unique_ptr<JobRunner> runner;
    if (o.job_run) {
        try {
            runner = std::make_unique<JobRunner>(o.run);
        } catch (const std::exception& e) {
            usage(e.what());
        }
    }

    if (!o.replay.empty()) {
        for (std::size_t i = 0; i < o.replay.size(); ++i) {
            const std::string input = read_file(o.replay[i]);
            const bool ok = run_guarded(o, input, i);
            std::string ran;
            if (ok && runner) {
                const auto r = run_cli(o, *runner, input, i);
                ran = r.kernel_fault.empty() ? "; worksize run exit " + std::to_string(r.code)
                                             : "; a kernel fault: worksize run " + r.kernel_fault;
            }
            std::cout << o.replay[i] << ": " << (ok ? "accepted" : "rejected") << ran << std::endl;
        }
        return 0;
    }

    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(o.corpus, ec))
        if (e.is_regular_file()) files.push_back(e.path());
    if (ec) usage("cannot read the corpus directory '" + o.corpus + "': " + ec.message());
    if (files.empty()) usage("the corpus directory '" + o.corpus + "' has no files");
    std::sort(files.begin(), files.end());  // the same order everywhere: a deterministic run
    std::vector<std::string> pool, keys, strings = worksize::fuzz::builtin_strings();
    for (const auto& f : files) {
        pool.push_back(read_file(f));
        const json j = json::parse(pool.back(), nullptr, false);
        if (!j.is_discarded()) worksize::fuzz::words_of(j, keys, strings);
    }
    worksize::fuzz::unique(keys);
    worksize::fuzz::unique(strings);
    const std::size_t seeds = pool.size();

    Mutator m(o.seed, keys, strings);
    std::mt19937_64 choose(o.seed ^ 0x9e3779b97f4a7c15ull);
    std::uint64_t accepted = 0, rejected = 0, seeds_accepted = 0;
    std::snprintf(g_current.path, sizeof g_current.path, "%s/fuzz-%s-current.in", o.crash_dir.c_str(), name);
    std::printf("fuzz %s: each input is written to %s before it runs (left there if it ends the run)\n", name,
                g_current.path);
    std::fflush(stdout);
    const auto start = std::chrono::steady_clock::now();
    // job_run: --inputs counts the CLI's runs (of the accepted inputs).
    const std::uint64_t most = runner ? o.inputs * kMadePerRun : o.inputs;
    std::uint64_t made = 0;
    for (std::uint64_t i = 0; i < most && !(runner && runner->runs() >= o.inputs); ++i, ++made) {
        // The corpus itself first, then mutants of the pool.
        const std::string input = i < seeds ? pool[i] : m.mutate(pool[choose() % pool.size()], pool);
        const bool ok = run_guarded(o, input, i);
        ok ? ++accepted : ++rejected;
        // job_run: only what ran its kernels to the end (exit 0, or 3: other results) joins the
        // pool; mutants of a job the CLI refuses (no such kernel, wrong argument count) are
        // refused the same way.
        const bool joins = ok && (!runner || run_cli(o, *runner, input, i).code % 3 == 0);
        if (i < seeds) {
            seeds_accepted += ok;
        } else if (joins && input.size() <= kMaxPoolInput) {
            if (pool.size() < kMaxPool) pool.push_back(input);
            else pool[seeds + choose() % (kMaxPool - seeds)] = input;
        }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("fuzz %s: %llu inputs (seed %llu; %zu corpus files, %llu of them accepted; pool %zu): "
                "%llu accepted, %llu rejected%s, no failure, %.1f s\n",
                name, static_cast<unsigned long long>(made), static_cast<unsigned long long>(o.seed), seeds,
                static_cast<unsigned long long>(seeds_accepted), pool.size(), static_cast<unsigned long long>(accepted),
                static_cast<unsigned long long>(rejected), runner ? run_counts(*runner).c_str() : "", secs);
    std::remove(g_current.path);
    return 0;
}
