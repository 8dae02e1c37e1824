// Offline device profiles and the one device-JSON format: reads a JSON description of devices one
// does not have (e.g. the founding paper's three GPUs, docs/profiles/paper-2015.json) or what
// `worksize devices --json` wrote into DeviceInfo structs, with an error naming the device and the
// field for every malformed entry; to_json() writes a device in the same format (devices --json
// and the ranks' inventory messages both use it). The format is documented in docs/method.md
// ("Device profiles").
#include "worksize/scheduler/profile.hpp"

#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "json_depth.hpp"

namespace worksize {

namespace {

using nlohmann::json;

class DeviceReader {
public:
    DeviceReader(const std::string& prefix, std::size_t index, const json& obj, bool allow_zero)
        : prefix_(prefix), index_(index), obj_(obj), allow_zero_(allow_zero) {}

    [[noreturn]] void fail(const std::string& what) const {
        std::string who = "device " + std::to_string(index_);
        if (!name_.empty()) who += " ('" + name_ + "')";
        throw InvalidArgument(prefix_ + who + ": " + what);
    }

    std::string string(const char* key, bool required, bool non_empty = false) {
        const auto it = obj_.find(key);
        if (it == obj_.end()) {
            if (required) fail(std::string("missing field '") + key + "'");
            return {};
        }
        if (!it->is_string()) fail(std::string("field '") + key + "' must be a string");
        std::string v = it->get<std::string>();
        if (non_empty && v.empty()) fail(std::string("field '") + key + "' must not be empty");
        return v;
    }

    std::uint64_t positive(const json& v, const std::string& key, std::uint64_t max,
                           bool zero_ok = false) const {
        zero_ok = zero_ok || allow_zero_;
        const char* want = zero_ok ? "a non-negative integer" : "a positive integer";
        if (!v.is_number_integer() || (v.is_number_integer() && !v.is_number_unsigned() &&
                                       v.get<std::int64_t>() < (zero_ok ? 0 : 1)))
            fail("field '" + key + "' must be " + want);
        const std::uint64_t u = v.get<std::uint64_t>();
        if (u == 0 && !zero_ok) fail("field '" + key + "' must be " + want);
        if (u > max) fail("field '" + key + "' is too large (" + std::to_string(u) + ")");
        return u;
    }

    std::uint64_t positive(const char* key, std::uint64_t max =
                                                std::numeric_limits<std::uint64_t>::max(),
                           bool zero_ok = false) {
        const auto it = obj_.find(key);
        if (it == obj_.end()) fail(std::string("missing field '") + key + "'");
        return positive(*it, key, max, zero_ok);
    }

    /// An optional non-negative integer field that fits an int (rank, index).
    int small_index(const char* key, int fallback) const {
        const auto it = obj_.find(key);
        if (it == obj_.end()) return fallback;
        const json& v = *it;
        if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0) ||
            v.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<int>::max()))
            fail(std::string("field '") + key + "' must be a non-negative integer");
        return v.get<int>();
    }

    bool has(const char* key) const { return obj_.contains(key); }
    const json& at(const char* key) const { return obj_.at(key); }
    void set_name(std::string n) { name_ = std::move(n); }

private:
    std::string prefix_;
    std::size_t index_;
    const json& obj_;
    bool allow_zero_;
    std::string name_;
};

const std::set<std::string>& known_fields() {
    static const std::set<std::string> f{
        "name",          "vendor",           "type",           "compute_units",
        "pes_per_cu",    "max_clock_mhz",    "max_work_group_size", "max_work_item_sizes",
        "local_mem_bytes", "global_mem_bytes", "node",          "rank",
        "driver_version", "preferred_wg_multiple", "max_alloc_bytes", "comment",
        // what `worksize devices --json` (to_json) writes besides
        "host",          "index",            "platform",       "pes_per_cu_source",
        "total_pes",     "pci_bus_id"};
    return f;
}

DeviceType parse_type(const std::string& s, bool* ok) {
    *ok = true;
    for (auto t : {DeviceType::gpu, DeviceType::cpu, DeviceType::accelerator, DeviceType::other})
        if (s == to_string(t)) return t;
    *ok = false;
    return DeviceType::other;
}

