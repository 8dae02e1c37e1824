// The links' costs, measured (`worksize calibrate --links`) and stored: host↔device copies of
// each device (per device fingerprint, as the models), and MPI messages between two hosts (per
// pair of host names; a host with itself is two ranks of one node), each fitted as
// latency + bytes · byte_s from the medians of a ladder of sizes; and the DataLinks of the
// data-job model (data_model.hpp) made from them. Pure (the runtime measures: runtime/links.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worksize/scheduler/data_model.hpp"
#include "worksize/scheduler/store.hpp"

namespace worksize {

/// One link's cost: latency_s + bytes · byte_s, and how well that line fits the medians.
struct LinkFit {
    double latency_s = 0.0;
    double byte_s = 0.0;
    double rms_rel = 0.0;   ///< RMS of (predicted − measured) / measured over the sizes
    double max_rel = 0.0;   ///< the largest |predicted − measured| / measured
    std::size_t sizes = 0;  ///< the sizes fitted
    double bandwidth() const { return byte_s > 0 ? 1.0 / byte_s : 0.0; }  ///< bytes per second
    double time(double bytes) const { return latency_s + bytes * byte_s; }
    bool valid() const { return byte_s > 0.0 && latency_s >= 0.0; }
};

/// The line through (bytes[i], seconds[i]) minimising the relative residuals (least squares
/// weighted by 1/seconds², so that the small sizes decide the latency and the large ones the
/// bandwidth). A negative latency is clamped to 0 (the slope refitted through the origin), a
/// slope that is not positive is replaced by the largest size's seconds per byte.
/// @throws InvalidArgument for fewer than two distinct sizes, sizes of different lengths, or a
/// time or size that is not a positive finite number.
LinkFit fit_link(const std::vector<double>& bytes, const std::vector<double>& seconds);

/// A device's copies from pinned host memory to it (h2d) and back (d2h).
struct DeviceLink {
    LinkFit h2d, d2h;
};

nlohmann::json to_json(const LinkFit& f);
/// @throws InvalidArgument naming the missing or malformed field.
LinkFit link_fit_from_json(const nlohmann::json& j);
nlohmann::json to_json(const DeviceLink& l);
DeviceLink device_link_from_json(const nlohmann::json& j);

/// The database keys: kind link, "host-device" for a device's fingerprint; "mpi" with params
/// {"hosts": [a, b]} (sorted) and an empty fingerprint for a pair of hosts.
inline constexpr const char* kHostDeviceLink = "host-device";
inline constexpr const char* kMpiLink = "mpi";
StoreKey device_link_key(const DeviceFingerprint& device);
StoreKey rank_link_key(const std::string& host_a, const std::string& host_b);

void put_device_link(Store& store, const DeviceFingerprint& device, const DeviceLink& link,
                     const std::string& host, double timestamp = unix_now());
void put_rank_link(Store& store, const std::string& host_a, const std::string& host_b, const LinkFit& fit,
                   double timestamp = unix_now());
/// The stored link, or nullopt; a payload that does not parse is reported in `warnings`.
std::optional<DeviceLink> find_device_link(const Store& store, const DeviceFingerprint& device,
                                           std::vector<std::string>* warnings = nullptr);
std::optional<LinkFit> find_rank_link(const Store& store, const std::string& host_a,
                                      const std::string& host_b,
                                      std::vector<std::string>* warnings = nullptr);

/// The data-job model's links from measured ones, as simulate.hpp charges them: same_rank is a
/// read from one device plus a write to another (the slowest device's d2h + h2d); between_ranks
/// adds the slowest MPI pair's one-way message. With no device link the defaults' same_rank is
/// kept (and its MPI part when no pair is given).
DataLinks data_links_from(const std::vector<DeviceLink>& devices, const std::vector<LinkFit>& mpi,
                          const DataLinks& defaults = {});

}  // namespace worksize
