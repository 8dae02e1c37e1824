// The interp sample job: FP32 bilinear resize of a seeded in_w×in_h image to out_w×out_h, split
// by output rows. A declared job (declared_job.hpp): interp_declaration() below says what a slice
// holds (the input `in`, a buffer of its own in_h rows mapped onto the output's row groups, read
// as a neighbourhood one row deep: the input rows the slice's taps reach; the output `out`, a
// buffer of its own out_h rows, RY per row group), and execute_declared runs it. Master side
// (InterpJob: input, a bit-exact CPU check, parameters and their refusals) and worker side
// (execute_interp: the slice's declaration with the variant's build options and work-group,
// its slice checked first). Each work-item
// computes VW consecutive pixels in each of RY consecutive rows (parameters `vw` and `ry`, the
// kernel's -DVW and -DRY), so the NDRange is (ceil(out_w / VW), ceil(out_h / RY)) and a plan's
// rows (units) are row groups of RY output rows, the last one partial where RY does not divide
// out_h: a slice boundary never splits a work-item's rows. With `stage` = 1 (interp.cl's -DSTAGE)
// the kernel stages each work-group's input in local memory and requires work-groups of
// stage_group(stage_x) (`stage_x` work-items along x, 128 in all); stage_tile() below sizes its
// local tile.
//
// Exactness: the device and source_tap()/blend() below do the same float operations in the same
// order with the same scale factors (computed once here, sent in the SliceSpec), no division on
// the device and no contraction on either side (interp.cl sets FP_CONTRACT OFF; this file is
// built in ISO C++20 mode, where GCC and Clang do not contract across statements, and each
// product is its own float temporary).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>

#include "jobs/job_util.hpp"
#include "sample_kernels.hpp"
#include "worksize/embedded_kernels.hpp"
#include "worksize/runtime/declared_job.hpp"
#include "worksize/runtime/opencl.hpp"
#include "worksize/scheduler/parse.hpp"

