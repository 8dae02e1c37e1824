// Calibrated cost models (METHOD.md 2.1, 2.2) and the model-based split optimiser.
//
// The runtime measures; this file fits and decides. A `Sample` is one timed run of a kernel on
// one device with its phases timed separately (MPI send, host->device, kernel, device->host,
// MPI receive, and the host-side rest: slice packing, allocation, worker setup).
// `fit_cost_model` fits each phase with a robust, non-negative
// least-squares line (a ln form instead for the host rest when that fits better); `predict` evaluates it;
// `optimise_split` chooses how many units (rows or items) each device gets so that the
// predicted makespan is minimal, leaving out devices that would only slow the job.
// Pure C++: no OpenCL, no MPI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worksize/scheduler/types.hpp"

namespace worksize {

/// One measured run of a kernel on one device. Times in seconds; a phase that does not exist
/// for the device (e.g. the MPI send to rank 0's own device) is 0.
struct Sample {
    double units = 0;       ///< rows (2-D) or items (1-D) of the device's slice
    double items = 0;       ///< the slice's compute in operations (work-items x ops each x iterations)
    double bytes_in = 0;    ///< bytes sent to the device (slice + fixed inputs)
    double bytes_out = 0;   ///< bytes returned
    double send_s = 0;      ///< MPI send rank 0 -> worker
    double h2d_s = 0;       ///< host -> device copy
    double kernel_s = 0;    ///< kernel execution
    double d2h_s = 0;       ///< device -> host copy
    double recv_s = 0;      ///< MPI send worker -> rank 0
    /// Host-side rest: the device's done time minus the five phases above (slice packing,
    /// buffer allocation, memcpy, worker setup). It does not depend on the iteration count.
    double host_s = 0;
    // Job-level times of the run the sample comes from (rank 0's, the same for every device).
    double job_bytes_in = 0;   ///< the whole problem's input (units x bytes per unit, no fixed part)
    double job_bytes_out = 0;  ///< the whole problem's output
    double prepare_s = 0;      ///< rank 0 before the first slice (KernelJob::partition)
    double combine_s = 0;      ///< rank 0 after the last result (accept_output, finish)
};

/// T = fixed_s + per_x_s * x for one phase; x is bytes (transfers) or operations (kernel).
/// The kernel phase is the plain line: a saw-tooth wave term (METHOD.md 2.2) was tried and
/// removed, because calibration never enabled it (docs/models.md). The host phase may use
/// fixed_s + per_log_s * ln(max(x, log_x0) / log_x0) instead of the line (log_x0: the smallest
/// calibrated x) when that fits its points better
/// (allocator and driver bookkeeping grow with the slice, but far less than linearly;
/// docs/models.md "Host rest"); then per_x_s is 0.
struct PhaseModel {
    double fixed_s = 0;
    double per_x_s = 0;
    double per_log_s = 0;
    double log_x0 = 0;
    double rms_rel = 0;          ///< fit quality: RMS of relative residuals on the kept points
    std::size_t points = 0;      ///< distinct x values used (after taking medians)
    std::size_t rejected = 0;    ///< points rejected as outliers

