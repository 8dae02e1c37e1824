// Unit tests of the model/tuning database: round trip, checksums, malformed files, stale
// drivers and schemas, merge semantics, atomic save, default path.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "worksize/scheduler/store.hpp"

using namespace worksize;
namespace fs = std::filesystem;

namespace {

class StoreTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("worksize-store-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" + std::to_string(std::rand()));
        fs::remove_all(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string db() const { return (dir_ / "nested" / "db.json").string(); }
    static std::string read(const std::string& p) {
        std::ifstream in(p);
        std::ostringstream s;
        s << in.rdbuf();
        return s.str();
    }
    static void write(const std::string& p, const std::string& text) {
        std::ofstream out(p, std::ios::trunc);
        out << text;
    }
    std::vector<std::string> files() const {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(dir_ / "nested")) out.push_back(e.path().filename().string());
        return out;
    }

    fs::path dir_;
};

DeviceFingerprint h200(const std::string& driver = "565.57") {
    return {"node1", "NVIDIA CUDA", "NVIDIA H200", "NVIDIA Corporation", driver, 132, 1024};
}

CostModel some_model(double per_item) {
    CostModel m;
    m.kernel.fixed_s = 1e-5;
    m.kernel.per_x_s = per_item;
    m.send.per_x_s = 1e-9;
    m.samples = 7;
    return m;
}

const nlohmann::json kParams = {{"n", 1024}, {"iterations", 10}};

}  // namespace

TEST_F(StoreTest, RoundTripModelsAndTuning) {
    Store s(db());
    s.put_model(h200(), "matmul", kParams, some_model(2e-12), 100.0);
    s.put_tuning(h200(), "matmul", kParams, {1024, 1024}, {{32, 8}, 1.5e-3, 20, 45, "guided"}, 101.0);
    s.save();
    ASSERT_TRUE(fs::exists(db()));
    const Store t = Store::open(db(), CorruptPolicy::refuse);
    EXPECT_TRUE(t.warnings().empty());
    EXPECT_EQ(t.size(), 2u);
    std::vector<std::string> w;
    const auto m = t.find_model(h200(), "matmul", kParams, &w);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(to_json(*m), to_json(some_model(2e-12)));
    // Same size class (floor log2 per dimension) finds it; another class does not.
    const auto r = t.find_tuning(h200(), "matmul", kParams, {1500, 1100}, &w);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->best, (LocalSize{32, 8}));
    EXPECT_EQ(r->best_s, 1.5e-3);
    EXPECT_FALSE(t.find_tuning(h200(), "matmul", kParams, {2048, 1024}, &w).has_value());
    EXPECT_FALSE(t.find_model(h200(), "matmul", {{"n", 2048}}, &w).has_value());
    EXPECT_FALSE(t.find_model(h200(), "interp", kParams, &w).has_value());
    EXPECT_TRUE(w.empty());
    EXPECT_EQ(size_class({1024, 768}), "x2^10.y2^9");
    EXPECT_EQ(size_class({1, 1}), "x2^0.y2^0");
}

TEST_F(StoreTest, MissingFileIsAnEmptyStore) {
    const Store s = Store::open(db(), CorruptPolicy::refuse);
    EXPECT_EQ(s.size(), 0u);
    EXPECT_TRUE(s.warnings().empty());
}

TEST_F(StoreTest, CorruptEntryIsReportedAndIgnored) {
    Store s(db());
    s.put_tuning(h200(), "matmul", kParams, {1024, 1024}, {{32, 8}, 0.25, 20, 45, "guided"}, 100.0);
    s.put_model(h200(), "matmul", kParams, some_model(2e-12), 100.0);
    s.save();
    std::string text = read(db());
    const auto pos = text.find("0.25");
    ASSERT_NE(pos, std::string::npos);
    text[pos + 2] = '3';  // one byte of the tuning payload: best_s 0.25 -> 0.35
    write(db(), text);

    const Store t = Store::open(db());
    ASSERT_EQ(t.warnings().size(), 1u);
    EXPECT_NE(t.warnings()[0].find("ignoring corrupt tuning entry"), std::string::npos) << t.warnings()[0];
    EXPECT_NE(t.warnings()[0].find("checksum mismatch"), std::string::npos);
    std::vector<std::string> w;
    EXPECT_FALSE(t.find_tuning(h200(), "matmul", kParams, {1024, 1024}, &w).has_value());
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("ignoring corrupt"), std::string::npos);
    EXPECT_TRUE(t.find_model(h200(), "matmul", kParams).has_value());  // the intact one is used
    EXPECT_THROW(Store::open(db(), CorruptPolicy::refuse), Error);
}