namespace worksize::detail {
namespace {

constexpr std::uint64_t kMaxDim = std::uint64_t(1) << 24;  // exact as float, fits int indexing
/// Output pixels per work-item and row without `--param vw=N` (interp.cl's -DVW).
constexpr std::uint64_t kDefaultVw = 4;
/// Output rows per work-item without `--param ry=N` (interp.cl's -DRY).
constexpr std::uint64_t kDefaultRy = 1;

/// stage = 1: the work-items of the work-group the kernel requires (interp.cl's GX x GY), GX the
/// parameter stage_x (default 32: 32 x 4), and the most local memory its tile may take (a
/// seventh of an H200 SM's, so that several groups stay resident).
constexpr std::uint64_t kStageItems = 128;
constexpr std::uint64_t kDefaultStageX = 32;
constexpr std::uint64_t kStageBudget = 32 * 1024;
bool valid_stage_x(std::uint64_t x) { return x == 32 || x == 64 || x == 128; }
LocalSize stage_group(std::uint64_t stage_x) { return {stage_x, kStageItems / stage_x}; }

bool valid_vw(std::uint64_t vw) { return vw == 1 || vw == 2 || vw == 4 || vw == 8 || vw == 16; }
bool valid_ry(std::uint64_t ry) { return ry == 1 || ry == 2 || ry == 4 || ry == 8; }

/// Work-items per output row: VW pixels each, the last one partial where VW does not divide.
std::uint64_t items_per_row(std::uint64_t out_w, std::uint64_t vw) { return (out_w + vw - 1) / vw; }
/// Row groups (the NDRange's y, a plan's units) of out_h rows: RY rows each, the last partial.
std::uint64_t row_groups(std::uint64_t out_h, std::uint64_t ry) { return (out_h + ry - 1) / ry; }

void require_dim(const char* what, std::uint64_t v) {
    if (v == 0 || v > kMaxDim)
        throw InvalidArgument(std::string("interp: ") + what + " = " + std::to_string(v) +
                              " is outside 1.." + std::to_string(kMaxDim));
}

double param_number(const nlohmann::json& p, const char* key, double fallback) {
    if (!p.is_object() || !p.contains(key)) return fallback;
    const auto& v = p.at(key);
    if (v.is_number()) return v.get<double>();
    if (v.is_string())
        if (const auto d = parse_number(v.get<std::string>())) return *d;
    throw InvalidArgument(std::string("interp: parameter '") + key + "' must be a number, got " +
                          v.dump());
}

std::uint64_t param_dim(const nlohmann::json& p, const char* key, std::uint64_t fallback) {
    const double d = param_number(p, key, double(fallback));
    if (!(d >= 1.0) || d != std::floor(d) || d > double(kMaxDim))
        throw InvalidArgument(std::string("interp: parameter '") + key +
                              "' must be an integer in 1.." + std::to_string(kMaxDim));
    return std::uint64_t(d);
}

/// The two source indices and the weight of the second for output coordinate i along an axis
/// of n source pixels with scale factor s = n_in / n_out; mirrors interp.cl operation by operation.
struct Tap {
    std::uint64_t i0, i1;
    float w;
};
Tap source_tap(std::uint64_t i, float s, std::uint64_t n) {
    const float t = static_cast<float>(i) + 0.5f;
    const float u = t * s;
    float f = u - 0.5f;
    f = std::fmin(std::fmax(f, 0.0f), static_cast<float>(n - 1));
    const float fl = std::floor(f);
    const auto i0 = static_cast<std::uint64_t>(fl);
    const float w = f - fl;
    return {i0, std::min(i0 + 1, n - 1), w};
}

float blend(float p00, float p01, float p10, float p11, float wx, float wy) {
    const float dt = p01 - p00;
    const float et = dt * wx;
    const float top = p00 + et;
    const float db = p11 - p10;
    const float eb = db * wx;
    const float bottom = p10 + eb;
    const float dv = bottom - top;
    const float ev = dv * wy;
    return top + ev;
}

/// The local tile of stage = 1: TW floats (a multiple of 4) by TH rows; {0, 0} where none fits.
struct StageTile {
    std::uint64_t tw = 0, th = 0;
    std::uint64_t bytes() const { return tw * th * sizeof(float); }
};

/// Input pixels along an axis that `n` consecutive output pixels read at scale factor s: their
/// sources lie (n - 1)·s apart; one more for the floor, one for the second tap, one for float
/// rounding. At most the axis's `in` pixels.
std::uint64_t tap_span(std::uint64_t n, double s, std::uint64_t in) {
    return std::min(in, std::uint64_t(std::floor(double(n - 1) * s)) + 3);
}

/// The tile for a group's (GX·vw) x (GY·ry) output block at scale factors sx, sy. TW leaves room
/// to widen the span to whole float4s (3 columns each side).
StageTile tile_for(LocalSize group, std::uint64_t vw, std::uint64_t ry, double sx, double sy,
                   std::uint64_t in_w, std::uint64_t in_h) {
    StageTile t;
    t.tw = std::min((in_w + 3) / 4 * 4, (tap_span(group.x * vw, sx, in_w) + 6 + 3) / 4 * 4);
    t.th = tap_span(group.y * ry, sy, in_h);
    return t;
}

/// The local-memory budget of a tile: min(kStageBudget, the device's local memory; 0: unknown).
std::uint64_t stage_budget(std::uint64_t local_mem) {
    return local_mem == 0 ? kStageBudget : std::min(kStageBudget, local_mem);
}

/// The tile stage = 1 uses: sized for the job's scale factors where that fits the budget, else
/// for scale factors of at most 1 (groups of a stronger downscale then read their taps from
/// global memory: the kernel decides per group), else none ({0, 0}).
StageTile stage_tile(LocalSize group, std::uint64_t vw, std::uint64_t ry, float sx, float sy,
                     std::uint64_t in_w, std::uint64_t in_h, std::uint64_t local_mem) {
    for (const double cap : {std::numeric_limits<double>::infinity(), 1.0}) {
        const StageTile t = tile_for(group, vw, ry, std::min(double(sx), cap), std::min(double(sy), cap), in_w, in_h);
        if (t.bytes() <= stage_budget(local_mem)) return t;
    }
    return {};
}

/// Why stage = 1 cannot run on a device ("": it can).
std::string stage_check(LocalSize group, std::uint64_t vw, std::uint64_t ry, float sx, float sy,
                        std::uint64_t in_w, std::uint64_t in_h, const DeviceInfo& d) {
    const std::uint64_t items = group.x * group.y;
    if (d.max_work_group_size != 0 && items > d.max_work_group_size)
        return "its work-group of " + std::to_string(items) + " work-items exceeds the device's " +
               std::to_string(d.max_work_group_size);
    if ((d.max_work_item_sizes[0] != 0 && group.x > d.max_work_item_sizes[0]) ||
        (d.max_work_item_sizes[1] != 0 && group.y > d.max_work_item_sizes[1]))
        return "its work-group " + std::to_string(group.x) + "x" + std::to_string(group.y) +
               " exceeds the device's work-item sizes";
    if (stage_tile(group, vw, ry, sx, sy, in_w, in_h, d.local_mem_bytes).tw == 0) {
        // The smaller of the two tiles stage_tile tries.
        const std::uint64_t need =
            tile_for(group, vw, ry, std::min(double(sx), 1.0), std::min(double(sy), 1.0), in_w, in_h).bytes();
        std::string why = "its local tile for vw=";
        why.append(std::to_string(vw)).append(" ry=").append(std::to_string(ry)).append(" needs ");
        why.append(std::to_string(need)).append(" bytes of local memory, more than the ");
        why.append(std::to_string(stage_budget(d.local_mem_bytes))).append(" allowed");
        return why;
    }
    return {};
}

/// What a slice's declaration depends on.
struct Shape {
    std::uint64_t in_w = 1, in_h = 1, out_w = 1, out_h = 1, vw = kDefaultVw, ry = kDefaultRy;
    float sx = 1.0f, sy = 1.0f;
};

/// The neighbourhood depth of `in`, in input rows, around the rows its linear map gives a slice.
/// The taps of output rows [y0, y1) lie in input rows [floor(y0·s) - 1, ceil(y1·s)] (s = in_h /
/// out_h; source_tap: floor((y + 0.5)·s - 0.5) and one more) while the float arithmetic errs by
/// less than half a row: one row. Past 2^21 input rows the float error reaches half a row: a row
/// more per 2^21.
std::uint64_t tap_depth(std::uint64_t in_h) { return 1 + (in_h >> 21); }

/// Argument src_rows of interp_bilinear: a slice's count of input rows held, set per slice.
constexpr std::size_t kSrcRowsArg = 9;

/// The declaration of interp.cl's interp_bilinear over the row groups of `g`: argument order as
/// the kernel's (src_rows 0: per slice).
DataJobSpec interp_declaration(const Shape& g) {
    DataJobSpec s;
    s.name = "interp";
    s.source = std::string(embedded_kernel_source("interp"));
    s.dims = 2;
    s.width = items_per_row(g.out_w, g.vw);
    s.units = row_groups(g.out_h, g.ry);
    // in: in_h rows of in_w; the row group o starts at output row o·RY, input row o·RY·in_h/out_h.
    BufferDecl in{"in", ElemType::f32, BufferLayout::split, g.in_w, 0, true, false, g.in_h, g.ry * g.in_h, g.out_h};
    // out: out_h rows of out_w, RY per row group (the last group's may be fewer).
    BufferDecl out{"out", ElemType::f32, BufferLayout::split, g.out_w, 0, false, true, g.out_h, g.ry, 1};
    out.no_init = true;  // every row of a slice's row groups is written whole (guarded stores)
    s.buffers = {in, out};
    KernelDecl k;
    k.name = "interp_bilinear";
    auto scalar = [](ElemType t, double v) {
        ArgDecl a;
        a.kind = ArgKind::scalar;
        a.scalar_type = t;
        a.value = v;
        return a;
    };
    auto on = [](ArgKind kind, int buffer, std::uint64_t depth = 0) {
        ArgDecl a;
        a.kind = kind;
        a.buffer = buffer;
        a.depth = depth;
        return a;
    };
    const auto i32 = ElemType::i32;
    k.args = {on(ArgKind::halo, 0, tap_depth(g.in_h)),
              on(ArgKind::write, 1),
              scalar(i32, double(g.in_w)),
              scalar(i32, double(g.in_h)),
              scalar(i32, double(g.out_w)),
              scalar(i32, double(g.out_h)),
              on(ArgKind::begin, -1),
              on(ArgKind::end, -1),
              on(ArgKind::origin, 0),
              scalar(i32, 0.0),
              scalar(ElemType::f32, double(g.sx)),
              scalar(ElemType::f32, double(g.sy))};
    s.kernels = {k};
    return s;
}

class InterpJob final : public DeclaredJob {
public:
    explicit InterpJob(const JobOptions& o)
        : out_w_(o.size.x), out_h_(o.size.y), iterations_(o.iterations), seed_(o.seed) {
        require_dim("output width", out_w_);
        require_dim("output height", out_h_);
        scale_ = param_number(o.params, "scale", 2.0);
        if (!(scale_ > 0.0) || !std::isfinite(scale_))
            throw InvalidArgument("interp: scale must be a positive number, got " +
                                  std::to_string(scale_));
        const auto from_scale = [&](std::uint64_t out) {
            return std::max<std::uint64_t>(1, std::uint64_t(std::llround(double(out) / scale_)));
        };
        in_w_ = param_dim(o.params, "in_w", std::min(from_scale(out_w_), kMaxDim));
        in_h_ = param_dim(o.params, "in_h", std::min(from_scale(out_h_), kMaxDim));
        const double vw = param_number(o.params, "vw", double(kDefaultVw));
        vw_ = (vw >= 1.0 && vw <= 16.0 && vw == std::floor(vw)) ? std::uint64_t(vw) : 0;
        if (!valid_vw(vw_))
            throw InvalidArgument("interp: parameter 'vw' (pixels per work-item) must be 1, 2, 4, "
                                  "8 or 16");
        const double ry = param_number(o.params, "ry", double(kDefaultRy));
        ry_ = (ry >= 1.0 && ry <= 8.0 && ry == std::floor(ry)) ? std::uint64_t(ry) : 0;
        if (!valid_ry(ry_))
            throw InvalidArgument("interp: parameter 'ry' (rows per work-item) must be 1, 2, 4 or 8");
        const double stage = param_number(o.params, "stage", 0.0);
        if (stage != 0.0 && stage != 1.0)
            throw InvalidArgument("interp: parameter 'stage' (input staged in local memory) must be 0 or 1");
        stage_ = stage == 1.0;
        const double stage_x = param_number(o.params, "stage_x", double(kDefaultStageX));
        stage_x_ = stage_x == std::floor(stage_x) && stage_x >= 32 && stage_x <= 128 ? std::uint64_t(stage_x) : 0;
        if (!valid_stage_x(stage_x_))
            throw InvalidArgument("interp: parameter 'stage_x' (work-items along x of stage=1's work-group) must be "
                                  "32, 64 or 128");
        sx_ = static_cast<float>(double(in_w_) / double(out_w_));
        sy_ = static_cast<float>(double(in_h_) / double(out_h_));
        if (iterations_ == 0) throw InvalidArgument("interp: iterations must be at least 1");
        // Without the work-group of stage = 1 (required_local() below, the workers' declaration):
        // its kernel finds each group's rows from the global offset, so slices need not start on
        // whole groups, and the plans stay those of any split by row groups (granule 1).
        spec_ = interp_declaration({in_w_, in_h_, out_w_, out_h_, vw_, ry_, sx_, sy_});
        validate(spec_);
    }

