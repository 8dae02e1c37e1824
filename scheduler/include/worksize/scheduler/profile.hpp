// Offline device profiles: a JSON file describing devices that are not present, so that plans
// can be made for hardware one does not have (e.g. docs/profiles/paper-2015.json).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "worksize/scheduler/types.hpp"

namespace worksize {

/// Parse a profile document. @throws InvalidArgument naming the field and device index.
std::vector<DeviceInfo> parse_profile(const std::string& json_text);

/// As above; `source` (e.g. the file name) opens every error message: "profile <source>: ...".
std::vector<DeviceInfo> parse_profile(const std::string& json_text, const std::string& source);

/// One device in the one device-JSON format: what `worksize devices --json` prints for each
/// device, what ranks send rank 0 in their inventory, and what parse_profile reads back.
nlohmann::json to_json(const DeviceInfo& d);

/// Read one device written by to_json (an inventory message): the profile reader's checks,
/// except that a live device's numbers may be 0 where its driver did not report them.
/// @throws InvalidArgument naming the field, opened by `context` when it is not empty.
DeviceInfo device_from_json(const nlohmann::json& j, const std::string& context = "");

/// Read and parse a profile file. @throws InvalidArgument (unreadable file, malformed JSON...).
std::vector<DeviceInfo> load_profile(const std::string& path);

}  // namespace worksize
