// Sample kernel "quad": the composite trapezoid rule over n intervals of [a, b], split by
// intervals across devices. Each device returns one float partial per work-group
// (quad.cl); the master sums all partials in double with Kahan compensation in finish()
// and verify() checks the result against the exact integral within a derived error bound.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numbers>
#include <sstream>

#include "job_util.hpp"
#include "sample_kernels.hpp"
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

class QuadJob : public KernelJob {
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
    }

    bool guards_index() const override { return true; }  // its kernel returns for ids past the slice
    KernelDescriptor descriptor() const override {
        KernelDescriptor d;
        d.name = "quad";
        d.dims = 1;
        d.default_priority = Priority::x;
        // Operations per work-item (one interval): two x (mul + add each), two evaluations, add,
        // two muls, one reduction add.
        d.ops_per_item = 4.0 + 2.0 * f_.ops + 4.0;
        d.bytes_out_per_item = 0.0;  // at most kMaxPartials floats per slice (execute_quad)
        return d;
    }
    GlobalSize problem() const override { return {n_, 1}; }

    void generate() override {
        partials_.clear();
        runs_.clear();
        max_group_ = 1;
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
        if (out.size() % sizeof(float))
            throw Error("quad: device " + std::to_string(a.device) + " returned " +
                        std::to_string(out.size()) + " bytes, not whole floats");
        const auto count = out.size() / sizeof(float);
        const auto old = partials_.size();
        partials_.resize(old + count);
        if (count) std::memcpy(partials_.data() + old, out.data(), out.size());
        if (count) {
            const std::uint64_t g = std::max({a.global.x, a.padded_global.x, a.units});
            max_group_ = std::max<std::uint64_t>(max_group_, (g + count - 1) / count);
        }
        runs_.push_back({a.offset, a.units});
    }

    /// Kahan-compensated double sum of every partial.
    void finish() override {
        double sum = 0.0, c = 0.0;
        for (float p : partials_) {
            const double y = double(p) - c;
            const double t = sum + y;
            c = (t - sum) - y;
            sum = t;
        }
        result_ = sum;
    }

    /// Error bound, u = 2^-24 (float unit roundoff), h = (b - a)/n, M0..M2 bounds of |f|, |f'|,
    /// |f''| on [a, b], W = b - a:
    ///  - truncation: W h^2 / 12 * M2 (composite trapezoid rule);
    ///  - abscissae: x_i = fma(float(i), h_f, a_f) with h_f = h(1 + d), |d| <= u, float(i) with
    ///    relative error <= u above 2^24, a_f and the fma one rounding each: |x_i - x| <=
    ///    4u (|a| + W), moving each f value by <= M1 * 4u (|a| + W);
    ///  - evaluation: each f value within kEvalU u M0; the term h_f (f0 + f1) / 2 adds three
    ///    roundings and h_f's own: 4u M0 relative to |term| <= h M0;
    ///  - summation: the work-group tree of depth d = ceil(log2 group) adds <= d u sum|terms|
    ///    <= d u W M0; the master's Kahan sum in double is negligible (< 1e-15 relative).
    /// Over n terms of weight h: FP = W [M1 4u (|a| + W) + (kEvalU + 4 + d) u M0]; first-order
    /// terms only, so the bound is doubled. A result outside it is wrong (a dropped slice, a
    /// shifted abscissa of n <~ 10^4, a wrong integrand); shifts at very large n drown in FP32.
    double bound() const {
        const double u = 0x1.0p-24;
        const double W = b_ - a_, h = W / double(n_);
        const auto m = bounds(f_.define, a_, b_);
        const double d = std::ceil(std::log2(double(std::max<std::uint64_t>(max_group_, 1))));
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
    void check_range(const Assignment& a) const { check_slice("quad", a.offset, a.units, n_, "intervals"); }

    std::uint64_t n_;
    std::uint64_t iterations_;
    std::string name_;
    Integrand f_;
    double a_ = 0.0, b_ = 1.0, exact_ = 0.0, result_ = 0.0;
    std::uint64_t max_group_ = 1;  ///< largest work-group seen (global / partials), for the bound
    std::vector<float> partials_;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs_;
};

/// A slice returns at most this many partial sums (more are tree-summed on the device first).
constexpr std::uint64_t kMaxPartials = 1024;

void check_alloc(const DeviceInfo& info, std::uint64_t bytes, const char* what, std::uint64_t units) {
    if (info.max_alloc_bytes && bytes > info.max_alloc_bytes)
        throw Error("quad: a slice of " + std::to_string(units) + " intervals needs " +
                    std::to_string(bytes >> 20) + " MiB of " + what + ", over " + info.name +
                    "'s largest allocation (" + std::to_string(info.max_alloc_bytes >> 20) + " MiB)");
}

