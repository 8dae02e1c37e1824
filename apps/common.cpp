// Shared plumbing of the `worksize` subcommands.
#include "common.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace worksize::cli {

po::variables_map parse(const std::vector<std::string>& args, const po::options_description& desc,
                        bool kernel_positional) {
    po::positional_options_description pos;
    if (kernel_positional) pos.add("kernel", 1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        throw InvalidArgument(e.what());
    }
    return vm;
}

bool show_help(const mpi::Environment& env, const po::options_description& desc, bool help) {
    if (help && env.rank() == 0) std::cout << desc << '\n';
    return help;
}

po::options_description selection_options(DeviceSelection& sel, const char* default_select) {
    po::options_description d("Device selection");
    d.add_options()
        ("select", po::value(&sel.spec)->default_value(default_select),
         "which devices each rank drives: auto (one process: all; several ranks: rank 0 is the "
         "master and the others take their node's devices round-robin), all, or "
         "RANK=INDEX[+INDEX..][,RANK=..] with indices as `worksize devices` shows them")
        ("filter", po::value(&sel.filter), "only devices whose platform, name or vendor contains this")
        ("master-works", po::bool_switch(&sel.master_works), "rank 0 also drives devices in a job of several ranks")
        ("devices-per-rank", po::value(&sel.per_rank)->default_value(1),
         "auto mode: how many of its node's devices each worker rank drives");
    return d;
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
    : label_(std::move(label)), total_(total) {
    const char* e = std::getenv("WORKSIZE_PROGRESS");
    tty_ = (e && std::string(e) == "1") || isatty(2);
}

void Progress::step(const std::string& what) {
    ++n_;
    draw(what);
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

void Progress::draw(const std::string& what) {
    shown_total_ = total_;
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
             << (what.empty() ? "" : " " + what) << when << "\033[K";
    } else {
        line << label_ << ": " << n_ << '/' << total_ << (what.empty() ? "" : " " + what) << when << '\n';
    }
    const std::string text = line.str();
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
}

void Progress::done() {
    // The total was corrected (set_total) after the last step was shown: show the final count.
    if (n_ > 0 && shown_total_ != total_) draw("done");
    if (tty_) std::cerr << '\n';
}

}  // namespace worksize::cli
