// The porting API: how a kernel is split, shipped, run on a device slice, gathered and verified.
// The sample kernels implement it (kernels/<name>/job.cpp, registered from the list in
// kernels/CMakeLists.txt); a user's own OpenCL kernel does the same and registers itself with
// register_kernel_job(). The job orchestration (job.hpp) is
// generic over it: rank 0 calls the master-side methods, every device's rank calls execute().
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "worksize/runtime/bytes.hpp"
#include "worksize/scheduler/data_spec.hpp"
#include "worksize/scheduler/planner.hpp"
#include "worksize/scheduler/tuning.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize {

class DeviceContext;

/// What a worker needs, besides the input payload, to run its slice. Travels as JSON.
struct SliceSpec {
    std::string kernel;          ///< registered job name ("matmul", ...)
    GlobalSize problem;          ///< the whole problem's global size
    std::uint64_t offset = 0;    ///< first row (2-D) or item (1-D) of the slice
    std::uint64_t units = 0;     ///< rows (2-D) or items (1-D) of the slice
    GlobalSize global;           ///< the slice's NDRange as launched
    LocalSize local;             ///< {0,0}: NULL
    std::uint64_t iterations = 1;
    nlohmann::json params;       ///< kernel-specific parameters (e.g. matmul's K, integrand)
    /// Rank-local inputs (`run --inputs local`): the rank that runs the slice makes its input
    /// (KernelJob::make_slice_input of a job made from `job_options` there) and checks its output
    /// (KernelJob::verify_slice); rank 0 sends no input and receives no output, only the verdict.
    bool local_inputs = false;
    nlohmann::json job_options = nullptr;  ///< with local_inputs: the JobOptions (to_json) the job is made from
};
nlohmann::json to_json(const SliceSpec& s);
SliceSpec slice_spec_from_json(const nlohmann::json& j);

/// Device-side times of one slice, seconds (OpenCL profiling events).
struct SliceTimes {
    double h2d = 0.0;
    double kernel = 0.0;         ///< all iterations together
    double d2h = 0.0;
};

struct Verdict {
    bool ok = false;
    std::string detail;          ///< e.g. "max rel err 3.1e-6 over 1024 rows" or the first mismatch
    bool checked = true;         ///< false: nothing was compared (detail says why); ok is then true
};

/// Options common to all sample kernels; each job reads what it needs.
struct JobOptions {
    GlobalSize size;
    std::uint64_t iterations = 1;
    std::uint64_t seed = 1;
    nlohmann::json params = nlohmann::json::object();  ///< e.g. {"integrand":"sin"}, {"scale":2.0}
};
nlohmann::json to_json(const JobOptions& o);
JobOptions job_options_from_json(const nlohmann::json& j);  ///< @throws InvalidArgument

/// `--backend`: what runs each device's slice. "kernel" is the job's own OpenCL kernel; a job
/// may offer library backends besides (KernelJobFactory::backends: matmul's "clblast"), which
/// choose their own work-groups (PlanRequest::backends).
struct BackendChoice {
    std::string all = "kernel";             ///< the backend of devices not in per_device
    std::map<int, std::string> per_device;  ///< device index (as plans number them) -> backend
    const std::string& of(int device) const;
    bool uses(const std::string& backend) const;
    /// The canonical text: "" when every device runs "kernel", else NAME for all devices or
    /// "I=NAME[,I=NAME..]" (entries of "kernel" dropped): what keys models and tuning entries.
    std::string text() const;
    /// The highest device index named (-1: none).
    int max_device() const;
};
/// Parse "NAME" (every device) or "INDEX=NAME[,INDEX=NAME..]" (the devices named, the others
/// "kernel"), spelled like --select's RANK=DEVICE list and read by the same parser; "" is
/// "kernel" everywhere. Names are not checked here. @throws InvalidArgument naming --backend.
BackendChoice parse_backends(const std::string& spec);

class KernelJob {
public:
    virtual ~KernelJob() = default;

