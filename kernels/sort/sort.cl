// Bitonic sort of floats (sample kernel "sort", algorithm "bitonic"; radix.cl is the default
// "radix"), OpenCL C 1.2.
//
// The host pads the slice to P = next power of two with +INFINITY and launches one stage per
// (k, j) of the bitonic network. Both kernels are grid-stride loops, so they are correct for any
// NDRange and any work-group size (including the driver's choice for a NULL local size):
//   - bitonic_step:  one (k, j) stage over the whole array, P/2 compare-exchange pairs;
//   - bitonic_local: every stage with j <= L (L = the work-group size, a power of two) for the
//     k values [k_first, k_last], on blocks of 2L elements held in __local memory; the host uses
//     it only when L is a power of two and 2L <= P.
// Direction of a pair (i, i + j) is ascending when (i & k) == 0; at k == P everything ascends.
// +INFINITY padding sorts to the end, so the slice's first `units` elements are its sorted data.
// Indices are 32-bit: the host refuses P > 2^31.

__kernel void bitonic_step(__global float* data, const uint pairs, const uint j, const uint k)
{
    for (uint t = (uint)get_global_id(0); t < pairs; t += (uint)get_global_size(0)) {
        const uint i = ((t & ~(j - 1u)) << 1) | (t & (j - 1u));
        const uint l = i + j;
        const float a = data[i];
        const float b = data[l];
        const bool up = (i & k) == 0u;
        if ((a > b) == up) {
            data[i] = b;
            data[l] = a;
        }
    }
}

__kernel void bitonic_local(__global float* data, const uint n, const uint k_first,
                            const uint k_last, __local float* tile)
{
    const uint lsize = (uint)get_local_size(0);
    const uint lid = (uint)get_local_id(0);
    const uint block = 2u * lsize;
    const uint blocks = n / block;
    // Uniform trip count within a work-group: the barriers below are reached by all its items.
    for (uint b = (uint)get_group_id(0); b < blocks; b += (uint)get_num_groups(0)) {
        const uint base = b * block;
        tile[lid] = data[base + lid];
        tile[lid + lsize] = data[base + lid + lsize];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = k_first; k <= k_last; k <<= 1) {
            for (uint j = min(k >> 1, lsize); j > 0u; j >>= 1) {
                const uint i = ((lid & ~(j - 1u)) << 1) | (lid & (j - 1u));
                const uint l = i + j;
                const float a = tile[i];
                const float c = tile[l];
                const bool up = ((base + i) & k) == 0u;
                if ((a > c) == up) {
                    tile[i] = c;
                    tile[l] = a;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
            }
        }
        data[base + lid] = tile[lid];
        data[base + lid + lsize] = tile[lid + lsize];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
