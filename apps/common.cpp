// Shared plumbing of the `worksize` subcommands.
#include "common.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>

#include "worksize/scheduler/log.hpp"
#include "worksize/scheduler/parse.hpp"
#include "worksize/scheduler/store.hpp"

namespace worksize::cli {

po::options_description logging_options(bool* quiet, std::string* level) {
    po::options_description d("Messages (standard error)");
    d.add_options()
        ("quiet,q", po::bool_switch(quiet), "warnings and errors only: no progress, no notes (--log-level warn)")
        ("log-level", po::value(level),
         "error, warn, info (default: progress and notes) or debug; default $WORKSIZE_LOG_LEVEL, else info");
    return d;
}

po::variables_map parse(const std::vector<std::string>& args, const po::options_description& desc,
                        bool kernel_positional) {
    po::positional_options_description pos;
    if (kernel_positional) pos.add("kernel", 1);
    bool quiet = false;
    std::string level;
    po::options_description all;
    all.add(desc).add(logging_options(&quiet, &level));
    po::variables_map vm;
    try {
        // Whole option names only: Boost's guessing took `--devices 7` for `--devices-per-rank 7`.
        po::store(po::command_line_parser(args)
                      .options(all)
                      .positional(pos)
                      .style(po::command_line_style::default_style & ~po::command_line_style::allow_guessing)
                      .run(),
                  vm);
        po::notify(vm);
    } catch (const po::error& e) {
        throw InvalidArgument(e.what());
    }
    // The command line overrides WORKSIZE_LOG_LEVEL (main() applied it).
    if (quiet && vm.count("log-level")) throw InvalidArgument("--quiet and --log-level exclude each other (--quiet is --log-level warn)");
    if (quiet) log::set_level(log::Level::warn);
    if (vm.count("log-level")) log::set_level(log::parse_level(level, "--log-level"));
    return vm;
}

namespace {

void check_unique_params(const std::vector<std::string>& params) {
    for (std::size_t i = 0; i < params.size(); ++i)
        for (std::size_t j = 0; j < i; ++j) {
            const std::string key = params[i].substr(0, params[i].find('='));
            if (!key.empty() && key == params[j].substr(0, params[j].find('=')))
                throw InvalidArgument("--param '" + key + "' is given twice ('" + params[j] + "' and '" + params[i] +
                                      "'): give each kernel parameter once");
        }
}

void check_priority(const std::string& text) {
    if (text != "x" && text != "y") throw InvalidArgument("--priority must be x or y, got '" + text + "'");
}

}  // namespace

po::typed_value<std::vector<std::string>>* param_value(std::vector<std::string>* target) {
    return po::value(target)->composing()->notifier(&check_unique_params);
}

po::typed_value<std::string>* priority_value(std::string* target) { return po::value(target)->notifier(&check_priority); }

po::typed_value<std::string>* pad_value(bool* target) {
    return po::value<std::string>()->default_value(*target ? "on" : "off")->notifier([target](const std::string& text) {
        if (text != "on" && text != "off") throw InvalidArgument("--pad must be on or off, got '" + text + "'");
        *target = text == "on";
    });
}

void check_writable(const std::string& path, const std::string& option, bool make_dirs) {
    namespace fs = std::filesystem;
    if (path.empty()) return;
    auto refuse = [&](const std::string& why) {
        throw InvalidArgument("cannot write --" + option + " '" + path + "': " + why);
    };
    std::error_code ec;
    const fs::path p(path);
    const auto st = fs::status(p, ec);
    if (fs::is_directory(st)) refuse("it is a directory");
    const bool exists = fs::exists(st);
    // A character device (/dev/null, a terminal) only needs to open; a file also needs its
    // directory to take new files (/proc, say, opens its files for writing and then fails the write).
    if (!(exists && fs::is_character_file(st))) {
        if (exists && !fs::is_regular_file(st)) refuse("not a regular file");
        fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
        const fs::path named = dir;
        if (make_dirs) {  // the directories will be made: the nearest existing one must take them
            // "missing/../x" names x once `missing` is made: judge the directory it will name.
            if (dir.lexically_normal() != dir)
                if (const auto c = fs::weakly_canonical(dir, ec); !ec) dir = c;
            while (!fs::exists(dir, ec) && dir.has_parent_path() && dir.parent_path() != dir) dir = dir.parent_path();
        }
        if (!fs::is_directory(dir, ec)) refuse("no directory '" + dir.string() + "'");
        std::string probe_name = ".";  // appended piece by piece: GCC 12 misreads "." + s (-Wrestrict)
        probe_name.append(p.filename().string()).append(".worksize-probe-").append(std::to_string(::getpid()));
        const fs::path probe = dir / probe_name;
        {
            std::ofstream f(probe, std::ios::out | std::ios::trunc);
            if (!f) refuse("cannot create files in '" + dir.string() + "'");
        }
        fs::remove(probe, ec);
        if (!exists && dir != named) return;  // made later
    }
    // Append: an existing file keeps its contents until the work has succeeded.
    std::ofstream f(path, std::ios::out | std::ios::app);
    if (!f) refuse(exists ? "cannot open it for writing" : "cannot create it");
    f.close();
    if (!exists) fs::remove(p, ec);
}

void check_db_writable(const std::string& path) {
    check_writable(path, "db", true);
    check_database_path(path);
}

void write_file_checked(const std::string& path, const std::string& option, const std::string& text, bool append) {
    std::ofstream f(path, std::ios::out | (append ? std::ios::app : std::ios::trunc));
    if (f) f.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (f) f.close();
    if (!f) throw Error("writing --" + option + " '" + path + "' failed: " + std::strerror(errno));
}

bool show_help(const mpi::Environment& env, const po::options_description& desc, bool help) {
    if (help && env.rank() == 0) {
        bool quiet = false;
        std::string level;
        std::cout << desc << '\n' << logging_options(&quiet, &level) << '\n';
    }
    return help;
}

int with_cluster(mpi::Environment& env, const DeviceSelection& sel, const std::function<int(Cluster&)>& master) {
    Cluster cluster(env, sel);
    if (!cluster.is_master()) return cluster.serve();
    int code = kFailure;
    try {
        code = master(cluster);
    } catch (const std::exception& e) {
        // The workers exit with rank 0's code: mpiexec ORs the ranks' codes (2 | 1 would be 3).
        cluster.finish(reason_of(e) == ErrorReason::bad_input ? kUsage : kFailure);
        throw;
    } catch (...) {
        cluster.finish(kFailure);
        throw;
    }
    cluster.finish(code);
    return code;
}

std::string Table::str() const {
    std::vector<std::size_t> w;
    for (const auto& r : rows_)
        for (std::size_t i = 0; i < r.size(); ++i) {
            if (w.size() <= i) w.push_back(0);
            w[i] = std::max(w[i], r[i].size());
        }
    std::ostringstream os;
    for (std::size_t ri = 0; ri < rows_.size(); ++ri) {
        const auto& r = rows_[ri];
        for (std::size_t i = 0; i < r.size(); ++i) {
            os << std::left << std::setw(static_cast<int>(w[i])) << r[i];
            if (i + 1 < r.size()) os << "  ";
        }
        os << '\n';
        if (ri == 0) {
            std::size_t total = 0;
            for (auto x : w) total += x + 2;
            os << std::string(total > 2 ? total - 2 : 0, '-') << '\n';
        }
    }
    return os.str();
}

std::string fmt(double v, int precision) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(precision) << v;
    return os.str();
}

