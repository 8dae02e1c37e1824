// Unit tests of the links' fit, their JSON and database entries (scheduler/links.hpp), and the
// data-job model's links made from them.
#include <gtest/gtest.h>

#include <cmath>

#include "worksize/scheduler/links.hpp"

using namespace worksize;

namespace {

DeviceFingerprint gpu() {
    return {"", "NVIDIA CUDA", "H200", "NVIDIA", "560.1", 132, 1024, 1980};
}

LinkFit line(double latency_s, double gbs) {
    LinkFit f;
    f.latency_s = latency_s;
    f.byte_s = 1.0 / (gbs * 1e9);
    f.sizes = 8;
    return f;
}

}  // namespace

TEST(LinkFit, RecoversAnExactLine) {
    std::vector<double> bytes, seconds;
    for (double n = 4096; n <= 64 << 20; n *= 4) {
        bytes.push_back(n);
        seconds.push_back(10e-6 + n / 25e9);
    }
    const LinkFit f = fit_link(bytes, seconds);
    EXPECT_NEAR(f.latency_s, 10e-6, 1e-9);
    EXPECT_NEAR(f.bandwidth(), 25e9, 25e9 * 1e-6);
    EXPECT_LT(f.rms_rel, 1e-9);
    EXPECT_EQ(f.sizes, bytes.size());
}

TEST(LinkFit, WeighsEachSizeByItsRelativeError) {
    // 4 % noise, alternating: the latency still comes from the small sizes, the bandwidth from
    // the large ones (an unweighted fit would give a latency of the large sizes' noise).
    std::vector<double> bytes, seconds;
    int k = 0;
    for (double n = 4096; n <= 64 << 20; n *= 4, ++k) {
        bytes.push_back(n);
        seconds.push_back((5e-6 + n / 10e9) * (k % 2 ? 1.04 : 0.96));
    }
    const LinkFit f = fit_link(bytes, seconds);
    EXPECT_NEAR(f.latency_s, 5e-6, 1e-6);
    EXPECT_NEAR(f.bandwidth(), 10e9, 1e9);
    EXPECT_NEAR(f.rms_rel, 0.04, 0.01);
    EXPECT_NEAR(f.max_rel, 0.04, 0.02);
}

TEST(LinkFit, ClampsANegativeLatency) {
    // Times that grow faster than the size: the line through them crosses zero below 0 s.
    const LinkFit f = fit_link({1000, 2000, 4000}, {1e-6, 3e-6, 7e-6});
    EXPECT_EQ(f.latency_s, 0.0);
    EXPECT_GT(f.byte_s, 0.0);
    EXPECT_TRUE(f.valid());
}

TEST(LinkFit, RefusesTooFewOrBadPoints) {
    EXPECT_THROW(fit_link({4096}, {1e-5}), InvalidArgument);
    EXPECT_THROW(fit_link({4096, 4096}, {1e-5, 2e-5}), InvalidArgument);
    EXPECT_THROW(fit_link({4096, 8192}, {1e-5}), InvalidArgument);
    EXPECT_THROW(fit_link({4096, 8192}, {1e-5, 0.0}), InvalidArgument);
    EXPECT_THROW(fit_link({4096, NAN}, {1e-5, 1e-5}), InvalidArgument);
}

TEST(LinkFit, JsonRoundTripAndRefusals) {
    const DeviceLink l{line(12e-6, 25), line(14e-6, 22)};
    const DeviceLink back = device_link_from_json(to_json(l));
    EXPECT_EQ(to_json(back), to_json(l));
    nlohmann::json bad = to_json(l);
    bad["h2d"]["byte_s"] = 0;
    EXPECT_THROW(device_link_from_json(bad), InvalidArgument);
    bad = to_json(l);
    bad["d2h"].erase("latency_s");
    EXPECT_THROW(device_link_from_json(bad), InvalidArgument);
    EXPECT_THROW(device_link_from_json(nlohmann::json::array()), InvalidArgument);
    EXPECT_THROW(link_fit_from_json(nlohmann::json{
                     {"latency_s", -1}, {"byte_s", 1e-9}, {"rms_rel", 0}, {"max_rel", 0}, {"sizes", 2}}),
                 InvalidArgument);
}

