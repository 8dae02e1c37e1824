// The persistent database of calibration models and tuning results: one JSON file (default
// $WORKSIZE_DB, else $XDG_CACHE_HOME/worksize/db.json, else ~/.cache/worksize/db.json) whose
// entries are keyed by what decides performance (a device fingerprint without the host, a
// kernel, its parameters and, for tuning, a global-size class), so that identical devices of
// several ranks or nodes share one entry; the host that measured it is kept as provenance
// (WORKSIZE_DB_PER_HOST=1 puts the host back into the key). Every entry carries an FNV-1a
// checksum, so that a damaged entry is detected and ignored; entries recorded under another
// driver are stale and never used; schema 1 files are migrated on load. Saving locks
// `<path>.lock`, re-reads the file, merges this process's new entries into it and replaces it
// atomically (temporary file + rename), so concurrent writers lose nothing; a damaged file is
// moved aside, never lost. Stores from several ranks are combined with `merge`.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "worksize/scheduler/model.hpp"
#include "worksize/scheduler/tuning.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize {

/// Version of the file layout. Schema 1 (the host in every key, no provenance) is migrated on
/// load; any other version is stale.
inline constexpr int kStoreSchemaVersion = 2;

/// What identifies a device across runs: what decides its performance. The driver version is
/// part of it (a model measured under another driver is stale). `host` is "" unless per-host
/// keys are on (per_host_keys()); `max_clock_mhz` 0 is "not recorded" (entries migrated from
/// schema 1) and matches any clock (fingerprint_matches).
struct DeviceFingerprint {
    std::string host;
    std::string platform;
    std::string name;
    std::string vendor;
    std::string driver_version;
    std::uint32_t compute_units = 0;
    std::uint64_t max_work_group_size = 0;
    std::uint32_t max_clock_mhz = 0;
    bool operator==(const DeviceFingerprint&) const = default;
};

/// Whether the host is part of database keys: $WORKSIZE_DB_PER_HOST is set to anything but
/// "", "0", "no", "false" or "off" (per-node entries, like StarPU's STARPU_HOSTNAME).
bool per_host_keys();
/// The device's key fingerprint: its host only with per_host_keys().
DeviceFingerprint fingerprint_of(const DeviceInfo& device);
/// Whether an entry recorded for `stored` applies to `device`: every field equal, except that a
/// clock of 0 (not recorded) on either side matches any clock.
bool fingerprint_matches(const DeviceFingerprint& stored, const DeviceFingerprint& device);
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

/// model: a kernel's cost model; tuning: its best local size; link: a link's cost (links.hpp:
/// a device's host↔device copies, or MPI between two hosts), combined like models.
enum class EntryKind { model, tuning, link };
const char* to_string(EntryKind k);

struct StoreKey {
    EntryKind kind = EntryKind::model;
    DeviceFingerprint device;
    std::string kernel;
    nlohmann::json params = nlohmann::json::object();  ///< kernel parameters (any JSON)
    std::string size_class;                            ///< tuning only ("" for models)
};

/// A short id of a key (8 hex digits of its checksum), as `worksize db list` shows it.
std::string entry_id(const StoreKey& key);

/// Another measurement of the same key that is not the one used (cost models: their samples are
/// not kept, so two models of identical devices cannot be refitted into one; the newer is used
/// and the others are kept here, newest first, at most kMaxAlternates).
struct StoreAlternate {
    std::string host;
    double timestamp = 0;
    nlohmann::json payload;
};
inline constexpr std::size_t kMaxAlternates = 8;

struct StoreEntry {
    StoreKey key;
    nlohmann::json payload;  ///< to_json(CostModel), to_json(TuningRecord) or a link's (links.hpp)
    double timestamp = 0;    ///< seconds since the Unix epoch when it was recorded
    /// Provenance (not part of the key): the host that measured the payload, and every host
    /// whose measurement of this key was merged into the entry (sorted, distinct).
    std::string host;
    std::vector<std::string> hosts;
    std::vector<StoreAlternate> alternates;  ///< models only (see StoreAlternate)
};

