// Job files (job_file.hpp): JSON with named buffers and arguments, resolved into a data-job
// declaration at a problem size.
#include "worksize/scheduler/job_file.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <fstream>
#include <sstream>

#include "json_depth.hpp"
#include "worksize/scheduler/npy.hpp"
#include "worksize/scheduler/parse.hpp"

namespace worksize {

namespace {

namespace fs = std::filesystem;

/// A failure in field `field` of the file.
struct FieldError {
    std::string field, why;
};

[[noreturn]] void fail(const std::string& field, const std::string& why) { throw FieldError{field, why}; }

const nlohmann::json& need(const nlohmann::json& j, const char* key, const std::string& field) {
    if (!j.is_object() || !j.contains(key)) fail(field, std::string("missing '") + key + "'");
    return j.at(key);
}

/// A string field (a number or anything else is refused with the field's path).
std::string text_of(const nlohmann::json& v, const std::string& field) {
    if (!v.is_string()) fail(field, "must be a string, not " + v.dump());
    return v.get<std::string>();
}

std::string text_or(const nlohmann::json& j, const char* key, const std::string& fallback, const std::string& field) {
    return j.is_object() && j.contains(key) ? text_of(j[key], field) : fallback;
}

bool flag_or(const nlohmann::json& j, const char* key, const std::string& field) {
    if (!j.is_object() || !j.contains(key)) return false;
    if (!j[key].is_boolean()) fail(field, "must be true or false, not " + j[key].dump());
    return j[key].get<bool>();
}

/// Edit distance of two keys (for "did you mean").
std::size_t distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

/// Refuse a key of object `j` (at `field`) that is not one of `valid`, with the nearest valid
/// name where one is close (a typo: "verfy", "ouptut") and the valid ones.
void check_keys(const nlohmann::json& j, std::initializer_list<const char*> valid, const std::string& field) {
    if (!j.is_object()) fail(field, "must be an object, not " + j.dump());
    for (const auto& [key, value] : j.items()) {
        std::string best, list;
        std::size_t best_d = key.size();
        for (const char* v : valid) {
            if (key == v) best_d = 0;
            // A prefix ("tol" of "tolerance") is as close as a typo.
            const std::size_t d = std::string(v).rfind(key, 0) == 0 ? 1 : distance(key, v);
            if (d < best_d) best_d = d, best = v;
            list.append(list.empty() ? "" : ", ").append(v);
        }
        if (best_d == 0) continue;
        const std::string where = field == "(top)" ? key : field + "." + key;
        fail(where, "unknown key" + (best.empty() || best_d > 2 ? "" : " (did you mean \"" + best + "\"?)") +
                        "; valid: " + list);
    }
}

std::uint64_t count_of(const nlohmann::json& v, const std::string& field, std::uint64_t min = 1) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < std::int64_t(min))
        fail(field, v.dump() + " is not a whole number >= " + std::to_string(min));
    return v.get<std::uint64_t>();
}

/// A number, or one of the problem's sizes by name ("width", "height", "units"), or "N*width".
double size_value(const nlohmann::json& v, GlobalSize size, int dims, const std::string& field) {
    if (v.is_number()) return v.get<double>();
    if (!v.is_string()) fail(field, v.dump() + " is neither a number nor width, height or units");
    std::string s = v.get<std::string>();
    double factor = 1.0;
    if (const auto star = s.find('*'); star != std::string::npos) {
        const auto n = parse_number(std::string_view(s).substr(0, star));
        if (!n) fail(field, "'" + s + "' is not N*width, N*height or N*units");
        factor = *n;
        s = s.substr(star + 1);
    }
    const double width = dims == 2 ? double(size.x) : 1.0, units = dims == 2 ? double(size.y) : double(size.x);
    if (s == "width") return factor * width;
    if (s == "height" || s == "units") return factor * units;
    fail(field, "'" + v.get<std::string>() + "' is neither a number nor width, height or units");
}