TEST(StoreLinks, RoundTripThroughTheFileText) {
    Store s;
    put_device_link(s, gpu(), {line(12e-6, 25), line(14e-6, 22)}, "node1", 100.0);
    put_rank_link(s, "node2", "node1", line(3e-6, 40), 100.0);
    put_rank_link(s, "node1", "node1", line(1e-6, 80), 100.0);
    const Store back = Store::from_text(s.dump(), "test", CorruptPolicy::refuse);
    EXPECT_EQ(back.size(), 3u);
    std::vector<std::string> warnings;
    const auto d = find_device_link(back, gpu(), &warnings);
    ASSERT_TRUE(d);
    EXPECT_DOUBLE_EQ(d->h2d.latency_s, 12e-6);
    EXPECT_DOUBLE_EQ(d->d2h.bandwidth(), 22e9);
    // A pair of hosts is found in either order; a host with itself is its own entry.
    const auto r = find_rank_link(back, "node1", "node2", &warnings);
    ASSERT_TRUE(r);
    EXPECT_DOUBLE_EQ(r->latency_s, 3e-6);
    EXPECT_DOUBLE_EQ(find_rank_link(back, "node1", "node1")->latency_s, 1e-6);
    EXPECT_FALSE(find_rank_link(back, "node2", "node2"));
    EXPECT_TRUE(warnings.empty());
    for (const auto& e : back.entries()) EXPECT_STREQ(to_string(e.key.kind), "link");
}

TEST(StoreLinks, ADatabaseWithoutLinksLoadsAndHasNone) {
    Store s;
    s.put_model(gpu(), "matmul", nlohmann::json::object(), CostModel{}, 100.0, "node1");
    const Store back = Store::from_text(s.dump(), "test", CorruptPolicy::refuse);
    EXPECT_TRUE(back.warnings().empty());
    EXPECT_EQ(back.size(), 1u);
    EXPECT_FALSE(find_device_link(back, gpu()));
    EXPECT_FALSE(find_rank_link(back, "node1", "node1"));
    EXPECT_TRUE(back.find_model(gpu(), "matmul", nlohmann::json::object()));
}

TEST(StoreLinks, ANewerMeasurementReplacesTheOlderKeptAsAlternate) {
    Store s;
    put_rank_link(s, "a", "b", line(3e-6, 40), 100.0);
    put_rank_link(s, "a", "b", line(4e-6, 30), 200.0);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_DOUBLE_EQ(find_rank_link(s, "b", "a")->latency_s, 4e-6);
    EXPECT_EQ(s.entries().front().alternates.size(), 1u);
}

TEST(StoreLinks, AnUnusablePayloadIsReportedAndAbsent) {
    Store s;
    s.put(device_link_key(gpu()), nlohmann::json{{"h2d", 1}}, 100.0, "node1");
    std::vector<std::string> warnings;
    EXPECT_FALSE(find_device_link(s, gpu(), &warnings));
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings.front().find("unusable link entry"), std::string::npos);
}

TEST(DataLinksFrom, CopiesAndMessagesAsTheSimulatorChargesThem) {
    // same_rank: a read from the slowest device plus a write; between_ranks adds MPI one way.
    const DeviceLink fast{line(10e-6, 20), line(10e-6, 20)}, slow{line(20e-6, 10), line(30e-6, 10)};
    const DataLinks l = data_links_from({fast, slow}, {line(5e-6, 5)});
    EXPECT_NEAR(l.same_rank.message_s, 50e-6, 1e-12);
    EXPECT_NEAR(l.same_rank.byte_s, 2 / 10e9, 1e-21);
    EXPECT_NEAR(l.between_ranks.message_s, 55e-6, 1e-12);
    EXPECT_NEAR(l.between_ranks.byte_s, 2 / 10e9 + 1 / 5e9, 1e-21);
    // Nothing measured: the defaults.
    const DataLinks d = data_links_from({}, {});
    const DataLinks def;
    EXPECT_DOUBLE_EQ(d.same_rank.byte_s, def.same_rank.byte_s);
    EXPECT_DOUBLE_EQ(d.between_ranks.message_s, def.between_ranks.message_s);
    // Devices alone: the defaults' MPI part on top of the measured copies.
    const DataLinks c = data_links_from({fast}, {});
    EXPECT_NEAR(c.between_ranks.message_s - c.same_rank.message_s,
                def.between_ranks.message_s - def.same_rank.message_s, 1e-12);
}
