// The work-size planner: the founding paper's rules (METHOD.md 1.1-1.2) and the simple
// baselines beside them. Pure functions of plain structs: no OpenCL, no MPI.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "worksize/scheduler/types.hpp"

namespace worksize {

/// Compute class of a compute amount (METHOD.md 1.1): small <= 4e8, large >= 8e11.
ComputeClass classify(double ops);

/// The paper's correction k for a class: large 0.25, medium 0.75, small 1.25.
double correction_k(ComputeClass c);

/// Shares of the global work per device, before rounding, for a registered split strategy that
/// needs nothing but the devices (even, pe-ratio, paper; strategy.hpp). Sums to 1. Order follows
/// `devices`. @throws InvalidArgument for an unknown name, for model/oracle (they need
/// measurements) or no devices.
std::vector<double> split_weights(const std::vector<DeviceInfo>& devices, const std::string& strategy,
                                  ComputeClass cls);

/// Pairwise rule of the paper for two devices: the share of the device with fewer PEs.
double paper_pair_share(std::uint64_t pes_small, std::uint64_t pes_large, double k);

/// Round weights to whole units (rows for 2-D, items for 1-D, in multiples of `granule`).
/// Returns units per device summing to `total_units`.
std::vector<std::uint64_t> round_to_units(const std::vector<double>& weights,
                                          std::uint64_t total_units, std::uint64_t granule = 1);

/// Round weights to whole units where device i's units must be a multiple of `multiples[i]`
/// (each >= 1). Every device first gets the multiple nearest its quota. While the sum is over
/// (under) the total, a whole multiple is taken from (given to) the device furthest above
/// (below) its quota in multiples, among those whose multiple fits the difference (ties: the
/// lower index). A last rest smaller than every such multiple goes to (comes from) the device
/// with the largest weight, whose slice alone is then not aligned. A device whose quota is under
/// half its multiple gets nothing. Returns units summing to `total_units`.
std::vector<std::uint64_t> round_to_unit_multiples(const std::vector<double>& weights, std::uint64_t total_units,
                                                   const std::vector<std::uint64_t>& multiples);

/// Settable local sizes of one dimension: divisors of `global` within `limit`.
std::vector<std::uint64_t> divisors_within(std::uint64_t global, std::uint64_t limit);

/// The paper's 1-D rule: the smallest divisor of `global` within the device limits that is
/// >= PEs per CU; fallback: the largest settable divisor. `rule` says which applied.
LocalSize paper_local_1d(const DeviceInfo& dev, std::uint64_t global, std::string* rule = nullptr);

/// The paper's 2-D rule with priority (METHOD.md 1.2) and its fallbacks.
LocalSize paper_local_2d(const DeviceInfo& dev, GlobalSize global, Priority priority,
                         std::string* rule = nullptr);

struct PlanRequest {
    KernelDescriptor kernel;
    GlobalSize global;
    std::uint64_t iterations = 1;
    std::optional<double> ops;              ///< overrides the descriptor's compute amount
    std::string strategy = "paper";         ///< a registered split strategy (strategy.hpp)
    LocalPolicy local_policy = LocalPolicy::paper;
    std::optional<Priority> priority;       ///< default: the kernel's
    /// Explicit weights (used by model/oracle strategies computed elsewhere); if set, the
    /// strategy's own split is not computed.
    std::optional<std::vector<double>> weights;
    /// Split granule in units (rows or items): e.g. a kernel that needs whole tiles.
    std::uint64_t granule = 1;
    /// 1-D kernels with a set local size: round shares to whole work-groups (a power of two
    /// >= the largest PEs per CU) so every slice has a good divisor. The paper rounds to whole
    /// items; set false to reproduce that exactly.
    bool align_1d_to_groups = true;
    /// The kernels guard their index (`if (gid >= n) return;`), so a slice's NDRange may be
    /// padded: its x (1-D: items; 2-D: the width) is rounded up to the device's pad quantum
    /// (pad_quantum) before the local-size rule is applied, and the launch to whole work-groups
    /// (Assignment::padded_global). The rule then finds a good local size for any slice length,
    /// primes included. false (the default, for kernels that do not say they guard): the rule on
    /// the slice itself, as the paper does. KernelJob::guards_index() says it for a job.
    bool pad_ndrange = false;
    /// Per device (empty: none): round that device's units to a multiple of this as well (its
    /// tuned work-group's y for 2-D, x for 1-D), so that its tuned local size divides its slice.
    /// 0 or 1: no constraint. plan_tuned sets it for `--local tuned`.
    std::vector<std::uint64_t> unit_multiples;
    /// The work-group shape the kernel requires ({0,0}: none, the local policy decides): every
    /// device with work gets it, whatever the policy, with the rule kRequiredLocalRule.
    LocalSize required_local;
    /// Per device (empty, or "" for a device: "kernel"): the backend that runs its slice
    /// (Assignment::backend). Another than "kernel" is a library that chooses its own work-groups
    /// (matmul's "clblast"): that device's slice gets a NULL local size with the rule
    /// library_local_rule(backend), is not padded, and no tuned entry applies to it.
    std::vector<std::string> backends;
};

/// Assignment::local_rule of a slice run by a library backend: "chosen by clblast (library backend)".
std::string library_local_rule(const std::string& backend);

/// Assignment::local_rule of a local size the kernel requires (tuned entries never replace it).
inline constexpr const char* kRequiredLocalRule = "required by the kernel";

/// The quantum a device's slice is padded to along x: the smallest power of two >= its PEs per
/// CU within its work-group and work-item limits (1 when nothing is known).
std::uint64_t pad_quantum(const DeviceInfo& dev);

/// The NDRange the local-size rule sees for a slice `slice` on `dev`: x rounded up to
/// pad_quantum(dev) when `pad`, else the slice itself.
GlobalSize rule_global(const DeviceInfo& dev, GlobalSize slice, bool pad);

/// The NDRange a slice is launched with: with `pad`, each dimension rounded up to a multiple of
/// `local` (only x for 1-D), or x to pad_quantum(dev) for a NULL local size; without, the slice
/// itself (the local size must then divide it).
GlobalSize launch_global(const DeviceInfo& dev, GlobalSize slice, LocalSize local, int dims, bool pad);

/// The split granule make_plan uses for `request` over `devices` (see align_1d_to_groups).
std::uint64_t split_granule(const std::vector<DeviceInfo>& devices, const PlanRequest& request);

/// The most work-items a plan takes: 2^53, below which the shares (computed in double) and the
/// slices padded to whole work-groups stay exact.
inline constexpr std::uint64_t kMaxPlanItems = std::uint64_t{1} << 53;

/// Make a plan over `devices` (all of them; a device may end with zero units).
/// @throws InvalidArgument on size 0, no devices, more than kMaxPlanItems work-items, or a size
/// no device can take.
Plan make_plan(const std::vector<DeviceInfo>& devices, const PlanRequest& request);

}  // namespace worksize
