// The matmul sample job: FP32 C = A·B (A M×K, B K×N) split by rows of C. Master side (MatmulJob:
// seeded inputs, slices, gathering, a CPU check in double) and worker side (execute_matmul: one
// slice on one device with matmul.cl). Two variants, picked by the parameters:
//  - "tiled" (the default, no tile parameter given): each work-item computes kWpt rows of one
//    column, so the planning NDRange is (N, ceil(M/kWpt)) and a plan's rows are units of kWpt
//    rows of C; matmul_tiled for an explicit local size, matmul_direct for NULL.
//  - "reg" (any of bm, bn, bk, tm, tn, vw given, or variant=reg): matmul_reg, register tiling
//    with those tile sizes as -D macros; a work-item computes a tm×tn block, so the NDRange is
//    (ceil(N/tn), ceil(M/tm)), a unit is tm rows of C and the kernel requires the local size
//    (bn/tn, bm/tm). The tuner searches these parameters (matmul_job_factory's tunables).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <thread>

#include "clblast_gemm.hpp"
#include "jobs/job_util.hpp"
#include "sample_kernels.hpp"
#include "worksize/embedded_kernels.hpp"
#include "worksize/runtime/data_job.hpp"
#include "worksize/runtime/declared_job.hpp"
#include "worksize/runtime/opencl.hpp"

