// The fuzz targets (targets.hpp): each parser, then what consumes its result the way the CLI
// does (a profile is planned over, a database is looked up, merged and saved, a job file is
// resolved at other sizes and planned), with round trips that must hold for whatever was
// accepted.
#include "targets.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_depth.hpp"  // scheduler/src: the readers' nesting limit
#include "worksize/scheduler/data_spec.hpp"
#include "worksize/scheduler/job_file.hpp"
#include "worksize/scheduler/links.hpp"
#include "worksize/scheduler/model.hpp"
#include "worksize/scheduler/planner.hpp"
#include "worksize/scheduler/profile.hpp"
#include "worksize/scheduler/store.hpp"
#include "worksize/scheduler/tuning.hpp"

namespace worksize::fuzz {

namespace {

using nlohmann::json;

std::string& job_dir_setting() {
    static std::string dir = WORKSIZE_FUZZ_JOB_DIR;
    return dir;
}

/// Three unequal devices, as a profile describes them, to plan the fuzzed job files over.
const std::vector<DeviceInfo>& reference_devices() {
    static const std::vector<DeviceInfo> devices = parse_profile(R"({"devices": [
      {"name": "gpu-a", "vendor": "v", "type": "gpu", "compute_units": 30, "pes_per_cu": 32,
       "max_clock_mhz": 1400, "max_work_group_size": 1024, "max_work_item_sizes": [1024, 1024, 64],
       "local_mem_bytes": 49152, "global_mem_bytes": 6000000000},
      {"name": "gpu-b", "vendor": "v", "type": "gpu", "compute_units": 5, "pes_per_cu": 128,
       "max_clock_mhz": 1100, "max_work_group_size": 256, "max_work_item_sizes": [256, 256, 256],
       "local_mem_bytes": 32768, "global_mem_bytes": 2000000000},
      {"name": "cpu", "vendor": "v", "type": "cpu", "compute_units": 3, "pes_per_cu": 8,
       "max_clock_mhz": 3000, "max_work_group_size": 4096, "max_work_item_sizes": [4096, 4096, 4096],
       "local_mem_bytes": 32768, "global_mem_bytes": 8000000000, "rank": 1}]})",
                                                                 "reference");
    return devices;
}

[[noreturn]] void broken(const std::string& what, const std::string& detail = {}) {
    std::string m = what;
    if (!detail.empty()) m.append(": ").append(detail);
    throw Broken(m);
}

/// A plan and its slices must add up: every unit of the split dimension given once.
void check_plan(const Plan& plan, const PlanRequest& r) {
    std::uint64_t units = 0;
    for (const auto& a : plan.assignments) units += a.units;
    const std::uint64_t want = r.kernel.dims == 2 ? r.global.y : r.global.x;
    if (units != want)
        broken("a plan's slices cover " + std::to_string(units) + " units of " + std::to_string(want));
}

// ---- profiles -----------------------------------------------------------------------------

bool run_profile(std::string_view input) {
    std::vector<DeviceInfo> devices;
    try {
        devices = parse_profile(std::string(input), "fuzz");
    } catch (const InvalidArgument&) {
        return false;
    }
    if (devices.empty()) broken("parse_profile accepted a profile without devices");
    // Every accepted device writes (devices --json) and reads back (inventory, profile) the same.
    json all = json::array();
    for (const auto& d : devices) {
        const json j = to_json(d);
        DeviceInfo back;
        try {
            back = device_from_json(j, "round trip");
        } catch (const InvalidArgument& e) {
            broken("device_from_json refuses what to_json wrote of an accepted device", e.what());
        }
        if (to_json(back) != j) broken("device round trip", j.dump() + " came back as " + to_json(back).dump());
        all.push_back(j);
    }
    std::vector<DeviceInfo> again;
    try {
        again = parse_profile(json{{"devices", all}}.dump(), "round trip");
    } catch (const InvalidArgument& e) {
        broken("parse_profile refuses the devices --json of what it accepted", e.what());
    }
    if (again.size() != devices.size()) broken("the profile round trip changed the device count");
    for (std::size_t i = 0; i < again.size(); ++i)
        if (to_json(again[i]) != all[i]) broken("profile round trip", all[i].dump() + " came back as " + to_json(again[i]).dump());

    // plan --profile: a 2-D and a 1-D kernel over the devices, under each simple strategy.
    for (const char* strategy : {"paper", "even", "pe-ratio"})
        for (int dims : {1, 2}) {
            PlanRequest r;
            r.kernel.name = "fuzz";
            r.kernel.dims = dims;
            r.kernel.ops_per_item = 100;
            r.kernel.bytes_in_per_item = 8;
            r.kernel.bytes_out_per_item = 4;
            r.global = dims == 2 ? GlobalSize{1024, 768} : GlobalSize{1000003, 1};
            r.strategy = strategy;
            try {
                check_plan(make_plan(devices, r), r);
            } catch (const InvalidArgument&) {
                // documented: a size no device can take
            }
        }
    return true;
}