GlobalSize size_of(const nlohmann::json& j, int dims) {
    const auto& v = need(j, "size", "size");
    if (dims == 1) {
        if (v.is_array() && v.size() == 1) return {count_of(v[0], "size"), 1};
        return {count_of(v, "size"), 1};
    }
    if (!v.is_array() || v.size() != 2) fail("size", "a 2-D job's size is [width, height]");
    return {count_of(v[0], "size[0]"), count_of(v[1], "size[1]")};
}

/// "dims": 1 or 2 (1 when absent); as an integer, never converted from another number.
int dims_of(const nlohmann::json& j) {
    if (!j.is_object() || !j.contains("dims")) return 1;
    const auto& v = j["dims"];
    if (!v.is_number_integer() || (v.get<std::int64_t>() != 1 && v.get<std::int64_t>() != 2)) fail("dims", "must be 1 or 2");
    return int(v.get<std::int64_t>());
}

/// Whether buffer elements of type `t` can hold `v` (what rank 0 stores converts to it).
bool fits(ElemType t, double v) {
    switch (t) {
        case ElemType::f32: return std::abs(v) <= double(std::numeric_limits<float>::max());
        case ElemType::f64: return std::isfinite(v);
        case ElemType::i32: return v >= double(INT32_MIN) && v <= double(INT32_MAX);
        case ElemType::u32: return v >= 0 && v <= double(UINT32_MAX);
        case ElemType::i64: return v >= -0x1p63 && v < 0x1p63;
    }
    return false;
}

/// Why `v` is no value of type `t` ("" when it is one): integer types take whole numbers in
/// their range, float and double finite ones within theirs.
std::string misfit(ElemType t, double v) {
    const bool integer = t != ElemType::f32 && t != ElemType::f64;
    if (fits(t, v) && (!integer || v == std::floor(v))) return "";
    const std::string range = t == ElemType::i32   ? "whole numbers in [-2147483648, 2147483647]"
                              : t == ElemType::u32 ? "whole numbers in [0, 4294967295]"
                              : t == ElemType::i64 ? "whole numbers in [-2^63, 2^63)"
                              : t == ElemType::f32 ? "finite numbers of magnitude at most 3.40282347e+38"
                                                   : "finite numbers";
    return std::string(integer && std::isfinite(v) && v != std::floor(v) ? "is not a whole number" : "is out of range") +
           (t == ElemType::i32 ? ": an " : ": a ") + to_string(t) + " takes " + range;
}

