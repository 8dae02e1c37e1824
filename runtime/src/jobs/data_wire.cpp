// The data jobs' messages between ranks in JSON (data_wire.hpp).
#include "jobs/data_wire.hpp"

namespace worksize::data_exec {

nlohmann::json slices_to_json(const std::vector<SliceDesc>& v) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& s : v)
        j.push_back({{"device", s.device},
                     {"rank", s.rank},
                     {"index", s.local_index},
                     {"offset", s.offset},
                     {"units", s.units},
                     {"local", {s.local.x, s.local.y}}});
    return j;
}

std::vector<SliceDesc> slices_from_json(const nlohmann::json& j) {
    std::vector<SliceDesc> v;
    for (const auto& x : j)
        v.push_back({x.at("device").get<int>(),
                     x.at("rank").get<int>(),
                     x.at("index").get<int>(),
                     x.at("offset").get<std::uint64_t>(),
                     x.at("units").get<std::uint64_t>(),
                     {x.at("local").at(0).get<std::uint64_t>(), x.at("local").at(1).get<std::uint64_t>()}});
    return v;
}

nlohmann::json report_to_json(const RankReport& r, const wire::Failure& f, bool origin) {
    nlohmann::json j = {{"rank", r.rank},
                        {"devices", r.devices},
                        {"setup_s", r.setup_s},
                        {"steps_s", r.steps_s},
                        {"kernel_s", r.kernel_s},
                        {"sent", r.sent_per_step},
                        {"halo", r.halo_per_step},
                        {"records", r.records_per_step},
                        {"ok", f.empty()},
                        {"origin", origin},
                        {"launch_s", r.launch_s},
                        {"timed_steps_s", r.timed_steps_s},
                        {"reduce_s", r.reduce_s},
                        {"halo_arrivals", r.halo_arrivals},
                        {"halo_overlapped", r.halo_overlapped},
                        {"interior_first", r.interior_first}};
    if (!f.empty()) wire::put_failure(j, f);
    return j;
}

RankReport report_from_json(const nlohmann::json& j) {
    RankReport r;
    r.rank = j.at("rank").get<int>();
    r.devices = j.at("devices").get<std::vector<int>>();
    r.setup_s = j.at("setup_s").get<double>();
    r.steps_s = j.at("steps_s").get<double>();
    r.kernel_s = j.at("kernel_s").get<double>();
    r.sent_per_step = j.at("sent").get<std::vector<std::uint64_t>>();
    r.halo_per_step = j.at("halo").get<std::vector<std::uint64_t>>();
    r.records_per_step = j.value("records", std::vector<std::uint64_t>{});
    r.launch_s = j.value("launch_s", std::vector<double>{});
    r.timed_steps_s = j.value("timed_steps_s", 0.0);
    r.reduce_s = j.value("reduce_s", std::vector<double>{});
    r.halo_arrivals = j.value("halo_arrivals", std::uint64_t(0));
    r.halo_overlapped = j.value("halo_overlapped", std::uint64_t(0));
    r.interior_first = j.value("interior_first", std::uint64_t(0));
    if (!j.at("ok").get<bool>()) r.error = j.value("error", "failed");
    return r;
}

}  // namespace worksize::data_exec
