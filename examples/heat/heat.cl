// One explicit step of heat diffusion (Rodinia hotspot-like 5-point stencil), edge-replicating
// borders. x = get_global_id(0) is the column, y = get_global_id(1) the GLOBAL row; the launch
// may cover a slice of rows (global offset) and be padded, hence the guard against width and
// `end`. A buffer's row 0 holds global row `*_origin`: row y of `t` is t[(y - t_origin) * width].
#pragma OPENCL FP_CONTRACT OFF

__kernel void heat_step(__global const float* t, const int t_origin,
                        __global const float* power, const int p_origin,
                        __global float* t_next, const int n_origin,
                        const int width, const int height, const int end,
                        const float cx, const float cy, const float cp) {
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= width || y >= end) return;
    __global const float* row = t + (y - t_origin) * width;
    const float c = row[x];
    const float n = t[(clamp(y - 1, 0, height - 1) - t_origin) * width + x];
    const float s = t[(clamp(y + 1, 0, height - 1) - t_origin) * width + x];
    const float w = row[clamp(x - 1, 0, width - 1)];
    const float e = row[clamp(x + 1, 0, width - 1)];
    t_next[(y - n_origin) * width + x] =
        c + cx * ((e + w) - 2.0f * c) + cy * ((n + s) - 2.0f * c) + cp * power[(y - p_origin) * width + x];
}
