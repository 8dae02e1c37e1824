// Composite trapezoid rule (sample kernel "quad"), OpenCL C 1.2, a declared job (kernels/quad/
// job.cpp): its arguments in declared order, the slice launched with a global offset, so that
// get_global_id(0) is the interval's global index; `end` (one past the slice's last interval)
// guards the work-items of an NDRange rounded up to whole work-groups, which contribute 0.
// The indexes `end` and `origin` are long (declared arg::end<std::int64_t>()): n may exceed 2^31.
//
// Work-item g handles interval g: h * (f(x_g) + f(x_{g+1})) / 2 with x_g = fma((float)g, h, a)
// in float (g is exact in float up to 2^24; above, the conversion rounds with relative error
// <= 2^-24, which the host's error bound covers).
// Each work-group reduces its values in __local memory with a tree that works for any group
// size (odd sizes included) and writes one float record at partials[group id] (a per-group
// reduction: worksize tree-combines a slice's records on the device down to at most 1024 and
// sums them in double). For a NULL local size the terms go through a device-only buffer and a
// second launch, in work-groups whose size worksize fixes, reduces them
// (trapezoid_terms + reduce_terms).
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

/// Fused: terms and the work-group reduction, for a local size the plan chose.
__kernel void trapezoid(__global float* partials, const long end, const float a, const float h,
                        __local float* scratch)
{
    const size_t g = get_global_id(0);
    ws_group_sum(g < (size_t)end ? ws_term(g, a, h) : 0.0f, scratch, partials);
}

/// NULL local size: no barrier may depend on the driver's group choice (NVIDIA's OpenCL crashed
/// the fused kernel for a prime NDRange with NULL), so the launch only writes each term into
/// terms[g - origin] (origin: the slice's first interval) ...
__kernel void trapezoid_terms(__global float* terms, const long origin, const long end, const float a,
                              const float h)
{
    const size_t g = get_global_id(0);
    if (g < (size_t)end) terms[g - (size_t)origin] = ws_term(g, a, h);
}

/// ... and this launch, in work-groups of a power of two up to 256 that worksize chooses for a
/// per-group reduction without a local size, reduces them as the fused one.
__kernel void reduce_terms(__global float* partials, __global const float* terms, const long origin,
                           const long end)
{
    __local float scratch[256];
    const size_t g = get_global_id(0);
    ws_group_sum(g < (size_t)end ? terms[g - (size_t)origin] : 0.0f, scratch, partials);
}
