// Composite trapezoid rule (sample kernel "quad"), OpenCL C 1.2.
//
// Work-item g of a slice handles interval i = first + g: h * (f(x_i) + f(x_{i+1})) / 2 with
// x_i = fma((float)i, h, a) in float (i is exact in float up to 2^24; above, the conversion
// rounds with relative error <= 2^-24, which the host's error bound covers). Work-items beyond
// `count` (an NDRange rounded up to the local size) contribute 0.
// Each work-group reduces its values in __local memory with a tree that works for any group
// size (odd sizes included) and writes one float partial at partials[group id]; the host sizes
// `scratch` for the largest group the driver may choose (CL_KERNEL_WORK_GROUP_SIZE), so a NULL
// local size works too. Work-item 0 writes the number of groups to *groups.
// The integrand is chosen at build time: -DWS_INTEGRAND=0 sin, 1 exp, 2 poly 3x^2+2x+1,
// 3 runge 4/(1+x^2).

#ifndef WS_INTEGRAND
#define WS_INTEGRAND 0
#endif

inline float ws_f(const float x)
{
#if WS_INTEGRAND == 0
    return sin(x);
#elif WS_INTEGRAND == 1
    return exp(x);
#elif WS_INTEGRAND == 2
    return fma(fma(3.0f, x, 2.0f), x, 1.0f);
#else
    return 4.0f / fma(x, x, 1.0f);
#endif
}

__kernel void trapezoid(__global float* partials, __global uint* groups, const ulong first,
                        const ulong count, const float a, const float h, __local float* scratch)
{
    const size_t g = get_global_id(0);
    float v = 0.0f;
    if (g < count) {
        const ulong i = first + (ulong)g;
        const float x0 = fma((float)i, h, a);
        const float x1 = fma((float)(i + 1ul), h, a);
        v = 0.5f * h * (ws_f(x0) + ws_f(x1));
    }
    const size_t lid = get_local_id(0);
    scratch[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = get_local_size(0); s > 1; ) {
        const size_t upper = (s + 1) >> 1;  // "half" is a type in OpenCL C
        if (lid + upper < s) scratch[lid] += scratch[lid + upper];
        barrier(CLK_LOCAL_MEM_FENCE);
        s = upper;
    }
    if (lid == 0) partials[get_group_id(0)] = scratch[0];
    if (g == 0) *groups = (uint)get_num_groups(0);
}
