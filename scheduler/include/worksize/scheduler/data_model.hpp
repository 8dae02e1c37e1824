// The cost of one step of a data job (data_spec.hpp), and the split that minimises it. Pure: the
// devices' rates and the links' costs come from outside (the runtime's probe run,
// runtime/src/jobs/data_job.cpp, or a test's figures).
//
// One step of a slice: its device computes the rows it launches (its own plus, with ghost zones,
// the rows it computes redundantly) and swaps halo rows with each neighbouring slice (host copies
// on its rank, MPI to another rank), amortised over the exchange_every steps that one exchange
// serves. Neighbours wait for each other at every exchange, so the chain of slices advances at
// the pace of its slowest slice: the step time is the largest of the slices' step times.
// Reductions, the scatter and the gathers are not counted (docs/models.md, "Data jobs").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "worksize/scheduler/data_spec.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize {

/// One device's speed on a data job.
struct DataDeviceRate {
    double unit_s = 0.0;  ///< seconds per launched unit (row or item) per step, every kernel of the step
    double step_s = 0.0;  ///< fixed seconds per step (launch overheads), whatever its units
    bool known() const { return unit_s > 0.0; }
};

/// The cost of one message of `bytes`: message_s + bytes · byte_s.
struct LinkCost {
    double byte_s = 0.0;
    double message_s = 0.0;
    double time(double bytes) const { return message_s + bytes * byte_s; }
};

/// How halo rows travel between two neighbouring slices (per direction, per buffer exchanged):
/// on one rank the runtime reads them from one device and writes them to the other; between
/// ranks it reads them, sends them by MPI and the receiver writes them. The defaults: MPI at
/// 6.5 GB/s and 5 µs (intra-node, measured with cluster/mpi-bw.c on the GPU node), a device copy
/// at 12 GB/s and 10 µs each way (a PCIe read or write with its wait; not measured here).
struct DataLinks {
    LinkCost same_rank{2.0 / 12e9, 2 * 10e-6};
    LinkCost between_ranks{2.0 / 12e9 + 1.0 / 6.5e9, 2 * 10e-6 + 5e-6};
};

/// What one exchange moves to one neighbour: the halo rows of every buffer exchanged, following
/// the runtime's rules (data_layout's walk of the steady state): one message per buffer.
struct HaloTraffic {
    std::uint64_t bytes = 0;     ///< per neighbour and exchange
    std::uint64_t messages = 0;  ///< buffers exchanged per exchange
    std::uint64_t every = 1;     ///< steps per exchange (DataJobSpec::exchange_every)
};
HaloTraffic halo_traffic(const DataJobSpec& spec);

/// Ghost zones: the redundant units a slice launches per step, on average, on each side that has
/// a neighbour: the mean of ghost_rows() over the exchange_every steps, (k − 1)·h/2.
double mean_ghost_rows(const DataJobSpec& spec);

/// One slice's predicted step.
struct SliceStep {
    int device = 0, rank = 0;
    std::uint64_t units = 0;  ///< its own units
    double launched = 0.0;    ///< units launched per step on average (own plus redundant)
    double compute_s = 0.0;   ///< launched · unit_s + step_s
    double halo_s = 0.0;      ///< its exchanges with its neighbours, per step (amortised)
    double step_s = 0.0;      ///< compute_s + halo_s
};

struct DataStepPrediction {
    std::vector<SliceStep> slices;  ///< the non-empty slices, in order along the split dimension
    double step_s = 0.0;            ///< the slowest slice's step_s: the step's makespan
    int slowest = -1;               ///< the device of that slice
};

/// The step of `assignments` (tiling the job's units, as data_layout() takes them) with
/// `rates[Assignment::device]`. @throws InvalidArgument for a slice whose device has no known rate.
DataStepPrediction predict_data_step(const DataJobSpec& spec, const std::vector<Assignment>& assignments,
                                     const std::vector<DataDeviceRate>& rates, const DataLinks& links = {});

/// The split minimising the predicted step time, over devices in slice order (device i's slice
/// comes before device i + 1's) on `ranks[i]`.
struct DataSplit {
    std::vector<double> weights;        ///< the continuous optimum's shares (0: left out), summing to 1
    std::vector<std::uint64_t> units;   ///< weights rounded to whole granules (round_to_units)
    std::vector<std::string> left_out;  ///< per device: why it gets nothing ("" when it works)
    double step_s = 0.0;                ///< the predicted step of `units`
};

/// For a set of devices, every one's step equals T when device i gets
/// u_i = (T − step_s_i − halo_i) / unit_s_i − ghost_i units (halo_i and ghost_i from its
/// neighbours in the set): T follows from Σ u_i = units in closed form. With up to 8 devices
/// every subset whose slices each hold at least a granule (and a halo's depth) is solved and the
/// fastest kept; beyond, devices are dropped one at a time while that helps. A device without a
/// known rate is left out. Equal rates without halo traffic give the even split.
/// @throws InvalidArgument when no device has a known rate.
DataSplit plan_data_split(const DataJobSpec& spec, const std::vector<int>& ranks,
                          const std::vector<DataDeviceRate>& rates, const DataLinks& links = {},
                          std::uint64_t granule = 1);

}  // namespace worksize
