// The database's files besides its own (issue 28): a file that is not a worksize database is
// refused, not converted; the checks made before a command's work (path, lock setting, lock
// file); temporary files of killed saves removed; the OS's reason in write errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#include "worksize/scheduler/store.hpp"

using namespace worksize;
namespace fs = std::filesystem;

namespace {

class StoreFiles : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("worksize-store-files-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        ::unsetenv("WORKSIZE_DB_LOCK_TIMEOUT");
        fs::remove_all(dir_);
    }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    static void write(const std::string& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
    static std::string read(const std::string& p) {
        std::ifstream in(p, std::ios::binary);
        std::ostringstream s;
        s << in.rdbuf();
        return s.str();
    }
    fs::path dir_;
};

DeviceFingerprint device() { return {"node1", "PoCL", "cpu", "V", "6.0", 4, 4096}; }

CostModel model() {
    CostModel m;
    m.kernel.per_x_s = 1e-9;
    m.samples = 3;
    return m;
}

/// The message of the InvalidArgument `f` throws ("" when it throws none).
template <class F>
std::string refusal(F f) {
    try {
        f();
    } catch (const InvalidArgument& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_F(StoreFiles, AFileThatIsNoDatabaseIsRefusedNotConverted) {
    for (const std::string text : {"my notes\n", "{\"devices\": []}", "[1, 2]", "{}"}) {
        const std::string p = path("notes.txt");
        write(p, text);
        Store s = Store::open(p);
        EXPECT_FALSE(s.foreign().empty()) << text;
        s.put_model(device(), "sort", {}, model());
        const std::string why = refusal([&] { s.save(); });
        EXPECT_NE(why.find("is not a worksize database"), std::string::npos) << text << ": " << why;
        EXPECT_EQ(read(p), text);  // untouched
        EXPECT_NE(refusal([&] { check_database_path(p); }).find("not overwriting it"), std::string::npos) << text;
    }
    // Damaged JSON of a database is no foreign file: it is copied aside and rewritten.
    const std::string damaged = path("db.json");
    write(damaged, "{\"schema\": 2, \"entries\": [ {\"kind\": ");
    EXPECT_TRUE(Store::open(damaged).foreign().empty());
    EXPECT_EQ(refusal([&] { check_database_path(damaged); }), "");
}

TEST_F(StoreFiles, WhatASaveWouldRefuseIsCheckedBefore) {
    const std::string db = path("db.json");
    EXPECT_EQ(refusal([&] { check_database_path(db); }), "");  // a new file
    EXPECT_NE(refusal([&] { check_database_path(path("d\xff.json")); }).find("is not valid UTF-8"), std::string::npos);
    ::setenv("WORKSIZE_DB_LOCK_TIMEOUT", "abc", 1);
    EXPECT_EQ(refusal([&] { check_database_path(db); }), "WORKSIZE_DB_LOCK_TIMEOUT 'abc' is not a number of seconds >= 0");
    ::setenv("WORKSIZE_DB_LOCK_TIMEOUT", "0.5", 1);
    EXPECT_EQ(refusal([&] { check_database_path(db); }), "");
    fs::create_directory(db + ".lock");
    EXPECT_NE(refusal([&] { check_database_path(db); }).find("lock file '" + db + ".lock' is a directory"),
              std::string::npos);
}

TEST_F(StoreFiles, TemporaryFilesOfKilledSavesAreRemoved) {
    const std::string db = path("db.json");
    const pid_t child = ::fork();  // a process that is gone by the time the store saves
    if (child == 0) ::_exit(0);
    ASSERT_GT(child, 0);
    ::waitpid(child, nullptr, 0);
    const std::string dead = db + ".tmp-" + std::to_string(child), live = db + ".tmp-" + std::to_string(::getppid());
    write(dead, "{\"schema\": 2, \"ent");
    write(live, "a save of a live process");
    write(path("other.json.tmp-" + std::to_string(child)), "another database's");
    Store s(db);
    s.put_model(device(), "sort", {}, model());
    s.save();
    EXPECT_FALSE(fs::exists(dead));
    EXPECT_TRUE(fs::exists(live));
    EXPECT_TRUE(fs::exists(path("other.json.tmp-" + std::to_string(child))));
    EXPECT_TRUE(Store::open(db, CorruptPolicy::refuse).find_model(device(), "sort", {}).has_value());
}
