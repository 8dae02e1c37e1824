// Offline device profiles: a JSON file describing devices that are not present, so that plans
// can be made for hardware one does not have (e.g. docs/profiles/paper-2015.json).
#pragma once

#include <string>
#include <vector>

#include "worksize/scheduler/types.hpp"

namespace worksize {

/// Parse a profile document. @throws InvalidArgument naming the field and device index.
std::vector<DeviceInfo> parse_profile(const std::string& json_text);

/// As above; `source` (e.g. the file name) opens every error message: "profile <source>: ...".
std::vector<DeviceInfo> parse_profile(const std::string& json_text, const std::string& source);

/// Read and parse a profile file. @throws InvalidArgument (unreadable file, malformed JSON...).
std::vector<DeviceInfo> load_profile(const std::string& path);

}  // namespace worksize