namespace worksize::detail {
namespace {

/// Rows of C per work-item (the kernel's -DWPT); the geometry and the build use this one value.
constexpr std::uint64_t kWpt = 4;
/// Deepest k-tile; the host shrinks it until both tiles fit (kTileBudget, else all local memory).
constexpr std::uint64_t kMaxTileDepth = 32;
/// Local memory the tiles should stay within when they can, to leave room for several resident
/// work-groups per compute unit on GPUs.
constexpr std::uint64_t kTileBudget = 16 * 1024;
/// Verify every row while M·N·K stays below this (about a second of CPU time), else sample.
constexpr double kWholeCheckLimit = 1 << 30;
constexpr std::uint64_t kSampledRows = 64;

/// The register-tiled variant's parameters (matmul.cl, matmul_reg); bm == 0: the tiled variant.
struct RegParams {
    std::uint64_t bm = 0, bn = 0, bk = 0, tm = 0, tn = 0, vw = 0;
    bool on() const { return bm != 0; }
    LocalSize shape() const { return {bn / tn, bm / tm}; }
    std::uint64_t threads() const { return (bn / tn) * (bm / tm); }
    /// Its two local tiles (rows padded by 4 floats, as the kernel declares them).
    std::uint64_t local_bytes() const { return bk * ((bm + 4) + (bn + 4)) * sizeof(float); }
    std::string text() const {
        return "bm=" + std::to_string(bm) + " bn=" + std::to_string(bn) + " bk=" + std::to_string(bk) +
               " tm=" + std::to_string(tm) + " tn=" + std::to_string(tn) + " vw=" + std::to_string(vw);
    }
};

/// The parameters the tuner searches and their values (KernelJobFactory::tunables), in this order.
const char* const kRegKeys[] = {"bm", "bn", "bk", "tm", "tn", "vw"};
/// Defaults of the reg variant where a parameter is not given: a 128×128 C tile, 8×8 per
/// work-item (256 work-items), depth 8, float4 loads: the fastest of 17 sets on an H100
/// (2026-11-24, 4096³: 47.2 TFLOPS against 38.2 with depth 16 and 51.6 for torch.mm FP32).
constexpr std::uint64_t kRegDefaults[] = {128, 128, 8, 8, 8, 4};

/// Why a parameter set cannot be built ("" when it can): the divisibility the kernel's loops
/// assume, and limits on its size. Device limits are checked by reg_device_check.
std::string reg_invalid(const RegParams& p) {
    auto one_of = [](std::uint64_t v, std::initializer_list<std::uint64_t> ok) {
        return std::find(ok.begin(), ok.end(), v) != ok.end();
    };
    if (!one_of(p.tm, {1, 2, 4, 8}) || !one_of(p.tn, {1, 2, 4, 8})) return "tm and tn must be 1, 2, 4 or 8";
    if (!one_of(p.vw, {1, 2, 4})) return "vw must be 1, 2 or 4";
    if (p.bm > 512 || p.bn > 512 || p.bk > 128) return "bm and bn must be at most 512 and bk at most 128";
    if (p.bm % p.tm != 0 || p.bn % p.tn != 0) return "bm must be a multiple of tm and bn of tn";
    if (p.bk % p.vw != 0 || p.bn % p.vw != 0) return "bk and bn must be multiples of vw";
    const std::uint64_t nt = p.threads();
    if (nt > 1024) return "the work-group (bn/tn)·(bm/tm) = " + std::to_string(nt) + " exceeds 1024 work-items";
    if ((p.bm * p.bk) % (p.vw * nt) != 0 || (p.bk * p.bn) % (p.vw * nt) != 0)
        return "the work-group's " + std::to_string(nt) +
               " work-items must share the bm·bk and bk·bn tile loads evenly in vectors of vw";
    return {};
}

/// Why the device cannot run the parameter set ("" when it can).
std::string reg_device_check(const RegParams& p, const DeviceInfo& d) {
    const LocalSize s = p.shape();
    if (d.max_work_group_size != 0 && p.threads() > d.max_work_group_size)
        return "its work-group of " + std::to_string(p.threads()) + " work-items exceeds the device's " +
               std::to_string(d.max_work_group_size);
    if ((d.max_work_item_sizes[0] != 0 && s.x > d.max_work_item_sizes[0]) ||
        (d.max_work_item_sizes[1] != 0 && s.y > d.max_work_item_sizes[1]))
        return "its work-group shape exceeds the device's work-item sizes";
    if (d.local_mem_bytes != 0 && p.local_bytes() > d.local_mem_bytes)
        return "its tiles need " + std::to_string(p.local_bytes()) + " bytes of local memory, the device has " +
               std::to_string(d.local_mem_bytes);
    return {};
}

/// A positive integer parameter given as a number, an integral real ("--param k=1e3") or a
/// string ("--param k=512").
std::uint64_t param_u64(const nlohmann::json& p, const char* key, std::uint64_t fallback) {
    if (!p.is_object() || !p.contains(key)) return fallback;
    const auto& v = p.at(key);
    try {
        if (v.is_number_unsigned() && v.get<std::uint64_t>() > 0) return v.get<std::uint64_t>();
        if (v.is_number_integer() && v.get<std::int64_t>() > 0) return v.get<std::uint64_t>();
        if (v.is_number_float()) {
            const double d = v.get<double>();
            if (d >= 1 && d <= 9007199254740992.0 && d == std::floor(d)) return std::uint64_t(d);
        }
        if (v.is_string()) {
            std::size_t used = 0;
            const auto s = v.get<std::string>();
            const auto n = std::stoull(s, &used);
            if (used == s.size() && s.find('-') == std::string::npos && n > 0) return n;
        }
    } catch (const std::exception&) {
    }
    throw InvalidArgument(std::string("matmul: parameter '") + key +
                          "' must be a positive integer, got " + v.dump());
}

/// The reg variant's parameters from a job's or slice's parameters: {} (bm 0) for the tiled
/// variant. @throws InvalidArgument for an invalid value or set, naming the valid ones.
RegParams reg_params(const nlohmann::json& p) {
    bool any = false;
    for (const char* key : kRegKeys) any = any || (p.is_object() && p.contains(key));
    std::string variant;
    if (p.is_object() && p.contains("variant")) {
        const auto& v = p.at("variant");
        if (!v.is_string() || (v.get<std::string>() != "tiled" && v.get<std::string>() != "reg"))
            throw InvalidArgument("matmul: parameter 'variant' must be tiled or reg, got " + v.dump());
        variant = v.get<std::string>();
    }
    if (variant == "tiled" && any)
        throw InvalidArgument("matmul: the tile parameters bm, bn, bk, tm, tn, vw belong to variant reg, not tiled");
    if (!any && variant != "reg") return {};
    RegParams r;
    std::uint64_t* fields[] = {&r.bm, &r.bn, &r.bk, &r.tm, &r.tn, &r.vw};
    for (std::size_t i = 0; i < std::size(kRegKeys); ++i) *fields[i] = param_u64(p, kRegKeys[i], kRegDefaults[i]);
    if (const std::string why = reg_invalid(r); !why.empty())
        throw InvalidArgument("matmul: invalid tile parameters " + r.text() + ": " + why);
    return r;
}

void require_positive_int(const char* what, std::uint64_t v) {
    if (v == 0 || v > std::uint64_t(std::numeric_limits<int>::max()))
        throw InvalidArgument(std::string("matmul: ") + what + " = " + std::to_string(v) +
                              " is outside 1.." + std::to_string(std::numeric_limits<int>::max()));
}

/// Rows of C in slice [offset, offset+units) of row units of `rpu` rows.
std::uint64_t slice_rows(std::uint64_t m, std::uint64_t offset, std::uint64_t units, std::uint64_t rpu) {
    const std::uint64_t first = offset * rpu;
    if (units == 0 || first >= m) return 0;
    return std::min(units * rpu, m - first);
}

/// The declaration of matmul (declared_job.hpp): A split by row units (rpu rows of K floats),
/// B shared (broadcast), C split by row units (rpu rows of N floats). `problem` is the planning
/// NDRange (columns of work-items, row units). For a worker's slice, `slice` gives its rows of C
/// (the kernels' M, relative to the slice: a partial last unit computes only the rows that exist),
/// `local` its local size and `device` its limits, which decide the kernel: matmul_reg for the
/// reg variant (its own work-group), matmul_tiled with the deepest k-tile that fits the device's
/// local memory for an explicit local size, matmul_direct for NULL or when no tile fits.
DataJobSpec matmul_declaration(GlobalSize problem, std::uint64_t n, std::uint64_t k, const RegParams& reg,
                               std::uint64_t slice = 1, LocalSize local = {}, const DeviceInfo* device = nullptr) {
    const std::uint64_t rpu = reg.on() ? reg.tm : kWpt;
    DataJobSpec s;
    s.name = "matmul";
    s.source = std::string(embedded_kernel_source("matmul"));
    s.dims = 2;
    s.width = problem.x;
    s.units = problem.y;
    BufferDecl a{"A", ElemType::f32, BufferLayout::split, rpu * k, 0, true, false};
    BufferDecl b{"B", ElemType::f32, BufferLayout::shared, 1, k * n, true, false};
    BufferDecl c{"C", ElemType::f32, BufferLayout::split, rpu * n, 0, false, true};
    // Every kernel writes each row < M of the slice whole; the rows past M of a partial last row
    // unit are not written, and rank 0 never reads them (C's padding).
    c.no_init = true;
    s.buffers = {a, b, c};
    s.build_options = "-DWPT=" + std::to_string(kWpt);
    KernelDecl kd;
    const ArgDecl m_arg = arg::value<int>(slice), n_arg = arg::value<int>(n), k_arg = arg::value<int>(k);
    const std::vector<ArgDecl> abc = {arg::in({0}), arg::all({1}), arg::out({2})};
    if (reg.on()) {
        const char* names[] = {"BM", "BN", "BK", "TM", "TN", "VW"};
        const std::uint64_t v[] = {reg.bm, reg.bn, reg.bk, reg.tm, reg.tn, reg.vw};
        for (std::size_t i = 0; i < std::size(names); ++i)
            s.build_options.append(" -D").append(names[i]).append("=").append(std::to_string(v[i]));
        // Whole-tile vector loads where rows start on vector boundaries.
        s.build_options.append(" -DA_VEC=").append(k % reg.vw == 0 ? "1" : "0");
        s.build_options.append(" -DB_VEC=").append(n % reg.vw == 0 ? "1" : "0");
        kd.name = "matmul_reg";
        kd.args = {m_arg, n_arg, k_arg};
        kd.args.insert(kd.args.end(), abc.begin(), abc.end());
        kd.required_local = reg.shape();
    } else {
        // The tiled kernel for an explicit local size, with the deepest k-tile that fits; the
        // direct kernel for NULL (tiles cannot be sized) or when even TK = 1 does not fit.
        std::uint64_t tk = 0;
        if (!local.is_null() && device) {
            const std::uint64_t floats_per_k = local.y * kWpt + local.x;
            const std::uint64_t local_mem = device->local_mem_bytes;
            for (const std::uint64_t budget : {std::min(kTileBudget, local_mem), local_mem}) {
                tk = std::min<std::uint64_t>({kMaxTileDepth, k, budget / (floats_per_k * sizeof(float))});
                if (tk > 0) break;
            }
        }
        if (tk > 0) {
            kd.name = "matmul_tiled";
            kd.args = {m_arg, n_arg, k_arg, arg::value<int>(tk)};
        } else {
            kd.name = "matmul_direct";
            kd.args = {m_arg, n_arg, k_arg};
        }
        kd.args.insert(kd.args.end(), abc.begin(), abc.end());
        if (tk > 0) {
            kd.args.push_back(arg::local<float>(local.y * kWpt * tk));
            kd.args.push_back(arg::local<float>(tk * local.x));
        }
    }
    s.kernels = {kd};
    return s;
}

/// The job's backends (the "backend" parameter, BackendChoice's text): "kernel" (matmul.cl) or
/// "clblast" (CLBlast's SGEMM; refused in a build without CLBlast).
BackendChoice matmul_backends(const nlohmann::json& params) {
    if (!params.is_object() || !params.contains("backend")) return {};
    const auto& v = params.at("backend");
    if (!v.is_string()) throw InvalidArgument("matmul: parameter 'backend' must be a string, got " + v.dump());
    BackendChoice c = parse_backends(v.get<std::string>());
    std::vector<std::string> names = {c.all};
    for (const auto& [device, name] : c.per_device) names.push_back(name);
    for (const auto& name : names)
        if (name != "kernel" && name != "clblast")
            throw InvalidArgument("matmul has no backend '" + name + "' (valid: kernel, clblast)");
    if (c.uses("clblast") && !clblast_available()) throw InvalidArgument(clblast_missing_text());
    return c;
}

class MatmulJob final : public DeclaredJob {
public:
    explicit MatmulJob(const JobOptions& o)
        : n_(o.size.x),
          m_(o.size.y),
          k_(param_u64(o.params, "k", o.size.x)),
          iterations_(o.iterations),
          seed_(o.seed),
          backends_(matmul_backends(o.params)),
          reg_(reg_params(o.params)),
          rpu_(reg_.on() ? reg_.tm : kWpt) {
        require_positive_int("N (columns)", n_);
        require_positive_int("M (rows)", m_);
        require_positive_int("K", k_);
        if (iterations_ == 0) throw InvalidArgument("matmul: iterations must be at least 1");
        spec_ = matmul_declaration(problem(), n_, k_, reg_);
    }