    /// Planner descriptor for the job's problem size.
    virtual KernelDescriptor descriptor() const = 0;
    /// The NDRange of the whole problem (e.g. interp: the output image).
    virtual GlobalSize problem() const = 0;
    /// Split granule in units (rows/items); 1 unless the kernel needs more.
    virtual std::uint64_t granule() const { return 1; }
    /// The kernel parameters that decide which local size is best, as the tuning database keys
    /// its entries (beside the device and the problem's size class, so no sizes here). Default:
    /// the `params` of the whole problem's slice_spec().
    virtual nlohmann::json tuning_key() const;
    /// The work-group shape the kernel requires (e.g. 16x16 for __local tiles); {0,0} (the
    /// default): any. The planner gives it to every device, the tuner has nothing to tune, and
    /// the reports show it with the rule "required by the kernel".
    virtual LocalSize required_local() const { return {}; }
    /// The job's kernels return early for ids at or past the slice's extent (`if (gid >= n)
    /// return;`), so the planner may pad each slice's NDRange to whole work-groups
    /// (PlanRequest::pad_ndrange, Assignment::padded_global) and pick a good local size for any
    /// slice length; the executor must then launch `padded_global`. Default false: the NDRange
    /// is the slice's, and the local size divides it (down to 1 for a prime length).
    virtual bool guards_index() const { return false; }
    /// What runs device `device`'s slice (index into the plan's devices): "kernel" (the default)
    /// or one of the factory's library backends (KernelJobFactory::backends).
    virtual std::string backend(int device) const {
        (void)device;
        return "kernel";
    }
    /// For a job with tunable parameters (KernelJobFactory::tunables): what its parameters imply
    /// on `device` for the tuner's ranking, and whether they can run there (`invalid`). The
    /// default: the required work-group over the problem, nothing else known.
    virtual ParamCandidate param_candidate(const DeviceInfo& device) const;
    /// What the reports show of the kernel that runs, e.g. "kernel reg bm=128 ..."; "": one kernel.
    virtual std::string variant() const { return {}; }

    /// Master: make the seeded inputs (in host_memory(), where the job can).
    virtual void generate() = 0;
    /// Where generate() makes the job's host arrays: Cluster::generate() gives rank 0's pinned
    /// memory (Cluster::host_memory()), so that rank 0's own slices copy them straight at the
    /// link's rate; null (the default): ordinary memory, copied through pinned halves.
    void host_memory(std::shared_ptr<HostMemoryResource> memory) { host_memory_ = std::move(memory); }
    const std::shared_ptr<HostMemoryResource>& host_memory() const { return host_memory_; }
    /// Master: the plan is known; the job may move slice boundaries (sort: splitter-based
    /// range partition) and must then update the assignments' offset/units/global/share.
    virtual void partition(std::vector<Assignment>& assignments) { (void)assignments; }
    /// Master: spec and input payload of one assignment.
    virtual SliceSpec slice_spec(const Assignment& a) const = 0;
    virtual Bytes slice_input(const Assignment& a) const = 0;
    /// Master, optional: the slice's input as views of the job's own data, sent one after the
    /// other as one payload without packing (the worker sees their concatenation, exactly what
    /// slice_input would return). Empty (the default): slice_input() is used. The views must
    /// stay valid until the run's end.
    virtual std::vector<std::span<const std::byte>> input_parts(const Assignment& a) const {
        (void)a;
        return {};
    }
    /// Master, optional: where the slice's output belongs in the job's own result, so that it
    /// is received there directly. accept_output() is then called with this very span and must
    /// not copy it onto itself. Empty (the default): the output arrives in a buffer.
    virtual std::span<std::byte> output_target(const Assignment& a) {
        (void)a;
        return {};
    }
    /// Master: take one slice's output.
    virtual void accept_output(const Assignment& a, std::span<const std::byte> out) = 0;
    /// Master: combine the parts (sort merge, quadrature sum); counted in the makespan.
    virtual void finish() {}
    /// Master: check against a CPU reference.
    virtual Verdict verify() const = 0;

    /// Rank-local inputs (`worksize run --inputs local`, issue 26's "data from where it lives"):
    /// whether the job can make one slice's input on the rank that runs it, without generate(),
    /// and check that slice's output there. Default false (e.g. sort, whose slices depend on
    /// the whole input).
    virtual bool makes_slice_inputs() const { return false; }
    /// Any rank, on a job made from the same JobOptions: fill `in` (resized here; it lies in the
    /// device's pinned memory) with exactly the bytes slice_input(a) holds after generate().
    /// Only a.offset and a.units are set. Default: throws InvalidArgument.
    virtual void make_slice_input(const Assignment& a, Bytes& in) const;
    /// Any rank: check slice `a`'s output `out` (as accept_output would take it) against a CPU
    /// reference computed from its input `in`. Default: throws InvalidArgument.
    virtual Verdict verify_slice(const Assignment& a, std::span<const std::byte> in,
                                 std::span<const std::byte> out) const;
    /// Master: a one-line summary of the result (e.g. "integral = 2.0000001 (exact 2)").
    virtual std::string summary() const { return {}; }

private:
    std::shared_ptr<HostMemoryResource> host_memory_;
};

