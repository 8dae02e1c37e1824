// The log (log.hpp) on spdlog: one unregistered logger with a plain (uncoloured) stderr sink, so
// that a program's own spdlog loggers and worksize's do not meet.
#include "worksize/scheduler/log.hpp"

#include <spdlog/logger.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string_view>

#include "worksize/scheduler/types.hpp"

namespace worksize::log {

namespace {

spdlog::level::level_enum spd_level(Level l) {
    switch (l) {
        case Level::debug: return spdlog::level::debug;
        case Level::info: return spdlog::level::info;
        case Level::warn: return spdlog::level::warn;
        case Level::error: return spdlog::level::err;
    }
    return spdlog::level::err;
}

/// "worksize: %l: %v" on rank 0, "worksize[rank 2]: %l: %v" elsewhere (spdlog's %l names the
/// levels debug, info, warning, error).
std::string pattern(int rank) {
    std::string p = "worksize";
    if (rank != 0) p.append("[rank ").append(std::to_string(rank)).append("]");
    return p.append(": %l: %v");
}

struct State {
    std::mutex mutex;  // orders messages and progress text, and guards the fields below
    std::shared_ptr<spdlog::logger> logger;
    int rank = 0;
    bool line_open = false;  // a progress bar's line is waiting for its next redraw

    State() : logger(std::make_shared<spdlog::logger>("worksize", std::make_shared<spdlog::sinks::stderr_sink_mt>())) {
        logger->set_level(spdlog::level::trace);  // log.hpp's level filters, before any formatting
        logger->set_pattern(pattern(0));
        logger->flush_on(spdlog::level::trace);
    }
};

/// Never destroyed: messages written from other static objects' destructors still go out.
State& state() {
    static State* s = new State;
    return *s;
}

std::atomic<int> g_level{static_cast<int>(Level::info)};

}  // namespace

const char* to_string(Level level) {
    switch (level) {
        case Level::debug: return "debug";
        case Level::info: return "info";
        case Level::warn: return "warn";
        case Level::error: return "error";
    }
    return "?";
}

Level parse_level(const std::string& text, const std::string& what) {
    for (Level l : {Level::debug, Level::info, Level::warn, Level::error})
        if (text == to_string(l)) return l;
    if (text == "warning") return Level::warn;
    throw InvalidArgument(what + " must be error, warn, info or debug, got '" + text + "'");
}

std::optional<Level> level_from_env() {
    const char* v = std::getenv("WORKSIZE_LOG_LEVEL");
    if (!v || !*v) return std::nullopt;
    return parse_level(v, "WORKSIZE_LOG_LEVEL");
}

void set_level(Level level) { g_level.store(static_cast<int>(level)); }

Level level() { return static_cast<Level>(g_level.load()); }

bool enabled(Level level) { return static_cast<int>(level) >= g_level.load(); }

void set_rank(int rank) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    s.rank = rank;
    s.logger->set_pattern(pattern(rank));
}

int rank() {
    State& s = state();
    std::lock_guard lock(s.mutex);
    return s.rank;
}

void write(Level level, const std::string& text) {
    if (!enabled(level)) return;
    std::string_view t(text);
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.remove_suffix(1);
    State& s = state();
    std::lock_guard lock(s.mutex);
    try {
        if (s.line_open) {
            std::fputs("\r\033[K", stderr);  // clear the bar: the next step draws it again
            s.line_open = false;
        }
        s.logger->log(spd_level(level), "{}", t);
    } catch (...) {
        // Logging must never end the program (Line's destructor calls this).
    }
}

void progress(const std::string& text, bool open_line) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
    s.line_open = open_line;
}

}  // namespace worksize::log
