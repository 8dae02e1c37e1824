// matmul.cl: FP32 C = A·B for worksize's matmul job (runtime/src/job_matmul.cpp), row-major,
// A M×K, B K×N, C M×N, where M is the number of rows of the slice (the worker gets its rows of A
// and all of B). OpenCL C 1.2.
//
// Geometry ("range extension"): work-item (gx, gy) computes WPT consecutive rows of one column,
// C[gy·WPT + w][gx] for w < WPT, so the NDRange is (N, ceil(M/WPT)). WPT comes from the host as
// -DWPT=… built from the same constant it uses for the geometry. The last row unit may be
// partial, and the host may pad the NDRange: every access is guarded.
//
// Two kernels:
//  - matmul_tiled: local-memory tiling for an explicit local size. The local size (LX, LY) is
//    read at run time (any values: non-powers of two, (1024,1), (1,512)); the host sizes the
//    two tiles, passed as __local arguments: As (LY·WPT)×TK and Bs TK×LX, with the tile depth
//    TK chosen so both fit the device's local memory. Out-of-range elements of a partial tile
//    (any M, N, K) are loaded as zeros, so the inner loop needs no guard.
//  - matmul_direct: no local memory. Used for a NULL local size (the driver picks the work-group,
//    so the host cannot size the tiles) and when even TK = 1 tiles would not fit local memory.
// Accumulation is in float; the host's check allows the classical rounding bound for any
// summation order, so contraction into fma (GPUs) is fine here.

#ifndef WPT
#define WPT 4
#endif

__kernel void matmul_tiled(const int M, const int N, const int K, const int TK,
                           __global const float* restrict A, __global const float* restrict B,
                           __global float* restrict C, __local float* As, __local float* Bs) {
    const int lx = (int)get_local_id(0);
    const int ly = (int)get_local_id(1);
    const int LX = (int)get_local_size(0);
    const int LY = (int)get_local_size(1);
    const int col = (int)get_global_id(0);
    const int row0 = (int)get_global_id(1) * WPT;
    // First column / row of the group's tiles (not group_id·LX: right for a partial last group
    // too, should a driver run one).
    const int tile_col0 = col - lx;
    const int tile_row0 = row0 - ly * WPT;
    const int tid = ly * LX + lx;
    const int nthreads = LX * LY;
    const int a_elems = LY * WPT * TK;
    const int b_elems = TK * LX;

    float acc[WPT];
    for (int w = 0; w < WPT; ++w) acc[w] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TK) {
        // A tile: LY·WPT rows × TK columns; consecutive work-items read consecutive k.
        for (int i = tid; i < a_elems; i += nthreads) {
            const int r = i / TK;
            const int c = i - r * TK;
            const int gr = tile_row0 + r;
            const int gk = k0 + c;
            As[i] = (gr < M && gk < K) ? A[(size_t)gr * K + gk] : 0.0f;
        }
        // B tile: TK rows × LX columns; consecutive work-items read consecutive columns.
        for (int i = tid; i < b_elems; i += nthreads) {
            const int r = i / LX;
            const int c = i - r * LX;
            const int gk = k0 + r;
            const int gc = tile_col0 + c;
            Bs[i] = (gk < K && gc < N) ? B[(size_t)gk * N + gc] : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < TK; ++kk) {
            const float b = Bs[kk * LX + lx];
            for (int w = 0; w < WPT; ++w) acc[w] += As[(ly * WPT + w) * TK + kk] * b;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    if (col < N)
        for (int w = 0; w < WPT; ++w)
            if (row0 + w < M) C[(size_t)(row0 + w) * N + col] = acc[w];
}

__kernel void matmul_direct(const int M, const int N, const int K,
                            __global const float* restrict A, __global const float* restrict B,
                            __global float* restrict C) {
    const int col = (int)get_global_id(0);
    const int row0 = (int)get_global_id(1) * WPT;
    if (col >= N || row0 >= M) return;  // no barriers in this kernel

    float acc[WPT];
    for (int w = 0; w < WPT; ++w) acc[w] = 0.0f;
    for (int k = 0; k < K; ++k) {
        const float b = B[(size_t)k * N + col];
        for (int w = 0; w < WPT; ++w) {
            const int r = min(row0 + w, M - 1);  // a partial last unit re-reads row M-1
            acc[w] += A[(size_t)r * K + k] * b;
        }
    }
    for (int w = 0; w < WPT; ++w)
        if (row0 + w < M) C[(size_t)(row0 + w) * N + col] = acc[w];
}
