// The synthetic cost models the model and split tests share (test_model.cpp, test_split.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "worksize/scheduler/model.hpp"

namespace worksize::test {

inline PhaseModel line(double a, double b) {
    PhaseModel p;
    p.fixed_s = a;
    p.per_x_s = b;
    return p;
}

/// A device model: send latency/bandwidth, h2d, compute per item, d2h, recv.
inline CostModel device(double send_fixed, double send_per_byte, double kernel_fixed, double per_item,
                 double back_per_byte = 0) {
    CostModel m;
    m.send = line(send_fixed, send_per_byte);
    m.h2d = line(1e-5, send_per_byte / 10);
    m.kernel = line(kernel_fixed, per_item);
    m.d2h = line(1e-5, back_per_byte / 10);
    m.recv = line(send_fixed, back_per_byte);
    return m;
}

/// Brute force over all granule splits of 2 or 3 devices.
inline double brute_force(const std::vector<CostModel>& models, const SplitJob& job) {
    const std::uint64_t g = job.total_units / job.granule;
    double best = INFINITY;
    if (models.size() == 2) {
        for (std::uint64_t a = 0; a <= g; ++a)
            best = std::min(best, evaluate_split(models, job, {a * job.granule, (g - a) * job.granule}).makespan_s);
    } else {
        for (std::uint64_t a = 0; a <= g; ++a)
            for (std::uint64_t b = 0; a + b <= g; ++b)
                best = std::min(best, evaluate_split(models, job,
                                                     {a * job.granule, b * job.granule, (g - a - b) * job.granule})
                                          .makespan_s);
    }
    return best;
}

inline SplitJob matmul_like(std::uint64_t rows) {
    SplitJob job;
    job.total_units = rows;
    job.ops_per_unit = 256;
    job.bytes_in_per_unit = 256 * 4;
    job.bytes_out_per_unit = 256 * 4;
    job.bytes_in_fixed = 256 * 256 * 4;
    return job;
}

}  // namespace worksize::test
