// The log (log.hpp): levels, line format, rank prefix, and the progress line it clears.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "worksize/scheduler/log.hpp"
#include "worksize/scheduler/types.hpp"

using namespace worksize;

namespace {

/// What `body` writes to standard error (file descriptor 2, where the log's sink writes).
template <class F>
std::string captured_stderr(F body) {
    std::fflush(stderr);
    const int saved = dup(2);
    std::FILE* tmp = std::tmpfile();
    if (saved < 0 || !tmp) return "<capture failed>";
    dup2(fileno(tmp), 2);
    body();
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::string text;
    std::rewind(tmp);
    for (int c; (c = std::fgetc(tmp)) != EOF;) text.push_back(char(c));
    std::fclose(tmp);
    return text;
}

/// Restores the level and rank a test changes.
class Log : public ::testing::Test {
protected:
    void TearDown() override {
        log::set_level(log::Level::info);
        log::set_rank(0);
    }
};

/// Counts how often it is formatted.
struct Counted {
    int* count;
};
std::ostream& operator<<(std::ostream& os, const Counted& c) {
    ++*c.count;
    return os << "counted";
}

}  // namespace

TEST_F(Log, LinesHaveTheLevelAndTheText) {
    const std::string text = captured_stderr([] {
        log::info("a note");
        log::warn("a warning\n");  // the trailing newline is not doubled
        log::error("an error");
    });
    EXPECT_EQ(text, "worksize: info: a note\nworksize: warning: a warning\nworksize: error: an error\n");
}

TEST_F(Log, LevelFiltersWhatIsWritten) {
    EXPECT_EQ(log::level(), log::Level::info);  // the default
    EXPECT_EQ(captured_stderr([] { log::debug("hidden"); }), "");
    log::set_level(log::Level::debug);
    EXPECT_EQ(captured_stderr([] { log::debug("shown"); }), "worksize: debug: shown\n");
    log::set_level(log::Level::warn);
    EXPECT_FALSE(log::enabled(log::Level::info));
    EXPECT_TRUE(log::enabled(log::Level::warn));
    EXPECT_EQ(captured_stderr([] {
                  log::info("hidden");
                  log::warn("kept");
              }),
              "worksize: warning: kept\n");
    log::set_level(log::Level::error);
    EXPECT_EQ(captured_stderr([] {
                  log::warn("hidden");
                  log::error("kept");
              }),
              "worksize: error: kept\n");
}

TEST_F(Log, StreamLineIsWrittenOnceAndNotFormattedWhenOff) {
    int count = 0;
    const std::string text = captured_stderr([&] {
        log::warn() << "device " << 3 << " (" << Counted{&count} << ")";
        log::debug() << "off " << Counted{&count};
    });
    EXPECT_EQ(text, "worksize: warning: device 3 (counted)\n");
    EXPECT_EQ(count, 1);  // the debug line was never formatted
}

TEST_F(Log, OtherRanksSayWhichRank) {
    log::set_rank(2);
    EXPECT_EQ(log::rank(), 2);
    EXPECT_EQ(captured_stderr([] { log::warn("x"); }), "worksize[rank 2]: warning: x\n");
    log::set_rank(0);
    EXPECT_EQ(captured_stderr([] { log::warn("x"); }), "worksize: warning: x\n");
}

TEST_F(Log, AMessageClearsAnOpenProgressLine) {
    const std::string text = captured_stderr([] {
        log::progress("\rbar 1/3", true);
        log::warn("w");
        log::progress("\rbar 2/3", true);
        log::progress("\rbar 3/3\n", false);
        log::warn("after");
    });
    EXPECT_EQ(text, "\rbar 1/3\r\033[Kworksize: warning: w\n\rbar 2/3\rbar 3/3\nworksize: warning: after\n");
}

TEST_F(Log, ParsesLevelsAndRefusesOthers) {
    EXPECT_EQ(log::parse_level("debug"), log::Level::debug);
    EXPECT_EQ(log::parse_level("info"), log::Level::info);
    EXPECT_EQ(log::parse_level("warn"), log::Level::warn);
    EXPECT_EQ(log::parse_level("warning"), log::Level::warn);
    EXPECT_EQ(log::parse_level("error"), log::Level::error);
    try {
        log::parse_level("loud", "--log-level");
        FAIL() << "'loud' was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_STREQ(e.what(), "--log-level must be error, warn, info or debug, got 'loud'");
    }
    EXPECT_THROW(log::parse_level("Info"), InvalidArgument);
    EXPECT_THROW(log::parse_level(""), InvalidArgument);
}

TEST_F(Log, LevelFromTheEnvironment) {
    unsetenv("WORKSIZE_LOG_LEVEL");
    EXPECT_FALSE(log::level_from_env().has_value());
    setenv("WORKSIZE_LOG_LEVEL", "", 1);
    EXPECT_FALSE(log::level_from_env().has_value());
    setenv("WORKSIZE_LOG_LEVEL", "error", 1);
    EXPECT_EQ(log::level_from_env(), log::Level::error);
    setenv("WORKSIZE_LOG_LEVEL", "chatty", 1);
    EXPECT_THROW(log::level_from_env(), InvalidArgument);
    unsetenv("WORKSIZE_LOG_LEVEL");
}
