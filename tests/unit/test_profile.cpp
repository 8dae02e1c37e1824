// Unit tests of offline device profiles: the shipped paper-2015.json, defaults, and an error
// naming the device and the field for every malformed entry; the device-JSON format that
// `worksize devices --json` writes, read back; error reasons.
#include <gtest/gtest.h>

#include "source_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <tuple>

#include <nlohmann/json.hpp>

#include "worksize/scheduler/planner.hpp"
#include "worksize/scheduler/profile.hpp"

using namespace worksize;
using nlohmann::json;

namespace {

using worksize::test::source_dir;

json valid_device() {
    return json{{"name", "Tesla K20"},
                {"vendor", "NVIDIA Corporation"},
                {"type", "gpu"},
                {"compute_units", 13},
                {"pes_per_cu", 192},
                {"max_clock_mhz", 706},
                {"max_work_group_size", 1024},
                {"max_work_item_sizes", {1024, 1024, 64}},
                {"local_mem_bytes", 49152},
                {"global_mem_bytes", 5368709120ull}};
}

std::string error_of(const std::string& text) {
    try {
        parse_profile(text, "p.json");
    } catch (const InvalidArgument& e) {
        return e.what();
    }
    return "<no error>";
}

}  // namespace

TEST(Profile, Paper2015Loads) {
    const auto path = source_dir() / "docs/profiles/paper-2015.json";
    const auto devs = load_profile(path.string());
    ASSERT_EQ(devs.size(), 3u);
    EXPECT_EQ(devs[0].name, "Tesla K20");
    EXPECT_EQ(devs[0].total_pes(), 2496u);
    EXPECT_EQ(devs[1].total_pes(), 192u);
    EXPECT_EQ(devs[2].total_pes(), 128u);
    EXPECT_EQ(devs[2].max_work_group_size, 512u);
    EXPECT_EQ(devs[2].max_work_item_sizes, (std::array<std::uint64_t, 3>{512, 512, 64}));
    EXPECT_EQ(devs[2].local_mem_bytes, 16384u);
    EXPECT_EQ(devs[1].global_mem_bytes, 1ull << 30);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(devs[i].rank, i);
        EXPECT_EQ(devs[i].index, 0);
        EXPECT_EQ(devs[i].host, "node" + std::to_string(i));
        EXPECT_EQ(devs[i].pe_source, PeSource::profile);
        EXPECT_EQ(devs[i].type, DeviceType::gpu);
        EXPECT_EQ(devs[i].preferred_wg_multiple, 32u);
    }
    // The METHOD.md chain example on the profile itself.
    const auto w = split_weights(devs, "paper", ComputeClass::large);
    EXPECT_NEAR(w[0], 495.0 / 505.0, 1e-12);
}

TEST(Profile, DefaultsAndOptionalFields) {
    json a = valid_device();
    json b = valid_device();
    b["name"] = "Xeon";
    b["type"] = "cpu";
    b["rank"] = 0;
    b["node"] = "host-a";
    b["driver_version"] = "5.0";
    b["max_work_item_sizes"] = {4096};
    json c = valid_device();
    c["type"] = "accelerator";
    c["preferred_wg_multiple"] = 64;
    const auto devs = parse_profile(json{{"devices", {a, b, c}}}.dump());
    ASSERT_EQ(devs.size(), 3u);
    EXPECT_EQ(devs[0].rank, 0);
    EXPECT_EQ(devs[0].index, 0);
    EXPECT_EQ(devs[0].host, "profile");
    EXPECT_EQ(devs[1].rank, 0);
    EXPECT_EQ(devs[1].index, 1);  // second device of rank 0
    EXPECT_EQ(devs[1].host, "host-a");
    EXPECT_EQ(devs[1].driver_version, "5.0");
    EXPECT_EQ(devs[1].preferred_wg_multiple, 8u);
    EXPECT_EQ(devs[1].max_work_item_sizes, (std::array<std::uint64_t, 3>{4096, 1, 1}));
    EXPECT_EQ(devs[2].rank, 2);
    EXPECT_EQ(devs[2].preferred_wg_multiple, 64u);
}

