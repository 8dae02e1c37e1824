// The kernel job of a job file (job_file_job.hpp).
#include "worksize/runtime/job_file_job.hpp"

#include <algorithm>
#include <cerrno>
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

#include "jobs/data_kernels.hpp"
#include "worksize/runtime/declared_job.hpp"
#include "worksize/runtime/devices.hpp"
#include "worksize/runtime/opencl.hpp"
#include "worksize/scheduler/job_file.hpp"
#include "worksize/scheduler/npy.hpp"

namespace worksize {

namespace {

/// A raw file of the buffer's elements, or a .npy of its type and shape (check_input_file:
/// checked before its data is read), into `h` (the buffer's bytes at `rows` rows).
void load_file(const std::string& path, const BufferDecl& d, std::uint64_t rows, std::span<std::byte> h) {
    const InputFile in = check_input_file(path, d, rows);
    std::ifstream f(path, std::ios::binary);
    if (!f.seekg(std::streamoff(in.offset)) || !f.read(reinterpret_cast<char*>(h.data()), std::streamsize(h.size())))
        throw Error("cannot read '" + path + "' (buffer '" + d.name + "'): " + std::strerror(errno));
}

/// The declaration at a problem size, resolved once per size (workers see many slices).
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
    using Inputs = std::vector<std::shared_ptr<const Bytes>>;
    /// Every buffer's initial contents at (spec's size, seed), made as the file says, once, in
    /// `memory` (the first job's KernelJob::host_memory(): rank 0's pinned memory).
    const Inputs& inputs(const DataJobSpec& spec, std::uint64_t seed, const std::shared_ptr<HostMemoryResource>& memory) {
        std::lock_guard lock(mutex_);
        const auto key = std::tuple{spec.width, spec.units, seed};
        auto it = inputs_.find(key);
        if (it == inputs_.end()) it = inputs_.emplace(key, make_inputs(spec, seed, memory)).first;
        return it->second;
    }

    using Reference = std::vector<Bytes>;
    const Reference& reference(GlobalSize size, std::uint64_t seed, std::uint64_t iterations,
                               const std::function<Reference()>& make) {
        std::lock_guard lock(mutex_);
        const auto key = std::tuple{size.x, size.y, seed, iterations};
        auto it = references_.find(key);
        if (it == references_.end()) it = references_.emplace(key, make()).first;
        return it->second;
    }

private:
    Inputs make_inputs(const DataJobSpec& spec, std::uint64_t seed, const std::shared_ptr<HostMemoryResource>& memory) const;
    std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>, Inputs> inputs_;
    std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t>, Reference> references_;
    std::shared_ptr<const JobFile> file_;
    std::recursive_mutex mutex_;  // reference() makes a job, which calls at()
    std::map<std::pair<std::uint64_t, std::uint64_t>, DataJobSpec> specs_;
};

Specs::Inputs Specs::make_inputs(const DataJobSpec& spec, std::uint64_t seed,
                                 const std::shared_ptr<HostMemoryResource>& memory) const {
    Inputs out;
    for (std::size_t b = 0; b < spec.buffers.size(); ++b) {
        const auto& d = spec.buffers[b];
        const std::uint64_t elems = d.layout == BufferLayout::split ? spec.units * d.pitch : d.count;
        auto h = std::make_shared<Bytes>(bytes_with(memory));
        h->assign(elems * elem_size(d.type), std::byte{0});
        const BufferInit& init = file_->init[b];
        if (init.kind == BufferInit::Kind::random) {
            std::mt19937_64 rng(seed * 1000003u + init.seed);
            const bool integer = d.type == ElemType::i32 || d.type == ElemType::u32 || d.type == ElemType::i64;
            // The bounds fit the buffer's type (the reader checks): converted to integers only for
            // an integer buffer (a float buffer's 1e19 is beyond a long: undefined behaviour).
            if (integer) {
                std::uniform_int_distribution<std::int64_t> ui(std::int64_t(init.lo), std::int64_t(init.hi));
                for (std::uint64_t i = 0; i < elems; ++i) data::store(h->data(), d.type, i, double(ui(rng)));
            } else {
                std::uniform_real_distribution<double> u(init.lo, init.hi);
                for (std::uint64_t i = 0; i < elems; ++i) data::store(h->data(), d.type, i, u(rng));
            }
        } else if (init.kind == BufferInit::Kind::constant) {
            for (std::uint64_t i = 0; i < elems; ++i) data::store(h->data(), d.type, i, init.value);
        } else if (init.kind == BufferInit::Kind::file) {
            try {
                load_file(init.path, d, spec.units, *h);
            } catch (const InvalidArgument& e) {  // named as the file's reader names it
                throw InvalidArgument("job file '" + file_->path + "': buffers[" + std::to_string(b) + "].init.file: " +
                                      e.what());
            }
        }
        out.push_back(std::move(h));
    }
    return out;
}

/// Rank 0's side.
class FileJob final : public DeclaredJob {
public:
    FileJob(std::shared_ptr<Specs> specs, const JobOptions& o)
        : specs_(std::move(specs)), spec_(specs_->at(o.size)), options_(o), iterations_(o.iterations), seed_(o.seed) {
        host_.resize(spec_.buffers.size());
        shared_inputs_.resize(spec_.buffers.size());
    }

