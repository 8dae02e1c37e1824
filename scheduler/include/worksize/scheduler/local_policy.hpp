// Local-size policies behind one interface, and their registry: null (the driver chooses),
// paper (the founding paper's rules) and tuned (the tuning database's entries, the paper's rule
// where none fits). The tuned policy reads a Store opened once per command and passed down as a
// TuningSource. Pure: no OpenCL, no MPI.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worksize/scheduler/planner.hpp"
#include "worksize/scheduler/store.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize {

/// Where `--local tuned` reads its entries: an opened Store, or none and why.
struct TuningSource {
    const Store* store = nullptr;          ///< null: no database (why_none says why)
    std::string why_none = "no database";
    /// Problems found when opening (damaged entries, unreadable file); every plan reports them.
    std::vector<std::string> warnings;
};

/// The source for an opened store ("none in <path>" when it has no entry; its warnings).
TuningSource tuning_source(const Store& store);
/// The source when the database could not be opened: "tuning database not used: <error>".
TuningSource tuning_source_unavailable(const std::string& error);

/// A command's database, opened on first use and then kept (CorruptPolicy::report_and_ignore),
/// so that every plan, calibration size and oracle step of the command reads the same Store.
class Database {
public:
    /// `path` "" means the default database (default_db_path(), resolved on first use).
    explicit Database(std::string path = {});
    /// @throws Error if it cannot be read (or no default path exists), as Store::open.
    Store& store();
    /// The resolved path. @throws Error as store().
    const std::string& path();
    /// The tuning view of the store, or of the error that kept it closed.
    const TuningSource& tuning();
    /// The store's warnings the first time they are asked for, then none (a command reports them
    /// once). @throws Error as store().
    std::vector<std::string> take_warnings();

private:
    void open();
    std::string arg_;
    bool tried_ = false;
    std::string path_;
    std::optional<Store> store_;
    std::string error_;
    TuningSource tuning_;
    bool warned_ = false;
};

class LocalSizePolicy {
public:
    virtual ~LocalSizePolicy() = default;
    virtual LocalPolicy id() const = 0;
    /// The name the command line takes and Plan::local_policy prints.
    virtual std::string name() const = 0;
    virtual std::string help() const = 0;
    /// The local size make_plan gives a device's (non-empty) slice, and the rule that gave it.
    virtual LocalSize local(const DeviceInfo& dev, GlobalSize slice, int dims, Priority priority,
                            std::string& rule) const = 0;
    /// The plan with this policy: make_plan, then (tuned) the database's entries from `tuning`
    /// for kernel parameters `params`. Warnings to `warnings`, or log::warn when null.
    virtual Plan plan(const std::vector<DeviceInfo>& devices, const PlanRequest& request, const TuningSource* tuning,
                      const nlohmann::json& params, std::vector<std::string>* warnings) const;
};

void register_local_policy(std::unique_ptr<LocalSizePolicy> policy);
/// @throws InvalidArgument "unknown local policy 'X' (valid: null, paper, tuned)".
const LocalSizePolicy& find_local_policy(const std::string& name);
const LocalSizePolicy& local_policy(LocalPolicy id);
std::vector<std::string> local_policy_names();
/// "null, paper, tuned".
std::string local_policy_names_text();
LocalPolicy parse_local_policy(const std::string& s);

/// The rule text of a paper local size kept by the tuned policy: "paper (no tuned entry): R"
/// without a reason, "paper (no tuned entry: WHY): R" with one.
std::string tuned_fallback_rule(const std::optional<std::string>& why, const std::string& paper_rule);

/// Replace each assignment's local size by the tuning database's entry for its device, kernel,
/// kernel parameters `params` and slice size class; an entry is used only if its local size
/// divides the slice's global size and fits the device. Without a usable entry of the slice's
/// own size class, the entry of the nearest size class of the same device, kernel and parameters
/// whose local size fits the slice is used (local_rule says so). Otherwise the paper's rule stays
/// and local_rule is tuned_fallback_rule(why, the paper rule). Database problems (damaged or
/// stale entries, unreadable file) are written to `warnings` (or log::warn when null), never used.
void apply_tuned_locals(Plan& plan, const std::vector<DeviceInfo>& devices, const TuningSource& tuning,
                        const nlohmann::json& params, std::vector<std::string>* warnings = nullptr);

/// make_plan for `--local tuned`, then apply_tuned_locals. Where a device's tuned local size (the
/// entry of its slice's size class, else of the nearest class) does not divide its slice, and
/// its y (2-D; x for 1-D) is at most 1/8 of the slice's rows (items), the split is made again
/// with that device's rows rounded to a multiple of it (PlanRequest::unit_multiples), so that the
/// tuned local size fits; such an assignment's note says so. Devices with a small share keep
/// theirs unaligned (rounding would move too much of it) and fall back as apply_tuned_locals says.
/// `request.local_policy` must be tuned. Warnings as apply_tuned_locals.
Plan plan_tuned(const std::vector<DeviceInfo>& devices, PlanRequest request, const TuningSource& tuning,
                const nlohmann::json& params, std::vector<std::string>* warnings = nullptr);

/// The plan for any local policy (its LocalSizePolicy::plan). `tuning` null under tuned: no database.
Plan plan_for(const std::vector<DeviceInfo>& devices, const PlanRequest& request, const TuningSource* tuning,
              const nlohmann::json& params, std::vector<std::string>* warnings = nullptr);

/// plan_for with explicit weights.
Plan plan_with_weights(const std::vector<DeviceInfo>& devices, PlanRequest request, std::vector<double> weights,
                       const TuningSource* tuning, const nlohmann::json& params);

}  // namespace worksize
