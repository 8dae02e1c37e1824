// `worksize calibrate --links`: every rank times its devices' host↔device copies and its MPI
// links (runtime links.hpp), rank 0 stores them in the database and prints them.
#include <iostream>

#include "common.hpp"
#include "output_meta.hpp"
#include "worksize/runtime/links.hpp"
#include "worksize/scheduler/log.hpp"

namespace worksize::cli {

namespace {

nlohmann::json fit_json(const LinkFit& f) {
    nlohmann::json j = to_json(f);
    j["bandwidth_gbs"] = f.bandwidth() / 1e9;
    return j;
}

void add_row(Table& t, const std::string& link, const std::string& way, const LinkFit& f) {
    t.add({link, way, fmt(f.latency_s * 1e6, 1), fmt(f.bandwidth() / 1e9, 2), fmt(f.rms_rel * 100, 1),
           fmt(f.max_rel * 100, 1)});
}

nlohmann::json links_json(const LinkCalibration& cal, const std::vector<DeviceInfo>& devs,
                          const std::string& path) {
    nlohmann::json j = {{"db", path},
                        {"seconds", cal.seconds},
                        {"devices", nlohmann::json::array()},
                        {"ranks", nlohmann::json::array()}};
    for (const auto& d : cal.devices) {
        const auto& info = devs.at(std::size_t(d.device));
        j["devices"].push_back({{"device", d.device},
                                {"rank", info.rank},
                                {"device_name", info.name},
                                {"host", info.host},
                                {"h2d", fit_json(d.link.h2d)},
                                {"d2h", fit_json(d.link.d2h)}});
    }
    for (const auto& r : cal.ranks)
        j["ranks"].push_back(
            {{"ranks", {r.a, r.b}}, {"hosts", {r.host_a, r.host_b}}, {"mpi", fit_json(r.fit)}});
    return j;
}

std::string links_table(const LinkCalibration& cal, const std::vector<DeviceInfo>& devs) {
    Table t({"link", "way", "latency us", "bandwidth GB/s", "fit rms %", "max err %"});
    for (const auto& d : cal.devices) {
        const auto& info = devs.at(std::size_t(d.device));
        const std::string name = "device " + std::to_string(d.device) + " (rank " +
                                 std::to_string(info.rank) + ", " + info.name + ")";
        add_row(t, name, "host->device", d.link.h2d);
        add_row(t, name, "device->host", d.link.d2h);
    }
    for (const auto& r : cal.ranks)
        add_row(t,
                "ranks " + std::to_string(r.a) + "-" + std::to_string(r.b) + " (" + r.host_a + ", " +
                    r.host_b + ")",
                "MPI one way", r.fit);
    return t.str();
}

}  // namespace

int calibrate_links(mpi::Environment& env, const DeviceSelection& sel, const std::string& db,
                    const LinkOptions& options, bool json) {
    const std::string path = resolve_db_path(db);
    Cluster cluster(env, sel);
    if (!cluster.is_master()) {
        (void)cluster.calibrate_links(options);  // a failure here reaches rank 0 as this rank's answer
        return cluster.serve();
    }
    // Rank 0: as with_cluster, every rank ends with rank 0's code.
    int code = kFailure;
    try {
        const LinkCalibration cal = cluster.calibrate_links(options, [&] { check_db_writable(path); });
        Store store = Store::open(path, CorruptPolicy::report_and_ignore);
        for (const auto& w : store.warnings()) log::warn(w);
        store_links(store, cal, cluster.devices());
        store.save();
        if (json) {
            std::cout
                << OutputMeta(schema::calibrate_links).stamp(links_json(cal, cluster.devices(), path)).dump(2)
                << '\n';
        } else {
            std::cout << "calibrated the links of " << cal.devices.size() << " device(s) and "
                      << cal.ranks.size() << " rank pair(s) in " << fmt(cal.seconds, 2) << " s\n"
                      << links_table(cal, cluster.devices()) << "links stored in " << path << '\n';
        }
        code = kOk;
    } catch (const std::exception& e) {
        cluster.finish(reason_of(e) == ErrorReason::bad_input ? kUsage : kFailure);
        throw;
    }
    cluster.finish(code);
    return code;
}

}  // namespace worksize::cli
