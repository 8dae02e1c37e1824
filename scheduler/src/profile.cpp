// Offline device profiles: reads a JSON description of devices one does not have (e.g. the
// founding paper's three GPUs, docs/profiles/paper-2015.json) into DeviceInfo structs, with an
// error naming the device and the field for every malformed entry. The format is documented in
// docs/method.md ("Device profiles").
#include "worksize/scheduler/profile.hpp"

#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

namespace worksize {

namespace {

using nlohmann::json;

class DeviceReader {
public:
    DeviceReader(const std::string& prefix, std::size_t index, const json& obj)
        : prefix_(prefix), index_(index), obj_(obj) {}

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

    std::uint64_t positive(const json& v, const std::string& key, std::uint64_t max) const {
        if (!v.is_number_integer() || (v.is_number_integer() && !v.is_number_unsigned() &&
                                       v.get<std::int64_t>() <= 0))
            fail("field '" + key + "' must be a positive integer");
        const std::uint64_t u = v.get<std::uint64_t>();
        if (u == 0) fail("field '" + key + "' must be a positive integer");
        if (u > max) fail("field '" + key + "' is too large (" + std::to_string(u) + ")");
        return u;
    }

    std::uint64_t positive(const char* key, std::uint64_t max =
                                                std::numeric_limits<std::uint64_t>::max()) {
        const auto it = obj_.find(key);
        if (it == obj_.end()) fail(std::string("missing field '") + key + "'");
        return positive(*it, key, max);
    }

    bool has(const char* key) const { return obj_.contains(key); }
    const json& at(const char* key) const { return obj_.at(key); }
    void set_name(std::string n) { name_ = std::move(n); }

private:
    std::string prefix_;
    std::size_t index_;
    const json& obj_;
    std::string name_;
};

const std::set<std::string>& known_fields() {
    static const std::set<std::string> f{
        "name",          "vendor",           "type",           "compute_units",
        "pes_per_cu",    "max_clock_mhz",    "max_work_group_size", "max_work_item_sizes",
        "local_mem_bytes", "global_mem_bytes", "node",          "rank",
        "driver_version", "preferred_wg_multiple", "max_alloc_bytes", "comment"};
    return f;
}

DeviceInfo read_device(const std::string& prefix, std::size_t i, const json& obj) {
    DeviceReader r(prefix, i, obj);
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
    if (type == "gpu") d.type = DeviceType::gpu;
    else if (type == "cpu") d.type = DeviceType::cpu;
    else if (type == "accelerator") d.type = DeviceType::accelerator;
    else if (type == "other") d.type = DeviceType::other;
    else r.fail("field 'type' must be one of gpu, cpu, accelerator, other (got '" + type + "')");

    constexpr std::uint64_t u32 = std::numeric_limits<std::uint32_t>::max();
    d.compute_units = static_cast<std::uint32_t>(r.positive("compute_units", u32));
    d.pes_per_cu = static_cast<std::uint32_t>(r.positive("pes_per_cu", u32));
    d.pe_source = PeSource::profile;
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
    if (r.has("max_alloc_bytes")) d.max_alloc_bytes = r.positive("max_alloc_bytes");

    d.host = r.has("node") ? r.string("node", false, true) : "profile";
    d.platform = "profile";
    d.driver_version = r.string("driver_version", false);
    d.rank = static_cast<int>(i);
    if (r.has("rank")) {
        const json& v = r.at("rank");
        if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0) ||
            v.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<int>::max()))
            r.fail("field 'rank' must be a non-negative integer");
        d.rank = v.get<int>();
    }
    d.preferred_wg_multiple = d.type == DeviceType::gpu ? 32 : d.type == DeviceType::cpu ? 8 : 1;
    if (r.has("preferred_wg_multiple"))
        d.preferred_wg_multiple = r.positive("preferred_wg_multiple");
    return d;
}

}  // namespace

std::vector<DeviceInfo> parse_profile(const std::string& json_text) {
    return parse_profile(json_text, "");
}

std::vector<DeviceInfo> parse_profile(const std::string& json_text, const std::string& source) {
    const std::string prefix = source.empty() ? "profile: " : "profile " + source + ": ";
    json doc;
    try {
        doc = json::parse(json_text);
    } catch (const json::parse_error& e) {
        std::string what = e.what();
        if (const auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
        throw InvalidArgument(prefix + "malformed JSON at byte " + std::to_string(e.byte) + ": " +
                              what);
    }
    if (!doc.is_object() || !doc.contains("devices"))
        throw InvalidArgument(prefix + "missing \"devices\" array at the top level");
    const json& arr = doc.at("devices");
    if (!arr.is_array()) throw InvalidArgument(prefix + "\"devices\" must be an array");
    if (arr.empty()) throw InvalidArgument(prefix + "\"devices\" is empty");

    std::vector<DeviceInfo> out;
    std::map<int, int> per_rank;
    for (std::size_t i = 0; i < arr.size(); ++i) {
        DeviceInfo d = read_device(prefix, i, arr[i]);
        d.index = per_rank[d.rank]++;
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
