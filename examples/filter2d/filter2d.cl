// 2-D neighbourhood filter with (2R+1)x(2R+1) weights, edge-replicating borders.
// x = get_global_id(0) is the column, y = get_global_id(1) the GLOBAL row; the launch may cover
// a slice of rows (global offset) and be padded, hence the guard against width and `end`.
// A buffer's row 0 holds global row `*_origin`: row y of `in` is in[(y - in_origin) * width].
#pragma OPENCL FP_CONTRACT OFF
#ifndef R
#define R 2
#endif

__kernel void filter(__global const float* in, const int in_origin,
                     __constant float* weights /* (2R+1)^2, row-major */,
                     __global float* out, const int out_origin,
                     const int width, const int height, const int end) {
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= width || y >= end) return;
    float acc = 0.0f;
    for (int dy = -R; dy <= R; ++dy) {
        const int yy = clamp(y + dy, 0, height - 1);
        __global const float* row = in + (yy - in_origin) * width;
        for (int dx = -R; dx <= R; ++dx) {
            const int xx = clamp(x + dx, 0, width - 1);
            acc += weights[(dy + R) * (2 * R + 1) + (dx + R)] * row[xx];
        }
    }
    out[(y - out_origin) * width + x] = acc;
}
