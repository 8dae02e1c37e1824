// z = a*x + y over the slice's items (global ids begin..end-1; the NDRange may be padded).
#pragma OPENCL FP_CONTRACT OFF
__kernel void saxpy(const float a, __global const float* x, const int x_origin, __global const float* y,
                    const int y_origin, __global float* z, const int z_origin, const int end) {
    const int i = get_global_id(0);
    if (i >= end) return;
    z[i - z_origin] = a * x[i - x_origin] + y[i - y_origin];
}
