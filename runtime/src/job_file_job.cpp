// The kernel job of a job file (job_file_job.hpp).
#include "worksize/runtime/job_file_job.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <tuple>
#include <map>
#include <mutex>
#include <random>
#include <sstream>

#include "data_kernels.hpp"
#include "worksize/runtime/devices.hpp"
#include "worksize/runtime/opencl.hpp"
#include "worksize/scheduler/job_file.hpp"

namespace worksize {

namespace {

/// The declaration at a problem size, resolved once per size (workers see many slices).
/// A raw file of the buffer's elements, or a .npy of its type (version 1 or 2, C order).
void load_file(const std::string& path, const BufferDecl& d, std::vector<std::byte>& h) {
    std::ifstream f(path, std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::size_t start = 0;
    if (data.size() >= 10 && data.compare(0, 6, "\x93NUMPY") == 0) {
        const bool v1 = data[6] == 1;
        const std::size_t hlen = v1 ? std::size_t(std::uint8_t(data[8])) | std::size_t(std::uint8_t(data[9])) << 8
                                    : std::size_t(std::uint8_t(data[8])) | std::size_t(std::uint8_t(data[9])) << 8 |
                                          std::size_t(std::uint8_t(data[10])) << 16 | std::size_t(std::uint8_t(data[11])) << 24;
        start = (v1 ? 10 : 12) + hlen;
        const std::string header = data.substr(v1 ? 10 : 12, hlen);
        const char* want = d.type == ElemType::f32 ? "<f4" : d.type == ElemType::f64 ? "<f8" : d.type == ElemType::i32 ? "<i4" : "<u4";
        if (header.find(want) == std::string::npos || header.find("'fortran_order': True") != std::string::npos)
            throw InvalidArgument("'" + path + "' is not a C-order .npy of " + std::string(to_string(d.type)) + " (" +
                                  want + ")");
    }
    if (data.size() - start != h.size())
        throw InvalidArgument("'" + path + "' holds " + std::to_string(data.size() - start) + " bytes of data; buffer '" +
                              d.name + "' needs " + std::to_string(h.size()));
    std::memcpy(h.data(), data.data() + start, h.size());
}


class Specs {
public:
    explicit Specs(std::shared_ptr<const JobFile> file) : file_(std::move(file)) {}
    const DataJobSpec& at(GlobalSize size) {
        std::lock_guard lock(mutex_);
        auto it = specs_.find({size.x, size.y});
        if (it == specs_.end()) it = specs_.emplace(std::pair{size.x, size.y}, file_->spec_for(size)).first;
        return it->second;
    }
    const JobFile& file() const { return *file_; }

    /// The single-device reference of (size, seed, iterations), made once: the tuner and bench
    /// verify every run, and the inputs of a seed do not change.
    using Inputs = std::vector<std::shared_ptr<const std::vector<std::byte>>>;
    /// Every buffer's initial contents at (spec's size, seed), made as the file says, once.
    const Inputs& inputs(const DataJobSpec& spec, std::uint64_t seed) {
        std::lock_guard lock(mutex_);
        const auto key = std::tuple{spec.width, spec.units, seed};
        auto it = inputs_.find(key);
        if (it == inputs_.end()) it = inputs_.emplace(key, make_inputs(spec, seed)).first;
        return it->second;
    }

    using Reference = std::vector<std::vector<std::byte>>;
    const Reference& reference(GlobalSize size, std::uint64_t seed, std::uint64_t iterations,
                               const std::function<Reference()>& make) {
        std::lock_guard lock(mutex_);
        const auto key = std::tuple{size.x, size.y, seed, iterations};
        auto it = references_.find(key);
        if (it == references_.end()) it = references_.emplace(key, make()).first;
        return it->second;
    }

private:
    Inputs make_inputs(const DataJobSpec& spec, std::uint64_t seed) const;
    std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>, Inputs> inputs_;
    std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t>, Reference> references_;
    std::shared_ptr<const JobFile> file_;
    std::mutex mutex_;
    std::map<std::pair<std::uint64_t, std::uint64_t>, DataJobSpec> specs_;
};

std::vector<std::uint64_t> halos(const DataJobSpec& s) {
    std::vector<std::uint64_t> h;
    for (std::size_t b = 0; b < s.buffers.size(); ++b) h.push_back(halo_rows(s, int(b)));
    return h;
}


/// The reduce arguments of the job, (kernel, argument), in order.
std::vector<std::pair<std::size_t, std::size_t>> reductions(const DataJobSpec& s) {
    std::vector<std::pair<std::size_t, std::size_t>> v;
    for (std::size_t k = 0; k < s.kernels.size(); ++k)
        for (std::size_t i = 0; i < s.kernels[k].args.size(); ++i)
            if (s.kernels[k].args[i].kind == ArgKind::reduce) v.emplace_back(k, i);
    return v;
}

/// One slice on one device: the payload in, the kernels `iterations` times, the output out
/// (each output split buffer's rows, then per reduction its combined record as doubles).
SliceTimes execute_slice(const DataJobSpec& spec, DeviceContext& ctx, const SliceSpec& s,
                         std::span<const std::byte> in, Bytes& out) {
    SliceTimes t;
    const auto halo = halos(spec);
    auto& q = ctx.queue();
    std::vector<cl::Buffer> bufs;
    std::vector<cl::Event> h2d, d2h;
    std::size_t at = 0;
    auto take = [&](std::size_t n) {
        if (at + n > in.size())
            throw Error("job '" + spec.name + "': the slice's input holds " + std::to_string(in.size()) +
                        " bytes, fewer than its declaration needs");
        const std::byte* p = in.data() + at;
        at += n;
        return p;
    };
    for (std::size_t b = 0; b < spec.buffers.size(); ++b) {
        const auto& d = spec.buffers[b];
        const std::uint64_t bytes = d.layout == BufferLayout::shared ? d.count * elem_size(d.type)
                                                                     : (s.units + 2 * halo[b]) * row_bytes(d);
        bufs.emplace_back(ctx.context(), CL_MEM_READ_WRITE, bytes);
        if (!d.input) {
            q.enqueueFillBuffer(bufs.back(), cl_uint(0), 0, bytes);
            continue;
        }
        if (d.layout == BufferLayout::split) {
            const auto [first, n] = input_rows(spec, int(b), s.offset, s.units);
            h2d.emplace_back();
            q.enqueueWriteBuffer(bufs.back(), CL_FALSE, (first + halo[b] - s.offset) * row_bytes(d), n * row_bytes(d),
                                 take(n * row_bytes(d)), nullptr, &h2d.back());
        }
    }
    for (std::size_t b = 0; b < spec.buffers.size(); ++b) {
        const auto& d = spec.buffers[b];
        if (!d.input || d.layout != BufferLayout::shared) continue;
        h2d.emplace_back();
        q.enqueueWriteBuffer(bufs[b], CL_FALSE, 0, d.count * elem_size(d.type), take(d.count * elem_size(d.type)), nullptr,
                             &h2d.back());
    }
    cl::Program program = ctx.program_from_source(spec.source, spec.build_options);
    std::vector<cl::Kernel> kernels;
    std::vector<data::Geometry> geo;
    std::map<std::pair<std::size_t, std::size_t>, cl::Buffer> records;
    for (std::size_t k = 0; k < spec.kernels.size(); ++k) {
        kernels.push_back(data::make_kernel(program, spec.kernels[k]));
        geo.push_back(data::geometry(spec, spec.kernels[k], s.offset, s.units, s.local));
    }
    for (const auto& [k, i] : reductions(spec)) {
        const auto& d = spec.buffers[std::size_t(spec.kernels[k].args[i].buffer)];
        records.emplace(std::pair{k, i}, cl::Buffer(ctx.context(), CL_MEM_READ_WRITE, geo[k].padded * d.count * elem_size(d.type)));
    }
    std::vector<cl::Event> runs;
    for (std::uint64_t it = 0; it < std::max<std::uint64_t>(s.iterations, 1); ++it)
        for (std::size_t k = 0; k < spec.kernels.size(); ++k) {
            const auto& kd = spec.kernels[k];
            for (std::size_t i = 0; i < kd.args.size(); ++i)
                if (kd.args[i].kind == ArgKind::reduce)
                    data::fill_identity(q, records.at({k, i}), spec.buffers[std::size_t(kd.args[i].buffer)], kd.args[i].op,
                                        geo[k].padded);
            data::bind_args(kernels[k], kd, bufs, [&](std::size_t i) -> const cl::Buffer& { return records.at({k, i}); },
                            geo[k], s.offset, halo);
            runs.emplace_back();
            q.enqueueNDRangeKernel(kernels[k], geo[k].offset, geo[k].global, geo[k].local, nullptr, &runs.back());
        }
    std::uint64_t n = 0;
    for (const auto& d : spec.buffers)
        if (d.output && d.layout == BufferLayout::split) n += s.units * row_bytes(d);
    const auto reds = reductions(spec);
    out.resize(n + [&] {
        std::uint64_t r = 0;
        for (const auto& [k, i] : reds) r += spec.buffers[std::size_t(spec.kernels[k].args[i].buffer)].count * sizeof(double);
        return r;
    }());
    std::uint64_t o = 0;
    for (std::size_t b = 0; b < spec.buffers.size(); ++b) {
        const auto& d = spec.buffers[b];
        if (!d.output || d.layout != BufferLayout::split) continue;
        d2h.emplace_back();
        q.enqueueReadBuffer(bufs[b], CL_FALSE, halo[b] * row_bytes(d), s.units * row_bytes(d), out.data() + o, nullptr,
                            &d2h.back());
        o += s.units * row_bytes(d);
    }
    for (const auto& [k, i] : reds) {
        const auto& a = spec.kernels[k].args[i];
        const auto& d = spec.buffers[std::size_t(a.buffer)];
        Bytes rec(geo[k].padded * d.count * elem_size(d.type));
        d2h.emplace_back();
        q.enqueueReadBuffer(records.at({k, i}), CL_TRUE, 0, rec.size(), rec.data(), nullptr, &d2h.back());
        std::vector<double> total(d.count, data::identity(a.op));
        data::combine_records(a.op, d.type, rec.data(), geo[k].padded, total);
        std::memcpy(out.data() + o, total.data(), total.size() * sizeof(double));
        o += total.size() * sizeof(double);
    }
    q.finish();
    for (const auto& e : h2d) t.h2d += event_seconds(e);
    for (const auto& e : runs) t.kernel += event_seconds(e);
    for (const auto& e : d2h) t.d2h += event_seconds(e);
    return t;
}

Specs::Inputs Specs::make_inputs(const DataJobSpec& spec, std::uint64_t seed) const {
    Inputs out;
    for (std::size_t b = 0; b < spec.buffers.size(); ++b) {
        const auto& d = spec.buffers[b];
        const std::uint64_t elems = d.layout == BufferLayout::split ? spec.units * d.pitch : d.count;
        auto h = std::make_shared<std::vector<std::byte>>(elems * elem_size(d.type), std::byte{0});
        const BufferInit& init = file_->init[b];
        if (init.kind == BufferInit::Kind::random) {
            std::mt19937_64 rng(seed * 1000003u + init.seed);
            const bool integer = d.type == ElemType::i32 || d.type == ElemType::u32;
            std::uniform_real_distribution<double> u(init.lo, init.hi);
            std::uniform_int_distribution<std::int64_t> ui(std::int64_t(init.lo), std::int64_t(init.hi));
            for (std::uint64_t i = 0; i < elems; ++i) data::store(h->data(), d.type, i, integer ? double(ui(rng)) : u(rng));
        } else if (init.kind == BufferInit::Kind::constant) {
            for (std::uint64_t i = 0; i < elems; ++i) data::store(h->data(), d.type, i, init.value);
        } else if (init.kind == BufferInit::Kind::file) {
            load_file(init.path, d, *h);
        }
        out.push_back(std::move(h));
    }
    return out;
}

/// Rank 0's side.
class FileJob final : public KernelJob {
public:
    FileJob(std::shared_ptr<Specs> specs, const JobOptions& o)
        : specs_(std::move(specs)), spec_(specs_->at(o.size)), iterations_(o.iterations), seed_(o.seed) {
        host_.resize(spec_.buffers.size());
        shared_inputs_.resize(spec_.buffers.size());
    }

    KernelDescriptor descriptor() const override { return data_plan_request(spec_).kernel; }
    GlobalSize problem() const override {
        return spec_.dims == 2 ? GlobalSize{spec_.width, spec_.units} : GlobalSize{spec_.units, 1};
    }
    std::uint64_t granule() const override { return data_granule(spec_); }
    bool guards_index() const override { return true; }  // data kernels guard with `end`
    /// The job's name and a fingerprint of what it runs (source, options, kernels and their
    /// accesses): an edited job file of the same name does not reuse the old entries.
    nlohmann::json tuning_key() const override {
        // The file as written (sizes by name, not resolved) and the kernel source it names, less
        // what does not change the kernels' runs: the size (the database's size class), the
        // inputs' values, verification, ops and the description.
        nlohmann::json what = specs_->file().raw;
        for (const char* k : {"size", "description", "verify", "ops_per_unit"}) what.erase(k);
        if (what.contains("buffers"))
            for (auto& b : what["buffers"])
                if (b.is_object()) b.erase("init");
        std::uint64_t h = 1469598103934665603ull;  // FNV-1a: the same on every node
        for (const unsigned char c : what.dump() + spec_.source) h = (h ^ c) * 1099511628211ull;
        char hex[17];
        std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
        return {{"job", spec_.name}, {"fingerprint", hex}};
    }
    LocalSize required_local() const override { return common_required_local(spec_); }
    /// Slices start on the granule; a halo deeper than a slice is refused here, before any send.
    void partition(std::vector<Assignment>& assignments) override {
        align_slices(spec_, assignments);
        check_slices(spec_, assignments);
    }

    void generate() override {
        // The inputs of a size and seed are made once and shared (the tuner and bench make a
        // job per run); outputs get fresh memory, starting from their input where they have one.
        const auto& inputs = specs_->inputs(spec_, seed_);
        for (std::size_t b = 0; b < spec_.buffers.size(); ++b) {
            const auto& d = spec_.buffers[b];
            if (d.output) {
                shared_inputs_[b].reset();
                host_[b] = *inputs[b];
            } else {
                shared_inputs_[b] = inputs[b];
                host_[b].clear();
                host_[b].shrink_to_fit();
            }
        }
    }

    SliceSpec slice_spec(const Assignment& a) const override {
        return {spec_.name, problem(), a.offset, a.units, a.global, a.local, iterations_, nlohmann::json::object()};
    }
    std::vector<std::span<const std::byte>> input_parts(const Assignment& a) const override {
        std::vector<std::span<const std::byte>> parts;
        for (std::size_t b = 0; b < spec_.buffers.size(); ++b) {
            const auto& d = spec_.buffers[b];
            if (!d.input || d.layout != BufferLayout::split) continue;
            const auto [first, n] = input_rows(spec_, int(b), a.offset, a.units);
            parts.emplace_back(host(b).data() + first * row_bytes(d), n * row_bytes(d));
        }
        for (std::size_t b = 0; b < spec_.buffers.size(); ++b)
            if (spec_.buffers[b].input && spec_.buffers[b].layout == BufferLayout::shared) parts.emplace_back(host(b));
        if (parts.empty()) parts.emplace_back();  // nothing to send: one empty part
        return parts;
    }
    Bytes slice_input(const Assignment& a) const override {
        Bytes b;
        for (const auto& p : input_parts(a)) b.insert(b.end(), p.begin(), p.end());
        return b;
    }
    void accept_output(const Assignment& a, std::span<const std::byte> out) override {
        std::uint64_t o = 0;
        for (std::size_t b = 0; b < spec_.buffers.size(); ++b) {
            const auto& d = spec_.buffers[b];
            if (!d.output || d.layout != BufferLayout::split) continue;
            const std::uint64_t n = a.units * row_bytes(d);
            if (o + n > out.size()) throw Error("job '" + spec_.name + "': a slice's output is too short");
            std::memcpy(host_[b].data() + a.offset * row_bytes(d), out.data() + o, n);
            o += n;
        }
        std::vector<std::vector<double>> parts;
        for (const auto& [k, i] : reductions(spec_)) {
            const auto& d = spec_.buffers[std::size_t(spec_.kernels[k].args[i].buffer)];
            std::vector<double> v(d.count);
            if (o + d.count * sizeof(double) > out.size()) throw Error("job '" + spec_.name + "': a slice's output is too short");
            std::memcpy(v.data(), out.data() + o, d.count * sizeof(double));
            o += d.count * sizeof(double);
            parts.push_back(std::move(v));
        }
        partials_[a.offset] = std::move(parts);
    }
    void finish() override {
        // Each reduction: the slices' records in slice order, into the shared buffer.
        const auto reds = reductions(spec_);
        for (std::size_t r = 0; r < reds.size(); ++r) {
            const auto& a = spec_.kernels[reds[r].first].args[reds[r].second];
            const auto& d = spec_.buffers[std::size_t(a.buffer)];
            std::vector<double> total(d.count, data::identity(a.op));
            for (const auto& [offset, parts] : partials_)
                for (std::size_t j = 0; j < d.count; ++j) total[j] = data::combine(a.op, total[j], parts[r][j]);
            for (std::size_t j = 0; j < d.count; ++j) data::store(host_[std::size_t(a.buffer)].data(), d.type, j, total[j]);
        }
        partials_.clear();
    }

    Verdict verify() const override {
        const double tol = specs_->file().tolerance;
        if (tol < 0) return {true, "not checked: the job file has no \"verify\": {\"tolerance\": ...}", false};
        const auto& reference = specs_->reference(problem(), seed_, iterations_, [this] { return single_device_run(); });
        double worst = 0;
        std::string where;
        for (std::size_t b = 0; b < spec_.buffers.size(); ++b) {
            const auto& d = spec_.buffers[b];
            if (!d.output) continue;
            std::size_t at = 0;
            const double err = worst_error(d.type, host_[b].data(), reference[b].data(), host_[b].size() / elem_size(d.type), at);
            if (err > worst || (std::isnan(err) && !std::isnan(worst))) {
                worst = std::isnan(err) ? INFINITY : err;
                std::ostringstream w;
                w.precision(9);
                w << d.name << "[" << at << "] = " << data::load(host_[b].data(), d.type, at) << ", the single-device run has "
                  << data::load(reference[b].data(), d.type, at);
                where = w.str();
            }
        }
        std::ostringstream s;
        s.precision(3);
        s << "max rel error " << worst << " against a single-device run (tolerance " << tol << ")";
        if (!where.empty()) s << "; worst " << where;
        return {worst <= tol, s.str()};
    }

    std::string summary() const override {
        std::ostringstream s;
        for (const auto& [k, i] : reductions(spec_)) {
            const auto& d = spec_.buffers[std::size_t(spec_.kernels[k].args[i].buffer)];
            s << (s.tellp() > 0 ? "; " : "") << d.name << " =";
            for (std::size_t j = 0; j < std::min<std::size_t>(d.count, 4); ++j)
                s << ' ' << data::load(host_[std::size_t(spec_.kernels[k].args[i].buffer)].data(), d.type, j);
            if (d.count > 4) s << " ...";
        }
        return s.str();
    }

private:
    /// The largest |got - want| / max(1, |want|) over n elements of type t, and where (NaN: inf).
    static double worst_error(ElemType t, const std::byte* got, const std::byte* want, std::size_t n, std::size_t& at) {
        switch (t) {
        case ElemType::f32: return worst_typed<float>(got, want, n, at);
        case ElemType::f64: return worst_typed<double>(got, want, n, at);
        case ElemType::i32: return worst_typed<std::int32_t>(got, want, n, at);
        case ElemType::u32: return worst_typed<std::uint32_t>(got, want, n, at);
        }
        return 0;
    }
    template <class T>
    static double worst_typed(const std::byte* got, const std::byte* want, std::size_t n, std::size_t& at) {
        double worst = 0;
        const T* g = reinterpret_cast<const T*>(got);
        const T* w = reinterpret_cast<const T*>(want);
        for (std::size_t i = 0; i < n; ++i) {
            double err = std::abs(double(g[i]) - double(w[i])) / std::max(1.0, std::abs(double(w[i])));
            if (std::isnan(err)) err = INFINITY;
            if (err > worst) worst = err, at = i;
        }
        return worst;
    }


    /// The whole problem as one slice on the first OpenCL device of this node: the reference.
    std::vector<std::vector<std::byte>> single_device_run() const {
        auto devices = all_local_devices();
        DeviceContext ctx(devices.front().device, devices.front().info);
        Assignment a;
        a.units = spec_.units;
        a.global = problem();
        const auto parts = input_parts(a);
        Bytes in;
        for (const auto& p : parts) in.insert(in.end(), p.begin(), p.end());
        Bytes out;
        execute_slice(spec_, ctx, slice_spec(a), in, out);
        // Unpack like accept_output into a copy of the host buffers.
        std::vector<std::vector<std::byte>> ref(spec_.buffers.size());
        for (std::size_t b = 0; b < spec_.buffers.size(); ++b)
            if (spec_.buffers[b].output) ref[b] = host(b);
        std::uint64_t o = 0;
        for (std::size_t b = 0; b < spec_.buffers.size(); ++b) {
            const auto& d = spec_.buffers[b];
            if (!d.output || d.layout != BufferLayout::split) continue;
            std::memcpy(ref[b].data(), out.data() + o, spec_.units * row_bytes(d));
            o += spec_.units * row_bytes(d);
        }
        for (const auto& [k, i] : reductions(spec_)) {
            const auto& d = spec_.buffers[std::size_t(spec_.kernels[k].args[i].buffer)];
            for (std::size_t j = 0; j < d.count; ++j) {
                double v;
                std::memcpy(&v, out.data() + o + j * sizeof(double), sizeof(double));
                data::store(ref[std::size_t(spec_.kernels[k].args[i].buffer)].data(), d.type, j, v);
            }
            o += d.count * sizeof(double);
        }
        return ref;
    }

    std::shared_ptr<Specs> specs_;
    DataJobSpec spec_;
    std::uint64_t iterations_, seed_;
    std::vector<std::vector<std::byte>> host_;  // outputs (and inputs that are outputs too)
    std::vector<std::shared_ptr<const std::vector<std::byte>>> shared_inputs_;  // inputs only

    /// Buffer b's memory on rank 0: its own for outputs, the shared inputs else.
    const std::vector<std::byte>& host(std::size_t b) const { return shared_inputs_[b] ? *shared_inputs_[b] : host_[b]; }
    std::map<std::uint64_t, std::vector<std::vector<double>>> partials_;  // by slice offset
};

}  // namespace

std::string register_job_file(std::shared_ptr<const JobFile> file) {
    const std::string name = file->spec.name;
    for (const auto& n : kernel_job_names())
        if (n == name)
            throw InvalidArgument("job file '" + file->path + "': name '" + name +
                                  "' is a registered kernel's; give the job another name");
    auto specs = std::make_shared<Specs>(file);
    KernelJobFactory f;
    f.name = name;
    f.dims = file->spec.dims;
    f.description = file->description.empty() ? "from job file " + file->path : file->description;
    f.make = [specs](const JobOptions& o) { return std::make_unique<FileJob>(specs, o); };
    f.execute = [specs](DeviceContext& ctx, const SliceSpec& s, std::span<const std::byte> in, Bytes& out) {
        return execute_slice(specs->at(s.problem), ctx, s, in, out);
    };
    const GlobalSize size = file->size();
    f.tune_size = file->spec.dims == 2 ? std::to_string(size.x) + "x" + std::to_string(size.y) : std::to_string(size.x);
    f.calibration_sizes = {};
    register_kernel_job(std::move(f));
    return name;
}

}  // namespace worksize
