// What every result document and CSV the CLI writes carries besides its data: the schema it
// follows, the tool's version, the host that wrote it and when (docs/user-guide.md, "Output
// schemas"). One helper for every command.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace worksize::cli {

/// Schema names, "worksize.KIND/N": N goes up whenever a field changes meaning or goes away.
namespace schema {
// JSON documents: devices --json, plan --json, run --json, run --paper-experiment --json,
// calibrate --json, calibrate --links --json, tune --report --json.
inline constexpr const char* devices = "worksize.devices/1";
inline constexpr const char* plan = "worksize.plan/1";
inline constexpr const char* run = "worksize.run/1";
inline constexpr const char* paper_experiment = "worksize.paper-experiment/1";
inline constexpr const char* calibrate = "worksize.calibrate/1";
inline constexpr const char* calibrate_links = "worksize.calibrate-links/1";
inline constexpr const char* tune_report = "worksize.tune-report/1";
// CSV files: calibrate --runs-csv, tune --heatmap-csv, bench --csv, its --sweep file, --phases-csv.
inline constexpr const char* calibrate_runs = "worksize.calibrate-runs/1";
inline constexpr const char* tune_heatmap = "worksize.tune-heatmap/1";
inline constexpr const char* bench = "worksize.bench/1";
inline constexpr const char* bench_sweep = "worksize.bench-sweep/1";
inline constexpr const char* bench_phases = "worksize.bench-phases/1";
}  // namespace schema

/// The version of this build: CMake's project version (WORKSIZE_VERSION).
const char* tool_version();

/// Who wrote a result and when, taken once at construction: this host's name and the time in
/// UTC, ISO 8601 to the second ("2026-11-22T14:03:07Z").
class OutputMeta {
public:
    explicit OutputMeta(std::string schema);
    /// `doc` with the top-level fields schema, tool_version, host and date added.
    nlohmann::json stamp(nlohmann::json doc) const;
    /// CSV: what a header line ends with (",schema,tool_version,host,date") and what each row
    /// ends with (the values, in that order): the columns come last, after the existing ones.
    std::string csv_header() const;
    std::string csv_cells() const;

private:
    std::string schema_, host_, date_;
};

}  // namespace worksize::cli
