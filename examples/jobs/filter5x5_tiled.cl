// The 5x5 filter of examples/filter2d with a 16x16 tile of the input (and its halo) in __local
// memory: a kernel that runs only with 16x16 work-groups (reqd_work_group_size), so its job file
// declares "required_local": [16, 16]. Same conventions as filter2d.cl: global row ids, padded
// NDRange (every work-item reaches the barrier; only the store is guarded), row 0 of a buffer
// at its origin. Loads clamp to the image and to the rows this device holds, which leaves the
// results of real pixels unchanged: bit for bit those of filter2d.cl.
#pragma OPENCL FP_CONTRACT OFF
#define R 2
#define TS 16

__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void filter_tiled(__global const float* in, const int in_origin, __constant float* weights,
                  __global float* out, const int out_origin, const int width, const int height,
                  const int end) {
    __local float tile[TS + 2 * R][TS + 2 * R];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int x0 = get_global_id(0) - lx, y0 = get_global_id(1) - ly;
    const int row_lo = max(0, in_origin), row_hi = min(height - 1, end - 1 + R);
    for (int ty = ly; ty < TS + 2 * R; ty += TS)
        for (int tx = lx; tx < TS + 2 * R; tx += TS) {
            const int yy = clamp(y0 + ty - R, row_lo, row_hi);
            const int xx = clamp(x0 + tx - R, 0, width - 1);
            tile[ty][tx] = in[(yy - in_origin) * width + xx];
        }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int x = x0 + lx, y = y0 + ly;
    if (x >= width || y >= end) return;
    float acc = 0.0f;
    for (int dy = -R; dy <= R; ++dy)
        for (int dx = -R; dx <= R; ++dx)
            acc += weights[(dy + R) * (2 * R + 1) + (dx + R)] * tile[ly + R + dy][lx + R + dx];
    out[(y - out_origin) * width + x] = acc;
}
