// `worksize calibrate --links`: every rank times its selected devices' copies from pinned host
// memory and back, and MPI ping-pongs with rank 0 and with its next rank (the halo neighbours),
// over a ladder of sizes; the medians are fitted as latency + bytes / bandwidth (fit_link,
// scheduler/links.hpp) and stored in the database, where `--strategy model` of data jobs finds
// them (stored_data_links). docs/models.md, "Links".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "worksize/scheduler/links.hpp"
#include "worksize/scheduler/store.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize {

struct LinkOptions {
    std::uint64_t min_bytes = 4096;                     ///< the ladder's first size
    std::uint64_t max_bytes = std::uint64_t(64) << 20;  ///< its last (×4 a step)
    int repeats = 5;                                    ///< timed transfers per size (the median is fitted)
};

/// The sizes from min_bytes, ×4 a step, up to the smaller of max_bytes and `cap` (at least two).
std::vector<std::uint64_t> link_ladder(const LinkOptions& options, std::uint64_t cap);

struct MeasuredDeviceLink {
    int device = 0;  ///< index in Cluster::devices() (rank 0's order)
    DeviceLink link;
};

/// One MPI link: a one-way message (half the round trip) between ranks a < b.
struct MeasuredRankLink {
    int a = 0, b = 0;
    std::string host_a, host_b;
    LinkFit fit;
};

struct LinkCalibration {
    std::vector<MeasuredDeviceLink> devices;
    std::vector<MeasuredRankLink> ranks;
    double seconds = 0.0;
};

/// The pairs measured on `ranks` ranks: rank 0 with each other rank, then each rank r >= 1 with
/// r + 1; every rank walks them in this order.
std::vector<std::pair<int, int>> link_pairs(int ranks);

/// Rank 0: store every link measured (devices by fingerprint_of, ranks by their hosts).
void store_links(Store& store, const LinkCalibration& links, const std::vector<DeviceInfo>& devices);

/// The data-job model's links for `devices` (those a plan may use, in slice order): calibrated
/// when the store holds a host↔device link for each of them and an MPI link for each pair of
/// consecutive devices on different ranks; else the defaults, and `note` says what was missing.
struct StoredLinks {
    DataLinks links;
    bool calibrated = false;
    std::string note;  ///< "links: calibrated" or "links: defaults, ..."
};
StoredLinks stored_data_links(const Store& store, const std::vector<DeviceInfo>& devices);
/// The same from the database at `db_path` ("": the default); one that cannot be opened gives
/// the defaults, the note saying why.
StoredLinks stored_data_links(const std::string& db_path, const std::vector<DeviceInfo>& devices);

}  // namespace worksize