std::string read_text(const fs::path& p, const std::string& field) {
    std::ifstream f(p, std::ios::binary);
    if (!f) fail(field, "cannot read '" + p.string() + "'");
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

/// A job that returns nothing (no output buffer, no reduction) would be "verified" having
/// compared nothing: refused.
void require_result(const DataJobSpec& spec) {
    for (const auto& b : spec.buffers)
        if (b.output) return;
    for (const auto& k : spec.kernels)
        for (const auto& a : k.args)
            if (a.kind == ArgKind::reduce) return;
    fail("buffers", "no buffer has \"output\": true and no kernel reduces: the job would return nothing to check");
}

/// The index of the buffer named by `name` among those declared so far (refused at `field`
/// when it is not a string or names no buffer).
int buffer_index(const DataJobSpec& s, const nlohmann::json& name, const std::string& field) {
    if (!name.is_string()) fail(field, "names a buffer by its name, not " + name.dump());
    for (std::size_t b = 0; b < s.buffers.size(); ++b)
        if (s.buffers[b].name == name.get<std::string>()) return int(b);
    fail(field, "no buffer is named '" + name.get<std::string>() + "'");
}

/// Buffer `jb` (at `f`) of the file, checked against the buffers declared before it in `s`.
BufferDecl resolve_buffer(const nlohmann::json& jb, const std::string& f, const DataJobSpec& s, GlobalSize size) {
    check_keys(jb, {"name", "type", "layout", "pitch", "count", "init", "output"}, f);
    BufferDecl b;
    b.name = text_of(need(jb, "name", f), f + ".name");
    for (const auto& other : s.buffers)
        if (other.name == b.name) fail(f + ".name", "'" + b.name + "' names an earlier buffer too");
    try {
        b.type = parse_elem_type(text_or(jb, "type", "float", f + ".type"));
    } catch (const InvalidArgument& e) {
        fail(f + ".type", e.what());
    }
    const std::string layout = text_or(jb, "layout", "split", f + ".layout");
    if (layout != "split" && layout != "shared") fail(f + ".layout", "'" + layout + "' is neither split nor shared");
    b.layout = layout == "split" ? BufferLayout::split : BufferLayout::shared;
    if (b.layout == BufferLayout::split) {
        const double p = jb.contains("pitch") ? size_value(jb["pitch"], size, s.dims, f + ".pitch") : 1.0;
        if (!(p >= 1 && p < 18446744073709551616.0) || p != std::floor(p))  // (2^64)
            fail(f + ".pitch", "must be a whole number >= 1");
        b.pitch = std::uint64_t(p);
    } else {
        b.count = count_of(need(jb, "count", f), f + ".count");
    }
    // At most 2^53 bytes (no machine holds more): a pitch of 2^63 made the size wrap to 0
    // bytes, and the inputs were written through a null pointer.
    const bool split = b.layout == BufferLayout::split;
    const double elems = split ? double(s.units) * double(b.pitch) : double(b.count);
    if (elems * double(elem_size(b.type)) > 0x1p53) {
        const std::string n =
            split ? std::to_string(s.units) + " x " + std::to_string(b.pitch) : std::to_string(b.count);
        fail(f + (split ? ".pitch" : ".count"), "makes buffer '" + b.name + "' more than 2^53 bytes (" + n +
                                                    " elements of " + std::to_string(elem_size(b.type)) + " bytes)");
    }
    // "init": an object (random, constant, file: an input), "zeros" (the default) or "none"
    // (the kernels write it whole: no zero-fill on the devices).
    const bool named_init = jb.contains("init") && jb["init"].is_string();
    if (named_init) {
        const std::string init = jb["init"].get<std::string>();
        if (init != "zeros" && init != "none")
            fail(f + ".init", "'" + init + "' is neither zeros nor none (or an object: random, constant, file)");
        b.no_init = init == "none";
    }
    b.input = jb.contains("init") && !named_init;
    b.output = flag_or(jb, "output", f + ".output");
    return b;
}

/// A reduction's options of argument `ja` (at `fa`): "op" (sum when absent) and "per" (item or group).
void resolve_reduce_options(const nlohmann::json& ja, const std::string& fa, ArgDecl& a) {
    try {
        a.op = parse_reduce_op(ja.value("op", "sum"));
    } catch (const InvalidArgument& e) {
        fail(fa + ".op", e.what());
    }
    if (ja.contains("per")) {
        const auto per = ja["per"].is_string() ? ja["per"].get<std::string>() : ja["per"].dump();
        if (per != "item" && per != "group")
            fail(fa + ".per", "'" + per + "' is not item or group");
        a.per_group = per == "group";
    }
}

/// The scalar keys of argument `ja` (at `fa`): "float", "double", "int", "uint" or "long" with a
/// value that the type holds. Whether one was found.
bool resolve_scalar(const nlohmann::json& ja, const std::string& fa, GlobalSize size, int dims, ArgDecl& a) {
    bool known = false;
    for (const auto& [key, type] : {std::pair{"float", ElemType::f32}, std::pair{"double", ElemType::f64},
                                    std::pair{"int", ElemType::i32}, std::pair{"uint", ElemType::u32},
                                    std::pair{"long", ElemType::i64}})
        if (ja.contains(key)) {
            a.kind = ArgKind::scalar;
            a.scalar_type = type;
            a.value = size_value(ja[key], size, dims, fa + "." + key);
            if (const std::string why = misfit(type, a.value); !why.empty()) {
                char v[32];  // the shortest text that reads back as the value
                const auto end = std::to_chars(v, v + sizeof v, a.value).ptr;
                fail(fa + "." + key,
                     (ja[key].is_string() ? ja[key].dump() + " = " + std::string(v, end) : ja[key].dump()) + " " +
                         why);
            }
            known = true;
        }
    return known;
}

/// Argument `ja` (at `fa`) of a kernel: exactly one kind of argument with its options.
ArgDecl resolve_arg(const nlohmann::json& ja, const std::string& fa, const DataJobSpec& s, GlobalSize size) {
    if (!ja.is_object() || ja.empty()) fail(fa, "an object such as {\"in\": \"x\"}");
    ArgDecl a;
    bool known = false;
    for (const auto& [key, kind] : {std::pair{"in", ArgKind::read}, std::pair{"out", ArgKind::write},
                                    std::pair{"inout", ArgKind::read_write}, std::pair{"halo", ArgKind::halo},
                                    std::pair{"all", ArgKind::all}, std::pair{"reduce", ArgKind::reduce},
                                    std::pair{"origin", ArgKind::origin}})
        if (ja.contains(key)) {
            a.kind = kind;
            a.buffer = buffer_index(s, ja[key], fa + "." + key);
            known = true;
        }
    if (a.kind == ArgKind::halo) a.depth = count_of(need(ja, "depth", fa), fa + ".depth");
    if (a.kind == ArgKind::reduce) resolve_reduce_options(ja, fa, a);
    if (resolve_scalar(ja, fa, size, s.dims, a)) known = true;
    if (ja.contains("local")) {
        a.kind = ArgKind::local;
        try {
            a.scalar_type =
                parse_elem_type(ja["local"].is_string() ? ja["local"].get<std::string>() : ja["local"].dump());
        } catch (const InvalidArgument& e) {
            fail(fa + ".local", e.what());
        }
        a.value = size_value(need(ja, "count", fa), size, s.dims, fa + ".count");
        known = true;
    }
    if (ja.contains("begin")) a.kind = ArgKind::begin, known = true;
    if (ja.contains("end")) a.kind = ArgKind::end, known = true;
    const bool typed = is_index(a.kind) && ja.contains("type");
    if (typed) {
        const auto t = ja["type"].is_string() ? ja["type"].get<std::string>() : ja["type"].dump();
        if (t != "int" && t != "long") fail(fa + ".type", "'" + t + "' is not int or long (an index's type)");
        a.index_type = t == "long" ? ElemType::i64 : ElemType::i32;
    }
    const std::size_t keys = a.kind == ArgKind::reduce ? 1u + ja.contains("op") + ja.contains("per")
                             : a.kind == ArgKind::halo || a.kind == ArgKind::local ? 2u
                                                                                   : 1u + typed;
    if (!known || ja.size() > keys)
        fail(fa,
             ja.dump() +
                 " is not one argument (in, out, inout, halo+depth, all, reduce[+op][+per], origin[+type], "
                 "float, double, int, uint, long, local+count, begin[+type], end[+type])");
    return a;
}

/// Kernel `jk` (at `f`) of the file, its arguments naming the buffers of `s`.
KernelDecl resolve_kernel(const nlohmann::json& jk, const std::string& f, const DataJobSpec& s, GlobalSize size) {
    check_keys(jk, {"name", "args", "units_per_item", "required_local", "arrays"}, f);
    KernelDecl kd;
    kd.name = text_of(need(jk, "name", f), f + ".name");
    if (jk.contains("units_per_item")) kd.units_per_item = count_of(jk["units_per_item"], f + ".units_per_item");
    if (jk.contains("arrays")) {
        const auto arrays = jk["arrays"].is_string() ? jk["arrays"].get<std::string>() : jk["arrays"].dump();
        if (arrays != "whole" && arrays != "slice" && arrays != "relative")
            fail(f + ".arrays", "'" + arrays + "' is not whole (an application's kernel, indexing whole arrays by "
                                "global ids), relative (indexing from the buffers' start by group ids) or slice");
        kd.whole_arrays = arrays == "whole";
        kd.slice_relative = arrays == "relative";
    }
    if (jk.contains("required_local")) {
        const auto& r = jk["required_local"];
        if (!r.is_array() || r.empty() || r.size() > 2) fail(f + ".required_local", "is [x] or [x, y]");
        kd.required_local = {count_of(r[0], f + ".required_local"),
                             r.size() > 1 ? count_of(r[1], f + ".required_local") : 1};
    }
    const auto& args = need(jk, "args", f);
    if (!args.is_array()) fail(f + ".args", "a list of arguments");
    for (std::size_t i = 0; i < args.size(); ++i)
        kd.args.push_back(resolve_arg(args[i], f + ".args[" + std::to_string(i) + "]", s, size));
    return kd;
}

/// The file's job at problem size `size`: its name, sizes, buffers and kernels.
DataJobSpec resolve(const nlohmann::json& j, const std::string& source, GlobalSize size) {
    DataJobSpec s;
    s.name = text_of(need(j, "name", "name"), "name");
    s.source = source;
    s.build_options = text_or(j, "build_options", "", "build_options");
    s.dims = dims_of(j);
    s.width = s.dims == 2 ? size.x : 1;
    s.units = s.dims == 2 ? size.y : size.x;
    s.steps = 1;
    if (j.contains("ops_per_unit")) {
        s.ops_per_unit = size_value(j["ops_per_unit"], size, s.dims, "ops_per_unit");
        if (!(s.ops_per_unit > 0) || !std::isfinite(s.ops_per_unit))
            fail("ops_per_unit", "must be a number > 0 (or N*width with N > 0), not " + j["ops_per_unit"].dump());
    }
    const auto& buffers = need(j, "buffers", "buffers");
    if (!buffers.is_array() || buffers.empty()) fail("buffers", "a list of at least one buffer");
    for (std::size_t i = 0; i < buffers.size(); ++i)
        s.buffers.push_back(resolve_buffer(buffers[i], "buffers[" + std::to_string(i) + "]", s, size));
    const auto& kernels = need(j, "kernels", "kernels");
    if (!kernels.is_array() || kernels.empty()) fail("kernels", "a list of at least one kernel");
    for (std::size_t k = 0; k < kernels.size(); ++k)
        s.kernels.push_back(resolve_kernel(kernels[k], "kernels[" + std::to_string(k) + "]", s, size));
    if (j.contains("steps") || j.contains("swaps"))
        fail(j.contains("steps") ? "steps" : "swaps",
             "a job file runs one step (repeat it with --iterations); multi-step jobs use the C++ API (DataJob)");
    return s;
}

/// How buffer `i` of the file (`jb`, declared as `b`) is filled: an "init" object's random
/// range, constant or file (a file relative to `dir`); the default (zeros) without one.
BufferInit buffer_init(const nlohmann::json& jb, std::size_t i, const BufferDecl& b, const std::string& dir) {
    const std::string fi = "buffers[" + std::to_string(i) + "].init";
    BufferInit in;
    if (!jb.contains("init") || jb["init"].is_string()) return in;
    const auto& ji = jb["init"];
    check_keys(ji, {"random", "seed", "constant", "file"}, fi);
    if (ji.contains("random")) {
        const auto& r = ji["random"];
        if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number() ||
            r[0].get<double>() > r[1].get<double>())
            fail(fi + ".random", "is [lo, hi] with lo <= hi");
        in.kind = BufferInit::Kind::random;
        in.lo = r[0].get<double>();
        in.hi = r[1].get<double>();
        in.seed = ji.contains("seed") ? count_of(ji["seed"], fi + ".seed", 0) : i + 1;
        const ElemType t = b.type;
        if (!fits(t, in.lo) || !fits(t, in.hi) || !std::isfinite(in.hi - in.lo))
            fail(fi + ".random", std::string("[lo, hi] must be within the range of ") + to_string(t));
    } else if (ji.contains("constant")) {
        if (!ji["constant"].is_number()) fail(fi + ".constant", "is a number");
        in.kind = BufferInit::Kind::constant;
        in.value = ji["constant"].get<double>();
        if (const std::string why = misfit(b.type, in.value); !why.empty())
            fail(fi + ".constant", ji["constant"].dump() + " " + why);
    } else if (ji.contains("file")) {
        const fs::path p = fs::path(text_of(ji["file"], fi + ".file"));
        in.kind = BufferInit::Kind::file;
        in.path = (p.is_absolute() ? p : fs::path(dir) / p).string();
        std::error_code ec;
        if (!fs::exists(in.path, ec)) fail(fi + ".file", "no file '" + in.path + "'");
        // A regular file (not /dev/zero, nor a FIFO), a .npy's header and dtype; its
        // shape and size where a problem size is known (the run's inputs).
        try {
            (void)check_input_file(in.path, b, std::nullopt);
        } catch (const InvalidArgument& e) {
            fail(fi + ".file", e.what());
        }
    } else {
        fail(fi, ji.dump() + " is none of random, constant, file");
    }
    return in;
}

