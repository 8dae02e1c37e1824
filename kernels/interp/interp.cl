// interp.cl: FP32 bilinear image resize for worksize's interp job (runtime/src/job_interp.cpp).
// OpenCL C 1.2.
//
// One work-item per output pixel; the NDRange is the slice of the output image: x = column,
// y = row within the slice (output row = row0 + y). The worker holds only the input rows the
// slice touches, starting at input row src_row0.
//
// Bit-exact with the CPU reference (InterpJob::verify): the host computes the float scale
// factors sx = in_w/out_w and sy = in_h/out_h once and passes them, so there is no division
// here; contraction into fma is off, and the reference does the same float operations in the
// same order:
//   src = ((float)x + 0.5f) * s - 0.5f;  src = min(max(src, 0), n - 1);
//   i0 = floor(src); i1 = min(i0 + 1, n - 1); w = src - i0;
//   top = p00 + (p01 - p00) * wx;  bottom = p10 + (p11 - p10) * wx;
//   out = top + (bottom - top) * wy.
// No barriers and no local memory: correct for any local size, NULL included.

#pragma OPENCL FP_CONTRACT OFF

__kernel void interp_bilinear(__global const float* restrict in, __global float* restrict out,
                              const int in_w, const int in_h, const int out_w, const int row0,
                              const int rows, const int src_row0, const int src_rows,
                              const float sx, const float sy) {
    const int x = (int)get_global_id(0);
    const int gy = (int)get_global_id(1);
    if (x >= out_w || gy >= rows) return;  // the host may pad the NDRange
    const int y = row0 + gy;

    const float tx = (float)x + 0.5f;
    const float ux = tx * sx;
    float fx = ux - 0.5f;
    fx = fmin(fmax(fx, 0.0f), (float)(in_w - 1));
    const float ty = (float)y + 0.5f;
    const float uy = ty * sy;
    float fy = uy - 0.5f;
    fy = fmin(fmax(fy, 0.0f), (float)(in_h - 1));

    const float flx = floor(fx);
    const float fly = floor(fy);
    const int x0 = (int)flx;
    const int y0 = (int)fly;
    const int x1 = min(x0 + 1, in_w - 1);
    const int y1 = min(y0 + 1, in_h - 1);
    const float wx = fx - flx;
    const float wy = fy - fly;

    // Rows relative to the slice's input rows; the clamp only keeps a host/device disagreement
    // (which verify() would report) from reading out of bounds.
    const int r0 = clamp(y0 - src_row0, 0, src_rows - 1);
    const int r1 = clamp(y1 - src_row0, 0, src_rows - 1);
    const float p00 = in[(size_t)r0 * in_w + x0];
    const float p01 = in[(size_t)r0 * in_w + x1];
    const float p10 = in[(size_t)r1 * in_w + x0];
    const float p11 = in[(size_t)r1 * in_w + x1];

    const float dt = p01 - p00;
    const float et = dt * wx;
    const float top = p00 + et;
    const float db = p11 - p10;
    const float eb = db * wx;
    const float bottom = p10 + eb;
    const float dv = bottom - top;
    const float ev = dv * wy;
    out[(size_t)gy * out_w + x] = top + ev;
}