// ---- the database -----------------------------------------------------------------------------

template <class T, class Parse>
void payload_round_trip(const json& payload, Parse parse, const char* what) {
    T value;
    try {
        value = parse(payload);
    } catch (const InvalidArgument&) {
        return;  // documented: the lookup reports it and treats the entry as absent
    }
    const json j = to_json(value);
    try {
        if (to_json(parse(j)) != j) broken(std::string(what) + " round trip", j.dump());
    } catch (const InvalidArgument& e) {
        broken(std::string(what) + ": what to_json wrote does not read back", e.what());
    }
}

bool store_once(const std::string& text) {
    // Reporting never throws: a bad file or entry becomes a warning.
    Store s = Store::from_text(text, "fuzz");
    // A schema 1 file is migrated with a note, not refused: that note is no corruption.
    const bool clean = std::all_of(s.warnings().begin(), s.warnings().end(), [](const std::string& w) {
        return w.find(" has schema 1 (keys by host): read ") != std::string::npos;
    });
    if (!clean) {  // (clean, the refuse policy reads the dump below)
        bool refused = false;
        try {
            (void)Store::from_text(text, "fuzz", CorruptPolicy::refuse);
        } catch (const Error&) {
            refused = true;
        }
        if (!refused) broken("the refuse policy accepts a database the report policy warns about");
    }

    // What was kept saves and reads back the same.
    const std::string dumped = s.dump();
    try {
        const Store back = Store::from_text(dumped, "dump", CorruptPolicy::refuse);
        if (back.dump() != dumped) broken("the database changes on a second dump");
    } catch (const Error& e) {
        broken("the dump of an opened database does not read back", e.what());
    }

    // (lookups and merges cost entries^2 identity dumps: on the first 16 entries only)
    std::size_t looked = 0;
    for (const auto& e : s.entries()) {
        if (++looked > 16) break;
        if (!s.find(e.key).entry) broken("find() misses an entry the database holds");
        if (e.key.kind == EntryKind::model)
            payload_round_trip<CostModel>(e.payload, [](const json& j) { return cost_model_from_json(j); }, "cost model");
        else if (e.key.kind == EntryKind::link && e.key.kernel == kHostDeviceLink)
            payload_round_trip<DeviceLink>(e.payload, [](const json& j) { return device_link_from_json(j); }, "device link");
        else if (e.key.kind == EntryKind::link)
            payload_round_trip<LinkFit>(e.payload, [](const json& j) { return link_fit_from_json(j); }, "rank link");
        else
            payload_round_trip<TuningRecord>(e.payload, [](const json& j) { return tuning_record_from_json(j); },
                                             "tuning record");
    }
    // Ranks' databases merged (into an empty one, and into itself).
    if (s.size() > 16) return clean;
    Store merged;
    if (merged.merge(s) > s.size()) broken("merge took more entries than there were");
    Store self = s;
    (void)self.merge(s);
    return clean;
}

bool run_store(std::string_view input) {
    const std::string text(input);
    if (store_once(text)) return true;
    // Nearly every mutation of an entry breaks its checksum, which hides the fields behind it:
    // once more with every entry's checksum made right, so that the fields and payloads are read.
    // (copying and dumping recurse: only within the depth the readers accept)
    if (json_nesting(text) > kMaxJsonDepth) return false;
    json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_object() && doc.contains("entries") && doc["entries"].is_array()) {
        for (auto& e : doc["entries"])
            if (e.is_object()) {
                e.erase("checksum");
                e["checksum"] = "fnv1a64:" + fnv1a64_hex(e.dump());
            }
        const std::string sealed = doc.dump(1);
        if (sealed != text) return store_once(sealed);
    }
    return false;
}

// ---- job files ----------------------------------------------------------------------------