    /// Any slice boundary: a slice's NDRange is padded to whole work-groups and its kernels
    /// guard the rows and columns past the matrix (the declaration's granule and partition would
    /// align slices to the reg variant's work-group, which its kernel does not need).
    std::uint64_t granule() const override { return 1; }
    void partition(std::vector<Assignment>& assignments) override { (void)assignments; }
    std::string backend(int device) const override { return backends_.of(device); }
    KernelDescriptor descriptor() const override {
        KernelDescriptor d;
        d.name = "matmul";
        d.dims = 2;
        d.default_priority = Priority::x;
        // Operations per work-item: its outputs (tiled: kWpt; reg: tm·tn), each K steps of a
        // multiply, an add and the loop compare.
        const std::uint64_t outputs = reg_.on() ? reg_.tm * reg_.tn : kWpt;
        d.ops_per_item = 3.0 * double(k_) * double(outputs);
        // A row unit (one NDRange row) needs rpu_ rows of A; every device needs all of B.
        d.bytes_in_per_item = double(rpu_ * k_ * sizeof(float)) / double(problem().x);
        d.bytes_out_per_item = double(outputs * sizeof(float));
        d.bytes_in_fixed = double(k_) * double(n_) * sizeof(float);
        return d;
    }

    GlobalSize problem() const override {
        if (reg_.on()) return {(n_ + reg_.tn - 1) / reg_.tn, (m_ + rpu_ - 1) / rpu_};
        return {n_, (m_ + kWpt - 1) / kWpt};
    }
    /// The reg variant launches the work-group its parameters derive.
    LocalSize required_local() const override { return reg_.on() ? reg_.shape() : LocalSize{}; }

