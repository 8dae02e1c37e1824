// The database's lock (store_files.cpp), held by Store::save_as while it writes.
#pragma once

#include <string>

namespace worksize::detail {

/// An exclusive fcntl lock on `<db>.lock`, held for the object's lifetime. fcntl locks are the
/// POSIX ones that NFS (lockd / NFSv4) honours as well as local file systems. Waits at most
/// database_lock_timeout_s(). @throws Error naming the lock file and the OS's reason.
class FileLock {
public:
    explicit FileLock(const std::string& db);
    ~FileLock();  // closing releases the lock
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;

private:
    std::string path_;
    int fd_ = -1;
};

}  // namespace worksize::detail
