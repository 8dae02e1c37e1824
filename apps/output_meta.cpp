// The schema, version, host and date of every result the CLI writes.
#include "output_meta.hpp"

#include <ctime>

#include "worksize/runtime/devices.hpp"

namespace worksize::cli {

namespace {

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    char buf[32];
    if (!::gmtime_r(&t, &tm) || std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        return "unknown";
    return buf;
}

/// A CSV cell: quoted when it holds a comma, a quote or a line break.
std::string csv_cell(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) {
        if (c == '"') q += '"';
        q += c;
    }
    q += '"';
    return q;
}

}  // namespace

const char* tool_version() {
    return WORKSIZE_VERSION;
}

OutputMeta::OutputMeta(std::string schema)
    : schema_(std::move(schema)), host_(host_name()), date_(utc_now()) {}

nlohmann::json OutputMeta::stamp(nlohmann::json doc) const {
    doc["schema"] = schema_;
    doc["tool_version"] = tool_version();
    doc["host"] = host_;
    doc["date"] = date_;
    return doc;
}

std::string OutputMeta::csv_header() const {
    return ",schema,tool_version,host,date";
}

std::string OutputMeta::csv_cells() const {
    std::string s = ",";
    s.append(csv_cell(schema_)).append(",").append(csv_cell(tool_version())).append(",");
    s.append(csv_cell(host_)).append(",").append(csv_cell(date_));
    return s;
}

}  // namespace worksize::cli
