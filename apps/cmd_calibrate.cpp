// `worksize calibrate`: fit each device's cost model of a kernel from short runs and store it.
// This file holds the options (CalibrateArgs), the command and the calibration of the kernels with
// its printed results (CalibrateRun); `calibrate --links` is cmd_calibrate_links.cpp.
#include <iostream>
#include <sstream>

#include "job_setup.hpp"
#include "kernel_help.hpp"
#include "output_meta.hpp"
#include "worksize/scheduler/parse.hpp"

namespace worksize::cli {

namespace {

std::vector<std::string> split_list(const std::vector<std::string>& items) {
    std::vector<std::string> out;
    for (const auto& item : items) {
        std::stringstream ss(item);
        std::string s;
        while (std::getline(ss, s, ','))
            if (!s.empty()) out.push_back(s);
    }
    return out;
}

/// "a ms + b ns/unit" of one phase.
std::string phase_text(const PhaseModel& p, const char* unit, double scale) {
    if (p.fixed_s == 0 && p.per_x_s == 0) return "-";
    return fmt(p.fixed_s * 1e3, 3) + " ms + " + fmt(p.per_x_s * scale, 3) + " " + unit;
}

/// Every timed run of a calibration, one row each (docs/models.md, "Checking a calibration").
void write_runs_csv(std::ostream& f, bool header, const std::string& kernel, const std::vector<DeviceInfo>& devs,
                    const CalibrationResult& res, const OutputMeta& meta) {
    if (header)
        f << "kernel,device,rank,step,size,fitted,units,ops,bytes_in,bytes_out,send_s,h2d_s,kernel_s,d2h_s,recv_s,"
             "host_s,pack_s,exec_s,done_s,prepare_s,combine_s,makespan_s,predicted_done_s"
          << meta.csv_header() << '\n';
    for (const auto& dc : res.devices) {
        const auto& d = devs.at(std::size_t(dc.device));
        for (const auto& r : dc.runs) {
            const bool corun = r.step == kCorunStep;
            const LadderStep* ls = corun || r.step >= dc.ladder.size() ? nullptr : &dc.ladder[r.step];
            const auto& s = r.sample;
            const Prediction p = predict(dc.model, s.units, s.items, s.bytes_in, s.bytes_out, corun);
            f << kernel << ',' << dc.device << ',' << d.rank << ',' << (corun ? std::string("corun") : std::to_string(r.step))
              << ',' << (ls ? (ls->size.y > 1 ? std::to_string(ls->size.x) + "x" + std::to_string(ls->size.y)
                                              : std::to_string(ls->size.x))
                            : std::string())
              << ',' << (ls && ls->fitted ? 1 : 0) << ',' << num(s.units) << ',' << num(s.items) << ','
              << num(s.bytes_in) << ',' << num(s.bytes_out) << ',' << num(s.send_s) << ',' << num(s.h2d_s) << ','
              << num(s.kernel_s) << ',' << num(s.d2h_s) << ',' << num(s.recv_s) << ',' << num(s.host_s) << ','
              << num(r.pack_s) << ',' << num(r.exec_s) << ',' << num(r.done_s) << ',' << num(r.prepare_s) << ','
              << num(r.combine_s) << ',' << num(r.makespan_s) << ',' << num(p.total_s) << meta.csv_cells() << '\n';
        }
    }
}

/// What `worksize calibrate`'s options give; `kernels` and `sizes` once checked (check_kernel_args()).
struct CalibrateArgs {
    KernelArgs k;
    DeviceSelection sel;
    bool json = false, help = false;
    std::string kernel = "all", runs_csv, max_size;
    std::vector<std::string> sizes_arg;  ///< --sizes as given
    int min_repeats = 3, max_repeats = 15;
    bool links = false;
    LinkOptions link_options;
    std::vector<std::string> kernels;  ///< the kernels to calibrate: --kernel, or every one for all
    std::vector<std::string> sizes;    ///< --sizes, split ({}: the adaptive ladder)
};

/// The options of `worksize calibrate`, writing into `o`.
po::options_description calibrate_options(CalibrateArgs& o) {
    KernelArgs& k = o.k;
    po::options_description desc("worksize calibrate [--kernel K|all] [options]\n"
                                 "worksize calibrate --links [--link-repeats N] [--db F] [--json] [selection]");
    desc.add_options()
        ("help,h", po::bool_switch(&o.help), "show this help")
        ("kernel", po::value(&o.kernel)->default_value("all"),
         ("kernel to calibrate: " + kernel_list() + " or all").c_str())
        ("sizes", po::value(&o.sizes_arg)->multitoken()->composing(),
         ("explicit calibration sizes, comma- or space-separated, all fitted (default: adaptive per device, "
          "doubling from the kernel's smallest size, e.g. " + calibration_example() +
          ", until the device is saturated)")
             .c_str())
        ("max-size", po::value(&o.max_size),
         "adaptive ladder: never run a larger size than this (N or WxH; e.g. 1/16 of a job's work-items "
         "to check the model's extrapolation)")
        ("iterations", count_value("iterations", &k.iterations, 1, kMaxIterations), "kernel repetitions per run")
        ("local", po::value(&k.local)->default_value("paper"), "local size policy the model is for: null, paper, tuned")
        ("priority", priority_value(&k.priority), "work-group shape priority: x or y (default: the kernel's)")
        ("seed", count_value("seed", &k.seed), "seed of the generated inputs")
        ("param", param_value(&k.params), "kernel parameter KEY=VALUE (single kernel only)")
        ("backend", po::value(&k.backend),
         "what runs the slices, as for run (single kernel only): the models are stored per backend")
        ("min-repeats", count_value("min-repeats", &o.min_repeats, 1), "timed runs per device and size at least")
        ("max-repeats", count_value("max-repeats", &o.max_repeats, 1),
         "timed runs per device and size at most (stops earlier once the median moves < 2 %)")
        ("db", po::value(&k.db), "database (default: $WORKSIZE_DB, else ~/.cache/worksize/db.json)")
        ("links", po::bool_switch(&o.links),
         "calibrate the links instead of a kernel: every selected device's host<->device copies and MPI "
         "between ranks (rank 0 with each rank, each rank with the next), stored for --strategy model of data jobs")
        ("link-repeats", count_value("link-repeats", &o.link_options.repeats, 1, 1000),
         "--links: timed transfers per size (the median is fitted; default 5)")
        ("link-max-bytes",
         count_value("link-max-bytes", &o.link_options.max_bytes, 16384, std::uint64_t(1) << 32)
             ->default_value(std::to_string(o.link_options.max_bytes), "64 MiB"),
         "--links: the largest transfer in bytes (the ladder starts at 4 KiB, x4 a step)")
        ("json", po::bool_switch(&o.json), "print one JSON document")
        ("runs-csv", po::value(&o.runs_csv),
         "write every timed run (phases, rank 0's times, the fitted model's prediction) to this CSV");
    desc.add(fit_limit_options(k.fit_limits));
    desc.add(selection_options(o.sel));
    return desc;
}

/// --links measures the links: refuse the options that are about a kernel.
void check_links_args(const CalibrateArgs& o) {
    if (o.kernel != "all" || !o.sizes_arg.empty() || !o.max_size.empty() || !o.runs_csv.empty() ||
        !o.k.params.empty() || !o.k.backend.empty())
        throw InvalidArgument("--links measures the links, not a kernel: it does not go with --kernel, --sizes, "
                              "--max-size, --param, --backend or --runs-csv");
}

/// Check a kernel calibration's options and fill in `o.kernels` and `o.sizes`; every kernel's jobs are
/// made once (InvalidArgument for a bad size or parameter), on every rank.
void check_kernel_args(CalibrateArgs& o) {
    const KernelArgs& k = o.k;
    if (o.max_repeats < o.min_repeats) throw InvalidArgument("--max-repeats must be >= --min-repeats");
    std::vector<std::string>& kernels = o.kernels;
    if (o.kernel == "all") {
        kernels = kernel_job_names();
    } else {
        (void)kernel_job(o.kernel);  // validates the name
        kernels = {o.kernel};
    }
    o.sizes = split_list(o.sizes_arg);
    const std::vector<std::string>& sizes = o.sizes;
    if (kernels.size() > 1 && !sizes.empty()) throw InvalidArgument("--sizes needs a single --kernel");
    if (kernels.size() > 1 && !k.params.empty()) throw InvalidArgument("--param needs a single --kernel");
    if (kernels.size() > 1 && !k.backend.empty()) throw InvalidArgument("--backend needs a single --kernel");
    if (!o.max_size.empty()) {
        if (kernels.size() > 1) throw InvalidArgument("--max-size needs a single --kernel");
        if (!sizes.empty()) throw InvalidArgument("--max-size caps the adaptive ladder; it does not go with --sizes");
        const GlobalSize cap = parse_size(o.max_size, kernel_dims(kernels.front()));
        const GlobalSize start =
            parse_size(default_calibration_sizes(kernels.front()).front(), kernel_dims(kernels.front()));
        if (cap.x < start.x || cap.y < start.y)
            throw InvalidArgument("--max-size " + o.max_size + " is below the ladder's first size " +
                                  default_calibration_sizes(kernels.front()).front());
    }
    // Validate every kernel's options on every rank before any collective.
    for (const auto& name : kernels) {
        KernelArgs kk = k;
        kk.kernel = name;
        for (const auto& s : sizes.empty() ? default_calibration_sizes(name) : sizes) {
            kk.size = s;
            (void)plan_request(kk, *make_job(kk));
        }
    }
}

/// Every size a device ran (the adaptive ladder or --sizes), as JSON.
nlohmann::json ladder_json(const DeviceCalibration& dc) {
    nlohmann::json ladder = nlohmann::json::array();
    for (const auto& ls : dc.ladder)
        ladder.push_back({{"size", {ls.size.x, ls.size.y}},
                          {"work_items", ls.work_items},
                          {"ops", ls.ops},
                          {"kernel_s", ls.kernel_s},
                          {"done_s", ls.done_s},
                          {"overhead_s", ls.overhead_s},
                          {"saturated", ls.saturated},
                          {"fitted", ls.fitted}});
    return ladder;
}

/// One device's calibration as JSON: its fit (`untrusted`: why it is not trusted, "" if it is), ladder,
/// co-run and model.
nlohmann::json device_json(const DeviceCalibration& dc, const DeviceInfo& d, const std::string& untrusted) {
    const auto& m = dc.model;
    return {{"device", dc.device},
            {"rank", d.rank},
            {"device_name", d.name},
            {"samples", dc.samples.size()},
            {"seconds", dc.seconds},
            {"max_rel_error", dc.max_rel_error},
            {"fit",
             {{"rms_rel", m.fit.rms_rel},
              {"max_rel", m.fit.max_rel},
              {"sizes", m.fit.sizes},
              {"size_range", m.fit.size_range},
              {"trusted", untrusted.empty()},
              {"untrusted_reason", untrusted.empty() ? nlohmann::json(nullptr) : nlohmann::json(untrusted)}}},
            {"saturated", dc.saturated},
            {"ladder", ladder_json(dc)},
            {"corun",
             {{"units", dc.corun_units}, {"measured_s", dc.corun_measured_s}, {"predicted_s", dc.corun_predicted_s}}},
            {"model", to_json(m)}};
}

/// One device's row of the printed table: its phases' models, fit, trust and contention.
std::vector<std::string> device_row(const DeviceCalibration& dc, const DeviceInfo& d, const std::string& untrusted) {
    const auto& m = dc.model;
    return {std::to_string(dc.device) + ": " + d.name, std::to_string(d.rank),
            std::to_string(dc.samples.size()), phase_text(m.send, "ns/B", 1e9),
            phase_text(m.h2d, "ns/B", 1e9), phase_text(m.kernel, "ns/kop", 1e12),
            phase_text(m.d2h, "ns/B", 1e9), phase_text(m.recv, "ns/B", 1e9),
            phase_text(m.host, "ns/B", 1e9), fmt(m.fit.rms_rel * 100, 1), fmt(m.fit.max_rel * 100, 1),
            untrusted.empty() ? "yes" : "NO", dc.corun_units > 0 ? fmt(m.contention, 2) : "-"};
}

/// Rank 0's calibration of the kernels, one after the other, into one database, with the printed
/// results (or one JSON document) and the runs CSV.
class CalibrateRun {
public:
    /// `db_path`: the database's path (db_path() of the options' kernel).
    CalibrateRun(Cluster& c, const CalibrateArgs& o, const std::string& db_path)
        : c_(c), o_(o), path_(db_path), db_(o.k.db) {}
    CalibrateRun(const CalibrateRun&) = delete;
    CalibrateRun& operator=(const CalibrateRun&) = delete;