TEST_F(StoreTest, MalformedFileReportedRefusedAndMovedAsideOnSave) {
    fs::create_directories(dir_ / "nested");
    write(db(), "{\"schema\": 1, \"entries\": [ {\"kind\": ");
    try {
        Store::open(db(), CorruptPolicy::refuse);
        FAIL() << "expected Error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(db()), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos) << e.what();
    }
    Store s = Store::open(db());
    ASSERT_EQ(s.warnings().size(), 1u);
    EXPECT_NE(s.warnings()[0].find(db()), std::string::npos);
    EXPECT_EQ(s.size(), 0u);
    s.put_model(h200(), "matmul", kParams, some_model(1e-12));
    s.save();
    bool aside = false;
    for (const auto& f : files()) {
        if (f.rfind("db.json.corrupt-", 0) == 0) {
            aside = true;
            EXPECT_EQ(read((dir_ / "nested" / f).string()), "{\"schema\": 1, \"entries\": [ {\"kind\": ");
        }
    }
    EXPECT_TRUE(aside);
    EXPECT_TRUE(Store::open(db(), CorruptPolicy::refuse).find_model(h200(), "matmul", kParams).has_value());
    // A valid JSON document of the wrong shape is corrupt too.
    write(db(), "[1, 2, 3]");
    EXPECT_THROW(Store::open(db(), CorruptPolicy::refuse), Error);
    EXPECT_EQ(Store::open(db()).warnings().size(), 1u);
}

// Found by the fuzzer (tests/fuzz): a number JSON cannot hold (1e400) threw nlohmann's
// out_of_range out of Store::open instead of marking the file corrupt.
TEST_F(StoreTest, NumberOutOfRangeIsACorruptFile) {
    const std::string text = "{\"schema\": 1, \"entries\": [{\"timestamp\": 1e400}]}";
    const Store s = Store::from_text(text, "'x'");
    ASSERT_EQ(s.warnings().size(), 1u);
    EXPECT_NE(s.warnings()[0].find("is corrupt (malformed JSON"), std::string::npos) << s.warnings()[0];
    EXPECT_EQ(s.size(), 0u);
    EXPECT_THROW(Store::from_text(text, "'x'", CorruptPolicy::refuse), Error);
}

// Found by the fuzzer (tests/fuzz): an entry's params nested tens of thousands of levels deep
// made every lookup dump and copy them recursively (minutes, or the stack overflowed). Deeper
// than 64 levels is a corrupt file.
TEST_F(StoreTest, DeeplyNestedFileIsCorrupt) {
    const std::string text = "{\"schema\": 1, \"entries\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
    const Store s = Store::from_text(text, "'x'");
    ASSERT_EQ(s.warnings().size(), 1u);
    EXPECT_EQ(s.warnings()[0], "worksize database 'x' is corrupt (nested deeper than 64 levels); ignoring it");
    EXPECT_THROW(Store::from_text(text, "'x'", CorruptPolicy::refuse), Error);
}