    KernelDescriptor descriptor() const override {
        KernelDescriptor d;
        d.name = "interp";
        d.dims = 2;
        d.default_priority = Priority::y;
        // Operations per work-item (VW x RY output pixels). Per axis and tap: add, mul, sub, two
        // clamps, floor, weight sub, neighbour min (8), the x axis once per column (VW) and the
        // y axis once per row (RY); the blend per pixel: 3 sub, 3 mul, 3 add (9); two bounds
        // compares. RY = 1: 17 VW + 10.
        d.ops_per_item = 9.0 * double(vw_ * ry_) + 8.0 * double(vw_) + 8.0 * double(ry_) + 2.0;
        // Bytes as the device's memory moves them: the input read once and the output written
        // once, spread over the work-items (the taps' re-reads of neighbouring input pixels hit
        // the caches). A unit (row group) is ceil(out_w / VW) work-items.
        const GlobalSize g = problem();
        const double items = double(g.x) * double(g.y);
        d.bytes_in_per_item = double(in_w_ * in_h_ * sizeof(float)) / items;
        d.bytes_out_per_item = double(out_w_ * out_h_ * sizeof(float)) / items;
        d.bytes_in_fixed = 0.0;
        return d;
    }

    GlobalSize problem() const override {
        return {items_per_row(out_w_, vw_), row_groups(out_h_, ry_)};
    }
    /// stage = 1 runs with the work-group its local tile is laid out for.
    LocalSize required_local() const override { return stage_ ? stage_group(stage_x_) : LocalSize{}; }

