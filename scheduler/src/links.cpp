// Link fits, their JSON and database entries, and the data-job model's links (see links.hpp).
#include "worksize/scheduler/links.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace worksize {

namespace {

void check_points(const std::vector<double>& bytes, const std::vector<double>& seconds) {
    if (bytes.size() != seconds.size())
        throw InvalidArgument("link fit: " + std::to_string(bytes.size()) + " sizes but " +
                              std::to_string(seconds.size()) + " times");
    for (std::size_t i = 0; i < bytes.size(); ++i)
        if (!(std::isfinite(bytes[i]) && bytes[i] > 0 && std::isfinite(seconds[i]) && seconds[i] > 0))
            throw InvalidArgument("link fit: point " + std::to_string(i) +
                                  " is not a positive size and time");
    if (std::set<double>(bytes.begin(), bytes.end()).size() < 2)
        throw InvalidArgument("link fit: needs at least two distinct sizes");
}

/// Residuals of `f` relative to the measured times.
void add_quality(LinkFit& f, const std::vector<double>& bytes, const std::vector<double>& seconds) {
    double sum = 0;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        const double rel = std::abs(f.time(bytes[i]) - seconds[i]) / seconds[i];
        sum += rel * rel;
        f.max_rel = std::max(f.max_rel, rel);
    }
    f.sizes = bytes.size();
    f.rms_rel = std::sqrt(sum / double(bytes.size()));
}

double number(const nlohmann::json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_number())
        throw InvalidArgument(std::string("link: missing or non-numeric '") + key + "'");
    const double v = j[key].get<double>();
    if (!std::isfinite(v) || v < 0)
        throw InvalidArgument(std::string("link: '") + key + "' is not a finite number >= 0");
    return v;
}

}  // namespace

LinkFit fit_link(const std::vector<double>& bytes, const std::vector<double>& seconds) {
    check_points(bytes, seconds);
    // Weighted least squares, weights 1/t²: minimise Σ ((a + b·x − t) / t)².
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        const double w = 1.0 / (seconds[i] * seconds[i]), x = bytes[i], y = seconds[i];
        sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
    }
    LinkFit f;
    const double det = sw * sxx - sx * sx;
    f.byte_s = (sw * sxy - sx * sy) / det;
    f.latency_s = (sy - f.byte_s * sx) / sw;
    if (f.latency_s < 0) {  // through the origin
        f.latency_s = 0;
        f.byte_s = sxy / sxx;
    }
    if (!(f.byte_s > 0)) {
        const auto big = std::max_element(bytes.begin(), bytes.end()) - bytes.begin();
        f.byte_s = seconds[std::size_t(big)] / bytes[std::size_t(big)];
    }
    add_quality(f, bytes, seconds);
    return f;
}

nlohmann::json to_json(const LinkFit& f) {
    return {{"latency_s", f.latency_s},
            {"byte_s", f.byte_s},
            {"rms_rel", f.rms_rel},
            {"max_rel", f.max_rel},
            {"sizes", f.sizes}};
}

LinkFit link_fit_from_json(const nlohmann::json& j) {
    LinkFit f;
    f.latency_s = number(j, "latency_s");
    f.byte_s = number(j, "byte_s");
    f.rms_rel = number(j, "rms_rel");
    f.max_rel = number(j, "max_rel");
    if (!j.contains("sizes") || !j["sizes"].is_number_unsigned())
        throw InvalidArgument("link: missing or non-integer 'sizes'");
    f.sizes = j["sizes"].get<std::size_t>();
    if (!(f.byte_s > 0)) throw InvalidArgument("link: 'byte_s' must be > 0");
    return f;
}

nlohmann::json to_json(const DeviceLink& l) {
    return {{"h2d", to_json(l.h2d)}, {"d2h", to_json(l.d2h)}};
}

DeviceLink device_link_from_json(const nlohmann::json& j) {
    if (!j.is_object() || !j.contains("h2d") || !j.contains("d2h"))
        throw InvalidArgument("link: a host-device link needs 'h2d' and 'd2h'");
    return {link_fit_from_json(j["h2d"]), link_fit_from_json(j["d2h"])};
}

StoreKey device_link_key(const DeviceFingerprint& device) {
    return {EntryKind::link, device, kHostDeviceLink, nlohmann::json::object(), ""};
}

StoreKey rank_link_key(const std::string& host_a, const std::string& host_b) {
    const auto [lo, hi] = std::minmax(host_a, host_b);
    return {EntryKind::link, DeviceFingerprint{}, kMpiLink, {{"hosts", {lo, hi}}}, ""};
}

void put_device_link(Store& store, const DeviceFingerprint& device, const DeviceLink& link,
                     const std::string& host, double timestamp) {
    store.put(device_link_key(device), to_json(link), timestamp, host);
}

void put_rank_link(Store& store, const std::string& host_a, const std::string& host_b, const LinkFit& fit,
                   double timestamp) {
    store.put(rank_link_key(host_a, host_b), to_json(fit), timestamp, host_a);
}

namespace {

template <class T, class Parse>
std::optional<T> find_link(const Store& store, const StoreKey& key, Parse parse,
                           std::vector<std::string>* warnings) {
    Store::Lookup l = store.find(key);
    std::optional<T> out;
    if (l.entry) {
        try {
            out = parse(l.entry->payload);
        } catch (const std::exception& e) {  // InvalidArgument, or nlohmann's for odd JSON
            l.warnings.push_back("ignoring unusable link entry " + entry_id(key) + ": " + e.what());
        }
    }
    if (warnings) warnings->insert(warnings->end(), l.warnings.begin(), l.warnings.end());
    return out;
}

}  // namespace

std::optional<DeviceLink> find_device_link(const Store& store, const DeviceFingerprint& device,
                                           std::vector<std::string>* warnings) {
    return find_link<DeviceLink>(store, device_link_key(device), device_link_from_json, warnings);
}

std::optional<LinkFit> find_rank_link(const Store& store, const std::string& host_a,
                                      const std::string& host_b, std::vector<std::string>* warnings) {
    return find_link<LinkFit>(store, rank_link_key(host_a, host_b), link_fit_from_json, warnings);
}

DataLinks data_links_from(const std::vector<DeviceLink>& devices, const std::vector<LinkFit>& mpi,
                          const DataLinks& defaults) {
    LinkCost copy = defaults.same_rank;
    LinkCost message{std::max(0.0, defaults.between_ranks.byte_s - defaults.same_rank.byte_s),
                     std::max(0.0, defaults.between_ranks.message_s - defaults.same_rank.message_s)};
    if (!devices.empty()) {
        copy = {};
        for (const auto& d : devices) {
            copy.byte_s = std::max(copy.byte_s, d.h2d.byte_s + d.d2h.byte_s);
            copy.message_s = std::max(copy.message_s, d.h2d.latency_s + d.d2h.latency_s);
        }
    }
    if (!mpi.empty()) {
        message = {};
        for (const auto& m : mpi) {
            message.byte_s = std::max(message.byte_s, m.byte_s);
            message.message_s = std::max(message.message_s, m.latency_s);
        }
    }
    return {copy, {copy.byte_s + message.byte_s, copy.message_s + message.message_s}};
}

}  // namespace worksize
