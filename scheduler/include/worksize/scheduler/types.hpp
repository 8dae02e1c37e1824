// Plain data shared by every part of worksize: what a device is, what a kernel is, what a plan
// is. Nothing here knows OpenCL or MPI: the runtime fills these structs from the live devices,
// the profile reader fills them from a JSON file, and the planner turns them into plans.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace worksize {

/// Why an operation failed, for callers that act on the kind of failure rather than its text
/// (the CLI's exit code, the tuner's skipping of a candidate). It crosses ranks intact.
enum class ErrorReason {
    generic,         ///< anything else (I/O, MPI, internal)
    bad_input,       ///< a user-supplied value is wrong (exit code 2)
    build_failure,   ///< a kernel did not compile
    device_limit,    ///< the launch exceeds the device's limits (work-group size, resources)
    launch_failure,  ///< another OpenCL failure while running a slice
    wrong_result,    ///< the job ran but its verification failed
    lost_rank,       ///< another rank is gone or stopped answering
    timed_out,       ///< a kernel ran past --kernel-timeout: its device is held, the command ends
};

const char* to_string(ErrorReason r);
/// The reason named by to_string(); an unknown name (a newer peer) reads as generic.
ErrorReason error_reason_from_string(const std::string& s);

/// Every error worksize reports derives from this; `what()` is one line naming the problem and
/// `reason()` its kind (generic unless a constructor says otherwise).
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& what) : std::runtime_error(what) {}
    explicit Error(const char* what) : std::runtime_error(what) {}
    Error(ErrorReason reason, const std::string& what) : std::runtime_error(what), reason_(reason) {}
    ErrorReason reason() const { return reason_; }

private:
    ErrorReason reason_ = ErrorReason::generic;
};

/// A user-supplied value is wrong (unknown name, size 0, malformed profile field, ...); its
/// reason is always bad_input.
class InvalidArgument : public Error {
public:
    explicit InvalidArgument(const std::string& what) : Error(ErrorReason::bad_input, what) {}
    explicit InvalidArgument(const char* what) : Error(ErrorReason::bad_input, what) {}
};

/// Throws InvalidArgument for bad_input (so that `catch (const InvalidArgument&)` still sees
/// it), else Error with `reason`: how a failure that crossed ranks is raised again.
[[noreturn]] void throw_error(ErrorReason reason, const std::string& what);

/// The reason of any exception: Error::reason(), else generic.
ErrorReason reason_of(const std::exception& e);
/// Whether a failure of this reason ends the whole command, not one configuration of it (a
/// tuner's candidate): a lost rank, or a device held by a kernel that never ended.
inline bool ends_command(ErrorReason r) { return r == ErrorReason::lost_rank || r == ErrorReason::timed_out; }

enum class DeviceType { gpu, cpu, accelerator, other };

/// Which rule gave a device's processing elements per compute unit (OpenCL does not report it).
enum class PeSource {
    nv_compute_capability,  ///< cl_nv_device_attribute_query: compute capability -> cores per SM
    amd_attribute,          ///< cl_amd_device_attribute_query: SIMDs per CU x SIMD width
    cpu_vector_width,       ///< CPU: native float vector width (SIMD lanes per core)
    preferred_multiple,     ///< fallback: CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
    profile,                ///< given in a --devices profile file
};

const char* to_string(DeviceType t);
const char* to_string(PeSource s);

/// One OpenCL device as seen by one MPI rank (or described in a profile file).
struct DeviceInfo {
    int rank = 0;              ///< MPI rank that drives it (0 for profile devices unless given)
    int index = 0;             ///< index of the device among its rank's devices
    std::string host;          ///< host name of the rank (profile: "node" or "profile")
    std::string platform;
    std::string name;
    std::string vendor;
    std::string driver_version;
    DeviceType type = DeviceType::other;
    std::uint32_t compute_units = 0;
    std::uint32_t pes_per_cu = 0;
    PeSource pe_source = PeSource::preferred_multiple;
    std::uint32_t max_clock_mhz = 0;
    std::uint64_t max_work_group_size = 0;
    std::array<std::uint64_t, 3> max_work_item_sizes{0, 0, 0};
    std::uint64_t local_mem_bytes = 0;
    std::uint64_t global_mem_bytes = 0;
    std::uint64_t max_alloc_bytes = 0;      ///< CL_DEVICE_MAX_MEM_ALLOC_SIZE (0: unknown)
    std::uint64_t preferred_wg_multiple = 1;
    /// PCI address "DDDD:BB:DD.F" where the driver gives one (NVIDIA's and AMD's attribute
    /// queries, cl_khr_pci_bus_info), else "": which physical device this is on its host.
    std::string pci_bus_id;

    std::uint64_t total_pes() const { return std::uint64_t(compute_units) * pes_per_cu; }
};

/// Work-group shape priority of the paper's 2-D local-size rule.
enum class Priority { x, y };

