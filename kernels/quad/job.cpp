// Sample kernel "quad": the composite trapezoid rule over n intervals of [a, b], split by
// intervals across devices; a declared job (declared_job.hpp) with one per-group reduction:
// each work-group of quad.cl sums its terms in __local memory into one float record, the
// executor tree-combines a slice's records on the device down to at most kMaxGroupRecords and
// sums them in double, and DeclaredJob::finish() adds the slices in slice order (reduced()).
// verify() checks the result against the exact integral within a derived error bound.
#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <sstream>

#include "jobs/job_util.hpp"
#include "sample_kernels.hpp"
#include "worksize/embedded_kernels.hpp"
#include "worksize/runtime/data_job.hpp"
#include "worksize/runtime/declared_job.hpp"
#include "worksize/runtime/opencl.hpp"

namespace worksize::detail {
namespace {

/// One integrand: its build define, default interval, antiderivative and derivative bounds.
struct Integrand {
    const char* name;
    int define;                 ///< WS_INTEGRAND in quad.cl
    double a, b;                ///< default interval
    double ops;                 ///< counted operations of one evaluation (descriptor)
};

constexpr Integrand kIntegrands[] = {
    {"sin", 0, 0.0, std::numbers::pi, 15.0},
    {"exp", 1, 0.0, 1.0, 15.0},
    {"poly", 2, 0.0, 1.0, 4.0},   // 3x^2 + 2x + 1, exactly 3 on [0, 1]
    {"runge", 3, 0.0, 1.0, 3.0},  // 4 / (1 + x^2), exactly pi on [0, 1]
};

const Integrand& integrand(const std::string& name) {
    for (const auto& f : kIntegrands)
        if (name == f.name) return f;
    throw InvalidArgument("quad: unknown integrand '" + name + "' (known: sin, exp, poly, runge)");
}

double antiderivative(int f, double x) {
    switch (f) {
        case 0: return -std::cos(x);
        case 1: return std::exp(x);
        case 2: return x * x * x + x * x + x;
        default: return 4.0 * std::atan(x);
    }
}

/// Bounds of |f|, |f'|, |f''| on [a, b] (global bounds where they are simpler).
struct Bounds {
    double f0, f1, f2;
};
Bounds bounds(int f, double a, double b) {
    const double X = std::max(std::abs(a), std::abs(b));
    switch (f) {
        case 0: return {1.0, 1.0, 1.0};
        case 1: {
            const double e = std::exp(b);
            return {e, e, e};
        }
        case 2: return {3 * X * X + 2 * X + 1, 6 * X + 2, 6.0};
        default: return {4.0, 2.6, 8.0};  // max |f'| = 3^(3/2)/2 ~ 2.598 at 1/sqrt 3; |f''| 8 at 0
    }
}

/// Maximal relative error of one evaluation of f in float, in units of u = 2^-24: the OpenCL 1.2
/// full-profile limits (sin 4 ulp, exp 3 ulp, division 2.5 ulp; 1 ulp <= 2u relative) plus the
/// roundings around them, rounded up.
constexpr double kEvalU = 10.0;

/// The parameters as --param gives them (numbers where the text is one): a wrong type is bad
/// input, not a JSON error.
std::string integrand_param(const nlohmann::json& p) {
    if (!p.is_object() || !p.contains("integrand")) return "sin";
    const auto& v = p.at("integrand");
    return v.is_string() ? v.get<std::string>() : v.dump();
}

double number_param(const nlohmann::json& p, const char* key, double fallback) {
    if (!p.is_object() || !p.contains(key)) return fallback;
    const auto& v = p.at(key);
    if (v.is_number()) return v.get<double>();
    throw InvalidArgument(std::string("quad: parameter '") + key + "' must be a number, got " + v.dump());
}

/// The declaration of quad over n intervals of [a, b] (declared_job.hpp): no input, one
/// per-group float reduction into "sum". With a local size (the plan's): the fused kernel
/// trapezoid, its __local scratch one float per work-item. NULL: trapezoid_terms writes the terms
/// into the device-only split buffer "terms" at the driver's NDRange, and reduce_terms reduces
/// them in the work-groups execute_declared sizes (launch_local: up to 256, quad.cl's scratch).
DataJobSpec quad_declaration(std::uint64_t n, const Integrand& f, double a, double b, LocalSize local) {
    DataJobSpec s;
    s.name = "quad";
    s.source = std::string(embedded_kernel_source("quad"));
    s.build_options = "-DWS_INTEGRAND=" + std::to_string(f.define);
    s.dims = 1;
    s.units = n;
    s.buffers = {{"sum", ElemType::f32, BufferLayout::shared, 1, 1, false, true}};
    const double h = (b - a) / double(n);
    const ArgDecl a_arg = arg::value<float>(float(a)), h_arg = arg::value<float>(float(h));
    KernelDecl kd;
    if (!local.is_null()) {
        kd.name = "trapezoid";
        kd.args = {arg::group_reduce({0}), arg::end<std::int64_t>(), a_arg, h_arg, arg::local<float>(local.x)};
        s.kernels = {kd};
        return s;
    }
    s.buffers.push_back({"terms", ElemType::f32, BufferLayout::split, 1, 0, false, false});
    s.buffers.back().no_init = true;  // trapezoid_terms writes every term of the slice
    kd.name = "trapezoid_terms";
    kd.args = {arg::out({1}), arg::origin<std::int64_t>({1}), arg::end<std::int64_t>(), a_arg, h_arg};
    KernelDecl rd;
    rd.name = "reduce_terms";
    rd.args = {arg::group_reduce({0}), arg::in({1}), arg::origin<std::int64_t>({1}), arg::end<std::int64_t>()};
    s.kernels = {kd, rd};
    return s;
}

/// Depth of the float summation tree behind one record of a slice of `units` intervals: the
/// work-group's tree over `group` items (depth ceil(log2 group)), then the device passes of
/// fan-in R (log2 R each) that combine_on_device runs while more than kMaxGroupRecords remain.
std::uint64_t tree_depth(std::uint64_t units, std::uint64_t group, std::uint64_t R) {
    std::uint64_t d = std::bit_width(group - 1);  // ceil(log2 group)
    for (std::uint64_t records = (units + group - 1) / group; records > kMaxGroupRecords && R >= 2;
         records = (records + R - 1) / R)
        d += std::bit_width(R - 1);
    return d;
}

class QuadJob : public DeclaredJob {
public:
    explicit QuadJob(const JobOptions& o)
        : n_(o.size.x), iterations_(o.iterations),
          name_(integrand_param(o.params)), f_(integrand(name_)) {
        if (n_ == 0 || o.size.y != 1) throw InvalidArgument("quad: the size must be n x 1 with n >= 1");
        if (iterations_ == 0) throw InvalidArgument("quad: iterations must be >= 1");
        a_ = number_param(o.params, "a", f_.a);
        b_ = number_param(o.params, "b", f_.b);
        if (!(a_ < b_) || !std::isfinite(a_) || !std::isfinite(b_))
            throw InvalidArgument("quad: the interval needs finite a < b");
        exact_ = antiderivative(f_.define, b_) - antiderivative(f_.define, a_);
        spec_ = quad_declaration(n_, f_, a_, b_, {});
        validate(spec_);
    }

