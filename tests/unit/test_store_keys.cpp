// Unit tests of the database's keys (scheduler/store.hpp): the default path, the checksum, the
// device fingerprints, the host as provenance unless keys are per host, and the index find()
// looks entries up in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "worksize/scheduler/store.hpp"
#include "store_fixtures.hpp"

using namespace worksize;
using test::h200;
using test::pocl_on;
using test::ScopedEnv;

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
    nlohmann::json huge = to_json(f);
    huge["compute_units"] = std::uint64_t(1) << 32;  // would wrap to 0 in 32 bits
    EXPECT_THROW(fingerprint_from_json(huge), InvalidArgument);
}

TEST(StoreKeys, HostIsProvenanceUnlessPerHost) {
    {
        ScopedEnv e("WORKSIZE_DB_PER_HOST", nullptr);
        EXPECT_FALSE(per_host_keys());
        // Identical devices on two nodes: one key, without the host; the clock is part of it.
        EXPECT_EQ(fingerprint_of(pocl_on("nodeA")), fingerprint_of(pocl_on("nodeB")));
        EXPECT_EQ(fingerprint_of(pocl_on("nodeA")).host, "");
        EXPECT_EQ(fingerprint_of(pocl_on("nodeA")).max_clock_mhz, 2000u);
        DeviceInfo faster = pocl_on("nodeA");
        faster.max_clock_mhz = 3000;
        EXPECT_FALSE(fingerprint_of(faster) == fingerprint_of(pocl_on("nodeA")));
        EXPECT_FALSE(fingerprint_matches(fingerprint_of(faster), fingerprint_of(pocl_on("nodeA"))));
        // A clock not recorded (0: migrated entries) matches any clock.
        DeviceFingerprint old = fingerprint_of(pocl_on("nodeA"));
        old.max_clock_mhz = 0;
        EXPECT_TRUE(fingerprint_matches(old, fingerprint_of(faster)));
    }
    for (const char* off : {"0", "no", "false", "off", ""}) {
        ScopedEnv e("WORKSIZE_DB_PER_HOST", off);
        EXPECT_FALSE(per_host_keys()) << off;
    }
    ScopedEnv e("WORKSIZE_DB_PER_HOST", "1");
    EXPECT_TRUE(per_host_keys());
    EXPECT_EQ(fingerprint_of(pocl_on("nodeA")).host, "nodeA");
    EXPECT_FALSE(fingerprint_of(pocl_on("nodeA")) == fingerprint_of(pocl_on("nodeB")));
}

// find() looks at one bucket of an index, not at every entry: 4000 entries (tuning entries of
// 40 kernels x 100 size classes on 2 devices, one of them under a stale driver for half the
// kernels, plus clock variants) each found with their own payload, the stale ones reported, and
// each lookup compares at most 2 keys, whatever the size of the store (Lookup::examined; a scan
// per find, before the index, compared 4000 keys each).
TEST(StoreIndex, ThousandsOfEntriesEachFoundByItsKeyInItsBucket) {
    constexpr int kKernels = 40, kEven = kKernels / 2;
    DeviceFingerprint clocked = h200();
    clocked.max_clock_mhz = 1980;
    auto key = [](const DeviceFingerprint& d, int k, int c) {
        return StoreKey{EntryKind::tuning, d, "kernel" + std::to_string(k), {{"n", k}},
                        "x2^" + std::to_string(c) + ".y2^0"};
    };
    nlohmann::json doc = {{"schema", kStoreSchemaVersion}, {"entries", nlohmann::json::array()}};
    for (int k = 0; k < kKernels; ++k)
        for (int c = 0; c < 50; ++c) {
            // The H200 with its clock unrecorded, and for even kernels also recorded with it.
            doc["entries"].push_back(to_json(StoreEntry{key(h200(), k, c), {{"id", k * 1000 + c}}, 1.0, "", {}, {}}));
            if (k % 2 == 0)
                doc["entries"].push_back(
                    to_json(StoreEntry{key(clocked, k, c), {{"id", -(k * 1000 + c)}}, 1.0, "", {}, {}}));
            else  // odd kernels: an entry under an older driver for the size classes 50..99
                doc["entries"].push_back(
                    to_json(StoreEntry{key(h200("550.00"), k, c + 50), {{"id", 7}}, 1.0, "", {}, {}}));
        }
    const Store s = Store::from_text(doc.dump(), "test", CorruptPolicy::refuse);
    ASSERT_EQ(s.size(), std::size_t(kKernels) * 100);
    // The index, not a scan: a lookup compares only the entries of its key's bucket (the device
    // with and without its clock, the same kernel under an older driver), never all of them.
    std::size_t found = 0, stale = 0, examined = 0, most = 0;
    for (int k = 0; k < kKernels; ++k)
        for (int c = 0; c < 100; ++c) {
            const auto l = s.find(key(clocked, k, c));
            examined += l.examined;
            most = std::max(most, l.examined);
            if (c < 50) {
                // The clocked device gets the entry recorded with its clock where there is one.
                ASSERT_TRUE(l.entry.has_value()) << k << " " << c;
                EXPECT_EQ(l.entry->payload["id"], (k % 2 == 0 ? -1 : 1) * (k * 1000 + c));
                EXPECT_TRUE(l.warnings.empty());
                ++found;
            } else {
                EXPECT_FALSE(l.entry.has_value());
                ASSERT_EQ(l.warnings.size(), k % 2 ? 1u : 0u) << k << " " << c;
                if (k % 2) {
                    EXPECT_NE(l.warnings[0].find("ignoring stale"), std::string::npos) << l.warnings[0];
                }
                stale += l.warnings.size();
            }
        }
    EXPECT_EQ(found, std::size_t(kKernels) * 50);
    EXPECT_EQ(stale, std::size_t(kEven) * 50);
    // Found entries: 2 compared for even kernels (with and without the clock), 1 for odd ones; the
    // 50 stale classes of odd kernels: 1 each; the even kernels' classes 50..99: an empty bucket.
    EXPECT_EQ(most, 2u);
    EXPECT_EQ(examined, std::size_t(kEven) * 50 * 2 + std::size_t(kEven) * 50 + std::size_t(kEven) * 50);
    const auto missing = s.find(key(h200(), kKernels, 0));
    EXPECT_FALSE(missing.entry.has_value());
    EXPECT_EQ(missing.examined, 0u);
}
