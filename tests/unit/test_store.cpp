// Unit tests of the model/tuning database: round trip, checksums, malformed files, stale
// drivers and schemas, merge semantics, atomic save, identical devices and per-host keys, the
// schema 1 migration, concurrent writers and the lock; the keys, the fingerprints, the default
// path and the index are test_store_keys.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <iostream>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "worksize/scheduler/store.hpp"
#include "store_fixtures.hpp"

using namespace worksize;
namespace fs = std::filesystem;
using test::h200;
using test::pocl_on;
using test::ScopedEnv;

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

CostModel some_model(double per_item) {
    CostModel m;
    m.kernel.fixed_s = 1e-5;
    m.kernel.per_x_s = per_item;
    m.send.per_x_s = 1e-9;
    m.samples = 7;
    return m;
}

const nlohmann::json kParams = {{"n", 1024}, {"iterations", 10}};

/// A schema 1 entry as worksize wrote it then (host in the key, no clock, no provenance).
nlohmann::json schema1_entry(const std::string& host, const std::string& kind, const std::string& kernel,
                             const std::string& size_class, const nlohmann::json& payload, double t) {
    nlohmann::json dev = {{"host", host}, {"platform", "Portable Computing Language"}, {"name", "cpu-haswell"},
                          {"vendor", "GenuineIntel"}, {"driver_version", "5.0"}, {"compute_units", 2},
                          {"max_work_group_size", 4096}};
    nlohmann::json j = {{"kind", kind}, {"device", dev}, {"kernel", kernel}, {"params", kParams},
                        {"size_class", size_class}, {"timestamp", t}, {"schema", 1}, {"payload", payload}};
    j["checksum"] = "fnv1a64:" + fnv1a64_hex(j.dump());
    return j;
}

TuningRecord rec(LocalSize l, double s) { return {l, s, 10, 40, "guided", 1}; }

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
    const auto pos = text.rfind("\"schema\": 2");  // the top-level one (keys are sorted)
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
    // Through text, as between ranks. Changed: matmul's and interp's models (the loser of each
    // kept as an alternate), matmul's tuning, the new key and the newer driver's sort; interp's
    // tuning keeps a's record (no host to pool).
    const Store bt = Store::from_text(b.dump(), "rank 1", CorruptPolicy::refuse);
    EXPECT_EQ(a.merge(bt), 5u);
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
    auto names = files();
    std::sort(names.begin(), names.end());
    // The lock file stays (removing it would race with a writer waiting on it).
    EXPECT_EQ(names, (std::vector<std::string>{"db.json", "db.json.lock"}));
    EXPECT_EQ(Store::open(db(), CorruptPolicy::refuse).size(), 2u);
    EXPECT_EQ(read(db()), s.dump());
    EXPECT_THROW(Store().save(), Error);
}

TEST_F(StoreTest, IdenticalDevicesMergeInsteadOfOverwriting) {
    ScopedEnv e("WORKSIZE_DB_PER_HOST", nullptr);
    const DeviceFingerprint a = fingerprint_of(pocl_on("nodeA")), b = fingerprint_of(pocl_on("nodeB"));
    Store s(db());
    // Two identical devices tuned in one run: the faster record is kept, both hosts listed.
    s.put_tuning(a, "sort", kParams, {1024, 1}, rec({64, 1}, 2e-3), 100.0, "nodeA");
    s.put_tuning(b, "sort", kParams, {1024, 1}, rec({128, 1}, 1e-3), 101.0, "nodeB");
    s.put_tuning(a, "quad", kParams, {1024, 1}, rec({32, 1}, 1e-3), 100.0, "nodeA");
    s.put_tuning(b, "quad", kParams, {1024, 1}, rec({16, 1}, 3e-3), 101.0, "nodeB");
    // Two models: the newer is used, the other kept as an alternate with its host.
    s.put_model(a, "matmul", kParams, some_model(1e-12), 100.0, "nodeA");
    s.save();  // saved between the two devices (as tune does): still combined
    s.put_model(b, "matmul", kParams, some_model(2e-12), 101.0, "nodeB");
    s.save();
    const Store t = Store::open(db(), CorruptPolicy::refuse);
    ASSERT_EQ(t.size(), 3u);
    EXPECT_EQ(t.find_tuning(a, "sort", kParams, {1024, 1})->best, (LocalSize{128, 1}));
    EXPECT_EQ(t.find_tuning(a, "quad", kParams, {1024, 1})->best, (LocalSize{32, 1}));
    EXPECT_EQ(t.find_model(b, "matmul", kParams)->kernel.per_x_s, 2e-12);
    for (const auto& en : t.entries()) {
        EXPECT_EQ(en.hosts, (std::vector<std::string>{"nodeA", "nodeB"})) << en.key.kernel;
        if (en.key.kernel == "sort") {
            EXPECT_EQ(en.host, "nodeB");
        }
        if (en.key.kernel == "quad") {
            EXPECT_EQ(en.host, "nodeA");
        }
        if (en.key.kernel == "matmul") {
            EXPECT_EQ(en.host, "nodeB");
            ASSERT_EQ(en.alternates.size(), 1u);
            EXPECT_EQ(en.alternates[0].host, "nodeA");
            EXPECT_EQ(cost_model_from_json(en.alternates[0].payload).kernel.per_x_s, 1e-12);
        }
    }
    // A later run's measurement replaces the entry it read (a re-tune is not merged with the
    // old result: the old one may be from older code).
    Store u = Store::open(db());
    u.put_tuning(a, "sort", kParams, {1024, 1}, rec({256, 1}, 5e-3), 200.0, "nodeA");
    u.save();
    const Store v = Store::open(db());
    EXPECT_EQ(v.find_tuning(a, "sort", kParams, {1024, 1})->best, (LocalSize{256, 1}));
    EXPECT_EQ(v.size(), 3u);
}

