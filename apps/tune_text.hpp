// The text of `worksize tune`'s tables (tune_run.hpp): local sizes, times, ratios, heat maps,
// and the line that says where a tuning stopped.
#pragma once

#include <string>

#include "worksize/runtime/autotune.hpp"

namespace worksize::cli {

std::string local_str(const LocalSize& l);
/// The summary's "stored" column: "no", "yes" (the search's choice), or the baseline stored instead.
std::string stored_text(bool stored, const BaselineCheck& check);
std::string ms_or_dash(double s);
std::string ratio_str(double a, double b);
/// Rows y, columns x: the exhaustive sweep's times in ms ("-": not a candidate, "fail": failed).
std::string heatmap_table(const TuneReportRow& r);

}  // namespace worksize::cli