    ParamCandidate param_candidate(const DeviceInfo& device) const override {
        ParamCandidate c = KernelJob::param_candidate(device);
        if (!reg_.on()) return c;
        const std::uint64_t v[] = {reg_.bm, reg_.bn, reg_.bk, reg_.tm, reg_.tn, reg_.vw};
        for (std::size_t i = 0; i < std::size(kRegKeys); ++i) c.params[kRegKeys[i]] = v[i];
        c.invalid = reg_device_check(reg_, device);
        c.local_mem_bytes = reg_.local_bytes();
        c.outputs_per_item = reg_.tm * reg_.tn;
        c.traffic = 1.0 / double(reg_.bm) + 1.0 / double(reg_.bn);
        return c;
    }

    void generate() override {
        // A and C hold whole row units (the declaration's rows): rows past M are zeros in A.
        const std::uint64_t rows = problem().y * rpu_;
        for (auto* v : {&a_, &b_, &c_}) *v = HostVector<float>(DefaultInitAllocator<float>(host_memory()));
        a_.resize(rows * k_);
        b_.resize(k_ * n_);
        fill_input(0, 0, std::as_writable_bytes(std::span(a_)));
        fill_input(1, 0, std::as_writable_bytes(std::span(b_)));
        // NaN marks rows no slice has delivered: verify() then fails on them.
        c_.assign(rows * n_, std::numeric_limits<float>::quiet_NaN());
    }

