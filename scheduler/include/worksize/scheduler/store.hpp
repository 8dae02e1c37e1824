// The persistent database of calibration models and tuning results: one JSON file (default
// $WORKSIZE_DB, else $XDG_CACHE_HOME/worksize/db.json, else ~/.cache/worksize/db.json) whose
// entries are keyed by a device fingerprint, a kernel, its parameters and, for tuning, a
// global-size class. Every entry carries an FNV-1a checksum, so that a damaged entry is
// detected and ignored; entries recorded under another driver or schema are stale and never
// used. Saving is atomic (temporary file + rename); a damaged file is moved aside, never lost.
// Stores from several ranks are combined with `merge` (the runtime ships `dump()` text).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worksize/scheduler/model.hpp"
#include "worksize/scheduler/tuning.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize {

/// Version of the file layout; a file or entry with another version is stale.
inline constexpr int kStoreSchemaVersion = 1;

/// What identifies a device across runs. The driver version is part of it: a model measured
/// under another driver is stale.
struct DeviceFingerprint {
    std::string host;
    std::string platform;
    std::string name;
    std::string vendor;
    std::string driver_version;
    std::uint32_t compute_units = 0;
    std::uint64_t max_work_group_size = 0;
    bool operator==(const DeviceFingerprint&) const = default;
};

DeviceFingerprint fingerprint_of(const DeviceInfo& device);
nlohmann::json to_json(const DeviceFingerprint& f);
/// @throws InvalidArgument naming the missing or malformed field.
DeviceFingerprint fingerprint_from_json(const nlohmann::json& j);

/// Size class of a global size for tuning keys: floor(log2) of each dimension. Local sizes
/// tuned for one size are reused within its class.
struct SizeClass {
    int x_log2 = 0;
    int y_log2 = 0;
    /// The database key text, e.g. {10, 9} -> "x2^10.y2^9".
    std::string to_string() const;
    bool operator==(const SizeClass&) const = default;
};
SizeClass size_class_of(GlobalSize global);
/// The class of a key text written by SizeClass::to_string; nullopt for any other text.
std::optional<SizeClass> parse_size_class(const std::string& text);
/// size_class_of(global).to_string(), e.g. {1024, 768} -> "x2^10.y2^9".
std::string size_class(GlobalSize global);

/// `db_path`, or the default database path when it is "".
std::string resolve_db_path(const std::string& db_path);

enum class EntryKind { model, tuning };
const char* to_string(EntryKind k);

struct StoreKey {
    EntryKind kind = EntryKind::model;
    DeviceFingerprint device;
    std::string kernel;
    nlohmann::json params = nlohmann::json::object();  ///< kernel parameters (any JSON)
    std::string size_class;                            ///< tuning only ("" for models)
};

struct StoreEntry {
    StoreKey key;
    nlohmann::json payload;  ///< to_json(CostModel) or to_json(TuningRecord)
    double timestamp = 0;    ///< seconds since the Unix epoch when it was recorded
};

/// What to do with a malformed file or a damaged entry when opening.
enum class CorruptPolicy {
    report_and_ignore,  ///< warn (warnings()), ignore it; saving moves the file aside first
    refuse,             ///< throw Error naming the file
};

/// $WORKSIZE_DB, else $XDG_CACHE_HOME/worksize/db.json, else $HOME/.cache/worksize/db.json.
/// @throws Error if none of the three variables is set.
std::string default_db_path();

/// FNV-1a 64-bit hash of a string (the entries' checksum), as 16 hex digits.
std::string fnv1a64_hex(const std::string& text);

/// Seconds since the Unix epoch, now.
double unix_now();

class Store {
public:
    /// An empty store that will save to `path`.
    explicit Store(std::string path = {});

    /// Open `path`; a missing file gives an empty store.
    /// @throws Error naming the file if it cannot be read, or (policy refuse) is malformed or
    ///         holds a damaged or stale entry.
    static Store open(const std::string& path, CorruptPolicy policy = CorruptPolicy::report_and_ignore);

    /// Parse database text received from elsewhere (e.g. another rank); `origin` names it in
    /// messages. Same policy rules as open().
    static Store from_text(const std::string& text, const std::string& origin,
                           CorruptPolicy policy = CorruptPolicy::report_and_ignore);

    /// The database text (what save() writes).
    std::string dump() const;

    /// Write atomically to path() (creating directories). If the file on disk was found
    /// malformed, damaged or of another schema, it is first copied to
    /// `<path>.corrupt-<UTC timestamp>`. @throws Error naming the file on I/O failure.
    void save();
    void save_as(const std::string& path);

    const std::string& path() const { return path_; }
    /// Problems found when opening (damaged entries, stale schema, malformed file).
    const std::vector<std::string>& warnings() const { return warnings_; }
    const std::vector<StoreEntry>& entries() const { return entries_; }
    std::size_t size() const { return entries_.size(); }

    struct Lookup {
        std::optional<StoreEntry> entry;
        std::vector<std::string> warnings;  ///< e.g. "ignoring stale entry ..." for this key
    };
    /// The entry with exactly this key. A damaged entry or one recorded under another driver
    /// for the same device, kernel and parameters is reported and not returned.
    Lookup find(const StoreKey& key) const;

    /// Insert or replace (an entry of the same device under another driver is replaced too).
    void put(const StoreKey& key, nlohmann::json payload, double timestamp = unix_now());

    /// Typed helpers. `warnings` (optional) receives the lookup's messages; a payload that does
    /// not parse is reported there and treated as absent.
    std::optional<CostModel> find_model(const DeviceFingerprint& device, const std::string& kernel,
                                        const nlohmann::json& params,
                                        std::vector<std::string>* warnings = nullptr) const;
    void put_model(const DeviceFingerprint& device, const std::string& kernel,
                   const nlohmann::json& params, const CostModel& model, double timestamp = unix_now());
    std::optional<TuningRecord> find_tuning(const DeviceFingerprint& device, const std::string& kernel,
                                            const nlohmann::json& params, GlobalSize global,
                                            std::vector<std::string>* warnings = nullptr) const;
    void put_tuning(const DeviceFingerprint& device, const std::string& kernel,
                    const nlohmann::json& params, GlobalSize global, const TuningRecord& record,
                    double timestamp = unix_now());

    /// Take entries from `other` (e.g. gathered from other ranks). For one key: a model entry
    /// with a newer timestamp wins; a tuning entry with a lower best_s wins (equal: newer).
    /// Entries for the same device under different drivers: the newer one wins.
    /// Returns how many entries were taken from `other`.
    std::size_t merge(const Store& other);

private:
    static Store parse(const std::string& text, const std::string& origin, CorruptPolicy policy,
                       std::string path);
    void note(const std::string& warning, CorruptPolicy policy);

    std::string path_;
    std::vector<StoreEntry> entries_;
    /// Identity (kind, device, kernel, params, size class) of damaged entries, and why.
    std::vector<std::pair<std::string, std::string>> corrupt_;
    std::vector<std::string> warnings_;
    bool backup_on_save_ = false;
};

}  // namespace worksize
