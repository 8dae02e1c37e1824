// Composite trapezoid rule (sample kernel "quad"), OpenCL C 1.2.
//
// Work-item g of a slice handles interval i = first + g: h * (f(x_i) + f(x_{i+1})) / 2 with
// x_i = fma((float)i, h, a) in float (i is exact in float up to 2^24; above, the conversion
// rounds with relative error <= 2^-24, which the host's error bound covers). Work-items beyond
// `count` (an NDRange rounded up to the local size) contribute 0.
// Each work-group reduces its values in __local memory with a tree that works for any group
// size (odd sizes included) and writes one float partial at partials[group id]. For a NULL local
// size the terms go through global memory and a second launch with a fixed group size reduces
// them (trapezoid_terms + reduce_terms), so the partial count is known to the host.
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

inline float ws_term(const ulong i, const float a, const float h)
{
    const float x0 = fma((float)i, h, a);
    const float x1 = fma((float)(i + 1ul), h, a);
    return 0.5f * h * (ws_f(x0) + ws_f(x1));
}

/// Tree sum of one value per work-item over the work-group (any size, odd ones included);
/// work-item 0 writes it to partials[group id].
inline void ws_group_sum(const float v, __local float* scratch, __global float* partials)
{
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
}

/// Fused: terms and the work-group reduction, for a local size the host chose.
__kernel void trapezoid(__global float* partials, const ulong first, const ulong count,
                        const float a, const float h, __local float* scratch)
{
    const size_t g = get_global_id(0);
    ws_group_sum(g < count ? ws_term(first + g, a, h) : 0.0f, scratch, partials);
}

/// NULL local size: no barrier may depend on the driver's group choice (NVIDIA's OpenCL crashed
/// the fused kernel for a prime NDRange with NULL), so the launch only writes each term ...
__kernel void trapezoid_terms(__global float* terms, const ulong first, const ulong count,
                              const float a, const float h)
{
    const size_t g = get_global_id(0);
    if (g < count) terms[g] = ws_term(first + g, a, h);
}

/// ... and this launch, with a work-group size the host fixes, reduces them as the fused one.
__kernel void reduce_terms(__global float* partials, __global const float* terms,
                           const ulong count, __local float* scratch)
{
    const size_t g = get_global_id(0);
    ws_group_sum(g < count ? terms[g] : 0.0f, scratch, partials);
}