    KernelDescriptor descriptor() const override { return data_plan_request(spec_).kernel; }
    GlobalSize problem() const override {
        return spec_.dims == 2 ? GlobalSize{spec_.width, spec_.units} : GlobalSize{spec_.units, 1};
    }
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
    void generate() override {
        // The inputs of a size and seed are made once and shared (the tuner and bench make a
        // job per run); outputs get fresh memory, starting from their input where they have one.
        const auto& inputs = specs_->inputs(spec_, seed_, host_memory());
        for (std::size_t b = 0; b < spec_.buffers.size(); ++b) {
            const auto& d = spec_.buffers[b];
            if (d.output) {
                shared_inputs_[b].reset();
                host_[b] = bytes_with(host_memory());
                host_[b].assign(inputs[b]->begin(), inputs[b]->end());
            } else {
                shared_inputs_[b] = inputs[b];
                host_[b].clear();
                host_[b].shrink_to_fit();
            }
        }
    }

    SliceSpec slice_spec(const Assignment& a) const override {
        SliceSpec s;
        s.kernel = spec_.name;
        s.problem = problem();
        s.offset = a.offset;
        s.units = a.units;
        s.global = a.global;
        s.local = a.local;
        s.iterations = iterations_;
        s.params = nlohmann::json::object();
        return s;
    }
    Verdict verify() const override {
        const double tol = specs_->file().tolerance;
        if (tol < 0) return {true, "not checked: the job file has no \"verify\": {\"tolerance\": ...}", false};
        const auto& reference = specs_->reference(problem(), seed_, iterations_, [this] { return single_device_run(); });
        double worst = 0;
        bool tail_read = false;  // the worst element looks like a read past a shared buffer (read_a_tail)
        std::string where;
        for (std::size_t b = 0; b < spec_.buffers.size(); ++b) {
            const auto& d = spec_.buffers[b];
            if (!d.output) continue;
            std::size_t at = 0;
            const double err = worst_error(d.type, host_[b].data(), reference[b].data(), host_[b].size() / elem_size(d.type), at);
            if (err > worst || (std::isnan(err) && !std::isnan(worst))) {
                worst = std::isnan(err) ? INFINITY : err;
                tail_read = read_a_tail(d.type, host_[b].data(), reference[b].data(), at);
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
        if (worst > tol && tail_read)
            s << " (NaN against a huge value: what a read past a shared buffer's end finds in the reference and in "
                 "this run; is a buffer's \"count\" short?)";
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
    /// Whether element i looks like a read past a shared buffer's end (declared_job.hpp,
    /// kSharedTail): NaN in the reference (its tail of 0xff bytes) and a huge value or an
    /// infinity here (0x7f bytes: 3.4e38 as a float, 1.4e306 as a double).
    static bool read_a_tail(ElemType t, const std::byte* got, const std::byte* want, std::size_t i) {
        const auto huge = [](double v) { return !std::isnan(v) && std::abs(v) > 1e30; };
        if (t == ElemType::f32)
            return std::isnan(reinterpret_cast<const float*>(want)[i]) && huge(reinterpret_cast<const float*>(got)[i]);
        if (t == ElemType::f64)
            return std::isnan(reinterpret_cast<const double*>(want)[i]) && huge(reinterpret_cast<const double*>(got)[i]);
        return false;
    }
    /// The largest |got - want| / max(1, |want|) over n elements of type t, and where (NaN: inf).
    static double worst_error(ElemType t, const std::byte* got, const std::byte* want, std::size_t n, std::size_t& at) {
        switch (t) {
        case ElemType::f32: return worst_typed<float>(got, want, n, at);
        case ElemType::f64: return worst_typed<double>(got, want, n, at);
        case ElemType::i32: return worst_typed<std::int32_t>(got, want, n, at);
        case ElemType::u32: return worst_typed<std::uint32_t>(got, want, n, at);
        case ElemType::i64: return worst_typed<std::int64_t>(got, want, n, at);
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
    std::vector<Bytes> single_device_run() const {
        auto devices = all_local_devices();
        DeviceContext ctx(devices.front().device, devices.front().info);
        FileJob ref(specs_, options_);
        ref.generate();
        Assignment a;
        a.units = spec_.units;
        a.global = problem();
        Bytes out;
        execute_declared(spec_, ctx, ref.slice_spec(a), ref.slice_input(a), out, kReferenceTail);
        ref.accept_output(a, out);
        ref.finish();
        return std::move(ref.host_);
    }

    std::shared_ptr<Specs> specs_;
    DataJobSpec spec_;
    JobOptions options_;
    std::uint64_t iterations_, seed_;
    std::vector<Bytes> host_;  // outputs (and inputs that are outputs too), in host_memory()
    std::vector<std::shared_ptr<const Bytes>> shared_inputs_;  // inputs only

    /// Buffer b's memory on rank 0: its own for outputs, the shared inputs else.
    std::span<const std::byte> host(std::size_t b) const {
        return shared_inputs_[b] ? std::span<const std::byte>(*shared_inputs_[b]) : std::span<const std::byte>(host_[b]);
    }

    const DataJobSpec& declaration() const override { return spec_; }
    std::span<const std::byte> host_input(int b) const override { return host(std::size_t(b)); }
    std::span<std::byte> host_output(int b) override { return host_[std::size_t(b)]; }
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
    f.streams_input = true;  // execute_declared (input_feed.hpp)
    f.description = file->description.empty() ? "from job file " + file->path : file->description;
    f.make = [specs](const JobOptions& o) { return std::make_unique<FileJob>(specs, o); };
    f.execute = [specs](DeviceContext& ctx, const SliceSpec& s, std::span<const std::byte> in, Bytes& out) {
        return execute_declared(specs->at(s.problem), ctx, s, in, out);
    };
    f.declare = [specs](const SliceSpec& s, const DeviceInfo&) { return specs->at(s.problem); };
    const GlobalSize size = file->size();
    f.tune_size = file->spec.dims == 2 ? std::to_string(size.x) + "x" + std::to_string(size.y) : std::to_string(size.x);
    f.calibration_sizes = {};
    register_kernel_job(std::move(f));
    return name;
}

}  // namespace worksize