    SliceSpec slice_spec(const Assignment& a) const override {
        SliceSpec s = base_slice_spec("matmul", problem(), a, iterations_);
        s.params = {{"m", m_}, {"n", n_}, {"k", k_}, {"wpt", rpu_}};
        if (reg_.on()) {
            s.params["variant"] = "reg";
            const std::uint64_t v[] = {reg_.bm, reg_.bn, reg_.bk, reg_.tm, reg_.tn, reg_.vw};
            for (std::size_t i = 0; i < std::size(kRegKeys); ++i) s.params[kRegKeys[i]] = v[i];
        }
        if (backend(a.device) != "kernel") s.params["backend"] = backend(a.device);
        return s;
    }

    /// Entries are per depth class: K as "2^floor(log2 K)", beside the tiled variant's work per
    /// thread. The same for both variants: an entry holds the tuned local size of the tiled
    /// variant or the tuned parameters of the reg variant (TuningRecord::params).
    /// A backend other than the kernel is part of the key ("backend": BackendChoice::text()).
    nlohmann::json tuning_key() const override {
        nlohmann::json key = {{"k", "2^" + std::to_string(std::bit_width(k_) - 1)}, {"wpt", kWpt}};
        if (const std::string b = backends_.text(); !b.empty()) key["backend"] = b;
        return key;
    }

    Verdict verify() const override {
        const auto rows = rows_to_check(0, m_, seed_);
        const Verdict v = check_rows(rows, [&](std::uint64_t i) { return a_.data() + i * k_; }, b_.data(),
                                     [&](std::uint64_t i) { return c_.data() + i * n_; });
        return {v.ok, v.ok ? v.detail + " over " + std::to_string(rows.size()) + " of " + std::to_string(m_) + " rows"
                           : v.detail};
    }