    KernelDescriptor descriptor() const override {
        KernelDescriptor d;
        d.name = "quad";
        d.dims = 1;
        d.default_priority = Priority::x;
        // Operations per work-item (one interval): two x (mul + add each), two evaluations, add,
        // two muls, one reduction add.
        d.ops_per_item = 4.0 + 2.0 * f_.ops + 4.0;
        d.bytes_out_per_item = 0.0;  // at most kMaxGroupRecords floats per slice (per-group reduce)
        return d;
    }
    GlobalSize problem() const override { return {n_, 1}; }

    void generate() override {
        runs_.clear();
        max_depth_ = 0;
        result_ = 0.0;
    }

    SliceSpec slice_spec(const Assignment& a) const override {
        check_range(a);
        SliceSpec s = base_slice_spec("quad", problem(), a, iterations_);
        s.params = {{"integrand", name_}, {"a", a_}, {"b", b_}};
        return s;
    }
    Bytes slice_input(const Assignment& a) const override {
        check_range(a);
        return {};
    }

    void accept_output(const Assignment& a, std::span<const std::byte> out) override {
        check_range(a);
        runs_.push_back({a.offset, a.units});
        if (a.units == 0) return;  // an empty slice launches nothing and returns nothing
        // The tree behind the slice's records, for the bound: the plan's work-group, or for NULL
        // whatever power of two up to 256 the device allows; device passes of any such fan-in.
        for (std::uint64_t R = 2; R <= 256; R *= 2) {
            if (a.local.x)
                max_depth_ = std::max(max_depth_, tree_depth(a.units, a.local.x, R));
            else
                for (std::uint64_t w = 1; w <= 256; w *= 2)
                    max_depth_ = std::max(max_depth_, tree_depth(a.units, w, R));
        }
        DeclaredJob::accept_output(a, out);
    }

    /// The slices' double sums added in slice order (DeclaredJob::finish, reduced()).
    void finish() override {
        DeclaredJob::finish();
        result_ = reduced(0).at(0);
    }