/// Refuses a split buffer that is neither an input, an output nor written by a kernel.
void require_written(const DataJobSpec& spec) {
    for (const auto& b : spec.buffers)
        if (b.layout == BufferLayout::split && !b.input && !b.output) {
            bool written = false;
            for (const auto& k : spec.kernels)
                for (const auto& a : k.args)
                    written = written || ((a.kind == ArgKind::write || a.kind == ArgKind::read_write) &&
                                          spec.buffers[std::size_t(a.buffer)].name == b.name);
            if (!written) fail("buffers", "'" + b.name + "' is neither initialised (init), written nor an output");
        }
}

}  // namespace

GlobalSize JobFile::size() const { return size_of(raw, spec.dims); }

DataJobSpec JobFile::spec_for(GlobalSize size) const {
    try {
        DataJobSpec s = resolve(raw, spec.source, size);
        validate(s);
        return s;
    } catch (const FieldError& e) {
        throw InvalidArgument("job file '" + path + "': " + e.field + ": " + e.why);
    } catch (const InvalidArgument& e) {
        throw InvalidArgument("job file '" + path + "': " + e.what());
    }
}

JobFile job_file_from_json(const nlohmann::json& j, const std::string& path, const std::string& dir) {
    JobFile f;
    f.path = path;
    f.raw = j;
    try {
        if (!j.is_object()) fail("(top)", "a job file is a JSON object");
        check_keys(j, {"name", "description", "source", "build_options", "dims", "size", "ops_per_unit", "buffers",
                       "kernels", "verify", "steps", "swaps"},
                   "(top)");
        const std::string src = text_of(need(j, "source", "source"), "source");
        const fs::path sp = fs::path(src).is_absolute() ? fs::path(src) : fs::path(dir) / src;
        const std::string source = read_text(sp, "source");
        const int dims = dims_of(j);
        f.spec = resolve(j, source, size_of(j, dims));
        f.description = text_or(j, "description", "", "description");
        if (j.contains("verify")) {
            check_keys(j["verify"], {"tolerance"}, "verify");
            const auto& t = need(j["verify"], "tolerance", "verify");
            if (!t.is_number() || !(t.get<double>() >= 0) || !std::isfinite(t.get<double>()))
                fail("verify.tolerance", "must be a number >= 0 (the largest relative error accepted), not " + t.dump());
            f.tolerance = t.get<double>();
        }
        const auto& buffers = j.at("buffers");
        for (std::size_t i = 0; i < buffers.size(); ++i)
            f.init.push_back(buffer_init(buffers[i], i, f.spec.buffers[i], dir));
        validate(f.spec);
        require_written(f.spec);
        require_result(f.spec);
    } catch (const FieldError& e) {
        throw InvalidArgument("job file '" + path + "': " + e.field + ": " + e.why);
    } catch (const InvalidArgument& e) {
        throw InvalidArgument("job file '" + path + "': " + e.what());
    } catch (const nlohmann::json::exception& e) {
        throw InvalidArgument("job file '" + path + "': " + e.what());
    }
    return f;
}

JobFile parse_job_file(const std::string& text, const std::string& path, const std::string& dir) {
    if (const std::string deep = json_depth_problem(text); !deep.empty())
        throw InvalidArgument("job file '" + path + "': " + deep);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw InvalidArgument("job file '" + path + "': not JSON: " + e.what());
    }
    return job_file_from_json(j, path, dir);
}

JobFile read_job_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InvalidArgument("job file '" + path + "': cannot read it");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw InvalidArgument("job file '" + path + "': cannot read it");
    return parse_job_file(text.str(), path, fs::path(path).parent_path().string());
}

}  // namespace worksize
