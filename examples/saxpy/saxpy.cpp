// Porting example: a user's own OpenCL kernel (SAXPY, z = a·x + y) run through worksize: the
// cluster finds every rank's devices, the paper's planner splits the work, rank 0 ships each
// device its slice, and the result is verified. With --tune DB, the kernel's local size is first
// tuned on every device (the guided search of `worksize tune`) into the database DB, and the
// plan takes each device's tuned local size from it. Build: target `worksize_example_saxpy`.
//   mpiexec -n 3 worksize_example_saxpy [n] [--tune DB]
#include <cmath>
#include <iostream>
#include <cstring>
#include <random>

#include "worksize/runtime/autotune.hpp"
#include "worksize/runtime/cluster.hpp"
#include "worksize/runtime/opencl.hpp"
#include "worksize/scheduler/planner.hpp"

namespace {

const char* kSource = R"CL(
#pragma OPENCL FP_CONTRACT OFF
__kernel void saxpy(const float a, __global const float* x, __global const float* y,
                    __global float* z, const uint n) {
    const uint i = get_global_id(0);
    if (i < n) z[i] = a * x[i] + y[i];
}
)CL";

using namespace worksize;

/// Master side: inputs, slices, gathering, verification.
class SaxpyJob : public KernelJob {
public:
    explicit SaxpyJob(const JobOptions& o) : n_(o.size.x), iterations_(o.iterations), seed_(o.seed) {}
    KernelDescriptor descriptor() const override {
        KernelDescriptor d;
        d.name = "saxpy";
        d.dims = 1;
        d.ops_per_item = 2;
        d.bytes_in_per_item = 8;
        d.bytes_out_per_item = 4;
        return d;
    }
    GlobalSize problem() const override { return {n_, 1}; }
    /// Slices in whole multiples of 4096 items (one device also gets the rest of n): every local
    /// size a device allows (at most 4096 on PoCL, 1024 on NVIDIA) then divides its slice, so a
    /// tuned local size can be used for any split.
    std::uint64_t granule() const override { return 4096; }
    void generate() override {
        std::mt19937_64 rng(seed_);
        std::uniform_real_distribution<float> u(-1.f, 1.f);
        x_.resize(n_);
        y_.resize(n_);
        for (auto& v : x_) v = u(rng);
        for (auto& v : y_) v = u(rng);
        out_.assign(n_, NAN);
    }
    SliceSpec slice_spec(const Assignment& a) const override {
        // The iterations travel with the slice: the tuner and the calibration time runs of more
        // iterations than a job's own, and scale by them.
        return {"saxpy", problem(), a.offset, a.units, a.global, a.local, iterations_, {{"a", kA}}};
    }
    Bytes slice_input(const Assignment& a) const override {
        Bytes b(a.units * 8);
        std::memcpy(b.data(), x_.data() + a.offset, a.units * 4);
        std::memcpy(b.data() + a.units * 4, y_.data() + a.offset, a.units * 4);
        return b;
    }
    // Optional, no copies on rank 0: the same bytes as slice_input, sent from where they are,
    // and the place the result is received into.
    std::vector<std::span<const std::byte>> input_parts(const Assignment& a) const override {
        return {std::as_bytes(std::span(x_.data() + a.offset, a.units)),
                std::as_bytes(std::span(y_.data() + a.offset, a.units))};
    }
    std::span<std::byte> output_target(const Assignment& a) override {
        return std::as_writable_bytes(std::span(out_.data() + a.offset, a.units));
    }
    void accept_output(const Assignment& a, std::span<const std::byte> out) override {
        if (out.size() != a.units * 4) throw Error("saxpy: slice output has the wrong size");
        float* dest = out_.data() + a.offset;
        if (out.data() != reinterpret_cast<const std::byte*>(dest)) std::memcpy(dest, out.data(), out.size());
    }
    Verdict verify() const override {
        for (std::uint64_t i = 0; i < n_; ++i) {
            const float want = kA * x_[i] + y_[i];
            if (out_[i] != want) return {false, "y[" + std::to_string(i) + "] = " + std::to_string(out_[i]) +
                                                    ", expected " + std::to_string(want)};
        }
        return {true, std::to_string(n_) + " elements exact"};
    }
    static constexpr float kA = 2.5f;

private:
    std::uint64_t n_, iterations_, seed_;
    std::vector<float> x_, y_, out_;
};

