// The wire format between ranks: message tags, the inventory message every rank sends rank 0
// when the cluster starts (its devices in the one device-JSON format of profile.hpp, or its
// failure), and the failure part of any reply ({"error": text, "reason": name}), through which
// an Error's reason crosses ranks intact.
#pragma once

#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "worksize/runtime/kernel_job.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize {

/// Inventory message version: rank 0 refuses a message of another version, so that builds whose
/// messages differ are not mixed in one job (2: a data job's gathers start with a status word).
inline constexpr int kInventoryVersion = 2;

namespace wire {

/// Tags: rank 0's commands; the slice inputs of a "run" command (per task a header
/// {"ok":true} followed by the input bytes, or {"ok":false,"error",...} and nothing else); the
/// workers' replies.
inline constexpr int kCmd = 11, kPayload = 12, kResult = 13;
/// Data jobs (data_job.hpp): rank 0's scatter and the gathers; halo rows between neighbours;
/// reduction totals along the slices.
inline constexpr int kData = 14, kHalo = 15, kReduce = 16;
/// A worker's sign of life ({} every second while it executes a run command's tasks, or a data
/// job's setup, steps and waits), so that rank 0 does not take a long kernel for a lost rank.
inline constexpr int kHeartbeat = 17;
/// Data jobs: a worker whose neighbour stopped answering tells rank 0 ({"lost": rank, "error"})
/// and leaves the job; rank 0 ends it, naming that neighbour.
inline constexpr int kLost = 18;
/// Data jobs: a rank's sign of life for its neighbours ({} every Comm::heartbeat() seconds while
/// it steps, waits on its devices or on them), so that a neighbour whose step is slow is not
/// taken for lost (Comm::set_alive_tag: a patient wait on a rank counts from its last one).
inline constexpr int kAlive = 19;
/// `calibrate --links` (links.hpp): the ping-pong messages between two ranks, and each worker's
/// measurements for rank 0 ({"ok", "devices", "ranks"} or its failure).
inline constexpr int kLinks = 20;

/// A failure as the wire carries it.
struct Failure {
    std::string message;
    ErrorReason reason = ErrorReason::generic;
    bool empty() const { return message.empty(); }
    /// Throws it (InvalidArgument for bad_input, else Error with its reason), opened by `prefix`.
    [[noreturn]] void raise(const std::string& prefix = "") const;
};

Failure failure_of(const std::exception& e);
/// {"error": message, "reason": name} merged into `into`.
void put_failure(nlohmann::json& into, const Failure& f);
/// The failure of a message written by put_failure (a missing reason reads as generic).
Failure failure_from_json(const nlohmann::json& j);

/// A slice's verdict on the wire (rank-local inputs: checked on its rank).
nlohmann::json verdict_to_json(const Verdict& v);
Verdict verdict_from_json(const nlohmann::json& j);

/// The inventory message of `rank`: its host, the host's hardware threads (`cores`, 0:
/// unknown; optional on the wire, for the oversubscription warning) and its devices.
nlohmann::json inventory_message(int rank, const std::string& host, const std::vector<DeviceInfo>& devices,
                                 unsigned cores = 0);
/// The inventory message of a rank that failed to discover or select its devices.
nlohmann::json inventory_failure(int rank, const std::string& host, const Failure& failure);

struct Inventory {
    std::string host;
    unsigned cores = 0;  ///< 0: not reported
    std::vector<DeviceInfo> devices;
};

/// Read rank `rank`'s inventory message. @throws Error (with the rank's own reason for a rank
/// that reported a failure) for a message of another version, another rank, or a failure;
/// "malformed inventory message: ..." for one that cannot be read.
Inventory parse_inventory(const std::string& text, int rank);

}  // namespace wire
}  // namespace worksize