TEST(Profile, DocumentLevelErrors) {
    EXPECT_EQ(error_of("{\"devices\": [").rfind("profile p.json: malformed JSON at byte ", 0), 0u)
        << error_of("{\"devices\": [");
    EXPECT_EQ(error_of("{}"), "profile p.json: missing \"devices\" array at the top level");
    EXPECT_EQ(error_of("[]"), "profile p.json: missing \"devices\" array at the top level");
    EXPECT_EQ(error_of("{\"devices\": {}}"), "profile p.json: \"devices\" must be an array");
    EXPECT_EQ(error_of("{\"devices\": []}"), "profile p.json: \"devices\" is empty");
    EXPECT_EQ(error_of("{\"devices\": [3]}"), "profile p.json: device 0: must be a JSON object");
    EXPECT_THROW(parse_profile("nope"), InvalidArgument);
}

// Found by the fuzzer (tests/fuzz): a number JSON cannot hold is nlohmann's out_of_range, not a
// parse_error; it escaped parse_profile unnamed (the CLI said "[json.exception...]", exit 1).
TEST(Profile, NumberOutOfRangeIsMalformedJson) {
    json doc = {{"devices", json::array({valid_device()})}};
    std::string text = doc.dump();
    const auto at = text.find("13");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 2, "1e400");
    EXPECT_EQ(error_of(text), "profile p.json: malformed JSON: number overflow parsing '1e400'");
}

// Found by the fuzzer (tests/fuzz): nlohmann's copy and dump recurse, so a deeply nested file
// could overflow the stack; deeper than 64 levels is refused before parsing.
TEST(Profile, DeeplyNestedIsMalformedJson) {
    const std::string deep = "{\"devices\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
    EXPECT_EQ(error_of(deep), "profile p.json: malformed JSON: nested deeper than 64 levels");
    // brackets inside strings do not count
    json doc = {{"devices", json::array({valid_device()})}};
    doc["devices"][0]["_note"] = std::string(1000, '[');
    EXPECT_EQ(parse_profile(doc.dump(), "p.json").size(), 1u);
}

TEST(Profile, UnreadableFile) {
    try {
        load_profile("/nonexistent/dir/profile.json");
        FAIL();
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "profile /nonexistent/dir/profile.json: cannot open the file for reading");
    }
}

// Each field, broken each way, names the device (index and name) and the field.
class BadField : public ::testing::TestWithParam<std::tuple<std::string, json, std::string>> {};
TEST_P(BadField, NamesDeviceAndField) {
    const auto& [field, value, expected] = GetParam();
    json bad = valid_device();
    if (value.is_discarded())
        bad.erase(field);
    else
        bad[field] = value;
    const json doc{{"devices", {valid_device(), valid_device(), bad}}};
    EXPECT_EQ(error_of(doc.dump()), "profile p.json: device 2 ('Tesla K20'): " + expected);
}

namespace {
const json missing = json(json::value_t::discarded);
std::tuple<std::string, json, std::string> positive(const std::string& f, json v) {
    return {f, std::move(v), "field '" + f + "' must be a positive integer"};
}
}  // namespace

INSTANTIATE_TEST_SUITE_P(
    Fields, BadField,
    ::testing::Values(
        positive("compute_units", 0), positive("compute_units", -3),
        positive("compute_units", "13"), positive("compute_units", 1.5),
        positive("pes_per_cu", 0), positive("pes_per_cu", nullptr),
        positive("max_clock_mhz", -1), positive("max_work_group_size", 0),
        positive("local_mem_bytes", false), positive("global_mem_bytes", -5),
        positive("preferred_wg_multiple", 0),
        std::tuple{std::string("compute_units"), missing,
                   std::string("missing field 'compute_units'")},
        std::tuple{std::string("global_mem_bytes"), missing,
                   std::string("missing field 'global_mem_bytes'")},
        std::tuple{std::string("max_work_item_sizes"), missing,
                   std::string("missing field 'max_work_item_sizes'")},
        std::tuple{std::string("max_work_item_sizes"), json(1024),
                   std::string("field 'max_work_item_sizes' must be an array of 1 to 3 "
                               "positive integers")},
        std::tuple{std::string("max_work_item_sizes"), json::array({1024, 0, 64}),
                   std::string("field 'max_work_item_sizes[1]' must be a positive integer")},
        std::tuple{std::string("compute_units"), json(5000000000ull),
                   std::string("field 'compute_units' is too large (5000000000)")},
        std::tuple{std::string("type"), json("fpga"),
                   std::string("field 'type' must be one of gpu, cpu, accelerator, other "
                               "(got 'fpga')")},
        std::tuple{std::string("type"), missing, std::string("missing field 'type'")},
        std::tuple{std::string("vendor"), json(3), std::string("field 'vendor' must be a string")},
        std::tuple{std::string("rank"), json(-1),
                   std::string("field 'rank' must be a non-negative integer")},
        std::tuple{std::string("node"), json(""), std::string("field 'node' must not be empty")},
        std::tuple{std::string("compute_unit"), json(13),
                   std::string("unknown field 'compute_unit'")}));