/// Worker side: run one slice on a device, the kernel `iterations` times (each writes z afresh).
SliceTimes execute(DeviceContext& ctx, const SliceSpec& s, std::span<const std::byte> in, Bytes& out) {
    SliceTimes t;
    if (s.units == 0) return t;
    const std::size_t bytes = s.units * 4;
    cl::Buffer x(ctx.context(), CL_MEM_READ_ONLY, bytes), y(ctx.context(), CL_MEM_READ_ONLY, bytes),
        z(ctx.context(), CL_MEM_WRITE_ONLY, bytes);
    cl::Event ex, ey, er;
    auto& q = ctx.queue();
    q.enqueueWriteBuffer(x, CL_FALSE, 0, bytes, in.data(), nullptr, &ex);
    q.enqueueWriteBuffer(y, CL_FALSE, 0, bytes, in.data() + bytes, nullptr, &ey);
    cl::Kernel k(ctx.program_from_source(kSource), "saxpy");
    k.setArg(0, s.params.at("a").get<float>());
    k.setArg(1, x);
    k.setArg(2, y);
    k.setArg(3, z);
    k.setArg(4, static_cast<cl_uint>(s.units));
    std::vector<cl::Event> ek(std::max<std::uint64_t>(s.iterations, 1));
    for (auto& e : ek)
        q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(s.global.x),
                               s.local.is_null() ? cl::NullRange : cl::NDRange(s.local.x), nullptr, &e);
    out.resize(bytes);
    q.enqueueReadBuffer(z, CL_TRUE, 0, bytes, out.data(), nullptr, &er);
    t.h2d = event_seconds(ex) + event_seconds(ey);
    for (const auto& e : ek) t.kernel += event_seconds(e);
    t.d2h = event_seconds(er);
    return t;
}

/// Tune saxpy's local size on every device with the guided search and store the choices in
/// `db` (what `worksize tune` does for the sample kernels).
void tune_all(Cluster& cluster, const JobOptions& o, const std::string& db) {
    Store store = Store::open(db);
    LocalTuner tuner(cluster, "saxpy", o);
    for (std::size_t d = 0; d < cluster.devices().size(); ++d) {
        const DeviceInfo& dev = cluster.devices()[d];
        const TuneResult r = tuner.tune(int(d), TuneOptions{});
        if (!r.found) throw Error("every local size of saxpy failed on device " + std::to_string(d));
        if (const std::string why = nothing_to_tune(r, 1); !why.empty()) {
            std::cerr << "worksize: warning: saxpy on device " << d << " (" << dev.name << "), size "
                      << tuner.size().x << ": " << why << "; nothing stored\n";
            continue;
        }
        store_tuning(store, tuner, dev, to_record(r));
        std::cout << "tuned device " << d << " (" << dev.name << "): local " << r.best.x << ", measured "
                  << r.measured << " of " << r.candidates << " candidates, runs of "
                  << tuner.timed_iterations(int(d)) << " iterations timed\n";
    }
    store.save();
}

}  // namespace

int main(int argc, char** argv) {
    mpi::Environment env(argc, argv);
    int code = 1;
    try {
        // Every rank registers the job, so workers can execute its slices.
        KernelJobFactory saxpy;
        saxpy.name = "saxpy";
        saxpy.make = [](const JobOptions& o) { return std::make_unique<SaxpyJob>(o); };
        saxpy.execute = execute;
        saxpy.dims = 1;
        saxpy.description = "z = a*x + y in single precision";
        register_kernel_job(std::move(saxpy));
        Cluster cluster(env, DeviceSelection{});
        if (!cluster.is_master()) return cluster.serve();
        try {
            JobOptions o;
            o.size = {1000003, 1};
            std::string db;
            for (int i = 1; i < argc; ++i) {
                const std::string a = argv[i];
                if (a == "--tune" && i + 1 < argc)
                    db = argv[++i];
                else if (a.find_first_not_of("0123456789") == std::string::npos && a != "0")
                    o.size.x = std::stoull(a);
                else
                    throw InvalidArgument("usage: worksize_example_saxpy [n > 0] [--tune DB]; not '" + a + "'");
            }
            if (!db.empty()) tune_all(cluster, o, db);
            SaxpyJob job(o);
            job.generate();
            PlanRequest req;
            req.kernel = job.descriptor();
            req.global = job.problem();
            req.granule = job.granule();
            Plan plan = make_plan(cluster.devices(), req);
            if (!db.empty()) {
                const Store store = Store::open(db);
                apply_tuned_locals(plan, cluster.devices(), tuning_source(store), job.tuning_key());
            }
            cluster.run(job, plan.assignments, "saxpy");  // warm-up: builds the programs
            job.generate();
            const JobResult r = cluster.run(job, plan.assignments, "saxpy");
            for (const auto& d : r.devices)
                std::cout << "rank " << d.assignment.rank << " " << d.assignment.device_name << ": "
                          << d.assignment.units << " items, local " << d.assignment.local.x
                          << (d.assignment.local_rule.rfind("tuned", 0) == 0 ? " (tuned)" : "") << ", kernel "
                          << d.times.kernel * 1e3 << " ms\n";
            std::cout << "makespan " << r.makespan_s * 1e3 << " ms; " << (r.verdict.ok ? "verified: " : "FAILED: ")
                      << r.verdict.detail << '\n';
            code = r.verdict.ok ? 0 : 3;
        } catch (...) {
            cluster.finish(1);
            throw;
        }
        cluster.finish(code);
    } catch (const JobAborted&) {
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "saxpy: error: " << e.what() << '\n';
        if (env.rank() != 0) env.abort(1);
        return 1;
    }
    return code;
}
