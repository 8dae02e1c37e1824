// The data-job declaration's JSON form (data_spec.hpp): what travels to every rank.
#include "worksize/scheduler/data_spec.hpp"

namespace worksize {

namespace {
constexpr ArgKind kKinds[] = {ArgKind::read,   ArgKind::write, ArgKind::read_write, ArgKind::halo,
                              ArgKind::all,    ArgKind::reduce, ArgKind::scalar,    ArgKind::begin,
                              ArgKind::end,    ArgKind::origin, ArgKind::local,     ArgKind::step,
                              ArgKind::expr,   ArgKind::scratch, ArgKind::value_of};

ArgKind parse_kind(const std::string& s) {
    for (auto k : kKinds)
        if (s == to_string(k)) return k;
    throw InvalidArgument("unknown access '" + s +
                          "' (read, write, read_write, halo, all, reduce, scalar, begin, end, origin, local, step, expr, scratch, "
                          "value_of)");
}

/// Buffer `jb` of the declaration.
BufferDecl buffer_from_json(const nlohmann::json& jb) {
    BufferDecl b;
    b.name = jb.at("name").get<std::string>();
    b.type = parse_elem_type(jb.value("type", "float"));
    const auto layout = jb.value("layout", "split");
    if (layout != "split" && layout != "shared")
        throw InvalidArgument("layout '" + layout + "' (split or shared)");
    b.layout = layout == "split" ? BufferLayout::split : BufferLayout::shared;
    b.pitch = jb.value("pitch", std::uint64_t{1});
    b.count = jb.value("count", std::uint64_t{0});
    b.input = jb.value("input", false);
    b.output = jb.value("output", false);
    b.units = jb.value("units", std::uint64_t{0});
    b.host_written = jb.value("host_written", false);
    if (jb.contains("generator")) {
        b.generator = jb.at("generator").at("name").get<std::string>();
        b.generator_args = jb.at("generator").value("args", std::vector<std::int64_t>{});
    }
    if (jb.contains("map")) {
        const auto& m = jb.at("map");
        if (!m.is_array() || m.size() != 2) throw InvalidArgument("map must be [num, den]");
        b.map_num = m.at(0).get<std::uint64_t>();
        b.map_den = m.at(1).get<std::uint64_t>();
    }
    if (jb.contains("init")) {
        const auto init = jb.at("init").get<std::string>();
        if (init != "zeros" && init != "none") throw InvalidArgument("init '" + init + "' (zeros or none)");
        b.no_init = init == "none";
    }
    return b;
}

/// Argument `ja` of a kernel of the declaration.
ArgDecl arg_from_json(const nlohmann::json& ja) {
    ArgDecl a;
    a.kind = parse_kind(ja.at("access").get<std::string>());
    a.buffer = ja.value("buffer", -1);
    a.depth = ja.value("depth", std::uint64_t{0});
    if (ja.contains("op")) a.op = parse_reduce_op(ja["op"].get<std::string>());
    if (ja.contains("type"))
        (is_index(a.kind) ? a.index_type : a.scalar_type) = parse_elem_type(ja["type"].get<std::string>());
    a.value = ja.value("value", 0.0);
    a.step_times = ja.value("times", std::int64_t{1});
    a.step_plus = ja.value("plus", std::int64_t{0});
    a.expr = ja.value("expr", "");
    if (ja.contains("constants"))
        for (const auto& [n, v] : ja.at("constants").items()) a.constants.emplace_back(n, v.get<std::int64_t>());
    if (ja.contains("per")) {
        const auto per = ja["per"].get<std::string>();
        if (per != "item" && per != "group")
            throw InvalidArgument("per '" + per + "' (item or group)");
        a.per_group = per == "group";
    }
    return a;
}

/// Kernel `jk` of the declaration; `where` names each argument while it is read.
KernelDecl kernel_from_json(const nlohmann::json& jk, std::string& where) {
    KernelDecl k;
    k.name = jk.at("name").get<std::string>();
    k.units_per_item = jk.value("units_per_item", std::uint64_t{1});
    if (jk.contains("arrays")) {
        const auto arrays = jk.at("arrays").get<std::string>();
        if (arrays != "whole" && arrays != "slice" && arrays != "relative")
            throw InvalidArgument("arrays '" + arrays + "' (whole, slice or relative)");
        k.whole_arrays = arrays == "whole";
        k.slice_relative = arrays == "relative";
    }
    if (jk.contains("runs")) {
        const auto when = jk.at("runs").at("when").get<std::string>();
        if (when == "every") k.runs = KernelRuns::every;
        else if (when == "first") k.runs = KernelRuns::first_step;
        else if (when == "last") k.runs = KernelRuns::last_step;
        else if (when == "after_first") k.runs = KernelRuns::after_first;
        else throw InvalidArgument("runs '" + when + "' (every, first, last or after_first)");
        k.every = jk.at("runs").value("every", std::uint64_t{1});
    }
    if (jk.contains("groups")) {
        k.group_items = jk.at("groups").at("items").get<std::uint64_t>();
        k.group_units = jk.at("groups").at("units").get<std::uint64_t>();
    }
    if (jk.contains("required_local"))
        k.required_local = {jk["required_local"].at(0).get<std::uint64_t>(),
                            jk["required_local"].at(1).get<std::uint64_t>()};
    for (const auto& ja : jk.at("args")) {
        where = "kernel '" + k.name + "', argument " + std::to_string(k.args.size());
        k.args.push_back(arg_from_json(ja));
    }
    return k;
}
}  // namespace

nlohmann::json to_json(const DataJobSpec& s) {
    nlohmann::json j = {{"name", s.name},       {"source", s.source}, {"build_options", s.build_options},
                        {"dims", s.dims},       {"width", s.width},   {"units", s.units},
                        {"steps", s.steps},     {"gather_every", s.gather_every},
                        {"host_every", s.host_every},
                        {"exchange_every", s.exchange_every},
                        {"ops_per_unit", s.ops_per_unit}};
    j["buffers"] = nlohmann::json::array();
    for (const auto& b : s.buffers) {
        j["buffers"].push_back({{"name", b.name},
                                {"type", to_string(b.type)},
                                {"layout", b.layout == BufferLayout::split ? "split" : "shared"},
                                {"pitch", b.pitch},
                                {"count", b.count},
                                {"input", b.input},
                                {"output", b.output}});
        if (b.units) j["buffers"].back()["units"] = b.units;
        if (b.map_num || b.map_den) j["buffers"].back()["map"] = {b.map_num, b.map_den};
        if (b.no_init) j["buffers"].back()["init"] = "none";
        if (b.host_written) j["buffers"].back()["host_written"] = true;
        if (!b.generator.empty()) j["buffers"].back()["generator"] = {{"name", b.generator}, {"args", b.generator_args}};
    }
    j["kernels"] = nlohmann::json::array();
    for (const auto& k : s.kernels) {
        nlohmann::json args = nlohmann::json::array();
        for (const auto& a : k.args) {
            nlohmann::json ja = {{"access", to_string(a.kind)}};
            if (a.buffer >= 0) ja["buffer"] = a.buffer;
            if (a.kind == ArgKind::halo) ja["depth"] = a.depth;
            if (a.kind == ArgKind::reduce) ja["op"] = to_string(a.op);
            if (a.per_group) ja["per"] = "group";
            if (is_index(a.kind) && a.index_type != ElemType::i32) ja["type"] = to_string(a.index_type);
            if (a.kind == ArgKind::step) {
                ja["times"] = a.step_times;
                ja["plus"] = a.step_plus;
            }
            if (a.kind == ArgKind::expr) {
                ja["expr"] = a.expr;
                ja["constants"] = nlohmann::json::object();
                for (const auto& [n, v] : a.constants) ja["constants"][n] = v;
            }
            if (a.kind == ArgKind::scalar || a.kind == ArgKind::local) {
                ja["type"] = to_string(a.scalar_type);
                ja["value"] = a.value;
            }
            args.push_back(ja);
        }
        j["kernels"].push_back({{"name", k.name},
                                {"args", args},
                                {"units_per_item", k.units_per_item},
                                {"required_local", {k.required_local.x, k.required_local.y}}});
        if (k.whole_arrays) j["kernels"].back()["arrays"] = "whole";
        if (k.slice_relative) j["kernels"].back()["arrays"] = "relative";
        if (k.group_units) j["kernels"].back()["groups"] = {{"items", k.group_items}, {"units", k.group_units}};
        if (!runs_every_step(k)) j["kernels"].back()["runs"] = {{"when", to_string(k.runs)}, {"every", k.every}};
    }
    j["swaps"] = nlohmann::json::array();
    for (const auto& [a, b] : s.swaps) j["swaps"].push_back({a, b});
    return j;
}

DataJobSpec data_job_from_json(const nlohmann::json& j) {
    std::string where = "job";
    try {
        DataJobSpec s;
        s.name = j.at("name").get<std::string>();
        s.source = j.at("source").get<std::string>();
        s.build_options = j.value("build_options", "");
        s.dims = j.at("dims").get<int>();
        s.width = j.value("width", std::uint64_t{1});
        s.units = j.at("units").get<std::uint64_t>();
        s.steps = j.value("steps", std::uint64_t{1});
        s.gather_every = j.value("gather_every", std::uint64_t{0});
        s.host_every = j.value("host_every", std::uint64_t{0});
        s.exchange_every = j.value("exchange_every", std::uint64_t{1});
        s.ops_per_unit = j.value("ops_per_unit", 0.0);
        for (const auto& jb : j.at("buffers")) {
            where = "buffer " + std::to_string(s.buffers.size());
            s.buffers.push_back(buffer_from_json(jb));
        }
        for (const auto& jk : j.at("kernels")) {
            where = "kernel " + std::to_string(s.kernels.size());
            s.kernels.push_back(kernel_from_json(jk, where));
        }
        where = "swaps";
        for (const auto& js : j.value("swaps", nlohmann::json::array()))
            s.swaps.emplace_back(js.at(0).get<int>(), js.at(1).get<int>());
        return s;
    } catch (const InvalidArgument& e) {
        throw InvalidArgument("data job, " + where + ": " + e.what());
    } catch (const nlohmann::json::exception& e) {
        throw InvalidArgument("data job, " + where + ": " + e.what());
    }
}

}  // namespace worksize