/// `allow_zero`: a live device's numbers (an inventory message) may be 0 where the driver did
/// not report them; a profile's must be positive.
DeviceInfo read_device(const std::string& prefix, std::size_t i, const json& obj, bool allow_zero) {
    DeviceReader r(prefix, i, obj, allow_zero);
    if (!obj.is_object()) r.fail("must be a JSON object");
    DeviceInfo d;
    d.name = r.string("name", true, true);
    r.set_name(d.name);
    for (const auto& [key, value] : obj.items()) {
        (void)value;
        if (!known_fields().count(key) && (key.empty() || key[0] != '_'))
            r.fail("unknown field '" + key + "'");
    }
    d.vendor = r.string("vendor", true);
    const std::string type = r.string("type", true);
    bool type_ok = false;
    d.type = parse_type(type, &type_ok);
    if (!type_ok) r.fail("field 'type' must be one of gpu, cpu, accelerator, other (got '" + type + "')");

    constexpr std::uint64_t u32 = std::numeric_limits<std::uint32_t>::max();
    d.compute_units = static_cast<std::uint32_t>(r.positive("compute_units", u32));
    d.pes_per_cu = static_cast<std::uint32_t>(r.positive("pes_per_cu", u32));
    d.pe_source = PeSource::profile;
    if (r.has("pes_per_cu_source")) {
        const std::string src = r.string("pes_per_cu_source", true);
        bool found = false;
        for (auto p : {PeSource::nv_compute_capability, PeSource::amd_attribute, PeSource::cpu_vector_width,
                       PeSource::preferred_multiple, PeSource::profile})
            if (src == to_string(p)) {
                d.pe_source = p;
                found = true;
            }
        if (!found) r.fail("field 'pes_per_cu_source' names no known rule ('" + src + "')");
    }
    if (r.has("total_pes") &&
        r.positive(r.at("total_pes"), "total_pes", std::numeric_limits<std::uint64_t>::max(), true) != d.total_pes())
        r.fail("field 'total_pes' is not compute_units x pes_per_cu (" + std::to_string(d.total_pes()) + ")");
    d.max_clock_mhz = static_cast<std::uint32_t>(r.positive("max_clock_mhz", u32));
    d.max_work_group_size = r.positive("max_work_group_size");
    if (!r.has("max_work_item_sizes")) r.fail("missing field 'max_work_item_sizes'");
    const json& items = r.at("max_work_item_sizes");
    if (!items.is_array() || items.empty() || items.size() > 3)
        r.fail("field 'max_work_item_sizes' must be an array of 1 to 3 positive integers");
    d.max_work_item_sizes = {1, 1, 1};
    for (std::size_t j = 0; j < items.size(); ++j)
        d.max_work_item_sizes[j] =
            r.positive(items[j], "max_work_item_sizes[" + std::to_string(j) + "]",
                       std::numeric_limits<std::uint64_t>::max());
    d.local_mem_bytes = r.positive("local_mem_bytes");
    d.global_mem_bytes = r.positive("global_mem_bytes");
    // 0: unknown (as devices --json writes it for a driver that does not say)
    if (r.has("max_alloc_bytes"))
        d.max_alloc_bytes = r.positive("max_alloc_bytes", std::numeric_limits<std::uint64_t>::max(), true);

    // "host" as devices --json writes it, "node" as profiles name it
    if (r.has("host") && r.has("node")) r.fail("fields 'host' and 'node' name the same thing: give one");
    d.host = r.has("host") ? r.string("host", false, true) : r.has("node") ? r.string("node", false, true) : "profile";
    d.platform = r.has("platform") ? r.string("platform", false) : "profile";
    d.driver_version = r.string("driver_version", false);
    d.pci_bus_id = r.string("pci_bus_id", false);
    d.rank = r.small_index("rank", static_cast<int>(i));
    d.index = r.small_index("index", -1);
    d.preferred_wg_multiple = d.type == DeviceType::gpu ? 32 : d.type == DeviceType::cpu ? 8 : 1;
    if (r.has("preferred_wg_multiple"))
        d.preferred_wg_multiple = r.positive("preferred_wg_multiple");
    return d;
}

}  // namespace