    /// Calibrate every kernel and print the results: the exit code.
    int run();

private:
    /// Calibrate one kernel, store its models (and the runs CSV so far), and add its results.
    void calibrate_kernel(const std::string& name, bool first);
    /// The text of one kernel's calibration: its summary, each device's ladder and co-run, and `t`.
    void print_kernel(const std::string& name, const CalibrationResult& res, const Table& t) const;

    Cluster& c_;
    const CalibrateArgs& o_;
    const std::string& path_;
    Database db_;  ///< opened once: every kernel's models go into it (saved after each)
    std::ostringstream runs_text_;  ///< the runs CSV so far, rewritten after each kernel
    const OutputMeta runs_meta_{schema::calibrate_runs};
    nlohmann::json out_ = {{"db", path_}, {"kernels", nlohmann::json::array()}};
    double total_ = 0;
};

int CalibrateRun::run() {
    for (const auto& name : o_.kernels) calibrate_kernel(name, &name == &o_.kernels.front());
    out_["seconds"] = total_;
    if (o_.json)
        std::cout << OutputMeta(schema::calibrate).stamp(out_).dump(2) << '\n';
    else
        std::cout << "calibration time " << fmt(total_, 2) << " s; models stored in " << path_ << '\n';
    return kOk;
}

void CalibrateRun::calibrate_kernel(const std::string& name, bool first) {
    const auto& sizes = o_.sizes;
    KernelArgs kk = o_.k;
    kk.kernel = name;
    // The kernel run and plan will use on these devices (their models' key follows it).
    kk = with_tuned_params(kk, c_.devices(), &db_);
    const auto res = calibrate_and_store(c_, kk, sizes, o_.min_repeats, o_.max_repeats, o_.max_size, &db_);
    total_ += res.seconds;
    if (!o_.runs_csv.empty()) {
        write_runs_csv(runs_text_, first, name, c_.devices(), res, runs_meta_);
        write_file_checked(o_.runs_csv, "runs-csv", runs_text_.str());
    }
    nlohmann::json kj = {{"kernel", name},
                         {"seconds", res.seconds},
                         {"runs", res.runs},
                         {"adaptive", sizes.empty()},
                         {"sizes", sizes},
                         {"key", model_key(kk)},
                         {"devices", nlohmann::json::array()}};
    Table t({"device", "rank", "samples", "send", "h2d", "kernel", "d2h", "recv", "host", "fit rms %",
             "max err %", "trusted", "contention"});
    for (const auto& dc : res.devices) {
        const auto& d = c_.devices().at(std::size_t(dc.device));
        const std::string untrusted = untrusted_fit(dc.model.fit, o_.k.fit_limits);
        kj["devices"].push_back(device_json(dc, d, untrusted));
        t.add(device_row(dc, d, untrusted));
    }
    out_["kernels"].push_back(kj);
    if (!o_.json) print_kernel(name, res, t);
}

void CalibrateRun::print_kernel(const std::string& name, const CalibrationResult& res, const Table& t) const {
    std::cout << "calibrated " << name << " on " << res.devices.size() << " device(s) in "
              << fmt(res.seconds, 2) << " s (" << res.runs << " runs, "
              << (o_.sizes.empty() ? "adaptive sizes" : "explicit sizes") << ")\n";
    for (const auto& dc : res.devices)
        std::cout << "  device " << dc.device << ": " << ladder_text(dc) << " in " << fmt(dc.seconds, 2)
                  << " s\n";
    for (const auto& dc : res.devices)
        if (dc.corun_units > 0)
            std::cout << "  device " << dc.device << ": co-run with the others, " << dc.corun_units
                      << " units: " << fmt_ms(dc.corun_measured_s) << " ms measured, "
                      << fmt_ms(dc.corun_predicted_s) << " ms predicted alone: contention "
                      << fmt(dc.model.contention, 2) << '\n';
    std::cout << t.str() << '\n';
}

}  // namespace

int cmd_calibrate(mpi::Environment& env, const std::vector<std::string>& args) {
    CalibrateArgs o;
    const po::options_description desc = calibrate_options(o);
    parse(args, desc, true);
    if (show_help(env, desc, o.help)) return kOk;
    if (o.links) {
        check_links_args(o);
        return calibrate_links(env, o.sel, o.k.db, o.link_options, o.json);
    }
    check_kernel_args(o);
    const std::string path = db_path(o.k);

    return with_cluster(env, o.sel, [&](Cluster& c) {
        // Output files (rank 0 writes them), before the work.
        check_db_writable(path);
        check_writable(o.runs_csv, "runs-csv");
        CalibrateRun calibration(c, o, path);
        return calibration.run();
    });
}

}  // namespace worksize::cli