/// An entry as the file holds it (with its schema, provenance and checksum).
nlohmann::json to_json(const StoreEntry& e);

/// The two entries of one key (devices identical up to the clock) combined into one: tuning
/// keeps the record with the lower time per iteration (equal: the newer); a model keeps the
/// newer model and the other among the alternates. Hosts are pooled.
StoreEntry combine_entries(const StoreEntry& a, const StoreEntry& b);

/// What to do with a malformed file or a damaged entry when opening.
enum class CorruptPolicy {
    report_and_ignore,  ///< warn (warnings()), ignore it; saving moves the file aside first
    refuse,             ///< throw Error naming the file
};

/// $WORKSIZE_DB, else $XDG_CACHE_HOME/worksize/db.json, else $HOME/.cache/worksize/db.json.
/// @throws Error if none of the three variables is set.
std::string default_db_path();

/// $WORKSIZE_DB_LOCK_TIMEOUT in seconds (default 60): how long a save waits for the lock.
/// @throws InvalidArgument for a value that is not a finite number >= 0.
double database_lock_timeout_s();

/// What saving to `path` would refuse, checked before the work that ends in a save (tune,
/// calibrate): a path that is not valid UTF-8 (reports write it as JSON), a bad
/// $WORKSIZE_DB_LOCK_TIMEOUT, a `<path>.lock` that is not a regular file, and an existing file
/// that is not a worksize database (Store::foreign). @throws InvalidArgument naming the problem.
void check_database_path(const std::string& path);