json to_json(const DeviceInfo& d) {
    return {{"rank", d.rank},
            {"index", d.index},
            {"host", d.host},
            {"platform", d.platform},
            {"name", d.name},
            {"vendor", d.vendor},
            {"driver_version", d.driver_version},
            {"type", to_string(d.type)},
            {"compute_units", d.compute_units},
            {"pes_per_cu", d.pes_per_cu},
            {"pes_per_cu_source", to_string(d.pe_source)},
            {"total_pes", d.total_pes()},
            {"max_clock_mhz", d.max_clock_mhz},
            {"max_work_group_size", d.max_work_group_size},
            {"max_work_item_sizes", d.max_work_item_sizes},
            {"local_mem_bytes", d.local_mem_bytes},
            {"global_mem_bytes", d.global_mem_bytes},
            {"max_alloc_bytes", d.max_alloc_bytes},
            {"preferred_wg_multiple", d.preferred_wg_multiple},
            {"pci_bus_id", d.pci_bus_id}};
}

DeviceInfo device_from_json(const json& j, const std::string& context) {
    // read_device names the device by its position: here its index on its rank
    const std::size_t position = j.is_object() && j.contains("index") && j.at("index").is_number_unsigned()
                                     ? j.at("index").get<std::size_t>()
                                     : 0;
    DeviceInfo d = read_device(context.empty() ? "" : context + ": ", position, j, true);
    if (d.index < 0) d.index = 0;
    return d;
}

std::vector<DeviceInfo> parse_profile(const std::string& json_text) {
    return parse_profile(json_text, "");
}

std::vector<DeviceInfo> parse_profile(const std::string& json_text, const std::string& source) {
    const std::string prefix = source.empty() ? "profile: " : "profile " + source + ": ";
    if (const std::string deep = json_depth_problem(json_text); !deep.empty())
        throw InvalidArgument(prefix + "malformed JSON: " + deep);
    json doc;
    try {
        doc = json::parse(json_text);
    } catch (const json::parse_error& e) {
        std::string what = e.what();
        if (const auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
        throw InvalidArgument(prefix + "malformed JSON at byte " + std::to_string(e.byte) + ": " +
                              what);
    } catch (const json::exception& e) {
        // not a parse_error: a number out of range, e.g. 1e400
        std::string what = e.what();
        if (const auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
        throw InvalidArgument(prefix + "malformed JSON: " + what);
    }
    if (!doc.is_object() || !doc.contains("devices"))
        throw InvalidArgument(prefix + "missing \"devices\" array at the top level");
    const json& arr = doc.at("devices");
    if (!arr.is_array()) throw InvalidArgument(prefix + "\"devices\" must be an array");
    if (arr.empty()) throw InvalidArgument(prefix + "\"devices\" is empty");

    std::vector<DeviceInfo> out;
    std::map<int, int> per_rank;
    std::set<std::pair<int, int>> seen;
    for (std::size_t i = 0; i < arr.size(); ++i) {
        DeviceInfo d = read_device(prefix, i, arr[i], false);
        // A given index (devices --json writes the rank's own numbering) is kept; else the
        // device's position among its rank's devices in the file.
        const int position = per_rank[d.rank]++;
        if (d.index < 0) d.index = position;
        if (!seen.insert({d.rank, d.index}).second)
            throw InvalidArgument(prefix + "device " + std::to_string(i) + " ('" + d.name + "'): rank " +
                                  std::to_string(d.rank) + " has two devices of index " + std::to_string(d.index));
        out.push_back(std::move(d));
    }
    return out;
}

std::vector<DeviceInfo> load_profile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InvalidArgument("profile " + path + ": cannot open the file for reading");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw InvalidArgument("profile " + path + ": read error");
    return parse_profile(ss.str(), path);
}

}  // namespace worksize