std::string num(double v) {
    std::ostringstream os;
    os.precision(9);
    os << v;
    return os.str();
}

std::string fmt_ms(double s) { return fmt(s * 1e3, s * 1e3 < 10 ? 3 : 1); }

std::string fmt_bytes(std::uint64_t b) {
    const char* u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(b);
    int i = 0;
    while (v >= 1024 && i < 4) {
        v /= 1024;
        ++i;
    }
    return fmt(v, v < 10 && i > 0 ? 1 : 0) + " " + u[i];
}

Progress::Progress(std::string label, std::size_t total)
    : label_(std::move(label)), total_(total), on_(log::enabled(log::Level::info)) {
    const char* e = std::getenv("WORKSIZE_PROGRESS");
    tty_ = (e && std::string(e) == "1") || isatty(2);
}

void Progress::step(const std::string& what) {
    ++n_;
    if (on_) draw(what);
}

namespace {

/// "42 s", "3 min 05 s", "1 h 02 min".
std::string duration_text(double s) {
    const long t = std::lround(std::max(0.0, s));
    char buf[32];
    if (t < 60)
        std::snprintf(buf, sizeof buf, "%ld s", t);
    else if (t < 3600)
        std::snprintf(buf, sizeof buf, "%ld min %02ld s", t / 60, t % 60);
    else
        std::snprintf(buf, sizeof buf, "%ld h %02ld min", t / 3600, (t % 3600) / 60);
    return buf;
}

}  // namespace

void Progress::draw(const std::string& what, bool last) {
    shown_total_ = total_;
    shown_n_ = n_;
    // Elapsed time, and from the third step on a linear estimate of what is left (steps differ
    // in cost, e.g. a CPU's and a GPU's measurements: an estimate, hence the "~").
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string when = " [" + duration_text(elapsed);
    if (n_ >= 3 && n_ < total_) when += ", ~" + duration_text(elapsed / double(n_) * double(total_ - n_)) + " left";
    when += "]";
    // One write per line: under mpiexec stderr and stdout share a terminal, and a line written
    // in pieces gets spliced into the other stream's output.
    std::ostringstream line;
    if (tty_) {
        const int width = 30;
        const int fill = total_ ? static_cast<int>(width * std::min(n_, total_) / total_) : width;
        line << '\r' << label_ << " [" << std::string(static_cast<std::size_t>(fill), '=')
             << std::string(static_cast<std::size_t>(width - fill), ' ') << "] " << n_ << '/' << total_
             << (what.empty() ? "" : " " + what) << when << "\033[K" << (last ? "\n" : "");
    } else {
        line << label_ << ": " << n_ << '/' << total_ << (what.empty() ? "" : " " + what) << when << '\n';
    }
    log::progress(line.str(), tty_ && !last);
}

void Progress::done() {
    if (!on_ || n_ == 0) return;
    // The count reached is the end: a planned total is an upper bound (an adaptive calibration
    // that saturates early, a tune whose candidates failed). The bar ends full, at n/n, with its
    // newline; one line per step ends with a "done" line unless the last step showed n/n.
    total_ = n_;
    if (tty_ || shown_total_ != total_ || shown_n_ != n_) draw("done", true);
}

}  // namespace worksize::cli