SliceTimes execute_quad(DeviceContext& ctx, const SliceSpec& s, std::span<const std::byte> in,
                        Bytes& out) {
    (void)in;  // quad has no input payload
    SliceTimes t;
    out.clear();
    const std::uint64_t units = s.units;
    if (units == 0) return t;
    const auto& f = integrand(s.params.value("integrand", std::string("sin")));
    const double a = s.params.value("a", f.a), b = s.params.value("b", f.b);
    const std::uint64_t n = s.problem.x;
    check_slice("quad", s.offset, units, n, "intervals");  // units > 0: n = 0 is outside too
    const std::uint64_t L = s.local.x;
    std::uint64_t G = std::max(s.global.x, units);
    if (L && G % L) G = (G / L + 1) * L;
    const auto& info = ctx.info();
    const std::string where = "quad.cl trapezoid on " + info.name + " (global " + std::to_string(G) +
                              ", local " + (L ? std::to_string(L) : std::string("NULL")) + ")";
    try {
        cl::Program prog = ctx.program("quad", "-DWS_INTEGRAND=" + std::to_string(f.define));
        auto& q = ctx.queue();
        const double h = (b - a) / double(n);
        const cl::NDRange global(G);
        std::uint64_t count = 0;  // partials
        cl::Buffer partials;
        // Work-group size of a reduce_terms launch: a power of two, at most 256, within the
        // compiled kernel's and the device's limits.
        auto reduce_width = [&](const cl::Kernel& k) {
            return std::bit_floor(std::min<std::uint64_t>({256, k.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(ctx.device()),
                                                           std::max<std::uint64_t>(info.max_work_item_sizes[0], 1)}));
        };
        // R iterations of `launch`, kernel times summed with bounded event lists.
        auto iterate = [&](auto&& launch) {
            std::vector<cl::Event> events;
            for (std::uint64_t r = 0; r < s.iterations; ++r) {
                launch(events);
                if (events.size() >= 256 || r + 1 == s.iterations) {
                    q.finish();
                    for (const auto& e : events) t.kernel += event_seconds(e);
                    events.clear();
                }
            }
        };
        if (L) {
            // Fused kernel: one partial per work-group of the planner's size.
            count = G / L;
            check_alloc(info, count * sizeof(float), "partials", units);
            cl::Kernel kern(prog, "trapezoid");
            partials = cl::Buffer(ctx.context(), CL_MEM_READ_WRITE, count * sizeof(float));
            set_args(kern, partials, cl_ulong(s.offset), cl_ulong(units), cl_float(a), cl_float(h),
                     cl::Local(L * sizeof(float)));
            iterate([&](std::vector<cl::Event>& ev) {
                ev.emplace_back();
                q.enqueueNDRangeKernel(kern, cl::NullRange, global, cl::NDRange(L), nullptr, &ev.back());
            });
        } else {
            // NULL: the driver's NDRange writes the terms, a fixed-size reduction follows.
            check_alloc(info, units * sizeof(float), "terms", units);
            cl::Kernel terms_k(prog, "trapezoid_terms");
            cl::Kernel reduce_k(prog, "reduce_terms");
            const std::uint64_t R = reduce_width(reduce_k);
            count = (units + R - 1) / R;
            cl::Buffer terms(ctx.context(), CL_MEM_READ_WRITE, units * sizeof(float));
            partials = cl::Buffer(ctx.context(), CL_MEM_READ_WRITE, count * sizeof(float));
            set_args(terms_k, terms, cl_ulong(s.offset), cl_ulong(units), cl_float(a), cl_float(h));
            set_args(reduce_k, partials, terms, cl_ulong(units), cl::Local(R * sizeof(float)));
            iterate([&](std::vector<cl::Event>& ev) {
                ev.emplace_back();
                q.enqueueNDRangeKernel(terms_k, cl::NullRange, global, cl::NullRange, nullptr, &ev.back());
                ev.emplace_back();
                q.enqueueNDRangeKernel(reduce_k, cl::NullRange, cl::NDRange(count * R), cl::NDRange(R),
                                       nullptr, &ev.back());
            });
        }
        // The partials of a large slice (millions) are tree-summed on the device down to at most
        // kMaxPartials, once after the iterations: rank 0's Kahan sum of 2M partials took 10.7 ms
        // of a 36.5 ms job on the H200 (docs/models.md "Quad's output"). A tree keeps the error
        // bound's depth log2(items per partial), which accept_output() derives from the count.
        if (count > kMaxPartials) {
            cl::Kernel red(prog, "reduce_terms");
            const std::uint64_t R = reduce_width(red);
            while (count > kMaxPartials && R >= 2) {
                const std::uint64_t next = (count + R - 1) / R;
                cl::Buffer summed(ctx.context(), CL_MEM_READ_WRITE, next * sizeof(float));
                set_args(red, summed, partials, cl_ulong(count), cl::Local(R * sizeof(float)));
                cl::Event ev;
                q.enqueueNDRangeKernel(red, cl::NullRange, cl::NDRange(next * R), cl::NDRange(R), nullptr, &ev);
                ev.wait();
                t.kernel += event_seconds(ev);
                partials = summed;
                count = next;
            }
        }
        out.resize(count * sizeof(float));
        cl::Event rd;
        q.enqueueReadBuffer(partials, CL_TRUE, 0, out.size(), out.data(), nullptr, &rd);
        t.d2h = event_seconds(rd);
    } catch (const cl::Error& e) {
        rethrow_cl(e, where);
    }
    return t;
}

}  // namespace

KernelJobFactory quad_job_factory() {
    KernelJobFactory f;
    f.name = "quad";
    f.make = [](const JobOptions& o) { return std::unique_ptr<KernelJob>(new QuadJob(o)); };
    f.execute = execute_quad;
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