/// Worker side: run one slice on a device. Must work for any slice and any local size the
/// planner may choose ({0,0} = NULL). @throws Error (ClError, BuildError, InvalidArgument).
/// When the runtime calls it, `out` (and `in`, where it was received or packed) lies in the
/// device's pinned host memory (PinnedHostMemory), kept from job to job: `out.resize(n)` then
/// enqueueReadBuffer(..., out.data()) copies at DMA speed. Resize `out` in place; assigning it
/// another Bytes gives that buffer's memory instead (correct, but not pinned).
using SliceExecutor = std::function<SliceTimes(DeviceContext&, const SliceSpec&,
                                               std::span<const std::byte> in, Bytes& out)>;

/// A kernel parameter a job reads from JobOptions::params (`--param KEY=VALUE`).
struct KernelParam {
    std::string key;
    std::string help;            ///< e.g. "inner dimension K (default: N)"
};

/// A kernel parameter that `worksize tune` searches beside the local size (docs/tuning.md,
/// "Kernel parameters"): its key (also a KernelParam) and the values to try.
struct TunableParam {
    std::string key;
    std::vector<std::uint64_t> values;
};

/// A kernel's case in `run --paper-experiment`: the founding paper's size, repeat count and
/// stated compute amount.
struct PaperCase {
    std::string size;            ///< as --size takes it
    std::uint64_t iterations = 1;
    double ops = 0.0;            ///< the paper's compute amount for `iterations`; 0: the job's own
};

struct KernelJobFactory {
    std::string name;
    std::function<std::unique_ptr<KernelJob>(const JobOptions&)> make;
    SliceExecutor execute;
    /// NDRange dimensionality of the problem (for parsing --size): 1 or 2, required.
    int dims = 0;
    /// One line for the command-line help (e.g. "FP32 C = A*B, split by rows of C").
    std::string description;
    /// The parameters the job reads, in the order the help lists them.
    std::vector<KernelParam> params;
    /// Sizes (as --size takes them) for calibration without explicit sizes: the adaptive ladder
    /// starts at the first. Empty: {"256", "1024", "4096"}.
    std::vector<std::string> calibration_sizes;
    /// Size of `tune --kernel all` without --size ("": tune's own default).
    std::string tune_size;
    /// Library backends the job offers besides its own kernel (`--backend`, e.g. "clblast").
    std::vector<std::string> backends;
    /// Parameters `worksize tune` searches (the product of their values, each set checked by the
    /// job: KernelJob::param_candidate), unless given with --param. Empty: local sizes only.
    std::vector<TunableParam> tunables;
    /// Parameters added where every device of the job is a GPU and the local policy is not
    /// NULL, unless --param gives a tunable or one of these, or (`--local tuned`) a tuning entry
    /// of a device decides (e.g. matmul's {"variant": "reg"}: its register-tiled kernel by
    /// default on GPUs).
    nlohmann::json gpu_params = nlohmann::json::object();
    /// Its case in `run --paper-experiment`, if the paper's experiment has one.
    std::optional<PaperCase> paper_case;
    /// `execute` may start before a worker has received the whole input: it takes each part as it
    /// arrives (execute_declared does). Otherwise the input is all there before `execute` runs.
    bool streams_input = false;
    /// A declared job's slice (declared_job.hpp) as `execute` runs it on a device: its
    /// declaration (the kernel variant, build options and launch details), checked. What
    /// `worksize plan --instructions` lists (scheduler/slice_program.hpp); empty for a job whose
    /// slices are not declared (sort). A library backend's slice declares its routine
    /// (KernelDecl::library: matmul's CLBlast SGEMM).
    std::function<DataJobSpec(const SliceSpec&, const DeviceInfo&)> declare;
};

/// PlanRequest::backends for `devices` devices: job.backend(i) each; empty when all are "kernel".
std::vector<std::string> job_backends(const KernelJob& job, std::size_t devices);

/// The plan request every command starts from for `job` on `devices` devices: its descriptor,
/// problem, granule, required local size, index guard and backends. The caller sets strategy,
/// local policy, iterations and the rest.
PlanRequest job_request(const KernelJob& job, std::size_t devices);

/// Registry of kernel jobs: the sample kernels are registered on first use, in the order of
/// kernels/CMakeLists.txt; users add theirs (a job of an existing name replaces it).
/// @throws InvalidArgument without a name, a factory, an executor or dims 1 or 2.
void register_kernel_job(KernelJobFactory factory);
/// The registered job `name`. The reference stays valid for the life of the program, also
/// across later registrations (a re-registration of the same name replaces its contents).
const KernelJobFactory& kernel_job(const std::string& name);  ///< @throws InvalidArgument
/// Whether a job of this name is registered.
bool has_kernel_job(const std::string& name);
/// The registered names, in registration order (the sample kernels first).
std::vector<std::string> kernel_job_names();

}  // namespace worksize
