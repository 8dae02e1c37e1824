// A kernel that never ends (tests/mpi/kernel_timeout.sh): each item waits for its output to
// become non-zero, which nothing ever writes. The volatile read keeps the compiler from taking
// the loop for one without side effects (which it may assume ends).
__kernel void spin(__global float* z, const int z_origin, const int end) {
    const int i = get_global_id(0);
    if (i >= end) return;
    volatile __global float* p = z + (i - z_origin);
    while (*p == 0.0f) {
    }
    z[i - z_origin] = 2.0f;
}