/// Remove the `<path>.tmp-PID` files of saves whose process is gone (killed mid-save; a save
/// writes its temporary file under the lock, so none of a live save is touched). Returns the
/// names removed. save_as() calls it under the lock.
std::vector<std::string> remove_stale_temp_files(const std::string& path);

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

    /// Write to path() (creating directories), safe against other writers: take an exclusive
    /// lock on `<path>.lock` (fcntl; waiting at most $WORKSIZE_DB_LOCK_TIMEOUT seconds, default
    /// 60), re-read the file, merge into it the entries put, merged or removed since this store
    /// was opened or last saved (an entry another process wrote meanwhile is combined with ours,
    /// see combine_entries; one we had loaded is replaced), write a temporary file, rename it
    /// over the file and unlock; the store then holds what was written. If the file on disk is
    /// malformed or damaged, it is first copied to `<path>.corrupt-<UTC timestamp>` (a warning
    /// names the copy); a schema 1 file to `<path>.schema1` (once). Temporary files of killed
    /// saves are removed (remove_stale_temp_files). @throws InvalidArgument when the file is not
    /// a worksize database (foreign()); Error naming the file and the OS's reason on I/O failure,
    /// or when the lock is not had in time.
    void save();
    void save_as(const std::string& path);

    const std::string& path() const { return path_; }
    /// Why the file read is not a worksize database at all ("" when it is one, or damaged
    /// JSON of one): text that is not a JSON object, or an object with neither 'schema' nor
    /// 'entries'. save_as() refuses to overwrite such a file (InvalidArgument).
    const std::string& foreign() const { return foreign_; }
    /// Problems found when opening (damaged entries, stale schema, malformed file).
    const std::vector<std::string>& warnings() const { return warnings_; }
    const std::vector<StoreEntry>& entries() const { return entries_; }
    std::size_t size() const { return entries_.size(); }

    struct Lookup {
        std::optional<StoreEntry> entry;
        std::vector<std::string> warnings;  ///< e.g. "ignoring stale entry ..." for this key
        std::size_t examined = 0;  ///< entries whose key this lookup compared (its index bucket's)
    };
    /// The entry with exactly this key. A damaged entry or one recorded under another driver
    /// for the same device, kernel and parameters is reported and not returned. Constant time
    /// on average, whatever the number of entries (an index of them by key, driver and clock
    /// aside).
    Lookup find(const StoreKey& key) const;

    /// Insert or replace (an entry of the same device under another driver is replaced too). An
    /// entry of the same key that this store put or merged before (an identical device of this
    /// run, saved or not) is combined with the new one instead (combine_entries). `host`: the
    /// provenance (the host that measured it).
    void put(const StoreKey& key, nlohmann::json payload, double timestamp = unix_now(),
             const std::string& host = {});

    /// Remove the entries for which `pred` is true (saved like puts); returns how many.
    std::size_t remove_if(const std::function<bool(const StoreEntry&)>& pred);

    /// Typed helpers. `warnings` (optional) receives the lookup's messages; a payload that does
    /// not parse is reported there and treated as absent.
    std::optional<CostModel> find_model(const DeviceFingerprint& device, const std::string& kernel,
                                        const nlohmann::json& params,
                                        std::vector<std::string>* warnings = nullptr) const;
    /// The entry's model and then its alternates (newest first), the usable ones: calibrations
    /// of the same device from other hosts or other ranks (a GPU on rank 0 and one like it on
    /// rank 1 share a fingerprint, not their inputs' path).
    std::vector<CostModel> find_models(const DeviceFingerprint& device, const std::string& kernel,
                                       const nlohmann::json& params,
                                       std::vector<std::string>* warnings = nullptr) const;
    void put_model(const DeviceFingerprint& device, const std::string& kernel,
                   const nlohmann::json& params, const CostModel& model, double timestamp = unix_now(),
                   const std::string& host = {});
    std::optional<TuningRecord> find_tuning(const DeviceFingerprint& device, const std::string& kernel,
                                            const nlohmann::json& params, GlobalSize global,
                                            std::vector<std::string>* warnings = nullptr) const;
    void put_tuning(const DeviceFingerprint& device, const std::string& kernel,
                    const nlohmann::json& params, GlobalSize global, const TuningRecord& record,
                    double timestamp = unix_now(), const std::string& host = {});

    /// Take entries from `other` (e.g. gathered from other ranks). For one key the two are
    /// combined (combine_entries: a tuning entry with a lower best_s wins, equal: newer; the
    /// newer model wins and the other is kept as an alternate). Entries for the same device
    /// under different drivers: the newer one wins. Returns how many entries changed.
    std::size_t merge(const Store& other);

    /// How many schema 1 entries were migrated when this store was read.
    std::size_t migrated() const { return migrated_; }

private:
    static Store parse(const std::string& text, const std::string& origin, CorruptPolicy policy,
                       std::string path);
    void note(const std::string& warning, CorruptPolicy policy);

    /// Put `e` in: combined with a fresh entry of its key, else replacing any of its device.
    /// Returns false when nothing changed.
    bool absorb(const StoreEntry& e, bool combine_any);
    /// Rebuilds index_ from entries_ (after entries were erased or replaced wholesale).
    void reindex();

    std::string path_;
    std::vector<StoreEntry> entries_;
    /// entries_ by their key without the driver and the clock (the fields same_key may let
    /// differ), each bucket's positions ascending: find() and absorb() look at one bucket.
    std::unordered_map<std::string, std::vector<std::size_t>> index_;
    /// Keys (exact identity) put or merged since open/save, keys removed, and the (identity,
    /// timestamp) of each entry as it was read: what save() merges into the file on disk.
    /// mine_: every key this store put or merged (a later put of the key combines with it).
    std::vector<std::string> fresh_;
    std::vector<std::string> mine_;
    std::vector<std::string> removed_;
    std::vector<std::pair<std::string, double>> loaded_;
    std::size_t migrated_ = 0;
    bool schema1_on_disk_ = false;
    /// Identity (kind, device, kernel, params, size class) of damaged entries, and why.
    std::vector<std::pair<std::string, std::string>> corrupt_;
    std::vector<std::string> warnings_;
    bool backup_on_save_ = false;
    std::string foreign_;
};

}  // namespace worksize
