// Device selection: which of a rank's OpenCL devices it drives, from --select (auto, all, or
// RANK=DEVICE[+DEVICE..]) and --filter. Pure over the discovered devices and the rank's place in
// the job, so that every rank decides alone and no message is needed.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "worksize/runtime/comm.hpp"
#include "worksize/runtime/devices.hpp"

namespace worksize {

/// Which devices each rank drives.
struct DeviceSelection {
    /// "auto": one process drives all its devices; in a job of several ranks rank 0 is the
    ///   master only and the other ranks of a node take the node's devices round-robin by
    ///   node-local rank. "all": every rank drives all its devices. "R=I[+I..],R=...": rank R
    ///   drives device indices I (as `worksize devices --all` numbers them).
    std::string spec = "auto";
    /// Only devices whose platform, name or vendor contains this (case-insensitive).
    std::string filter;
    /// Rank 0 also drives devices in a job of several ranks (auto mode).
    bool master_works = false;
    /// auto mode: devices per worker rank (taken round-robin from the node's devices).
    int per_rank = 1;
    /// Rank 0 declares a worker lost when it has heard nothing from it for this long while
    /// waiting on it (workers send a heartbeat every second while they execute).
    double rank_timeout_s = 5.0;
};

/// Parse "R=SEL[+SEL..],R=..." into rank -> selectors; a selector is a device index or a word
/// matched against the device's platform, name, vendor and type (e.g. "gpu", "nvidia", "pthread").
/// @throws InvalidArgument for a malformed spec.
std::map<int, std::vector<std::string>> parse_select(const std::string& spec);

/// The devices of `all` (this rank's, as discovered) that rank comm.rank() drives under `sel`,
/// with their rank set. @throws InvalidArgument (malformed spec, a selector naming no device).
std::vector<LocalDevice> select_devices(std::vector<LocalDevice> all, const DeviceSelection& sel, const Comm& comm);

}  // namespace worksize
