// Device selection: which of a rank's OpenCL devices it drives, from --select (auto, all, or
// RANK=DEVICE[+DEVICE..]) and --filter. Pure over the discovered devices and the rank's place in
// the job, so that every rank decides alone and no message is needed.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "worksize/runtime/comm.hpp"
#include "worksize/runtime/devices.hpp"

namespace worksize {

/// Which devices each rank drives.
struct DeviceSelection {
    /// "auto": one process drives all its devices; in a job of several ranks each rank takes
    ///   one device of its node (--devices-per-rank: N) by node-local rank, the k-th rank the
    ///   k-th device, wrapping around when the node has more ranks than devices; rank 0 takes
    ///   none unless master_works. "all": every rank drives all its devices. "R=SEL[+SEL..],R=...":
    ///   rank R drives the devices SEL names (parse_select()).
    std::string spec = "auto";
    /// Only devices whose platform, name or vendor contains this (case-insensitive).
    std::string filter;
    /// Rank 0 also drives devices in a job of several ranks (auto mode): the first of its node.
    bool master_works = false;
    /// auto mode: devices per rank (taken in turn from the node's devices); RANK=WORD: how many
    /// devices one word may match (a word matching more is an error that lists them).
    int per_rank = 1;
    /// What rank 0 does when ranks of one host would drive one GPU or accelerator
    /// (shared_devices(), types.hpp; CPU devices are left to the oversubscription warning).
    enum class Shared {
        refuse,      ///< the job ends with one error naming the ranks and the device (exit 2)
        count_once,  ///< --allow-shared-device: a warning; only the lowest rank's instance takes part
        list,        ///< `worksize devices`: a warning; every instance is listed
    };
    Shared shared = Shared::refuse;
    /// Rank 0 declares a worker lost when it has heard nothing from it for this long while
    /// waiting on it (workers send a heartbeat every second while they execute).
    double rank_timeout_s = 5.0;
    /// --kernel-timeout: a slice whose kernels have not finished this many seconds per
    /// iteration after its execution began (its build and copies included) ends the command
    /// with ErrorReason::timed_out, naming the kernel and the device.
    double kernel_timeout_s = 60.0;
    /// --check-bounds, on every rank: guard zones around every device buffer of data and
    /// declared jobs (job files), checked after each launch (WORKSIZE_CHECK_BOUNDS=1 does the same).
    bool check_bounds = false;
};

/// Parse "R=SEL[+SEL..],R=..." into rank -> selectors. A selector is a device index (as
/// `worksize devices` numbers them on that rank), a word matched against the device's platform,
/// name, vendor and type (e.g. "gpu", "nvidia", "pthread"), or WORD:N, the N-th (from 0) of the
/// rank's devices that the word matches ("gpu:1": its second GPU).
/// @throws InvalidArgument for a malformed spec.
std::map<int, std::vector<std::string>> parse_select(const std::string& spec);

/// Where a rank stands in the job, as the auto mode needs it (Comm's rank, size and node).
struct RankPlace {
    int rank = 0;
    int size = 1;
    int node_rank = 0;            ///< among the ranks of its node (MPI_COMM_TYPE_SHARED)
    bool master_on_node = true;   ///< rank 0 is one of the node's ranks
};

/// Which of `devices` (one rank's, as discovered) that rank drives under `sel`: positions in
/// `devices`, in the order taken. Pure (no OpenCL, no messages).
/// @throws InvalidArgument (malformed spec; a selector naming no device, or a word matching more
/// devices than --devices-per-rank, with the rank's devices listed).
std::vector<std::size_t> select_positions(const std::vector<DeviceInfo>& devices, const DeviceSelection& sel,
                                          const RankPlace& place);

/// The devices of `all` (this rank's, as discovered) that rank comm.rank() drives under `sel`,
/// with their rank set (select_positions()).
std::vector<LocalDevice> select_devices(std::vector<LocalDevice> all, const DeviceSelection& sel, const Comm& comm);

}  // namespace worksize