TEST(Profile, MissingNameNamesOnlyTheIndex) {
    json bad = valid_device();
    bad.erase("name");
    EXPECT_EQ(error_of(json{{"devices", {bad}}}.dump()),
              "profile p.json: device 0: missing field 'name'");
}

// The one device-JSON format: what to_json writes (`worksize devices --json`, the inventory
// messages) the profile reader reads back unchanged.
TEST(Profile, DevicesJsonReadsBack) {
    DeviceInfo d;
    d.rank = 1;
    d.index = 2;
    d.host = "node3";
    d.platform = "Portable Computing Language";
    d.name = "pthread";
    d.vendor = "AuthenticAMD";
    d.driver_version = "6.0";
    d.type = DeviceType::cpu;
    d.compute_units = 4;
    d.pes_per_cu = 8;
    d.pe_source = PeSource::cpu_vector_width;
    d.max_clock_mhz = 2400;
    d.max_work_group_size = 4096;
    d.max_work_item_sizes = {4096, 4096, 4096};
    d.local_mem_bytes = 524288;
    d.global_mem_bytes = 5ull << 30;
    d.max_alloc_bytes = 0;  // unknown
    d.preferred_wg_multiple = 8;
    const auto back = parse_profile(json{{"source", "live"}, {"devices", {to_json(d)}}}.dump(), "live.json");
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(to_json(back[0]), to_json(d));
    EXPECT_EQ(to_json(device_from_json(to_json(d))), to_json(d));
}

TEST(Profile, DevicesJsonStaysStrict) {
    json dev = valid_device();
    dev["host"] = "a";
    dev["node"] = "b";
    EXPECT_NE(error_of(json{{"devices", {dev}}}.dump()).find("'host' and 'node'"), std::string::npos);
    dev = valid_device();
    dev["total_pes"] = 7;
    EXPECT_NE(error_of(json{{"devices", {dev}}}.dump()).find("total_pes"), std::string::npos);
    dev = valid_device();
    dev["pes_per_cu_source"] = "guess";
    EXPECT_NE(error_of(json{{"devices", {dev}}}.dump()).find("pes_per_cu_source"), std::string::npos);
    json a = valid_device(), b = valid_device();
    a["index"] = 0;
    b["index"] = 0;
    b["rank"] = 0;
    a["rank"] = 0;
    EXPECT_NE(error_of(json{{"devices", {a, b}}}.dump()).find("two devices of index 0"), std::string::npos);
}

TEST(ErrorReasons, NamesRoundTripAndInvalidArgumentIsBadInput) {
    for (auto r : {ErrorReason::generic, ErrorReason::bad_input, ErrorReason::build_failure, ErrorReason::device_limit,
                   ErrorReason::launch_failure, ErrorReason::wrong_result, ErrorReason::lost_rank,
                   ErrorReason::timed_out})
        EXPECT_EQ(error_reason_from_string(to_string(r)), r);
    EXPECT_EQ(error_reason_from_string("no-such-reason"), ErrorReason::generic);
    EXPECT_EQ(InvalidArgument("x").reason(), ErrorReason::bad_input);
    EXPECT_EQ(Error("x").reason(), ErrorReason::generic);
    EXPECT_EQ(reason_of(std::runtime_error("x")), ErrorReason::generic);
    EXPECT_THROW(throw_error(ErrorReason::bad_input, "x"), InvalidArgument);
    try {
        throw_error(ErrorReason::device_limit, "y");
    } catch (const Error& e) {
        EXPECT_EQ(e.reason(), ErrorReason::device_limit);
        EXPECT_STREQ(e.what(), "y");
    }
}