void plan_job(const DataJobSpec& spec) {
    PlanRequest r = data_plan_request(spec);
    Plan plan;
    try {
        plan = make_plan(reference_devices(), r);
    } catch (const InvalidArgument&) {
        return;
    }
    check_plan(plan, r);
    std::vector<Assignment> slices = plan.assignments;
    align_slices(spec, slices);
    try {
        check_slices(spec, slices);
    } catch (const InvalidArgument&) {
        return;  // documented: a halo deeper than a slice, a work-group that does not fit
    }
    (void)data_layout(spec, slices);
}

/// Whether `v` converts to type `t` without undefined behaviour (what the runtime does with
/// scalar arguments and buffer inits).
bool converts(ElemType t, double v) {
    switch (t) {
        case ElemType::f32: return std::abs(v) <= double(std::numeric_limits<float>::max());
        case ElemType::f64: return std::isfinite(v);
        case ElemType::i32: return v > double(INT32_MIN) - 1 && v < double(INT32_MAX) + 1;
        case ElemType::u32: return v > -1 && v < double(UINT32_MAX) + 1;
        case ElemType::i64: return v >= -0x1p63 && v < 0x1p63;
    }
    return false;
}

bool run_job_file(std::string_view input) {
    JobFile f;
    try {
        f = parse_job_file(std::string(input), "fuzz.json", job_dir());
    } catch (const InvalidArgument&) {
        return false;
    }
    // Accepted at its own size: resolves again the same, and its JSON form reads back.
    DataJobSpec again;
    try {
        again = f.spec_for(f.size());
    } catch (const InvalidArgument& e) {
        broken("an accepted job file does not resolve at its own size", e.what());
    }
    const json j = to_json(f.spec);
    if (to_json(again) != j) broken("spec_for(size()) differs from the job file's declaration");
    try {
        if (to_json(data_job_from_json(j)) != j) broken("data-job JSON round trip", j.dump());
    } catch (const InvalidArgument& e) {
        broken("data_job_from_json refuses what to_json wrote of an accepted job file", e.what());
    }
    // Every number it kept converts to its type without undefined behaviour.
    for (const auto& k : f.spec.kernels)
        for (const auto& a : k.args)
            if (a.kind == ArgKind::scalar && !converts(a.scalar_type, a.value))
                broken("accepted a scalar argument " + json(a.value).dump() + " for a " + to_string(a.scalar_type));
    for (std::size_t b = 0; b < f.init.size() && b < f.spec.buffers.size(); ++b) {
        const BufferInit& in = f.init[b];
        const ElemType t = f.spec.buffers[b].type;
        if ((in.kind == BufferInit::Kind::constant && !converts(t, in.value)) ||
            (in.kind == BufferInit::Kind::random && (!converts(t, in.lo) || !converts(t, in.hi))))
            broken("accepted an init of buffer '" + f.spec.buffers[b].name + "' out of the range of " + to_string(t));
    }
    for (std::size_t b = 0; b < f.spec.buffers.size(); ++b) (void)halo_rows(f.spec, int(b));
    (void)common_required_local(f.spec);
    plan_job(f.spec);
    // --size: other problem sizes may be refused, with InvalidArgument only.
    for (const GlobalSize g : {GlobalSize{1, 1}, GlobalSize{17, 3}, GlobalSize{4096, 4096},
                               GlobalSize{std::uint64_t(1) << 40, std::uint64_t(1) << 33}}) {
        try {
            plan_job(f.spec_for(g));
        } catch (const InvalidArgument&) {
        }
    }
    return true;
}

}  // namespace

const char* to_string(Parser p) {
    switch (p) {
        case Parser::profile: return "profile";
        case Parser::store: return "store";
        case Parser::job_file: return "job_file";
    }
    return "?";
}

bool parse_parser(std::string_view name, Parser* out) {
    for (const Parser p : kParsers)
        if (name == to_string(p)) {
            *out = p;
            return true;
        }
    return false;
}

void set_job_dir(std::string dir) { job_dir_setting() = std::move(dir); }
const std::string& job_dir() { return job_dir_setting(); }

bool run_one(Parser p, std::string_view input) {
    switch (p) {
        case Parser::profile: return run_profile(input);
        case Parser::store: return run_store(input);
        case Parser::job_file: return run_job_file(input);
    }
    return false;
}

}  // namespace worksize::fuzz
