// `worksize bench`'s CSVs (bench_run.hpp): one row per strategy (--csv), the oracle's scan (its
// -sweep file) and each strategy's median run phase by phase (--phases-csv).
#include <algorithm>
#include <fstream>
#include <sstream>

#include "bench_run.hpp"
#include "output_meta.hpp"

namespace worksize::cli {

namespace {

bool starts_empty(const std::string& path) {
    std::ifstream f(path);
    return !f || f.peek() == std::ifstream::traits_type::eof();
}

}  // namespace

std::string sweep_path(const std::string& csv) {
    const auto slash = csv.find_last_of('/');
    const auto dot = csv.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return csv + "-sweep";
    return csv.substr(0, dot) + "-sweep" + csv.substr(dot);
}

// Each row ends with its schema, the tool's version, the host and the date (--append keeps
// the rows of several runs apart).
void BenchRun::write_csv() const {
    const OutputMeta meta(schema::bench);
    const bool header = !o_.append || starts_empty(o_.csv);
    std::ostringstream f;
    if (header) {
        f << "kernel,size,iterations,strategy,makespan_s,ratio_to_oracle,predicted_s,efficiency,small_share,"
             "verified,calibration,calibration_s,same_plan_as,samples,makespan_q1_s,makespan_q3_s";
        for (std::size_t i = 0; i < devs_.size(); ++i) f << ",share_d" << i;
        f << meta.csv_header() << '\n';
    }
    for (const auto& r : rows_) {
        f << k_.kernel << ',' << k_.size << ',' << k_.iterations << ',' << r.strategy << ',' << num(r.makespan_s)
          << ',' << (r.ratio > 0 ? num(r.ratio) : "") << ',' << (r.predicted_s >= 0 ? num(r.predicted_s) : "")
          << ',' << num(r.efficiency) << ',' << num(r.small_share) << ',' << (r.verified ? 1 : 0) << ','
          << calib_source_ << ',' << num(calib_s_) << ','
          << (r.same_as >= 0 ? rows_[std::size_t(r.same_as)].strategy : std::string()) << ',' << r.samples
          << ',' << num(r.q1_s) << ',' << num(r.q3_s);
        for (std::size_t i = 0; i < devs_.size(); ++i) {
            double share = 0;
            for (const auto& a : r.plan.assignments)
                if (a.device == int(i)) share = a.share;
            f << ',' << num(share);
        }
        f << meta.csv_cells() << '\n';
    }
    write_file_checked(o_.csv, "csv", f.str(), o_.append);
}

void BenchRun::write_sweep_csv() const {
    const OutputMeta smeta(schema::bench_sweep);
    const std::string sp = sweep_path(o_.csv);
    const bool sheader = !o_.append || starts_empty(sp);
    std::ostringstream g;
    if (sheader) {
        g << "kernel,size,iterations,small_share,makespan_s";
        for (std::size_t i = 0; i < devs_.size(); ++i) g << ",share_d" << i;
        g << smeta.csv_header() << '\n';
    }
    auto pts = oracle_->points;
    std::sort(pts.begin(), pts.end(), [&](const auto& a, const auto& b) {
        return a.shares.at(std::size_t(small_)) < b.shares.at(std::size_t(small_));
    });
    for (const auto& p : pts) {
        g << k_.kernel << ',' << k_.size << ',' << k_.iterations << ',' << num(p.shares.at(std::size_t(small_)))
          << ',' << num(p.makespan_s);
        for (double s : p.shares) g << ',' << num(s);
        g << smeta.csv_cells() << '\n';
    }
    write_file_checked(sp, "csv (its -sweep file)", g.str(), o_.append);
}

void BenchRun::write_phases_csv() const {
    const OutputMeta meta(schema::bench_phases);
    const bool header = !o_.append || starts_empty(o_.phases_csv);
    std::ostringstream f;
    if (header)
        f << "kernel,size,iterations,strategy,device,units,pack_s,send_s,h2d_s,kernel_s,d2h_s,recv_s,exec_s,"
             "host_s,done_s,prepare_s,combine_s,makespan_s,pred_send_s,pred_h2d_s,pred_kernel_s,pred_d2h_s,"
             "pred_recv_s,pred_host_s,pred_finish_s,pred_makespan_s"
          << meta.csv_header() << '\n';
    for (const auto& r : rows_) {
        const auto& jr = r.median_run;
        for (const auto& d : jr.devices) {
            if (d.assignment.units == 0) continue;
            const std::size_t i = std::size_t(d.assignment.device);
            const double phases = d.send_s + d.times.h2d + d.times.kernel + d.times.d2h + d.recv_s;
            f << k_.kernel << ',' << k_.size << ',' << k_.iterations << ',' << r.strategy << ',' << i << ','
              << d.assignment.units << ',' << num(d.pack_s) << ',' << num(d.send_s) << ','
              << num(d.times.h2d) << ',' << num(d.times.kernel) << ',' << num(d.times.d2h) << ','
              << num(d.recv_s) << ',' << num(d.exec_s) << ',' << num(std::max(0.0, d.done_s - phases)) << ','
              << num(d.done_s) << ',' << num(jr.prepare_s) << ',' << num(jr.combine_s) << ','
              << num(jr.makespan_s);
            if (models_ok_ && i < r.prediction.predicted.size()) {
                const auto& p = r.prediction.predicted[i];
                f << ',' << num(p.send_s) << ',' << num(p.h2d_s) << ',' << num(p.kernel_s) << ','
                  << num(p.d2h_s) << ',' << num(p.recv_s) << ',' << num(p.host_s) << ','
                  << num(r.prediction.finish_s[i]) << ',' << num(r.prediction.makespan_s);
            } else {
                f << ",,,,,,,,";
            }
            f << meta.csv_cells() << '\n';
        }
    }
    write_file_checked(o_.phases_csv, "phases-csv", f.str(), o_.append);
}

}  // namespace worksize::cli
