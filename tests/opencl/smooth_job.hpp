// The data-job tests' kernels (test_data_job.cpp, test_data_faults.cpp): `smooth`, a 3-point
// stencil of ints over a halo of 1 (modulo a prime, so that values stay exact), and `stats`, a
// per-item reduction; with the stencil's CPU reference.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace worksize::test {

inline const char* kSmoothSource = R"CL(
__kernel void smooth(__global const int* a, const int ao, __global int* b, const int bo, const int n,
                     const int end) {
    const int i = get_global_id(0);
    if (i >= end) return;
    const int l = max(i - 1, 0), r = min(i + 1, n - 1);
    b[i - bo] = (a[l - ao] + a[i - ao] + a[r - ao]) % 1000003;
}
__kernel void stats(__global const int* a, const int ao, __global int* sums, __global int* maxima,
                    const int begin, const int end) {
    const int i = get_global_id(0);
    if (i >= end) return;
    sums[i - begin] = a[i - ao] % 1000;
    maxima[i - begin] = a[i - ao];
}
)CL";

/// `steps` steps of `smooth` over all of `a` on the CPU.
inline std::vector<std::int32_t> smooth_reference(std::vector<std::int32_t> a, int steps) {
    const int n = int(a.size());
    std::vector<std::int32_t> b(a.size());
    for (int s = 0; s < steps; ++s) {
        for (int i = 0; i < n; ++i)
            b[std::size_t(i)] = (a[std::size_t(std::max(i - 1, 0))] + a[std::size_t(i)] +
                                 a[std::size_t(std::min(i + 1, n - 1))]) % 1000003;
        a.swap(b);
    }
    return a;
}

}  // namespace worksize::test