TEST_F(StoreTest, PerHostKeysKeepOneEntryPerNode) {
    ScopedEnv e("WORKSIZE_DB_PER_HOST", "1");
    Store s(db());
    const DeviceFingerprint a = fingerprint_of(pocl_on("nodeA")), b = fingerprint_of(pocl_on("nodeB"));
    s.put_tuning(a, "sort", kParams, {1024, 1}, rec({64, 1}, 2e-3), 100.0, "nodeA");
    s.put_tuning(b, "sort", kParams, {1024, 1}, rec({128, 1}, 1e-3), 101.0, "nodeB");
    s.save();
    const Store t = Store::open(db());
    EXPECT_EQ(t.size(), 2u);
    EXPECT_EQ(t.find_tuning(a, "sort", kParams, {1024, 1})->best, (LocalSize{64, 1}));
    EXPECT_EQ(t.find_tuning(b, "sort", kParams, {1024, 1})->best, (LocalSize{128, 1}));
}

TEST_F(StoreTest, Schema1IsMigratedOnLoadLosingNothing) {
    ScopedEnv e("WORKSIZE_DB_PER_HOST", nullptr);
    fs::create_directories(dir_ / "nested");
    nlohmann::json doc = {{"schema", 1}, {"generator", "worksize"}, {"entries", nlohmann::json::array()}};
    doc["entries"].push_back(schema1_entry("node1", "tuning", "sort", "x2^10.y2^0", to_json(rec({64, 1}, 2e-3)), 100));
    doc["entries"].push_back(schema1_entry("node2", "tuning", "sort", "x2^10.y2^0", to_json(rec({128, 1}, 1e-3)), 90));
    doc["entries"].push_back(schema1_entry("node1", "model", "matmul", "", to_json(some_model(3e-12)), 80));
    const std::string old = doc.dump(1) + "\n";
    write(db(), old);
    Store s = Store::open(db(), CorruptPolicy::refuse);
    EXPECT_EQ(s.migrated(), 3u);
    ASSERT_EQ(s.size(), 2u);
    ASSERT_EQ(s.warnings().size(), 1u);  // said once
    EXPECT_NE(s.warnings()[0].find("schema 1"), std::string::npos) << s.warnings()[0];
    // Found for today's fingerprint (no host, a clock): the faster of the two nodes' records.
    const DeviceFingerprint now = fingerprint_of(pocl_on("node3"));
    const auto r = s.find_tuning(now, "sort", kParams, {1024, 1});
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->best, (LocalSize{128, 1}));
    EXPECT_TRUE(s.find_model(now, "matmul", kParams).has_value());
    for (const auto& en : s.entries())
        if (en.key.kernel == "sort") {
            EXPECT_EQ(en.hosts, (std::vector<std::string>{"node1", "node2"}));
        }
    // Saving writes schema 2 and keeps the schema 1 file beside it.
    s.put_model(now, "interp", kParams, some_model(1e-12), 300.0, "node3");
    s.save();
    EXPECT_EQ(read(db() + ".schema1"), old);
    const Store t = Store::open(db(), CorruptPolicy::refuse);
    EXPECT_EQ(t.migrated(), 0u);
    EXPECT_EQ(t.size(), 3u);
    EXPECT_TRUE(t.warnings().empty());
    // With per-host keys the schema 1 entries stay one per node.
    write(db(), old);
    ScopedEnv ph("WORKSIZE_DB_PER_HOST", "1");
    EXPECT_EQ(Store::open(db(), CorruptPolicy::refuse).size(), 3u);
}