    void generate() override {
        for (auto* v : {&in_, &out_}) *v = HostVector<float>(DefaultInitAllocator<float>(host_memory()));
        in_.resize(in_w_ * in_h_);
        fill_input(0, 0, std::as_writable_bytes(std::span(in_)));
        out_.assign(out_w_ * out_h_, std::numeric_limits<float>::quiet_NaN());
    }

    SliceSpec slice_spec(const Assignment& a) const override {
        SliceSpec s = base_slice_spec("interp", problem(), a, iterations_);
        s.params = {{"in_w", in_w_}, {"in_h", in_h_}, {"out_w", out_w_}, {"out_h", out_h_},
                    {"sx", sx_},     {"sy", sy_},     {"vw", vw_},       {"ry", ry_},
                    {"stage", stage_ ? 1 : 0}};
        if (stage_) s.params["stage_x"] = stage_x_;
        return s;
    }

    /// Entries are per scale factors and pixels per work-item (ry only where it is not 1, so
    /// that the entries stored before it existed keep their key); the image sizes are the size
    /// class's business.
    nlohmann::json tuning_key() const override {
        nlohmann::json key = {{"sx", sx_}, {"sy", sy_}, {"vw", vw_}};
        if (ry_ != 1) key["ry"] = ry_;
        if (stage_) key["stage"] = 1;
        if (stage_ && stage_x_ != kDefaultStageX) key["stage_x"] = stage_x_;
        return key;
    }