TEST_F(StoreTest, StaleDriverAndSchemaAreNeverUsed) {
    Store s(db());
    s.put_model(h200("550.00"), "matmul", kParams, some_model(2e-12), 100.0);
    s.save();
    const Store t = Store::open(db());
    std::vector<std::string> w;
    EXPECT_FALSE(t.find_model(h200("565.57"), "matmul", kParams, &w).has_value());
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("ignoring stale"), std::string::npos) << w[0];
    EXPECT_NE(w[0].find("550.00"), std::string::npos);
    // Recording under the new driver replaces the stale entry.
    Store u = t;
    u.put_model(h200("565.57"), "matmul", kParams, some_model(3e-12), 200.0);
    EXPECT_EQ(u.size(), 1u);
    w.clear();
    EXPECT_TRUE(u.find_model(h200("565.57"), "matmul", kParams, &w).has_value());
    EXPECT_TRUE(w.empty());
    // Another schema version: stale, ignored, reported.
    std::string text = read(db());
    const auto pos = text.rfind("\"schema\": 1");  // the top-level one (keys are sorted)
    ASSERT_NE(pos, std::string::npos);
    text.replace(pos, 11, "\"schema\": 99");
    write(db(), text);
    const Store v = Store::open(db());
    EXPECT_EQ(v.size(), 0u);
    ASSERT_EQ(v.warnings().size(), 1u);
    EXPECT_NE(v.warnings()[0].find("schema version 99"), std::string::npos);
    EXPECT_THROW(Store::open(db(), CorruptPolicy::refuse), Error);
}

TEST_F(StoreTest, MergeSemantics) {
    Store a(db()), b;
    a.put_model(h200(), "matmul", kParams, some_model(1e-12), 100.0);
    b.put_model(h200(), "matmul", kParams, some_model(2e-12), 200.0);       // newer model wins
    a.put_model(h200(), "interp", kParams, some_model(1e-12), 300.0);
    b.put_model(h200(), "interp", kParams, some_model(2e-12), 250.0);       // older: loses
    a.put_tuning(h200(), "matmul", kParams, {512, 512}, {{16, 16}, 2e-3, 10, 40, "guided"}, 100.0);
    b.put_tuning(h200(), "matmul", kParams, {512, 512}, {{32, 8}, 1e-3, 40, 40, "exhaustive"}, 50.0);  // faster wins
    a.put_tuning(h200(), "interp", kParams, {512, 512}, {{8, 32}, 1e-3, 10, 40, "guided"}, 10.0);
    b.put_tuning(h200(), "interp", kParams, {512, 512}, {{8, 8}, 5e-3, 10, 40, "guided"}, 500.0);     // slower loses
    DeviceFingerprint other = h200();
    other.host = "node2";
    b.put_model(other, "matmul", kParams, some_model(4e-12), 1.0);           // new key: taken
    a.put_model(h200("550.00"), "sort", kParams, some_model(1e-12), 100.0);
    b.put_model(h200("565.57"), "sort", kParams, some_model(5e-12), 150.0);  // newer driver entry wins
    // Through text, as between ranks.
    const Store bt = Store::from_text(b.dump(), "rank 1", CorruptPolicy::refuse);
    EXPECT_EQ(a.merge(bt), 4u);
    EXPECT_EQ(a.find_model(h200(), "matmul", kParams)->kernel.per_x_s, 2e-12);
    EXPECT_EQ(a.find_model(h200(), "interp", kParams)->kernel.per_x_s, 1e-12);
    EXPECT_EQ(a.find_tuning(h200(), "matmul", kParams, {512, 512})->best, (LocalSize{32, 8}));
    EXPECT_EQ(a.find_tuning(h200(), "interp", kParams, {512, 512})->best, (LocalSize{8, 32}));
    EXPECT_EQ(a.find_model(other, "matmul", kParams)->kernel.per_x_s, 4e-12);
    EXPECT_EQ(a.find_model(h200("565.57"), "sort", kParams)->kernel.per_x_s, 5e-12);
    EXPECT_EQ(a.size(), 6u);
    // Merging again changes nothing.
    EXPECT_EQ(a.merge(bt), 0u);
}