    /// A slice's input is A's rows of its row units, then B; its output C's rows of them.
    Verdict verify_slice(const Assignment& a, std::span<const std::byte> in,
                         std::span<const std::byte> out) const override {
        const std::uint64_t first = a.offset * rpu_, held = a.units * rpu_;
        const std::uint64_t rows = first >= m_ ? 0 : std::min(held, m_ - first);
        const std::uint64_t in_bytes = (held * k_ + k_ * n_) * sizeof(float), out_bytes = held * n_ * sizeof(float);
        if (in.size() != in_bytes || out.size() != out_bytes)
            return {false, "the slice at row " + std::to_string(first) + " has " + std::to_string(in.size()) +
                               " input and " + std::to_string(out.size()) + " output bytes, not " +
                               std::to_string(in_bytes) + " and " + std::to_string(out_bytes)};
        const auto* A = reinterpret_cast<const float*>(in.data());
        const auto* C = reinterpret_cast<const float*>(out.data());
        const auto check = rows_to_check(first, first + rows, seed_ ^ a.offset);
        const Verdict v = check_rows(check, [&](std::uint64_t i) { return A + (i - first) * k_; }, A + held * k_,
                                     [&](std::uint64_t i) { return C + (i - first) * n_; });
        return {v.ok, v.ok ? v.detail + " over " + std::to_string(check.size()) + " of its " + std::to_string(rows) +
                                 " rows"
                           : v.detail};
    }

    bool makes_slice_inputs() const override { return true; }

private:
    /// Rows of C in [from, to) to check: all of them when affordable, else a seeded sample with
    /// the first and the last.
    std::set<std::uint64_t> rows_to_check(std::uint64_t from, std::uint64_t to, std::uint64_t seed) const {
        std::set<std::uint64_t> rows;
        if (to <= from) return rows;
        if (double(to - from) * double(n_) * double(k_) <= kWholeCheckLimit || to - from <= kSampledRows) {
            for (std::uint64_t i = from; i < to; ++i) rows.insert(i);
            return rows;
        }
        std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
        std::uniform_int_distribution<std::uint64_t> pick(from, to - 1);
        rows.insert(from);
        rows.insert(to - 1);
        while (rows.size() < kSampledRows) rows.insert(pick(rng));
        return rows;
    }

    /// Rows `rows` of C against A·B in double: a_row(i) and c_row(i) give row i of A and C, b B.
    template <class ARow, class CRow>
    Verdict check_rows(const std::set<std::uint64_t>& rows, ARow a_row, const float* b, CRow c_row) const {
        // Bound: float dot products of length K in any order (fma or not) are within
        // gamma_K·Σ|a·b| of the exact value, gamma_K ≈ K·u, u = 2^-24; allow twice that.
        const double u = std::ldexp(1.0, -24);
        const double bound_factor = 2.0 * double(k_) * u;
        std::vector<double> ref(n_), mag(n_);
        double max_err = 0.0, max_ratio = 0.0;
        for (const std::uint64_t i : rows) {
            std::fill(ref.begin(), ref.end(), 0.0);
            std::fill(mag.begin(), mag.end(), 0.0);
            const float* arow = a_row(i);
            const float* crow = c_row(i);
            for (std::uint64_t kk = 0; kk < k_; ++kk) {
                const double av = arow[kk];
                const float* brow = b + kk * n_;
                for (std::uint64_t j = 0; j < n_; ++j) {
                    const double p = av * double(brow[j]);
                    ref[j] += p;
                    mag[j] += std::fabs(p);
                }
            }
            for (std::uint64_t j = 0; j < n_; ++j) {
                const double got = crow[j];
                const double err = std::fabs(got - ref[j]);
                const double tol = bound_factor * mag[j];
                if (!(err <= tol)) {  // also catches NaN (a row never delivered)
                    char buf[256];
                    std::snprintf(buf, sizeof buf,
                                  "C[%llu][%llu] = %.9g but the reference is %.9g (|err| %.3g > "
                                  "bound %.3g = 2·K·2^-24·Σ|a·b|)",
                                  (unsigned long long)i, (unsigned long long)j, got, ref[j], err,
                                  tol);
                    return {false, buf};
                }
                max_err = std::max(max_err, err);
                if (tol > 0) max_ratio = std::max(max_ratio, err / tol);
            }
        }
        char buf[200];
        std::snprintf(buf, sizeof buf, "max |err| %.3g (%.2g%% of the bound 2·K·2^-24·Σ|a·b|)", max_err,
                      100.0 * max_ratio);
        return {true, buf};
    }

public:

    std::string summary() const override {
        // How many rows were checked is the verdict's to say (with --inputs local, each slice
        // checks its own).
        return "C = A(" + std::to_string(m_) + "x" + std::to_string(k_) + ")·B(" + std::to_string(k_) + "x" +
               std::to_string(n_) + "), " + variant();
    }

    /// What ran: "kernel tiled", "kernel reg bm=... vw=...", "clblast" (every device), or the
    /// kernel's and "; backend I=clblast,..." where some devices run a library.
    std::string variant() const override {
        const std::string kernel = reg_.on() ? "kernel reg " + reg_.text() : "kernel tiled";
        const std::string b = backends_.text();
        if (b.empty()) return kernel;
        if (backends_.per_device.empty()) return b;
        return kernel + "; backend " + b;
    }

private:
    const DataJobSpec& declaration() const override { return spec_; }
    bool fills_inputs() const override { return true; }
    void fill_input(int b, std::uint64_t first, std::span<std::byte> out) const override {
        const std::uint64_t e0 = first / sizeof(float), valid = b == 0 ? m_ * k_ : k_ * n_;
        auto* v = reinterpret_cast<float*>(out.data());
        parallel_for_index(out.size() / sizeof(float), [&](std::uint64_t j) {
            const std::uint64_t e = e0 + j;
            // Uniform in [-1, 1); A's rows past M: zeros.
            v[j] = e < valid ? 2.0f * position_uniform(seed_, std::uint64_t(b), e) - 1.0f : 0.0f;
        });
    }
    std::span<const std::byte> host_input(int b) const override {
        return std::as_bytes(b == 0 ? std::span<const float>(a_) : std::span<const float>(b_));
    }
    std::span<std::byte> host_output(int b) override {
        (void)b;  // C, the only output
        return std::as_writable_bytes(std::span(c_));
    }