    double eval(double x) const;
};

/// How well a fitted model predicts its own calibration (docs/models.md, "Fit quality"): the
/// relative error of the predicted total (the device's done time) against the measured median
/// done time of each fitted size. Stored with the model; `sizes` 0: not known (a model stored
/// before this was recorded, or one fitted outside `calibrate`).
struct FitQuality {
    double rms_rel = 0;      ///< RMS of the relative errors over the fitted sizes
    double max_rel = 0;      ///< the largest |relative error| among them
    std::size_t sizes = 0;   ///< fitted sizes compared
    std::string size_range;  ///< the smallest and largest fitted size, e.g. "4096..65536" ("": unknown)
};

/// Fit errors above which a model is not trusted: `calibrate` warns, and the `model` strategy
/// gives the device the paper rule's share instead of the model's (docs/models.md). Defaults
/// from the calibrations in docs/results: good fits stay within rms 14 % and max 17 %; the
/// known-bad ones (before the data-path fix) had rms 23-37 %, and the weak PoCL fit of issue 16
/// max 75 %.
struct FitLimits {
    double rms_rel = 0.20;
    double max_rel = 0.50;
};

/// The fit quality of `predicted` against `measured` done times, one pair per fitted size.
/// @throws InvalidArgument on a size mismatch, or a measured time that is not positive and finite.
FitQuality fit_quality(const std::vector<double>& predicted, const std::vector<double>& measured,
                       std::string size_range = {});

/// Why a fit of this quality is not trusted under `limits`, e.g. "fit error rms 54 %, max 75 %
/// over the calibrated sizes 4096..65536 (limits: rms 20 %, max 50 %)"; "" when it is within
/// them or its quality is unknown (sizes == 0).
std::string untrusted_fit(const FitQuality& quality, const FitLimits& limits);

/// Cost model of one kernel on one device: one line per phase.
struct CostModel {
    PhaseModel send;    ///< x = bytes_in
    PhaseModel h2d;     ///< x = bytes_in
    PhaseModel kernel;  ///< x = items (operations: OpenCL kernel event time only)
    PhaseModel d2h;     ///< x = bytes_out
    PhaseModel recv;    ///< x = bytes_out
    PhaseModel host;    ///< x = bytes_in + bytes_out (host-side rest, see Sample::host_s; line or ln)
    /// Job-level phases on rank 0 (the same for every device of a job; a split uses the largest
    /// of its devices' models): `prepare` runs before any slice is sent when two or more devices
    /// take part (x = the job's input bytes; e.g. sort's bucket partition, measured in the co-run),
    /// `combine` after the last result is back (x = the job's output bytes).
    PhaseModel prepare;
    PhaseModel combine;
    std::size_t samples = 0;
    /// Contention factor (METHOD.md 2.1, paper 003): how much slower every phase of the device
    /// after its send (copies, kernel, receive, host rest) runs when other devices of the job run
    /// at the same time (shared cores, memory bus, the master's CPU). Measured by co-runs after
    /// the solo calibration, clamped to [1, kMaxContention]; 1: none measured.
    double contention = 1.0;
    /// How well the model predicts its calibration runs (JSON "fit"; absent: unknown).
    FitQuality fit{};
};

inline constexpr double kMaxContention = 4.0;

/// Format of a CostModel's JSON ("format" field). 4: the host phase's ln form, pinned staging
/// buffers on the workers, quad's partial sums counted as output (docs/models.md). Older entries
/// (3: linear host phase, pageable staging; 2: no job-level phases; 1: the kernel phase absorbed
/// the host overhead) are refused by cost_model_from_json as stale.
inline constexpr int kCostModelFormat = 4;

struct FitOptions {
    /// Outliers: |residual| > outlier_k * 1.4826 * MAD (and > 1 % of the value) are rejected.
    double outlier_k = 3.5;
};

/// Fit a cost model. Samples with the same x are reduced to their median per phase, each
/// phase is fitted by non-negative weighted least squares (weights 1/T^2: relative error),
/// outliers are rejected by the MAD rule and the line refitted.
/// @throws InvalidArgument if `samples` is empty or holds negative or non-finite values.
CostModel fit_cost_model(const std::vector<Sample>& samples, const FitOptions& options = {});

struct Prediction {
    double send_s = 0, h2d_s = 0, kernel_s = 0, d2h_s = 0, recv_s = 0, host_s = 0;
    double total_s = 0;  ///< sum of the six phases (0 when units == 0)
};

/// Predicted phase times for a slice. A device with 0 units costs nothing (it takes no part).
/// `with_others`: other devices run at the same time; every phase but the send is multiplied by
/// the model's contention factor.
Prediction predict(const CostModel& model, double units, double items, double bytes_in,
                   double bytes_out, bool with_others = false);

/// The job the split optimiser divides.
struct SplitJob {
    std::uint64_t total_units = 0;     ///< rows (2-D) or items (1-D)
    double ops_per_unit = 1;           ///< operations per unit (work-items x ops each x iterations)
    double bytes_in_per_unit = 0;
    double bytes_out_per_unit = 0;
    double bytes_in_fixed = 0;         ///< bytes every participating device needs whole (B)
    std::uint64_t granule = 1;         ///< shares are multiples of this (one device may get
                                       ///< the remainder when total_units % granule != 0)
    /// true: rank 0's sends share its link and run one after another in `send_order`; device
    /// i starts after its own send finishes. false: all sends run in parallel.
    bool serial_sends = true;
    /// Indices of the devices in sending order. Empty: fastest link first (smallest
    /// per-byte send cost, ties by index), the optimal order for linear costs.
    std::vector<int> send_order;
    /// Rank-local inputs (`run --inputs local`): every rank makes its slices' inputs and keeps
    /// their outputs, so no send or receive to or from rank 0 is charged.
    bool local_inputs = false;
    /// A larger set of devices is chosen only if its predicted makespan beats the best smaller
    /// set's by more than this fraction (0: the plain optimum). It stands for the models' own
    /// error: a device that would save less than that is more likely to cost time (its fixed
    /// costs, contention with the other ranks) than to save it.
    double join_margin = 0.0;
    /// Per device (empty: none): the padded geometry its kernel runs on (PlanRequest::pad_ndrange).
    /// A slice of u units launches ceil(u / pad_units) * pad_units units (1-D: items padded to
    /// the device's pad quantum), each pad_scale times the work of an unpadded one (2-D: padded
    /// width / width); the kernel time is predicted for that, the transfers for the u units.
    struct Padding {
        std::uint64_t pad_units = 1;
        double pad_scale = 1.0;
    };
    std::vector<Padding> padding;
};

/// The padding of a `dims`-D problem `problem` on `dev` as the planner pads its slices
/// (pad_quantum: 1-D items, 2-D the width).
SplitJob::Padding split_padding(const DeviceInfo& dev, int dims, GlobalSize problem);

struct SplitResult {
    std::vector<std::uint64_t> units;       ///< per device (0: left out)
    std::vector<Prediction> predicted;      ///< per device phase times (zeros if left out)
    std::vector<double> start_s;            ///< when its send starts
    std::vector<double> finish_s;           ///< when its result is back (0 if left out; prepare included)
    double makespan_s = 0;                  ///< latest finish + combine
    std::vector<std::string> reasons;       ///< per device: empty, or why it was left out
    std::vector<int> send_order;            ///< order used
    double prepare_s = 0;                   ///< job-level phase before the sends (0 with one device)
    double combine_s = 0;                   ///< job-level phase after the last result
};

/// Predicted timeline of a given split (no optimisation). `units.size()` == models.size().
/// When two or more devices have work, each runs with others (its contention factor applies).
/// @throws InvalidArgument on size mismatch or an invalid send order.
SplitResult evaluate_split(const std::vector<CostModel>& models, const SplitJob& job,
                           const std::vector<std::uint64_t>& units);

/// Shares minimising the predicted makespan. Method (docs/models.md): for each subset of
/// devices (all subsets up to 8 devices, backward elimination beyond), bisection on the
/// makespan T where each device greedily takes the most granules it can finish by T, then a
/// local search moving blocks of granules between devices. Devices left out get a reason.
/// @throws InvalidArgument if there are no models, total_units == 0 or granule == 0.
SplitResult optimise_split(const std::vector<CostModel>& models, const SplitJob& job);

// ---------------------------------------------------------------------------------------------
// Calibration sizes (used by the runtime's calibrate(); pure so that it is unit-tested)

/// The adaptive ladder (docs/models.md, "Calibration sizes"): starting from `start`, each device
/// runs the problem doubled (1-D: x2 items; 2-D: x2 each side) until it is saturated, then fits
/// only the upper (saturated) sizes. A size is saturated when
///   work-items >= waves x compute_units x max_work_group_size   (several full waves; a CPU:
///                 waves x compute_units x 16 x max(16, preferred_wg_multiple)) and
///   kernel time >= max(min_kernel_s, overhead_factor x the smallest run's non-kernel time).
/// The ladder stops once `fit_sizes` saturated sizes span >= min_span x in operations, or the
/// next size is predicted to take more than max_run_s per run, or would need more than
/// max_bytes (or a quarter of the device's global memory), or after max_steps sizes.
struct AdaptiveCalibration {
    GlobalSize start{0, 0};          ///< first size of the ladder (0: the caller's default)
    /// Largest size the ladder may run (0: no cap): it stops before a size with a larger side
    /// (2-D) or more items (1-D). For calibrating well below a job's size (the 16x check).
    GlobalSize max_size{0, 0};
    double waves = 4;
    double min_kernel_s = 2e-3;
    double overhead_factor = 5;
    double max_run_s = 0.25;
    double max_bytes = 2.0 * 1024 * 1024 * 1024;
    int max_steps = 14;
    int fit_sizes = 3;
    double min_span = 4;
};

/// Work-items a device needs to count as saturated under `a` (see AdaptiveCalibration).
double saturation_items(const DeviceInfo& device, const AdaptiveCalibration& a);

/// One size of a device's ladder, as the adaptive rule judged it.
struct LadderStep {
    GlobalSize size{0, 0};
    double work_items = 0;           ///< NDRange of the run
    double ops = 0;                  ///< operations (Sample::items)
    double kernel_s = 0;             ///< median kernel event time
    double done_s = 0;               ///< median time until the result is back
    double overhead_s = 0;           ///< median done_s - kernel_s
    bool saturated = false;
    bool fitted = false;             ///< its samples are in the fit
};

/// Next size of a ladder (1-D: x2; 2-D: x2 each side).
GlobalSize next_ladder_size(GlobalSize g, int dims);

/// Apply the saturation rule to a ladder in order (steps[0] is the smallest run): sets
/// `saturated` on every step and `fitted` on the steps to fit (all saturated ones, topped up
/// with the largest unsaturated ones to `fit_sizes`). Returns true when the ladder may stop
/// climbing (enough saturated sizes spanning min_span).
bool judge_ladder(std::vector<LadderStep>& steps, double saturation_items, const AdaptiveCalibration& a);

/// Serialisation. @throws InvalidArgument naming the missing or malformed field, or for a
/// model of another format than kCostModelFormat (stale: recalibrate). Unknown fields are
/// ignored, among them the legacy "wave_items" / "per_wave_s" of older databases. The optional
/// "fit" object (FitQuality) is written when its sizes are known; a model without it reads
/// with an unknown fit (the same format: older databases stay readable).
nlohmann::json to_json(const PhaseModel& p);
nlohmann::json to_json(const CostModel& m);
PhaseModel phase_model_from_json(const nlohmann::json& j);
CostModel cost_model_from_json(const nlohmann::json& j);

}  // namespace worksize