TEST_F(StoreTest, MergeComparesTuningTimesPerIteration) {
    // Rank 1 tuned with 10 iterations per run (8 ms: 0.8 ms each), rank 0 with 1 (1 ms): the
    // faster per iteration wins, not the lower run time.
    Store a(db()), b;
    a.put_tuning(h200(), "matmul", kParams, {512, 512}, {{16, 16}, 1e-3, 10, 40, "guided", 1}, 100.0);
    b.put_tuning(h200(), "matmul", kParams, {512, 512}, {{32, 8}, 8e-3, 10, 40, "guided", 10}, 50.0);
    // Where one side has no iterations recorded (an older entry), the run times compare as they are.
    a.put_tuning(h200(), "interp", kParams, {512, 512}, {{8, 32}, 1e-3, 10, 40, "guided", 1}, 10.0);
    b.put_tuning(h200(), "interp", kParams, {512, 512}, {{8, 8}, 8e-3, 10, 40, "guided", 0}, 500.0);
    const Store bt = Store::from_text(b.dump(), "rank 1", CorruptPolicy::refuse);
    EXPECT_EQ(a.merge(bt), 1u);
    const auto mm = a.find_tuning(h200(), "matmul", kParams, {512, 512});
    ASSERT_TRUE(mm.has_value());
    EXPECT_EQ(mm->best, (LocalSize{32, 8}));
    EXPECT_EQ(mm->iterations, 10u);
    EXPECT_DOUBLE_EQ(per_iteration_s(*mm), 8e-4);
    EXPECT_EQ(a.find_tuning(h200(), "interp", kParams, {512, 512})->best, (LocalSize{8, 32}));
}

TEST_F(StoreTest, AtomicSaveLeavesNoTempFileAndReplacesContent) {
    Store s(db());
    s.put_model(h200(), "matmul", kParams, some_model(1e-12));
    s.save();
    s.put_model(h200(), "interp", kParams, some_model(1e-12));
    s.save();
    const auto names = files();
    ASSERT_EQ(names.size(), 1u);
    EXPECT_EQ(names[0], "db.json");
    EXPECT_EQ(Store::open(db(), CorruptPolicy::refuse).size(), 2u);
    EXPECT_EQ(read(db()), s.dump());
    EXPECT_THROW(Store().save(), Error);
}

TEST(StorePaths, DefaultDbPath) {
    const char* names[] = {"WORKSIZE_DB", "XDG_CACHE_HOME", "HOME"};
    std::vector<std::pair<std::string, std::string>> saved;
    for (const char* n : names) {
        const char* v = std::getenv(n);
        if (v) saved.push_back({n, v});
        ::unsetenv(n);
    }
    EXPECT_THROW(default_db_path(), Error);
    ::setenv("HOME", "/home/u", 1);
    EXPECT_EQ(default_db_path(), "/home/u/.cache/worksize/db.json");
    ::setenv("XDG_CACHE_HOME", "/xdg", 1);
    EXPECT_EQ(default_db_path(), "/xdg/worksize/db.json");
    ::setenv("WORKSIZE_DB", "/tmp/my.json", 1);
    EXPECT_EQ(default_db_path(), "/tmp/my.json");
    for (const char* n : names) ::unsetenv(n);
    for (const auto& [n, v] : saved) ::setenv(n.c_str(), v.c_str(), 1);
}

TEST(StoreChecksum, Fnv1aKnownValues) {
    EXPECT_EQ(fnv1a64_hex(""), "cbf29ce484222325");
    EXPECT_EQ(fnv1a64_hex("a"), "af63dc4c8601ec8c");
}

TEST(StoreFingerprint, FromDeviceInfoAndJson) {
    DeviceInfo d;
    d.host = "n";
    d.platform = "PoCL";
    d.name = "cpu";
    d.vendor = "v";
    d.driver_version = "5.0";
    d.compute_units = 16;
    d.max_work_group_size = 4096;
    const DeviceFingerprint f = fingerprint_of(d);
    EXPECT_EQ(fingerprint_from_json(to_json(f)), f);
    nlohmann::json bad = to_json(f);
    bad.erase("driver_version");
    EXPECT_THROW(fingerprint_from_json(bad), InvalidArgument);
}