    std::uint64_t n_, m_, k_, iterations_, seed_;
    BackendChoice backends_;
    RegParams reg_;
    std::uint64_t rpu_;  ///< rows of C per row unit: kWpt (tiled) or tm (reg)
    DataJobSpec spec_;
    HostVector<float> a_, b_, c_;  ///< A and C padded to whole row units, in host_memory()
};

/// The checks of a worker's slice on `device`; its rows of C.
std::uint64_t check_matmul_slice(const SliceSpec& s, const DeviceInfo& device) {
    const std::uint64_t m = param_u64(s.params, "m", 0), n = param_u64(s.params, "n", 0),
                        k = param_u64(s.params, "k", 0), wpt = param_u64(s.params, "wpt", 0);
    require_positive_int("M (rows)", m);
    require_positive_int("N (columns)", n);
    require_positive_int("K", k);
    const RegParams reg = reg_params(s.params);
    const std::uint64_t rpu = reg.on() ? reg.tm : kWpt;
    if (wpt != rpu)
        throw InvalidArgument("matmul: slice planned with " + std::to_string(wpt) +
                              " rows per work-item, this worker builds " + std::to_string(rpu));
    const std::uint64_t rows = slice_rows(m, s.offset, s.units, rpu);
    if (rows == 0)
        throw InvalidArgument("matmul: slice at row unit " + std::to_string(s.offset) +
                              " lies beyond M = " + std::to_string(m));
    const std::uint64_t cols = reg.on() ? (n + reg.tn - 1) / reg.tn : n;
    if (s.problem.x != cols || s.problem.y != (m + rpu - 1) / rpu)
        throw InvalidArgument("matmul: slice of problem (" + std::to_string(s.problem.x) + "," +
                              std::to_string(s.problem.y) + "), not this job's (" + std::to_string(cols) + "," +
                              std::to_string((m + rpu - 1) / rpu) + ")");
    if (reg.on()) {
        if (const std::string why = reg_device_check(reg, device); !why.empty())
            throw Error(ErrorReason::device_limit, "matmul: tile parameters " + reg.text() + " do not fit " +
                                                       device.name + ": " + why);
        if (!s.local.is_null() && !(s.local == reg.shape()))
            throw InvalidArgument("matmul: kernel reg with " + reg.text() + " runs with local size " +
                                  local_text(reg.shape()) + ", not " + local_text(s.local));
    }
    return rows;
}

/// A slice as it runs on `device` (the factory's `declare`): matmul's own kernel, or on the
/// clblast backend CLBlast's SGEMM as a library routine over the same buffers (the slice's whole
/// row units: rows past M are zeros in A, and C's rows past M are not read).
DataJobSpec declare_matmul(const SliceSpec& s, const DeviceInfo& device) {
    const std::uint64_t rows = check_matmul_slice(s, device);
    const std::uint64_t n = param_u64(s.params, "n", 0), k = param_u64(s.params, "k", 0);
    const RegParams reg = reg_params(s.params);
    DataJobSpec spec = matmul_declaration(s.problem, n, k, reg, rows, s.local, &device);
    if (!s.params.contains("backend")) return spec;
    const auto b = s.params.at("backend");
    if (b != "clblast") throw InvalidArgument("matmul: no backend " + b.dump() + " (valid: kernel, clblast)");
    if (!clblast_available()) throw InvalidArgument(clblast_missing_text());
    const std::uint64_t rpu = reg.on() ? reg.tm : kWpt;
    KernelDecl kd;
    kd.name = kd.library = kClblastSgemm;
    kd.args = {arg::value<int>(s.units * rpu), arg::value<int>(n), arg::value<int>(k),
               arg::in({0}),                   arg::all({1}),      arg::out({2})};
    spec.kernels = {kd};
    spec.build_options.clear();
    return spec;
}

SliceTimes execute_matmul(DeviceContext& ctx, const SliceSpec& s, std::span<const std::byte> in,
                          Bytes& out) {
    out.clear();
    if (s.units == 0) return {};
    return execute_declared(declare_matmul(s, ctx.info()), ctx, s, in, out);
}

}  // namespace

KernelJobFactory matmul_job_factory() {
    KernelJobFactory f;
    f.name = "matmul";
    f.make = [](const JobOptions& o) { return std::make_unique<MatmulJob>(o); };
    f.execute = execute_matmul;
    register_library_call(kClblastSgemm, clblast_sgemm_call());
    f.declare = declare_matmul;
    f.dims = 2;
    f.streams_input = true;  // execute_declared (input_feed.hpp)
    f.description = "FP32 C = A*B (C: --size NxM, A: MxK, B: KxN), split by rows of C";
    f.backends = {"clblast"};
    f.params = {{"k", "the inner dimension K (default: N)"},
                {"variant", "tiled (WPT rows per work-item, any local size) or reg (register tiles); default: reg where "
                             "every device is a GPU and the local policy is not null, else tiled"},
                {"bm", "reg: rows of C per work-group (default 128; any tile parameter selects reg)"},
                {"bn", "reg: columns of C per work-group (default 128)"},
                {"bk", "reg: depth of the local-memory tiles (default 8)"},
                {"tm", "reg: rows of C per work-item, 1, 2, 4 or 8 (default 8)"},
                {"tn", "reg: columns of C per work-item, 1, 2, 4 or 8 (default 8)"},
                {"vw", "reg: width of the vector loads, 1, 2 or 4 (default 4)"}};
    // The tuner's space of the reg variant (KernelJob::param_candidate refuses what a device
    // cannot run; reg_params what the kernel cannot build).
    f.tunables = {{"bm", {16, 32, 64, 128}}, {"bn", {16, 32, 64, 128}}, {"bk", {8, 16, 32}},
                  {"tm", {2, 4, 8}},         {"tn", {2, 4, 8}},         {"vw", {1, 2, 4}}};
    // On GPUs the register-tiled kernel (H100, 4096³: 47 TFLOPS against 3 for the tiled one
    // with the paper's local size); the tiled one stays the CPU default.
    f.gpu_params = {{"variant", "reg"}};
    f.calibration_sizes = {"64", "128", "256"};
    f.tune_size = "256";
    // The paper's compute amount, not our honest count (docs/method.md).
    f.paper_case = PaperCase{"1024", 10, 8e11};
    return f;
}

}  // namespace worksize::detail