    /// Error bound, u = 2^-24 (float unit roundoff), h = (b - a)/n, M0..M2 bounds of |f|, |f'|,
    /// |f''| on [a, b], W = b - a:
    ///  - truncation: W h^2 / 12 * M2 (composite trapezoid rule);
    ///  - abscissae: x_i = fma(float(i), h_f, a_f) with h_f = h(1 + d), |d| <= u, float(i) with
    ///    relative error <= u above 2^24, a_f and the fma one rounding each: |x_i - x| <=
    ///    4u (|a| + W), moving each f value by <= M1 * 4u (|a| + W);
    ///  - evaluation: each f value within kEvalU u M0; the term h_f (f0 + f1) / 2 adds three
    ///    roundings and h_f's own: 4u M0 relative to |term| <= h M0;
    ///  - summation: in float, the work-group's tree and the device's passes over its records,
    ///    of depth d (tree_depth, the largest over the slices and the fan-ins a device may use),
    ///    add <= d u sum|terms| <= d u W M0; the sums in double after that are negligible
    ///    (< 1e-15 relative).
    /// Over n terms of weight h: FP = W [M1 4u (|a| + W) + (kEvalU + 4 + d) u M0]; first-order
    /// terms only, so the bound is doubled. A result outside it is wrong (a dropped slice, a
    /// shifted abscissa of n <~ 10^4, a wrong integrand); shifts at very large n drown in FP32.
    double bound() const {
        const double u = 0x1.0p-24;
        const double W = b_ - a_, h = W / double(n_);
        const auto m = bounds(f_.define, a_, b_);
        const double d = double(max_depth_);
        const double trunc = W * h * h / 12.0 * m.f2;
        const double fp = W * (m.f1 * 4.0 * u * (std::abs(a_) + W) + (kEvalU + 4.0 + d) * u * m.f0);
        return trunc + 2.0 * fp;
    }

    Verdict verify() const override {
        if (auto gap = coverage_error(runs_, n_, "intervals", "counted twice"); !gap.empty())
            return {false, std::move(gap)};
        const double err = std::abs(result_ - exact_), bnd = bound();
        std::ostringstream s;
        s.precision(10);
        s << "integral of " << name_ << " on [" << a_ << ", " << b_ << "] = " << result_ << ", exact "
          << exact_;
        s.precision(3);
        s << ", error " << err << (err <= bnd ? " <= " : " > ") << "bound " << bnd;
        return {err <= bnd, s.str()};
    }

    std::string summary() const override {
        std::ostringstream s;
        s.precision(10);
        s << "integral = " << result_ << " (exact " << exact_ << ")";
        return s.str();
    }

    double result() const { return result_; }

private:
    const DataJobSpec& declaration() const override { return spec_; }
    std::span<const std::byte> host_input(int) const override { return {}; }  // no inputs
    std::span<std::byte> host_output(int) override { return std::as_writable_bytes(std::span(&sum_, 1)); }

    void check_range(const Assignment& a) const { check_slice("quad", a.offset, a.units, n_, "intervals"); }

    std::uint64_t n_;
    std::uint64_t iterations_;
    std::string name_;
    Integrand f_;
    double a_ = 0.0, b_ = 1.0, exact_ = 0.0, result_ = 0.0;
    DataJobSpec spec_;
    float sum_ = 0.0f;             ///< "sum" as rank 0 holds it (the result in float)
    std::uint64_t max_depth_ = 0;  ///< deepest float summation tree of a slice, for the bound
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs_;
};

/// Worker side: the slice's declaration (the fused kernel for the plan's local size, the two
/// launches for NULL) run by execute_declared.
DataJobSpec declare_quad(const SliceSpec& s, const DeviceInfo&) {
    const auto& f = integrand(s.params.value("integrand", std::string("sin")));
    const double a = s.params.value("a", f.a), b = s.params.value("b", f.b);
    const std::uint64_t n = s.problem.x;
    check_slice("quad", s.offset, s.units, n, "intervals");  // units > 0: n = 0 is outside too
    return quad_declaration(n, f, a, b, s.local);
}

SliceTimes execute_quad(DeviceContext& ctx, const SliceSpec& s, std::span<const std::byte> in, Bytes& out) {
    out.clear();
    if (s.units == 0) return {};
    return execute_declared(declare_quad(s, ctx.info()), ctx, s, in, out);
}

}  // namespace

KernelJobFactory quad_job_factory() {
    KernelJobFactory f;
    f.name = "quad";
    f.make = [](const JobOptions& o) { return std::unique_ptr<KernelJob>(new QuadJob(o)); };
    f.execute = execute_quad;
    f.declare = declare_quad;
    f.streams_input = true;  // execute_declared (input_feed.hpp)
    f.dims = 1;
    f.description = "trapezoid rule over n intervals of [a, b], split by intervals";
    f.params = {{"integrand", "sin (default), exp, poly or runge"},
                {"a", "start of the interval (default: the integrand's, 0)"},
                {"b", "end of the interval (default: the integrand's, pi for sin, else 1)"}};
    f.calibration_sizes = {"16384", "65536", "262144"};
    f.tune_size = "65536";
    f.paper_case = PaperCase{"262144", 10000, 4e8};  // the paper's compute amount
    return f;
}

}  // namespace worksize::detail