TEST_F(StoreTest, ConcurrentWritersLoseNothing) {
    ScopedEnv e("WORKSIZE_DB_PER_HOST", nullptr);
    const DeviceFingerprint f = fingerprint_of(pocl_on("nodeA"));
    Store seed(db());
    seed.put_tuning(f, "old", kParams, {1024, 1}, rec({8, 1}, 1e-3), 50.0, "nodeA");
    seed.save();
    // Two writers open the same file, each records its own kernels, and one the same key.
    Store a = Store::open(db()), b = Store::open(db());
    a.put_tuning(f, "sort", kParams, {1024, 1}, rec({64, 1}, 2e-3), 100.0, "nodeA");
    b.put_tuning(f, "quad", kParams, {1024, 1}, rec({32, 1}, 1e-3), 101.0, "nodeB");
    a.put_tuning(f, "scan", kParams, {1024, 1}, rec({64, 1}, 4e-3), 100.0, "nodeA");
    b.put_tuning(f, "scan", kParams, {1024, 1}, rec({16, 1}, 3e-3), 101.0, "nodeB");
    a.save();
    b.save();
    const Store t = Store::open(db(), CorruptPolicy::refuse);
    EXPECT_EQ(t.size(), 4u);
    for (const char* k : {"old", "sort", "quad", "scan"})
        EXPECT_TRUE(t.find_tuning(f, k, kParams, {1024, 1}).has_value()) << k;
    // The key both wrote: combined (the faster record, both hosts), not the last writer's alone.
    EXPECT_EQ(t.find_tuning(f, "scan", kParams, {1024, 1})->best, (LocalSize{16, 1}));
    // b's store holds what it wrote (a's entries too).
    EXPECT_EQ(b.size(), 4u);
    // A removal is saved the same way, and leaves what others wrote since.
    Store c = Store::open(db());
    a.put_tuning(f, "heat", kParams, {1024, 1}, rec({8, 1}, 1e-3), 300.0, "nodeA");
    a.save();
    EXPECT_EQ(c.remove_if([](const StoreEntry& en) { return en.key.kernel == "old"; }), 1u);
    c.save();
    const Store u = Store::open(db());
    EXPECT_EQ(u.size(), 4u);
    EXPECT_FALSE(u.find_tuning(f, "old", kParams, {1024, 1}).has_value());
    EXPECT_TRUE(u.find_tuning(f, "heat", kParams, {1024, 1}).has_value());
}

TEST_F(StoreTest, LockHeldElsewhereTimesOutWithAClearError) {
    fs::create_directories(dir_ / "nested");
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // Another process holding the database's lock.
        const int fd = ::open((db() + ".lock").c_str(), O_RDWR | O_CREAT, 0644);
        struct flock fl {};
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        const char ok = (fd >= 0 && ::fcntl(fd, F_SETLK, &fl) == 0) ? 'y' : 'n';
        (void)!::write(ready[1], &ok, 1);
        ::sleep(30);
        ::_exit(0);
    }
    char got = 0;
    ASSERT_EQ(::read(ready[0], &got, 1), 1);
    ASSERT_EQ(got, 'y');
    {
        ScopedEnv t("WORKSIZE_DB_LOCK_TIMEOUT", "0.3");
        Store s(db());
        s.put_model(h200(), "matmul", kParams, some_model(1e-12), 100.0);
        try {
            s.save();
            ADD_FAILURE() << "saved while another process held the lock";
        } catch (const Error& ex) {
            EXPECT_NE(std::string(ex.what()).find("stayed locked by another process"), std::string::npos) << ex.what();
            EXPECT_NE(std::string(ex.what()).find("WORKSIZE_DB_LOCK_TIMEOUT"), std::string::npos) << ex.what();
        }
        EXPECT_FALSE(fs::exists(db()));
    }
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    ::close(ready[0]);
    ::close(ready[1]);
    // Released: the save goes through.
    Store s(db());
    s.put_model(h200(), "matmul", kParams, some_model(1e-12), 100.0);
    EXPECT_NO_THROW(s.save());
    EXPECT_EQ(Store::open(db()).size(), 1u);
}
