// `worksize tune` on rank 0 (tune_run.hpp): the other ranks' databases merged into rank 0's,
// and the results: the heat-map CSV, the JSON document or the text tables and report.
#include <cmath>
#include <iostream>
#include <sstream>

#include "output_meta.hpp"
#include "tune_run.hpp"
#include "tune_text.hpp"
#include "worksize/scheduler/log.hpp"

namespace worksize::cli {

// Entries that other ranks keep in their own databases (e.g. from single-node runs on
// their nodes) join rank 0's: rank 0 is the merge point.
std::size_t TuneRun::merge_rank_dbs() {
    std::size_t merged = 0;
    const auto texts = c_.collect("tuning-db");
    for (std::size_t r = 1; r < texts.size(); ++r) {
        if (texts[r].empty()) continue;
        const Store other = Store::from_text(texts[r], "rank " + std::to_string(r) + "'s database");
        for (const auto& w : other.warnings()) log::warn(w);
        merged += store_.merge(other);
    }
    if (merged > 0) store_.save();
    return merged;
}

void TuneRun::write_heatmap_csv() const {
    std::ostringstream f;
    // One row per candidate (NaN: failed; a shape that was no candidate has no row).
    // marks: which of the report's choices this cell is (tuned+best+paper); null_ms: NULL's
    // time on that kernel and device, the same on each of its rows (docs/plot_heatmap.sh).
    auto ms = [](double s) { return std::isfinite(s) ? num(s * 1e3) : std::string("NaN"); };
    const OutputMeta meta(schema::tune_heatmap);
    f << "kernel,device,device_name,x,y,ms,marks,null_ms" << meta.csv_header() << '\n';
    for (const auto& r : rows_)
        for (const auto& [l, s] : r.heatmap) {
            std::string marks;
            for (const auto& [local, name] : {std::pair{r.tuned_local, "tuned"}, {r.best_local, "best"},
                                              {r.paper_local, "paper"}})
                if (l == local) {
                    if (!marks.empty()) marks += '+';
                    marks += name;
                }
            f << r.kernel << ',' << r.device << ",\"" << r.device_name << "\"," << l.x << ',' << l.y << ','
              << ms(s) << ',' << marks << ',' << ms(r.null_s) << meta.csv_cells() << '\n';
        }
    write_file_checked(o_.heatmap_csv, "heatmap-csv", f.str());
}

void TuneRun::print_json(std::size_t merged) const {
    const nlohmann::json doc = {{"db", store_.path()},
                                {"search", o_.search},
                                {"budget", o_.budget},
                                {"iterations", o_.base.iterations},
                                {"repeats", o_.mo.repeats},
                                {"warmup", o_.mo.warmup},
                                {"min_run_s", o_.mo.min_run_s},
                                {"confirm_top", o_.topts.confirm_top},
                                {"confirm_runs_each", o_.topts.confirm_runs},
                                {"head_to_head_runs_each", o_.ropts.head_to_head_runs},
                                {"baseline_runs_each", o_.topts.baseline_runs},
                                {"baseline_margin", o_.topts.baseline_margin},
                                {"merged_from_ranks", merged},
                                {"results", results_}};
    std::cout << OutputMeta(schema::tune_report).stamp(doc).dump(2) << '\n';
}

void TuneRun::print_text(std::size_t merged) const {
    const MeasureOptions& mo = o_.mo;
    const std::uint64_t iterations = o_.base.iterations;
    std::cout << summary_.str();
    for (const auto& line : param_lines_) std::cout << line << '\n';
    if (!raised_.empty()) {
        std::cout << "Shorter than --min-run-ms " << fmt(mo.min_run_s * 1e3, 3)
                  << " of kernel time per run of " << iterations << " iteration(s), hence timed longer:\n";
        for (const auto& r : raised_) std::cout << "  " << r << '\n';
    }
    if (o_.report) {
        std::cout << "\nReport (times: median OpenCL kernel time of " << iterations
                  << " iteration(s) per run (scaled where timed longer, see above), median of " << mo.repeats << " run(s) per measurement; tuned = guided "
                  << "search; vs = speed-up of the tuned choice).\n"
                  << "tuned ms and best ms: where 'compared' is 'h2h N', the medians of a head-to-head of the two "
                     "choices (N fresh measurements of both together, interleaved);\n'same': one configuration, the exhaustive "
                     "search's confirmed time; 'search': each search's own confirmed time. confirm runs: the "
                     "guided + exhaustive\nsearches' re-timings of their finalists. paper ms, NULL ms and the heat "
                     "maps are search-phase measurements.\n"
                  << rep_.str();
        for (const auto& r : rows_)
            std::cout << "\nHeat map, " << r.kernel << " on device " << r.device << " (" << r.device_name
                      << "), ms, rows y, columns x:\n"
                      << heatmap_table(r);
    }
    std::cout << "database: " << store_.path() << " (" << store_.size() << " entries";
    if (merged) std::cout << ", " << merged << " merged from other ranks";
    std::cout << ")\n";
}

}  // namespace worksize::cli