/// What the planner needs to know about a kernel.
struct KernelDescriptor {
    std::string name;
    int dims = 1;                       ///< NDRange dimensionality (1 or 2)
    Priority default_priority = Priority::x;
    /// Operations (add, sub, mul, div, compare) per work-item per iteration, for the problem
    /// `size` (the global NDRange; for matmul also the inner dimension K = size[0]).
    double ops_per_item = 1.0;
    double bytes_in_per_item = 0.0;     ///< bytes a device must receive per work-item of its share
    double bytes_out_per_item = 0.0;    ///< bytes it returns per work-item of its share
    double bytes_in_fixed = 0.0;        ///< bytes every participating device needs whole (e.g. B)
};

/// Global NDRange of a job: x = columns (width), y = rows (height). 1-D kernels use x only.
struct GlobalSize {
    std::uint64_t x = 1;
    std::uint64_t y = 1;
    std::uint64_t items() const { return x * y; }
    bool operator==(const GlobalSize&) const = default;
};

enum class ComputeClass { small, medium, large };
const char* to_string(ComputeClass c);

/// Split strategies are named (strategy.hpp's registry: "even", "pe-ratio", "paper", ...).
enum class LocalPolicy { null, paper, tuned };
const char* to_string(LocalPolicy p);
const char* to_string(Priority p);

/// Local work size; {0,0} means NULL (the driver chooses).
struct LocalSize {
    std::uint64_t x = 0;
    std::uint64_t y = 0;
    bool is_null() const { return x == 0; }
    bool operator==(const LocalSize&) const = default;
};

/// One device's part of a job.
struct Assignment {
    int device = 0;             ///< index into the device list the plan was made from
    int rank = 0;
    std::string device_name;
    double share = 0.0;         ///< exact fraction of the global work obtained after rounding
    std::uint64_t offset = 0;   ///< first row (2-D) or item (1-D) of its slice
    std::uint64_t units = 0;    ///< rows (2-D) or items (1-D) in its slice
    GlobalSize global;          ///< its NDRange (the slice: units, or width x units)
    /// The NDRange as launched: `global` rounded up to whole work-groups of `local` (NULL local:
    /// x to the device's pad quantum) where the plan pads (Plan::padded); the kernels guard their
    /// index. Equal to `global` where nothing was padded.
    GlobalSize padded_global;
    LocalSize local;            ///< its local size ({0,0}: NULL)
    std::string local_rule;     ///< which rule or fallback produced `local`
    /// What runs the slice: "kernel" (the job's own OpenCL kernel) or a library backend that
    /// picks its own work-groups (PlanRequest::backends; matmul's "clblast").
    std::string backend = "kernel";
    double predicted_s = -1.0;  ///< model strategy: predicted time (<0: none)
    std::string note;           ///< e.g. why a device got no work
};

struct Plan {
    std::string kernel;
    GlobalSize global;
    int dims = 1;
    double ops = 0.0;           ///< compute amount = iterations x ops over all items
    std::uint64_t iterations = 1;
    ComputeClass compute_class = ComputeClass::small;
    double k = 1.0;
    std::string strategy = "paper";  ///< the split strategy's registered name
    LocalPolicy local_policy = LocalPolicy::paper;
    Priority priority = Priority::x;
    /// Slices' NDRanges padded for the local-size choice (PlanRequest::pad_ndrange).
    bool padded = false;
    std::vector<Assignment> assignments;
    double predicted_makespan_s = -1.0;
};

/// One rank as the oversubscription check sees it (issue 16).
struct RankLoad {
    std::string host;
    unsigned cores = 0;                 ///< the node's hardware threads as the rank saw them; 0: unknown
    std::uint64_t cpu_compute_units = 0; ///< of the CPU devices the rank drives in a job
    std::uint64_t other_devices = 0;     ///< GPUs and other devices that are not CPUs it drives
};

/// One warning text (without the "worksize: warning: " prefix) per node where the CPU devices
/// that its ranks drive have more compute units in all than the node has cores (each PoCL CPU
/// device runs a thread per compute unit, so the ranks' timings would interfere), or, failing
/// that, leave fewer cores than there are ranks driving GPUs and no CPU device (such a rank's host
/// loop, driver and MPI polls need a core: on an H100's node, k-means split by the model ran
/// 21 % faster with the CPU device at 14 of 16 cores). Nodes whose core count is unknown are
/// skipped.
std::vector<std::string> oversubscribed_nodes(const std::vector<RankLoad>& ranks);

/// Whether `a` and `b`, driven by two ranks, are one physical device: the same host, platform,
/// name and type, and the same PCI bus id where both have one, else the same device index (the
/// ranks discover their host's devices in one order).
bool same_device(const DeviceInfo& a, const DeviceInfo& b);

/// A GPU, accelerator or other non-CPU device that several ranks would drive (issue 15).
struct SharedDevice {
    std::vector<std::size_t> instances;  ///< positions in the device list, ascending (one per rank)
    std::string text;  ///< "ranks 1 and 2 on host h would drive one device, 0 'NVIDIA H200' (gpu, PCI 0000:3b:00.0)"
};

/// The non-CPU devices of `devices` (a job's, in rank order) that more than one rank drives.
/// CPU devices are left out: ranks of one host share its CPU by design (emulated nodes), and
/// oversubscribed_nodes() warns when they exceed its cores.
std::vector<SharedDevice> shared_devices(const std::vector<DeviceInfo>& devices);

}  // namespace worksize
