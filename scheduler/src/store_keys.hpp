// Internal: the identity, the messages' names and the JSON of the database's entries, shared by
// store.cpp (lookups, puts, merges) and store_io.cpp (reading and saving the file).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worksize/scheduler/store.hpp"

namespace worksize::detail {

/// Identity of a key; without the driver version when `with_driver` is false.
std::string identity(const StoreKey& k, bool with_driver);

/// "tuning entry for kernel 'K' {params} size class C on DEVICE", for messages.
std::string describe(const StoreKey& k);

/// Same kind, kernel, parameters and size class, and fingerprint_matches (driver aside when
/// `with_driver` is false).
bool same_key(const StoreKey& stored, const StoreKey& k, bool with_driver);

bool contains(const std::vector<std::string>& v, const std::string& s);

/// An entry as the file holds it (schema, provenance, alternates and checksum).
nlohmann::json entry_json(const StoreEntry& e);

}  // namespace worksize::detail
