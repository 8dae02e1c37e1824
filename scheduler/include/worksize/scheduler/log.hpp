// worksize's log: one line per message on standard error, with a level, for the scheduler, the
// runtime and the CLI alike. Rank 0 (or a program without MPI) writes `worksize: warning: <text>`,
// `worksize: error: <text>`, `worksize: info: <text>`, `worksize: debug: <text>`; another MPI rank
// `worksize[rank N]: warning: <text>` (the runtime sets the rank). Messages below the level are
// dropped. Standard output is left to results.
//
// Written with spdlog, which this header does not include: a program using worksize needs no
// spdlog headers.
#pragma once

#include <optional>
#include <sstream>
#include <string>

namespace worksize::log {

/// From the most to the least verbose.
enum class Level { debug, info, warn, error };

/// "debug", "info", "warn", "error".
const char* to_string(Level level);
/// The level named by to_string() ("warning" is taken for warn). `what` names the source in the
/// error ("--log-level", "WORKSIZE_LOG_LEVEL").
/// @throws InvalidArgument "<what> must be error, warn, info or debug, got '<text>'".
Level parse_level(const std::string& text, const std::string& what = "the log level");
/// The level of the environment variable WORKSIZE_LOG_LEVEL; none when it is unset or empty.
/// @throws InvalidArgument as parse_level for another value.
std::optional<Level> level_from_env();

/// Messages of `level` and above are written; the default is info.
void set_level(Level level);
Level level();
bool enabled(Level level);

/// The MPI rank of this process: 0 (the default) writes "worksize: ", another rank
/// "worksize[rank N]: ".
void set_rank(int rank);
int rank();

/// Write one message (a trailing newline is dropped) if `level` is enabled.
void write(Level level, const std::string& text);
inline void debug(const std::string& text) { write(Level::debug, text); }
inline void info(const std::string& text) { write(Level::info, text); }
inline void warn(const std::string& text) { write(Level::warn, text); }
inline void error(const std::string& text) { write(Level::error, text); }

/// A message built with <<, written when the statement ends: `log::warn() << "x " << n;`.
/// Nothing is formatted when its level is off.
class Line {
public:
    explicit Line(Level level) : level_(level), on_(enabled(level)) {}
    Line(const Line&) = delete;
    Line& operator=(const Line&) = delete;
    ~Line() {
        if (on_) write(level_, os_.str());
    }
    template <class T>
    Line& operator<<(const T& v) {
        if (on_) os_ << v;
        return *this;
    }

private:
    Level level_;
    bool on_;
    std::ostringstream os_;
};
inline Line debug() { return Line(Level::debug); }
inline Line info() { return Line(Level::info); }
inline Line warn() { return Line(Level::warn); }
inline Line error() { return Line(Level::error); }

/// A progress display's text, written to standard error as it is (one write). `open_line`: the
/// text leaves its line open (a terminal's bar redrawn with '\r'); the next message then clears
/// that line first, so that it does not land after the bar.
void progress(const std::string& text, bool open_line);

}  // namespace worksize::log
