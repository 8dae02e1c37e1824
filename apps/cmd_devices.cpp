// `worksize devices`: a clinfo-like table of every rank's OpenCL devices.
#include <iostream>

#include "common.hpp"
#include "output_meta.hpp"
#include "worksize/scheduler/profile.hpp"

namespace worksize::cli {

namespace {

void print_devices(const std::vector<DeviceInfo>& devs, bool json, const std::string& source) {
    if (json) {
        nlohmann::json j = {{"source", source}, {"devices", nlohmann::json::array()}};
        for (const auto& d : devs) j["devices"].push_back(to_json(d));
        std::cout << OutputMeta(schema::devices).stamp(j).dump(2) << '\n';
        return;
    }
    Table t({"rank", "host", "idx", "device", "type", "CUs", "PEs/CU", "PE source", "PEs", "clock MHz",
             "max WG", "local mem", "global mem"});
    for (const auto& d : devs)
        t.add({std::to_string(d.rank), d.host, std::to_string(d.index), d.name, to_string(d.type),
               std::to_string(d.compute_units), std::to_string(d.pes_per_cu), to_string(d.pe_source),
               std::to_string(d.total_pes()), std::to_string(d.max_clock_mhz), std::to_string(d.max_work_group_size),
               fmt_bytes(d.local_mem_bytes), fmt_bytes(d.global_mem_bytes)});
    std::cout << t.str();
}

}  // namespace

int cmd_devices(mpi::Environment& env, const std::vector<std::string>& args) {
    DeviceSelection sel;
    sel.shared = DeviceSelection::Shared::list;  // list every rank's instance; --allow-shared-device: as a job sees them
    bool json = false, help = false;
    std::string profile;
    po::options_description desc("worksize devices [options]");
    desc.add_options()
        ("help,h", po::bool_switch(&help), "show this help")
        ("json", po::bool_switch(&json), "print one JSON document")
        ("devices", po::value(&profile), "list the devices of a profile file instead of the live ones");
    desc.add(selection_options(sel, "all"));
    parse(args, desc);
    if (show_help(env, desc, help)) return kOk;
    if (!profile.empty()) {
        if (env.rank() == 0) print_devices(load_profile(profile), json, profile);
        return kOk;
    }
    return with_cluster(env, sel, [&](Cluster& c) {
        print_devices(c.devices(), json, "live");
        if (!json) {
            for (int r = 0; r < c.ranks(); ++r) {
                bool any = false;
                for (const auto& d : c.devices()) any |= d.rank == r;
                if (!any) std::cout << "rank " << r << " (" << c.hosts()[static_cast<std::size_t>(r)]
                                    << ") drives no device under --select " << sel.spec << '\n';
            }
        }
        return kOk;
    });
}

}  // namespace worksize::cli
