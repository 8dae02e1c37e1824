// The database's files besides its own: the lock setting and lock file, temporary files of
// killed saves, and the checks a command makes before work that ends in a save (store.hpp).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "store_lock.hpp"
#include "worksize/scheduler/format.hpp"
#include "worksize/scheduler/store.hpp"

namespace worksize {

namespace fs = std::filesystem;

double database_lock_timeout_s() {
    const char* v = std::getenv("WORKSIZE_DB_LOCK_TIMEOUT");
    if (!v || !*v) return 60;
    char* end = nullptr;
    const double t = std::strtod(v, &end);
    if (end == v || *end != '\0' || !std::isfinite(t) || t < 0)
        throw InvalidArgument("WORKSIZE_DB_LOCK_TIMEOUT '" + printable(v) + "' is not a number of seconds >= 0");
    return t;
}

namespace detail {

FileLock::FileLock(const std::string& db) : path_(db + ".lock") {
    const double timeout = database_lock_timeout_s();
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
        throw Error("cannot create the lock file '" + path_ + "' of the worksize database: " + std::strerror(errno));
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        struct flock fl {};
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        if (::fcntl(fd_, F_SETLK, &fl) == 0) return;
        if (errno != EACCES && errno != EAGAIN && errno != EINTR) {
            const int err = errno;
            ::close(fd_);
            throw Error("cannot lock '" + path_ + "' for the worksize database: " + std::strerror(err));
        }
        const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (waited >= timeout) {
            ::close(fd_);
            std::ostringstream m;
            m << "worksize database '" << db << "' stayed locked by another process (lock file '" << path_
              << "') for " << timeout << " s; nothing saved (set WORKSIZE_DB_LOCK_TIMEOUT to wait longer)";
            throw Error(m.str());
        }
        ::usleep(20000);
    }
}

FileLock::~FileLock() { ::close(fd_); }

}  // namespace detail

void check_database_path(const std::string& path) {
    if (!valid_utf8(path))
        throw InvalidArgument("the database path '" + printable(path) +
                              "' is not valid UTF-8 (reports write it as JSON): choose another --db");
    (void)database_lock_timeout_s();
    std::error_code ec;
    const std::string lock = path + ".lock";
    const auto st = fs::symlink_status(lock, ec);
    if (fs::exists(st) && !fs::is_regular_file(fs::status(lock, ec)))
        throw InvalidArgument("the database's lock file '" + printable(lock) + "' is " +
                              (fs::is_directory(st) ? "a directory" : "not a regular file") +
                              ": remove it or choose another --db");
    if (!fs::is_regular_file(path, ec)) return;
    const Store s = Store::open(path, CorruptPolicy::report_and_ignore);
    if (!s.foreign().empty())
        throw InvalidArgument("'" + printable(path) + "' is not a worksize database (" + s.foreign() +
                              "): not overwriting it; choose another --db");
}

std::vector<std::string> remove_stale_temp_files(const std::string& path) {
    std::vector<std::string> removed;
    const fs::path p(path);
    const std::string prefix = p.filename().string() + ".tmp-";
    std::error_code ec;
    fs::directory_iterator it(p.has_parent_path() ? p.parent_path() : fs::path("."), ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string pid_text = name.substr(prefix.size());
        if (pid_text.size() > 9 || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
        const pid_t pid = pid_t(std::stol(pid_text));
        // A live process (or one of another user) keeps its file; ESRCH: the process is gone.
        if (pid <= 0 || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
        std::error_code rm;
        if (fs::remove(it->path(), rm)) removed.push_back(it->path().string());
    }
    return removed;
}

}  // namespace worksize