    /// The tuner's view of a (vw, ry, stage) set: stage 0 any work-group (the tuner runs it with
    /// NULL), stage 1 its required one and its tile's local memory; VW x RY outputs per work-item.
    ParamCandidate param_candidate(const DeviceInfo& device) const override {
        ParamCandidate c = KernelJob::param_candidate(device);
        c.params = {{"vw", vw_}, {"ry", ry_}, {"stage", stage_ ? 1 : 0}};
        c.outputs_per_item = vw_ * ry_;
        if (stage_) {
            c.invalid = stage_check(required_local(), vw_, ry_, sx_, sy_, in_w_, in_h_, device);
            c.local_mem_bytes =
                stage_tile(required_local(), vw_, ry_, sx_, sy_, in_w_, in_h_, device.local_mem_bytes).bytes();
        }
        return c;
    }

    Verdict verify() const override {
        return check_rows(0, out_h_, in_.data(), 0, in_h_, out_.data(), 0);
    }

    bool makes_slice_inputs() const override { return true; }

    /// A slice's input is the input rows its row groups read (input_rows of buffer 0), its output
    /// its own output rows (of buffer 1).
    Verdict verify_slice(const Assignment& a, std::span<const std::byte> in,
                         std::span<const std::byte> out) const override {
        const auto [in_first, in_n] = input_rows(spec_, 0, a.offset, a.units);
        const auto [out_first, out_n] = input_rows(spec_, 1, a.offset, a.units);
        if (in.size() != in_n * in_w_ * sizeof(float) || out.size() != out_n * out_w_ * sizeof(float))
            return {false, "the slice at row group " + std::to_string(a.offset) + " has " + std::to_string(in.size()) +
                               " input and " + std::to_string(out.size()) + " output bytes, not " +
                               std::to_string(in_n * in_w_ * sizeof(float)) + " and " +
                               std::to_string(out_n * out_w_ * sizeof(float))};
        return check_rows(out_first, out_first + out_n, reinterpret_cast<const float*>(in.data()), in_first, in_n,
                          reinterpret_cast<const float*>(out.data()), out_first);
    }

private:
    /// Output rows [y0, y1) bit-exact against the CPU's blend of the input: `in` holds input rows
    /// [in_first, in_first + in_rows), `out` output rows from `out_first` on.
    Verdict check_rows(std::uint64_t y0, std::uint64_t y1, const float* in, std::uint64_t in_first,
                       std::uint64_t in_rows, const float* out, std::uint64_t out_first) const {
        for (std::uint64_t y = y0; y < y1; ++y) {
            const Tap ty = source_tap(y, sy_, in_h_);
            if (std::min(ty.i0, ty.i1) < in_first || std::max(ty.i0, ty.i1) >= in_first + in_rows)
                return {false, "output row " + std::to_string(y) + " reads input rows " + std::to_string(ty.i0) + " and " +
                                   std::to_string(ty.i1) + ", outside the slice's " + std::to_string(in_first) + ".." +
                                   std::to_string(in_first + in_rows)};
            const float* r0 = in + (ty.i0 - in_first) * in_w_;
            const float* r1 = in + (ty.i1 - in_first) * in_w_;
            for (std::uint64_t x = 0; x < out_w_; ++x) {
                const Tap tx = source_tap(x, sx_, in_w_);
                const float want = blend(r0[tx.i0], r0[tx.i1], r1[tx.i0], r1[tx.i1], tx.w, ty.w);
                const float got = out[(y - out_first) * out_w_ + x];
                if (std::memcmp(&got, &want, sizeof(float)) != 0) {
                    char buf[200];
                    std::snprintf(buf, sizeof buf,
                                  "first mismatch at x=%llu y=%llu: got %.9g, expected %.9g "
                                  "(bit-exact check)",
                                  (unsigned long long)x, (unsigned long long)y, double(got),
                                  double(want));
                    return {false, buf};
                }
            }
        }
        return {true, "all " + std::to_string(out_w_) + "x" + std::to_string(y1 - y0) + " pixels bit-exact"};
    }

public:

    std::string summary() const override {
        char buf[160];
        std::snprintf(buf, sizeof buf,
                      "out(%llux%llu) = bilinear(in(%llux%llu)), scale %.6g x %.6g, %llu pixels "
                      "per work-item",
                      (unsigned long long)out_w_, (unsigned long long)out_h_,
                      (unsigned long long)in_w_, (unsigned long long)in_h_, 1.0 / double(sx_),
                      1.0 / double(sy_), (unsigned long long)vw_);
        std::string text = buf;
        if (ry_ != 1) text.append(" in each of ").append(std::to_string(ry_)).append(" rows");
        if (stage_)
            text.append(", input staged in local memory by ")
                .append(std::to_string(required_local().x))
                .append("x")
                .append(std::to_string(required_local().y))
                .append(" work-groups");
        return text;
    }

protected:
    const DataJobSpec& declaration() const override { return spec_; }
    std::span<const std::byte> host_input(int) const override { return std::as_bytes(std::span(in_)); }
    bool fills_inputs() const override { return true; }
    void fill_input(int, std::uint64_t first, std::span<std::byte> out) const override {
        auto* v = reinterpret_cast<float*>(out.data());
        parallel_for_index(out.size() / sizeof(float),
                           [&](std::uint64_t j) { v[j] = position_uniform(seed_, 0, first / sizeof(float) + j); });
    }
    std::span<std::byte> host_output(int) override { return std::as_writable_bytes(std::span(out_)); }

private:
    std::uint64_t out_w_, out_h_, iterations_, seed_;
    double scale_ = 2.0;
    std::uint64_t in_w_ = 1, in_h_ = 1;
    std::uint64_t vw_ = kDefaultVw;
    std::uint64_t ry_ = kDefaultRy;
    bool stage_ = false;
    std::uint64_t stage_x_ = kDefaultStageX;
    float sx_ = 1.0f, sy_ = 1.0f;
    DataJobSpec spec_;
    HostVector<float> in_, out_;  ///< in host_memory()
};

std::uint64_t spec_u64(const SliceSpec& s, const char* key) {
    try {
        return s.params.at(key).get<std::uint64_t>();
    } catch (const nlohmann::json::exception&) {
        throw InvalidArgument(std::string("interp: slice parameter '") + key +
                              "' missing or invalid");
    }
}

/// A worker's slice as it runs on `device`: its declaration, checked (the factory's `declare`).
DataJobSpec declare_interp(const SliceSpec& s, const DeviceInfo& device) {
    const std::uint64_t in_w = spec_u64(s, "in_w"), in_h = spec_u64(s, "in_h"),
                        out_w = spec_u64(s, "out_w"), out_h = spec_u64(s, "out_h"),
                        vw = spec_u64(s, "vw"), ry = spec_u64(s, "ry");
    float sx = 0.0f, sy = 0.0f;
    try {
        sx = s.params.at("sx").get<float>();
        sy = s.params.at("sy").get<float>();
    } catch (const nlohmann::json::exception&) {
        throw InvalidArgument("interp: slice parameters 'sx'/'sy' missing or invalid");
    }
    require_dim("in_w", in_w);
    require_dim("in_h", in_h);
    require_dim("out_w", out_w);
    require_dim("out_h", out_h);
    if (!valid_vw(vw)) throw InvalidArgument("interp: slice parameter 'vw' must be 1, 2, 4, 8 or 16");
    if (!valid_ry(ry)) throw InvalidArgument("interp: slice parameter 'ry' must be 1, 2, 4 or 8");
    // Slices from before the parameter existed carry no "stage": 0.
    const std::uint64_t stage = s.params.contains("stage") ? spec_u64(s, "stage") : 0;
    if (stage > 1) throw InvalidArgument("interp: slice parameter 'stage' must be 0 or 1");
    const std::uint64_t stage_x = s.params.contains("stage_x") ? spec_u64(s, "stage_x") : kDefaultStageX;
    if (!valid_stage_x(stage_x)) throw InvalidArgument("interp: slice parameter 'stage_x' must be 32, 64 or 128");
    const LocalSize group = stage_group(stage_x);
    if (s.offset + s.units > row_groups(out_h, ry))
        throw InvalidArgument("interp: slice rows outside the image");
    if (s.global.x < items_per_row(out_w, vw) || s.global.y < s.units)
        throw InvalidArgument("interp: slice NDRange (" + std::to_string(s.global.x) + "," +
                              std::to_string(s.global.y) + ") does not cover (" +
                              std::to_string(items_per_row(out_w, vw)) + "," +
                              std::to_string(s.units) + ")");
    DataJobSpec spec = interp_declaration({in_w, in_h, out_w, out_h, vw, ry, sx, sy});
    const std::uint64_t src_rows = input_rows(spec, 0, s.offset, s.units).second;
    spec.kernels[0].args[kSrcRowsArg].value = double(src_rows);
    const std::uint64_t in_bytes = src_rows * in_w * sizeof(float);
    const std::uint64_t out_bytes = input_rows(spec, 1, s.offset, s.units).second * out_w * sizeof(float);
    const std::uint64_t limit = device.max_alloc_bytes;
    for (const auto& [what, bytes] :
         {std::pair{"its input rows", in_bytes}, std::pair{"its output rows", out_bytes}})
        if (limit != 0 && bytes > limit)
            throw Error(std::string("interp slice needs ") + size_text(bytes) + " for " + what +
                        ", more than the " + size_text(limit) +
                        " CL_DEVICE_MAX_MEM_ALLOC_SIZE of " + device.name);

    spec.build_options = "-DVW=";
    spec.build_options.append(std::to_string(vw)).append(" -DRY=").append(std::to_string(ry));
    if (stage == 1) {
        if (const std::string why = stage_check(group, vw, ry, sx, sy, in_w, in_h, device); !why.empty())
            throw Error(ErrorReason::device_limit, "interp: stage=1 does not fit " + device.name + ": " + why);
        if (!s.local.is_null() && !(s.local == group))
            throw InvalidArgument("interp: stage=1 runs with local size " + local_text(group) + ", not " +
                                  local_text(s.local));
        const StageTile tile = stage_tile(group, vw, ry, sx, sy, in_w, in_h, device.local_mem_bytes);
        const std::pair<const char*, std::uint64_t> defs[] = {
            {" -DSTAGE=", 1}, {" -DGX=", group.x}, {" -DGY=", group.y}, {" -DTW=", tile.tw}, {" -DTH=", tile.th}};
        for (const auto& [name, value] : defs) spec.build_options.append(name).append(std::to_string(value));
        spec.kernels[0].required_local = group;  // stage = 1: its own work-group, the NDRange padded to it
    }
    return spec;
}

SliceTimes execute_interp(DeviceContext& ctx, const SliceSpec& s, std::span<const std::byte> in,
                          Bytes& out) {
    out.clear();
    if (s.units == 0) return {};
    const DataJobSpec spec = declare_interp(s, ctx.info());
    const std::uint64_t in_bytes = input_rows(spec, 0, s.offset, s.units).second * spec.buffers[0].pitch * sizeof(float);
    if (in.size() != in_bytes)
        throw InvalidArgument("interp: slice input has " + std::to_string(in.size()) +
                              " bytes, expected " + std::to_string(in_bytes));
    return execute_declared(spec, ctx, s, in, out);
}

}  // namespace

KernelJobFactory interp_job_factory() {
    KernelJobFactory f;
    f.name = "interp";
    f.make = [](const JobOptions& o) { return std::make_unique<InterpJob>(o); };
    f.execute = execute_interp;
    f.declare = declare_interp;
    f.streams_input = true;  // execute_declared (input_feed.hpp)
    f.dims = 2;
    f.description = "FP32 bilinear resize of an in_w x in_h image to --size, split by output rows";
    f.params = {{"scale", "output / input size per axis (default: 2)"},
                {"in_w", "input width (default: the output width / scale)"},
                {"in_h", "input height (default: the output height / scale)"},
                {"vw", "output pixels per work-item along x: 1, 2, 4, 8 or 16 (default: 4)"},
                {"ry", "output rows per work-item: 1, 2, 4 or 8 (default: 1; 8 where every device is a GPU); the NDRange is "
                       "(ceil(W / vw), ceil(H / ry))"},
                {"stage", "1: each work-group stages its input in local memory (requires work-groups "
                          "of 128, stage_x along x); 0: taps read from global memory (default: 0; 1 with stage_x 64 where every device is a GPU)"},
                {"stage_x", "stage=1: work-items along x of its work-group, 32, 64 or 128 (default: 32, "
                            "a 32x4 group)"}};
    // `worksize tune` searches these three (40 sets); stage_x only with --param.
    f.tunables = {{"vw", {1, 2, 4, 8, 16}}, {"ry", {1, 2, 4, 8}}, {"stage", {0, 1}}};
    // On GPUs: 8 rows per work-item and the input staged in local memory by (64,2) work-groups,
    // the fastest set measured on an H200 (interp 8192²: 0.116 ms, against 0.123 ms at ry 4,
    // 0.148 ms for vw 4 ry 1 with NULL, and 0.67 ms with the paper rule's (1,512) groups:
    // docs/results/issue14-libs-h200).
    f.gpu_params = {{"ry", 8}, {"stage", 1}, {"stage_x", 64}};
    f.calibration_sizes = {"128", "256", "512"};
    f.tune_size = "256";
    f.paper_case = PaperCase{"1024", 10000, 5e11};  // the paper's compute amount
    return f;
}

}  // namespace worksize::detail
